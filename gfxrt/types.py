"""`gr.types`: annotations for kernel arguments and compound element types."""
from __future__ import annotations

from compiler.types import (
    DType,
    MatrixType,
    NdarrayType,
    Template,
    VectorType,
    f16,
    f32,
    f64,
    i8,
    i16,
    i32,
    i64,
    u1,
    u8,
    u16,
    u32,
    u64,
)

__all__ = ["ndarray", "vector", "matrix", "template", "f32", "f16", "i32", "u32", "u1", "f64", "i64", "u64",
           "i8", "i16", "u8", "u16"]


def ndarray(dtype=None, ndim: int | None = None) -> NdarrayType:
    """Annotation for an array argument: a gr.ndarray or a numpy array of this dtype/ndim."""
    if dtype is not None and not isinstance(dtype, (DType, VectorType, MatrixType)):
        from .ndarray import as_element_type
        dtype = as_element_type(dtype)
    if ndim is not None and (not isinstance(ndim, int) or ndim < 0):
        raise ValueError(f"ndim must be a non-negative int, got {ndim!r}")
    return NdarrayType(dtype, ndim)


def vector(n: int, dtype: DType = f32) -> VectorType:
    """A vector of n scalars: `gr.types.vector(3, gr.f32)`."""
    if not isinstance(n, int) or not 1 <= n <= 4:
        raise ValueError(f"vector length must be 1..4, got {n!r}")
    return VectorType(n, dtype)


def matrix(n: int, m: int, dtype: DType = f32) -> MatrixType:
    """An n-by-m matrix: `gr.types.matrix(3, 3, gr.f32)`."""
    if not (isinstance(n, int) and isinstance(m, int) and 1 <= n <= 4 and 1 <= m <= 4):
        raise ValueError(f"matrix shape must be within 4x4, got {n}x{m}")
    return MatrixType(n, m, dtype)


def template() -> Template:
    """Annotation for an argument baked in at compile time (one specialization per value)."""
    return Template()
