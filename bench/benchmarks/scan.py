"""Prefix scan: inclusive prefix sum of int32 (values 0..3), out of place where the library allows."""
import numpy as np

from ..registry import NA, Work, benchmark, sizes
from ._common import close, gfxrt_fits, library, rand_i32

scan = benchmark("scan", "inclusive prefix sum of int32 (8 bytes per element)", unit="GB/s", group="scan",
                 cases=sizes([1 << 20, 1 << 24], [1 << 16, 1 << 20]),
                 note="each framework's library scan: gfxrt kernels.scan.inclusive (on GPUs one pass with "
                      "decoupled look-back over tiles of 6,144; on CPU adapters reduce-then-scan over tiles of 2048), "
                      "Taichi/Quadrants ti.algorithms.PrefixSumExecutor (in place on a field), Warp "
                      "wp.utils.array_scan, numpy/torch cumsum")


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


@scan.impl("gfxrt")
def _gfxrt(fw, n):
    gfxrt_fits(fw, 4 * n)
    k = library()
    x0, want = _data(n)
    x, y = fw.to_device(x0), fw.to_device(np.zeros_like(x0))
    return _work(lambda: k.scan.inclusive(x, y), y.to_numpy, n, want,
                 "kernels.scan.inclusive(x, y): " + (f"one pass, decoupled look-back, tiles of {k.scan.LTILE}"
                                                      if k.scan.uses_lookback() else
                                                      f"reduce-then-scan, tiles of {k.scan.TILE}"))
