"""Reduction: the sum of a float32 array, returned to the host as a Python float."""
import numpy as np

from ..registry import Work, benchmark, sizes
from ._common import close, gfxrt_fits, rand_f32, variant

reduction = benchmark("reduction", "sum of float32 to a host float (4 bytes per element)", unit="GB/s",
                      group="reduction", cases=sizes([1 << 20, 1 << 24, 1 << 26], [1 << 16, 1 << 20]))


def _data(n):
    x = rand_f32(n, 3)
    return x, float(x.astype(np.float64).sum())


def _work(run, n, want, impl, note=""):
    got = {}

    def run_keep():
        got["v"] = run()

    return Work(run=run_keep, amount=4 * n, check=lambda: close(got["v"], want, rtol=1e-4), impl=impl, note=note)


@reduction.impl("numpy")
def _numpy(fw, n):
    x, want = _data(n)
    return _work(lambda: float(x.sum()), n, want, "float(x.sum())")


@reduction.impl("torch")
def _torch(fw, n):
    x0, want = _data(n)
    x = fw.to_device(x0)
    return _work(lambda: x.sum().item(), n, want, "x.sum().item()")


@reduction.impl("warp")
def _warp(fw, n):
    x0, want = _data(n)
    x = fw.to_device(x0)
    return _work(lambda: float(fw.mod.utils.array_sum(x)), n, want, "wp.utils.array_sum(x)")


@reduction.impl("taichi", "quadrants")
def _taichi(fw, n):
    ti = fw.mod

    def make():
        @ti.kernel
        def total(x: ti.types.ndarray(dtype=ti.f32, ndim=1)) -> ti.f32:
            s = 0.0
            for i in range(x.shape[0]):
                s += x[i]
            return s
        return total
    k = fw.memo("reduction", make)
    x0, want = _data(n)
    x = fw.to_device(x0)
    return _work(lambda: k(x), n, want, f"@{ti.__name__}.kernel -> f32, s += x[i]")


# -- gfxrt: the language's reduction (a kernel-scope local += in a parallel loop, returned);
#    until gfxrt compiles that, two passes of per-thread strided partial sums summed on the host.
P1, P2 = 65536, 256


def _gr_idiomatic(gr):
    @gr.kernel
    def total(x: gr.types.ndarray(dtype=gr.f32, ndim=1)) -> gr.f32:
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i]
        return s
    return total


def _gr_partials(gr):
    arr = gr.types.ndarray(dtype=gr.f32, ndim=1)

    @gr.kernel
    def partial(x: arr, out: arr):
        for t in range(out.shape[0]):
            s = 0.0
            j = t
            while j < x.shape[0]:
                s += x[j]
                j += out.shape[0]
            out[t] = s

    def total(x):
        p1 = gr.ndarray(gr.f32, min(P1, x.shape[0]))
        p2 = gr.ndarray(gr.f32, min(P2, p1.shape[0]))
        partial(x, p1)
        partial(p1, p2)
        return float(p2.to_numpy().astype(np.float64).sum())
    return total


@reduction.impl("gfxrt")
def _gfxrt(fw, n):
    gr = fw.mod
    gfxrt_fits(fw, 4 * n)
    probe = np.arange(1, 9, dtype=np.float32)

    def check(k):
        got = k(fw.to_device(probe))
        if got is None or abs(float(got) - 36.0) > 1e-4:
            raise NotImplementedError(f"the reduction returned {got!r} for 1..8, not 36")
    impl, k, why = variant(fw, "reduction", [
        ("@gr.kernel -> f32, s += x[i] (language reduction)", lambda: _gr_idiomatic(gr)),
        ("two passes of strided per-thread partial sums (65536, 256), last 256 summed on the host",
         lambda: _gr_partials(gr)),
    ], check)
    x0, want = _data(n)
    x = fw.to_device(x0)
    return _work(lambda: float(k(x)), n, want, impl, note=why)
