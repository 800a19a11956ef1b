"""2-D 5-point stencil: one Jacobi-style sweep b = average of a's point and its 4 neighbours
over the interior of an N x N float32 grid (8 bytes per point: read a once, write b)."""
import numpy as np

from ..registry import Work, benchmark, sizes
from ._common import close, gfxrt_fits, library, rand_f32

stencil = benchmark("stencil", "2-D 5-point stencil on N x N float32 (8 bytes per point)", unit="GB/s",
                    group="stencil", cases=sizes([1024, 4096], [256, 1024], label=lambda n: f"{n}x{n}"),
                    note="one thread per interior point in every kernel language (gfxrt: kernels.stencil.jacobi5); "
                         "numpy and torch: array slices (with temporaries)")


def _data(n):
    a = rand_f32((n, n), 7)
    b = np.zeros_like(a)
    want = b.copy()
    want[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
    return a, b, want


def _work(run, get, n, want, impl, note=""):
    return Work(run=run, amount=8 * n * n, check=lambda: close(get(), want, rtol=1e-5), impl=impl, note=note)


@stencil.impl("numpy", "torch")
def _arrays(fw, n):
    a0, b0, want = _data(n)
    a, b = fw.to_device(a0), fw.to_device(b0)

    def run():
        b[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
    return _work(run, lambda: fw.to_numpy(b), n, want, "slices (temporaries)")


@stencil.impl("taichi", "quadrants")
def _taichi(fw, n):
    ti = fw.mod

    def make():
        arr = ti.types.ndarray(dtype=ti.f32, ndim=2)

        @ti.kernel
        def sweep(a: arr, b: arr):
            for i, j in ti.ndrange((1, a.shape[0] - 1), (1, a.shape[1] - 1)):
                b[i, j] = 0.2 * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])
        return sweep
    k = fw.memo("stencil", make)
    a0, b0, want = _data(n)
    a, b = fw.to_device(a0), fw.to_device(b0)
    return _work(lambda: k(a, b), b.to_numpy, n, want, f"@{ti.__name__}.kernel, ndrange")


@stencil.impl("warp")
def _warp(fw, n):
    wp = fw.mod

    def make():
        @wp.kernel(module="unique")
        def sweep(a: wp.array2d(dtype=wp.float32), b: wp.array2d(dtype=wp.float32)):
            i, j = wp.tid()
            if i > 0 and j > 0 and i < a.shape[0] - 1 and j < a.shape[1] - 1:
                b[i, j] = 0.2 * (a[i, j] + a[i - 1, j] + a[i + 1, j] + a[i, j - 1] + a[i, j + 1])
        return sweep
    k = fw.memo("stencil", make)
    a0, b0, want = _data(n)
    a, b = fw.to_device(a0), fw.to_device(b0)
    return _work(lambda: wp.launch(k, dim=(n, n), inputs=[a, b], device=fw.dev), b.numpy, n, want,
                 "wp.launch dim=(n, n)")


@stencil.impl("gfxrt")
def _gfxrt(fw, n):
    gfxrt_fits(fw, 4 * n * n)
    k = library()
    a0, b0, want = _data(n)
    a, b = fw.to_device(a0), fw.to_device(b0)
    return _work(lambda: k.stencil.jacobi5(a, b), b.to_numpy, n, want,
                 "kernels.stencil.jacobi5(a, b): gr.ndrange over the interior, blocks of 256")
