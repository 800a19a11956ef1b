"""Matrix multiply C = A @ B, float32 N x N (2 N^3 flops). gfxrt runs kernels.linalg.matmul (tiled in
workgroup memory); numpy and torch call BLAS; Taichi, Quadrants and Warp run the kernel their users
write first (one thread per output, a loop over k): not the same algorithmic class as a tiled
kernel, which the table's notes say. CPU adapters stop at 1024 x 1024: a naive 2048^3 kernel takes
about a minute per run on lavapipe."""
import numpy as np

from ..registry import Work, benchmark, sizes
from ._common import close, library

matmul = benchmark(
    "matmul", "matrix multiply float32 N x N (2 N^3 flops)", unit="GFLOP/s", group="matmul",
    cases=sizes([256, 1024, 2048], [128, 256], label=lambda n: f"{n}x{n}", cpu=[256, 1024]),
    note="not like for like: gfxrt runs kernels.linalg.matmul (128x128 to 64x64 tiles staged in workgroup memory "
         "as vec4, 8x8 register micro-tiles); Taichi, Quadrants and Warp run the naive kernel (one thread per "
         "output, a loop over k, no tiling); numpy and torch call BLAS",
    unlike=("taichi", "quadrants", "warp"))


def _data(n):
    rng = np.random.default_rng(11)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    return a, b, np.zeros((n, n), np.float32), (a.astype(np.float64) @ b.astype(np.float64))


def _work(run, get, n, want, impl, note=""):
    return Work(run=run, amount=2.0 * n ** 3, check=lambda: close(get(), want, rtol=1e-3, atol=1e-3 * np.sqrt(n)),
                impl=impl, note=note)


@matmul.impl("numpy")
def _numpy(fw, n):
    a, b, c, want = _data(n)
    return _work(lambda: np.matmul(a, b, out=c), lambda: c, n, want, "np.matmul(a, b, out=c) (BLAS)")


@matmul.impl("torch")
def _torch(fw, n):
    a0, b0, c0, want = _data(n)
    a, b, c = fw.to_device(a0), fw.to_device(b0), fw.to_device(c0)
    fw.mod.backends.cuda.matmul.allow_tf32 = False
    return _work(lambda: fw.mod.matmul(a, b, out=c), lambda: fw.to_numpy(c), n, want, "torch.matmul(out=c), no TF32")


@matmul.impl("taichi", "quadrants")
def _taichi(fw, n):
    ti = fw.mod

    def make():
        arr = ti.types.ndarray(dtype=ti.f32, ndim=2)

        @ti.kernel
        def mm(a: arr, b: arr, c: arr):
            for i, j in ti.ndrange(c.shape[0], c.shape[1]):
                s = 0.0
                for k in range(a.shape[1]):
                    s += a[i, k] * b[k, j]
                c[i, j] = s
        return mm
    k = fw.memo("matmul", make)
    a0, b0, c0, want = _data(n)
    a, b, c = fw.to_device(a0), fw.to_device(b0), fw.to_device(c0)
    return _work(lambda: k(a, b, c), c.to_numpy, n, want, f"@{ti.__name__}.kernel, ndrange, loop over k")


@matmul.impl("warp")
def _warp(fw, n):
    wp = fw.mod

    def make():
        @wp.kernel(module="unique")
        def mm(a: wp.array2d(dtype=wp.float32), b: wp.array2d(dtype=wp.float32), c: wp.array2d(dtype=wp.float32)):
            i, j = wp.tid()
            s = float(0.0)  # noqa: UP018 - warp: a variable mutated in a loop must not be a constant
            for k in range(a.shape[1]):
                s += a[i, k] * b[k, j]
            c[i, j] = s
        return mm
    k = fw.memo("matmul", make)
    a0, b0, c0, want = _data(n)
    a, b, c = fw.to_device(a0), fw.to_device(b0), fw.to_device(c0)
    return _work(lambda: wp.launch(k, dim=(n, n), inputs=[a, b, c], device=fw.dev), c.numpy, n, want,
                 "wp.launch dim=(n, n), loop over k")


@matmul.impl("gfxrt")
def _gfxrt(fw, n):
    k = library()
    a0, b0, c0, want = _data(n)
    a, b, c = fw.to_device(a0), fw.to_device(b0), fw.to_device(c0)
    t = k.linalg.tiles_for(n, n)
    return _work(lambda: k.linalg.matmul(a, b, c), c.to_numpy, n, want,
                 f"kernels.linalg.matmul(a, b, c): {t.bm}x{t.bn} tiles, depth {t.tk} slices in workgroup memory"
                 f"{' (double-buffered)' if t.double else ''}, 8x8 micro-tiles")
