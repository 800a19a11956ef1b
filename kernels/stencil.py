"""2-D 5-point stencils on f32 grids.

    kernels.stencil.laplace5(src, dst)          # dst = discrete Laplacian of src (interior)
    kernels.stencil.jacobi5(src, dst)           # dst = mean of a point and its 4 neighbours
    kernels.stencil.five_point(src, dst, c, n)  # dst = c * src[i, j] + n * (sum of the 4 neighbours)

They write the interior points of dst, dst[1:-1, 1:-1], and leave its border as it is.
One thread per interior point; threads of a block cover consecutive points of a row, so
the five reads of neighbouring threads hit the same cache lines.
"""
from __future__ import annotations

import gfxrt as gr

from ._util import Args

F2 = gr.types.ndarray(dtype=gr.f32, ndim=2)


@gr.kernel
def five_point_kernel(src: F2, dst: F2, c: gr.f32, nb: gr.f32):
    gr.loop_config(block_dim=256)
    for i, j in gr.ndrange((1, src.shape[0] - 1), (1, src.shape[1] - 1)):
        dst[i, j] = c * src[i, j] + nb * (src[i - 1, j] + src[i + 1, j] + src[i, j - 1] + src[i, j + 1])


def five_point(src, dst, center: float, neighbour: float) -> None:
    """dst[i, j] = center * src[i, j] + neighbour * (src[i-1, j] + src[i+1, j] + src[i, j-1] +
    src[i, j+1]) for the interior points of 2-D f32 arrays of the same shape (src is not
    dst)."""
    if src is dst:
        raise ValueError("src and dst must be different arrays (every point reads its neighbours)")
    args = Args()
    s = args.dev(src, "src", dtype=gr.f32, ndim=2)
    d = args.dev(dst, "dst", dtype=gr.f32, ndim=2, written=True)
    if s.shape != d.shape:
        raise ValueError(f"src and dst must have the same shape: {s.shape} and {d.shape}")
    five_point_kernel(s, d, float(center), float(neighbour))
    args.finish()


def laplace5(src, dst, h: float = 1.0) -> None:
    """dst = (src[i-1, j] + src[i+1, j] + src[i, j-1] + src[i, j+1] - 4 src[i, j]) / h^2 on the
    interior (see `five_point`)."""
    k = 1.0 / (h * h)
    five_point(src, dst, -4.0 * k, k)


def jacobi5(src, dst) -> None:
    """dst = 0.2 * (src[i, j] + its 4 neighbours) on the interior: one smoothing sweep."""
    five_point(src, dst, 0.2, 0.2)
