"""kernels: a library written in gfxrt's own language, tested against numpy.

    from gfxrt import kernels
    kernels.reduce.sum(x)                 # sum / max / min -> a number
    kernels.scan.inclusive(x, out)        # prefix sums (also exclusive), any n
    kernels.stencil.laplace5(src, dst)    # 2-D 5-point stencils
    kernels.linalg.matmul(a, b, c)        # tiled matrix multiply
    kernels.histogram(x, bins, out)       # atomics, block-local histograms
    kernels.fill(x, v); kernels.memcpy(dst, src); kernels.saxpy(a, x, y)
    kernels.nbody.step(...); kernels.cloth.step(...)
    kernels.diffsim                       # a differentiable mass-spring simulation

See docs/kernels.md.
"""
if __name__ != "gfxrt.kernels":  # a second copy of every module (and class: isinstance would fail)
    raise ImportError(f"import gfxrt.kernels, not {__name__}: the folder kernels/ is installed as gfxrt.kernels "
                      "(docs/design.md)", name=__name__)

from . import block, cloth, diffsim, linalg, memory, nbody, reduce, scan, stencil
from ._util import has_subgroups
from .hist import histogram
from .memory import fill, memcpy, saxpy

__all__ = ["block", "cloth", "diffsim", "linalg", "memory", "nbody", "reduce", "scan", "stencil", "histogram",
           "fill", "memcpy", "saxpy", "has_subgroups"]
