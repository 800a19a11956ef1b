"""Prefix scan: inclusive prefix sum of int32 (values 0..3), out of place where the library allows."""
import numpy as np

from ..registry import NA, Work, benchmark, sizes
from ._common import close, gfxrt_fits, rand_i32

scan = benchmark("scan", "inclusive prefix sum of int32 (8 bytes per element)", unit="GB/s", group="scan",
                 cases=sizes([1 << 20, 1 << 24], [1 << 16, 1 << 20]))


def _data(n):
    x = rand_i32(n, 4, seed=5)
    return x, np.cumsum(x, dtype=np.int64).astype(np.int32)


def _work(run, get, n, want, impl):
    return Work(run=run, amount=8 * n, check=lambda: close(get(), want, rtol=0, atol=0), impl=impl)


@scan.impl("numpy")
def _numpy(fw, n):
    x, want = _data(n)
    y = np.empty_like(x)
    return _work(lambda: np.cumsum(x, out=y), lambda: y, n, want, "np.cumsum(x, out=y)")


@scan.impl("torch")
def _torch(fw, n):
    torch = fw.mod
    x0, want = _data(n)
    x, y = fw.to_device(x0), fw.to_device(np.empty_like(x0))
    return _work(lambda: torch.cumsum(x, 0, dtype=torch.int32, out=y), lambda: fw.to_numpy(y), n, want,
                 "torch.cumsum(x, 0, out=y)")


@scan.impl("warp")
def _warp(fw, n):
    wp = fw.mod
    x0, want = _data(n)
    x, y = fw.to_device(x0), fw.to_device(np.empty_like(x0))
    return _work(lambda: wp.utils.array_scan(x, y, inclusive=True), lambda: y.numpy(), n, want,
                 "wp.utils.array_scan(x, y, inclusive=True)")


@scan.impl("taichi", "quadrants")
def _taichi(fw, n):
    ti = fw.mod
    if fw.backend not in ("cuda", "vulkan"):
        raise NA(f"{ti.__name__}.algorithms.PrefixSumExecutor runs on cuda and vulkan only")
    x0, want = _data(n)
    x = ti.field(ti.i32, shape=n)
    x.from_numpy(x0)
    ex = ti.algorithms.PrefixSumExecutor(n)
    try:
        ex.run(ti.field(ti.i32, shape=n))
    except RuntimeError as e:  # e.g. Quadrants refuses subgroups narrower than 32 (lavapipe: 8)
        raise NA(f"PrefixSumExecutor refuses this device: {str(e).splitlines()[0]}") from None
    return _work(lambda: ex.run(x), lambda: x.to_numpy(), n, want,
                 f"{ti.__name__}.algorithms.PrefixSumExecutor on a field (in place)")


# -- gfxrt: Hillis-Steele scan (log2(n) passes), written here until kernels/ has a scan.
def _gr_kernels(gr):
    arr = gr.types.ndarray(dtype=gr.i32, ndim=1)

    @gr.kernel
    def copy(x: arr, y: arr):
        for i in range(x.shape[0]):
            y[i] = x[i]

    @gr.kernel
    def step(a: arr, b: arr, d: gr.i32):
        for i in range(a.shape[0]):
            v = a[i]
            if i >= d:
                v += a[i - d]
            b[i] = v
    return copy, step


@scan.impl("gfxrt")
def _gfxrt(fw, n):
    gr = fw.mod
    gfxrt_fits(fw, 4 * n)
    copy, step = fw.memo("scan", lambda: _gr_kernels(gr))
    x0, want = _data(n)
    x, a, b = fw.to_device(x0), gr.ndarray(gr.i32, n), gr.ndarray(gr.i32, n)
    passes = max(1, (n - 1).bit_length())
    out = a if passes % 2 == 0 else b

    def run():
        copy(x, a)
        src, dst, d = a, b, 1
        while d < n:
            step(src, dst, d)
            src, dst, d = dst, src, 2 * d
    return _work(run, out.to_numpy, n, want, f"Hillis-Steele, {passes} passes (bench-local; kernels/ has no scan yet)")
