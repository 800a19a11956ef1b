"""Scalar, vector, matrix and container types of the kernel language.

The IR only knows scalar dtypes (`DType`); vectors and matrices are scalarized by the
frontend, which keeps them as Python-side tuples of scalar IR values.
"""
from __future__ import annotations

from dataclasses import dataclass

from .npcompat import np


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

    @property
    def narrow(self) -> bool:
        """An 8- or 16-bit integer: stored packed in u32 words, computed in i32 / u32."""
        return self.is_int and self.size < 4

    @property
    def wide(self) -> bool:
        """A 64-bit type (needs the adapter feature 'shader-f64' or 'shader-int64')."""
        return self.size == 8

    @property
    def bits(self) -> int:
        return 8 * self.size if self.kind != "bool" else 32

    @property
    def pack(self) -> str:
        """The `struct` format of this dtype as a kernel scalar argument (narrow types and
        bools travel as 4-byte words)."""
        if self.kind == "float":
            return "d" if self.size == 8 else "f"
        if self.size == 8:
            return "q" if self.kind == "int" else "Q"
        return "i" if self.kind == "int" else "I"

    @property
    def int_range(self) -> tuple[int, int]:
        """The values an integer dtype holds."""
        if self.kind == "int":
            return -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
        return 0, (1 << self.bits) - 1

    def __repr__(self) -> str:
        return self.name

    def to_string(self) -> str:
        """Taichi's `dt.to_string()`: the dtype's name, as str(dt)."""
        return self.name


f32 = DType("f32", "f32", "float32", 4, "float")
f16 = DType("f16", "f16", "float16", 2, "float")
i32 = DType("i32", "i32", "int32", 4, "int")
u32 = DType("u32", "u32", "uint32", 4, "uint")
u1 = DType("bool", "bool", "bool", 4, "bool")
# 64-bit types: WGSL f64 / i64 / u64 (naga, with the adapter features shader-f64 / shader-int64)
f64 = DType("f64", "f64", "float64", 8, "float")
i64 = DType("i64", "i64", "int64", 8, "int")
u64 = DType("u64", "u64", "uint64", 8, "uint")
# narrow integers: storage types, packed into u32 words; their values compute in i32 / u32
i8 = DType("i8", "i32", "int8", 1, "int")
i16 = DType("i16", "i32", "int16", 2, "int")
u8 = DType("u8", "u32", "uint8", 1, "uint")
u16 = DType("u16", "u32", "uint16", 2, "uint")

SCALARS = {t.name: t for t in (f32, f16, i32, u32, u1, f64, i64, u64, i8, i16, u8, u16)}
_NUMPY_TYPES = (f32, f16, i32, u32, f64, i64, u64, i8, i16, u8, u16)


def from_numpy(dt) -> DType:
    """The DType of a numpy dtype, or TypeError."""
    dt = np.dtype(dt)
    for t in _NUMPY_TYPES:
        if t.numpy == dt:
            return t
    raise TypeError(f"gfxrt has no dtype for numpy {dt} (use float32/64, float16, (u)int8/16/32/64)")


def compute_type(t: DType) -> DType:
    """The type a value of dtype t computes in: narrow integers widen to i32 / u32."""
    if t.narrow:
        return i32 if t.kind == "int" else u32
    return t


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


@dataclass(frozen=True)
class ElementPattern:
    """`gr.types.vector()` / `gr.types.matrix()` without sizes (Taichi's `VectorType(None, None)`):
    in `gr.types.ndarray(dtype=...)`, any vector (or matrix) element whose given parts agree.
    `n`, `m`, `dtype`: None is any."""

    kind: str                    # "vector" or "matrix"
    n: int | None = None
    m: int | None = None
    dtype: DType | None = None

    @property
    def shape(self) -> tuple:
        """The element's trailing shape, None where any size goes."""
        return (self.n,) if self.kind == "vector" else (self.n, self.m)

    def matches(self, t) -> bool:
        """Whether element type `t` is one this pattern allows."""
        if not isinstance(t, VectorType if self.kind == "vector" else MatrixType):
            return False
        return all(want is None or want == got for want, got in zip((*self.shape, self.dtype), (*t.shape, t.dtype)))

    def concrete(self, shape: tuple, dtype: DType):
        """The element type of this kind with a given trailing shape and scalar dtype."""
        return VectorType(shape[0], dtype) if self.kind == "vector" else MatrixType(shape[0], shape[1], dtype)

    def __repr__(self) -> str:
        parts = [str(x) for x in (*self.shape, self.dtype) if x is not None]
        return f"{self.kind}({', '.join(parts)})"


def element_matches(want, t) -> bool:
    """Whether element type `t` fills an annotation's element type `want` (a type or a pattern)."""
    return want.matches(t) if isinstance(want, ElementPattern) else want == t


def scalar_of(t: ElementType) -> DType:
    """The scalar dtype under an element type."""
    return t if isinstance(t, DType) else t.dtype


def element_shape(t: ElementType) -> tuple[int, ...]:
    """Trailing numpy shape of one element: () for scalars."""
    return () if isinstance(t, DType) else t.shape


def element_of_shape(shape: tuple[int, ...], dtype: DType) -> ElementType:
    """The element type whose trailing numpy shape is `shape`: a scalar, a vector or a matrix of `dtype`."""
    return dtype if not shape else VectorType(shape[0], dtype) if len(shape) == 1 else MatrixType(*shape, dtype)


@dataclass(frozen=True)
class NdarrayType:
    """Annotation `gr.types.ndarray(dtype=, ndim=, needs_grad=, boundary=)`; dtype and ndim may be
    None (any); needs_grad None follows the array, False makes it a constant of the gradient;
    boundary "unsafe" (the default) or "clamp" (Taichi's: each index clamped into its extent)."""

    dtype: ElementType | None = None
    ndim: int | None = None
    boundary: str = "unsafe"
    needs_grad: bool | None = None

    def __repr__(self) -> str:
        clamp = ", boundary='clamp'" if self.boundary == "clamp" else ""
        grad = "" if self.needs_grad is None else f", needs_grad={self.needs_grad}"
        return f"ndarray(dtype={self.dtype}, ndim={self.ndim}{grad}{clamp})"


@dataclass(frozen=True)
class Template:
    """Annotation `gr.template()`: the argument's value is baked in at compile time."""

    def __repr__(self) -> str:
        return "template()"


@dataclass(frozen=True)
class SparseMatrixBuilderType(Template):
    """Annotation `gr.types.sparse_matrix_builder()`: a gr.linalg.SparseMatrixBuilder, bound like a
    template (its fields are baked in); `A[i, j] += v` appends a triplet (frontend/triplets.py)."""

    def __repr__(self) -> str:
        return "sparse_matrix_builder()"


def promote(a: DType, b: DType) -> DType:
    """Result dtype of a binary arithmetic op, Python-like: int op float -> float; narrow
    integers compute in 32 bits (Taichi wraps them when they are stored); between integers
    the wider type wins, and unsigned at equal width (i32 op u32 -> u32, i64 op u32 -> i64)."""
    a, b = compute_type(a), compute_type(b)
    if a == b:
        return a if a != u1 else i32
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            return a if a.size >= b.size else b
        return a if a.is_float else b
    a = i32 if a == u1 else a
    b = i32 if b == u1 else b
    if a.size != b.size:
        return a if a.size > b.size else b
    return a if a.kind == "uint" else b
