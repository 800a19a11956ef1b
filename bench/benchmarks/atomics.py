"""Atomics: a histogram of int32 keys, h[x[i]] += 1 (zeroing h is part of each operation)."""
import numpy as np

from ..registry import Case, Work, benchmark
from ._common import close, gfxrt_fits, library, rand_i32


def _cases(quick):
    n = 1 << 20 if quick else 1 << 24
    return [Case(f"2^{n.bit_length() - 1} keys into {bins} bins", (n, bins)) for bins in (64, 65536)]


histogram = benchmark(
    "histogram", "histogram with atomic adds (keys per second)", unit="Gelem/s", group="atomics", cases=_cases,
    note="gfxrt: kernels.histogram (up to 4096 bins: block-local histograms in workgroup memory, one global atomic "
         "per bin and block; beyond: global atomics); Taichi, Quadrants, Warp: the plain kernel h[x[i]] += 1 "
         "(atomics on h); numpy: bincount; torch: index_add_",
    unlike=("taichi", "quadrants", "warp"))


def _data(n, bins):
    x = rand_i32(n, bins, seed=9)
    return x, np.bincount(x, minlength=bins).astype(np.int32)


def _work(run, get, n, want, impl):
    return Work(run=run, amount=n, check=lambda: close(get(), want, rtol=0, atol=0), impl=impl)


@histogram.impl("numpy")
def _numpy(fw, p):
    n, bins = p
    x, want = _data(n, bins)
    out = {}

    def run():
        out["h"] = np.bincount(x, minlength=bins)
    return _work(run, lambda: out["h"], n, want, "np.bincount(x, minlength=bins)")


@histogram.impl("torch")
def _torch(fw, p):
    n, bins = p
    x0, want = _data(n, bins)
    torch = fw.mod
    x = fw.to_device(x0).long()
    h = torch.zeros(bins, dtype=torch.int32, device=fw.dev)
    ones = torch.ones(n, dtype=torch.int32, device=fw.dev)

    def run():
        h.zero_()
        h.index_add_(0, x, ones)
    return _work(run, lambda: fw.to_numpy(h), n, want, "h.zero_(); h.index_add_(0, x, ones)")


@histogram.impl("taichi", "quadrants")
def _taichi(fw, p):
    ti = fw.mod
    n, bins = p

    def make():
        arr = ti.types.ndarray(dtype=ti.i32, ndim=1)

        @ti.kernel
        def zero(h: arr):
            for i in range(h.shape[0]):
                h[i] = 0

        @ti.kernel
        def hist(x: arr, h: arr):
            for i in range(x.shape[0]):
                h[x[i]] += 1
        return zero, hist
    zero, hist = fw.memo("histogram", make)
    x0, want = _data(n, bins)
    x, h = fw.to_device(x0), fw.to_device(np.zeros(bins, np.int32))

    def run():
        zero(h)
        hist(x, h)
    return _work(run, h.to_numpy, n, want, f"@{ti.__name__}.kernel zero + h[x[i]] += 1")


@histogram.impl("warp")
def _warp(fw, p):
    wp = fw.mod
    n, bins = p

    def make():
        @wp.kernel(module="unique")
        def hist(x: wp.array(dtype=wp.int32), h: wp.array(dtype=wp.int32)):
            i = wp.tid()
            wp.atomic_add(h, x[i], 1)
        return hist
    k = fw.memo("histogram", make)
    x0, want = _data(n, bins)
    x, h = fw.to_device(x0), fw.to_device(np.zeros(bins, np.int32))

    def run():
        h.zero_()
        wp.launch(k, dim=n, inputs=[x, h], device=fw.dev)
    return _work(run, h.numpy, n, want, "h.zero_() + wp.atomic_add(h, x[i], 1)")


@histogram.impl("gfxrt")
def _gfxrt(fw, p):
    n, bins = p
    gfxrt_fits(fw, 4 * n)
    k = library()
    x0, want = _data(n, bins)
    x, h = fw.to_device(x0), fw.to_device(np.zeros(bins, np.int32))
    how = ("block-local histograms in workgroup memory + one global atomic per bin and block"
           if bins <= k.hist.LOCAL_BINS else "global atomics")
    return _work(lambda: k.histogram(x, bins, h), h.to_numpy, n, want,
                 f"kernels.histogram(x, bins, h): zero h, {how}")
