"""Scalar, vector, matrix and container types of the kernel language.

The IR only knows scalar dtypes (`DType`); vectors and matrices are scalarized by the
frontend, which keeps them as Python-side tuples of scalar IR values.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DType:
    """A scalar element type: its name, WGSL spelling, numpy dtype and byte size."""

    name: str
    wgsl: str
    np: str
    size: int
    kind: str  # 'float' | 'int' | 'uint' | 'bool'

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_int(self) -> bool:
        return self.kind in ("int", "uint")

    @property
    def numpy(self) -> np.dtype:
        return np.dtype(self.np)

    def __repr__(self) -> str:
        return self.name


f32 = DType("f32", "f32", "float32", 4, "float")
f16 = DType("f16", "f16", "float16", 2, "float")
i32 = DType("i32", "i32", "int32", 4, "int")
u32 = DType("u32", "u32", "uint32", 4, "uint")
u1 = DType("bool", "bool", "bool", 4, "bool")

SCALARS = {t.name: t for t in (f32, f16, i32, u32, u1)}


def from_numpy(dt) -> DType:
    """The DType of a numpy dtype, or TypeError."""
    dt = np.dtype(dt)
    for t in (f32, f16, i32, u32):
        if t.numpy == dt:
            return t
    raise TypeError(f"gfxrt has no dtype for numpy {dt} (use float32, float16, int32 or uint32)")


@dataclass(frozen=True)
class VectorType:
    """`gr.types.vector(n, dtype)`: n scalars of one dtype."""

    n: int
    dtype: DType

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.n,)

    @property
    def size(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"vector({self.n}, {self.dtype})"

    def __call__(self, *args):
        """`vec3(1, 2, 3)` in Python scope: a gr.Vector value (kernels lower the call themselves)."""
        from .hostmatrix import typed_value
        return typed_value(self, args)


@dataclass(frozen=True)
class MatrixType:
    """`gr.types.matrix(n, m, dtype)`: n rows by m columns, row-major."""

    n: int
    m: int
    dtype: DType

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.n, self.m)

    @property
    def size(self) -> int:
        return self.n * self.m

    def __repr__(self) -> str:
        return f"matrix({self.n}, {self.m}, {self.dtype})"

    def __call__(self, *args):
        """`mat2([[1, 2], [3, 4]])` in Python scope: a gr.Matrix value."""
        from .hostmatrix import typed_value
        return typed_value(self, args)


ElementType = DType | VectorType | MatrixType


def scalar_of(t: ElementType) -> DType:
    """The scalar dtype under an element type."""
    return t if isinstance(t, DType) else t.dtype


def element_shape(t: ElementType) -> tuple[int, ...]:
    """Trailing numpy shape of one element: () for scalars."""
    return () if isinstance(t, DType) else t.shape


@dataclass(frozen=True)
class NdarrayType:
    """Annotation `gr.types.ndarray(dtype=, ndim=)`; either may be None (any)."""

    dtype: ElementType | None = None
    ndim: int | None = None

    def __repr__(self) -> str:
        return f"ndarray(dtype={self.dtype}, ndim={self.ndim})"


@dataclass(frozen=True)
class Template:
    """Annotation `gr.template()`: the argument's value is baked in at compile time."""

    def __repr__(self) -> str:
        return "template()"


def promote(a: DType, b: DType) -> DType:
    """Result dtype of a binary arithmetic op, Python-like: int op float -> float."""
    if a == b:
        return a if a != u1 else i32
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            return a if a.size >= b.size else b
        return a if a.is_float else b
    if u32 in (a, b):
        return u32
    return i32
