"""Reduction: the sum of a float32 array, returned to the host as a Python float."""
import numpy as np

from ..registry import Work, benchmark, sizes
from ._common import close, gfxrt_fits, library, rand_f32

reduction = benchmark(
    "reduction", "sum of float32 to a host float (4 bytes per element)", unit="GB/s", group="reduction",
    cases=sizes([1 << 20, 1 << 24, 1 << 26], [1 << 16, 1 << 20], cpu=[1 << 20, 1 << 24, 1 << 25]),
    note="gfxrt: kernels.reduce.sum (two passes of block reductions, no atomics); Taichi, Quadrants: a kernel "
         "returning s += x[i] (their compilers' reduction); Warp: wp.utils.array_sum; numpy, torch: x.sum()")


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


@reduction.impl("gfxrt")
def _gfxrt(fw, n):
    gfxrt_fits(fw, 4 * n)
    k = library()
    x0, want = _data(n)
    x = fw.to_device(x0)
    how = "subgroup operations" if k.has_subgroups() else "shared-memory trees"
    return _work(lambda: k.reduce.sum(x), n, want, f"kernels.reduce.sum(x): two passes of block reductions ({how})")
