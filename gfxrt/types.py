"""`gr.types`: annotations for kernel arguments and compound element types."""
from __future__ import annotations

from types import SimpleNamespace

from gfxrt.compiler.textures import RWTextureType, TextureType
from gfxrt.compiler.types import (
    DType,
    ElementPattern,
    MatrixType,
    NdarrayType,
    SparseMatrixBuilderType,
    Template,
    VectorType,
    element_of_shape,
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

from .data.field import field as _new_field
from .data.field import struct  # noqa: E402  (gfxrt/taichi/structs.py builds on it; it lives in field.py)
from .data.ndarray import as_element_type
from .data.ndarray import ndarray as _new_ndarray

__all__ = ["ndarray", "vector", "matrix", "template", "sparse_matrix_builder", "struct", "texture", "rw_texture",
           "TextureType", "RWTextureType",
           "f32", "f16", "i32", "u32", "u1", "f64", "i64", "u64",
           "i8", "i16", "u8", "u16", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "NDArray", "NdarrayType", "Template",
           "is_integral", "is_signed", "is_real", "primitive_types"]

# Taichi's long names (ti.int32, ti.types.float32, ...)
int8, int16, int32, int64 = i8, i16, i32, i64
uint8, uint16, uint32, uint64 = u8, u16, u32, u64
float16, float32, float64 = f16, f32, f64


def ndarray(dtype=None, ndim: int | None = None, needs_grad: bool | None = None, boundary: str = "unsafe",
            element_shape=None) -> NdarrayType:
    """Annotation for an array argument: a gr.ndarray, a numpy array or a torch tensor of this
    dtype/ndim. needs_grad (Taichi's): None follows the array (a gr.ndarray's needs_grad, a
    tensor's requires_grad); False treats it as a constant in gradient kernels; True requires
    an array with a gradient.
    `boundary="clamp"` (Taichi's option): every index into it is clamped into its extent, so
    `a[-1]` reads `a[0]` and `a[n + 5]` reads `a[n - 1]` (reads, writes and atomics alike).
    Taichi's `element_shape=(n,)` / `(n, m)` makes the elements vectors / matrices of that
    shape: of `dtype` if one is given (`ndarray(gr.f32, 1, element_shape=(3,))` is
    `ndarray(gr.types.vector(3, gr.f32), 1)`), else of any dtype."""
    if boundary not in ("unsafe", "clamp"):
        raise ValueError(f"Invalid boundary argument: {boundary!r} (\"unsafe\" or \"clamp\")")
    if dtype is not None and not isinstance(dtype, (DType, VectorType, MatrixType, ElementPattern)):
        dtype = as_element_type(dtype)
    if ndim is not None and (not isinstance(ndim, int) or ndim < 0):
        raise ValueError(f"ndim must be a non-negative int, got {ndim!r}")
    if needs_grad is not None and not isinstance(needs_grad, bool):
        raise TypeError(f"needs_grad must be None, True or False, got {needs_grad!r}")
    if element_shape is not None:
        shape = tuple(element_shape)
        if len(shape) > 2 or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in shape):
            raise ValueError(f"element_shape is () for scalars, (n,) for vectors or (n, m) for matrices, got "
                             f"{element_shape!r}")
        if dtype is not None and not isinstance(dtype, DType):
            raise TypeError(f"give element_shape with a scalar dtype, or a vector / matrix dtype alone, not both "
                            f"({dtype!r} and {element_shape!r})")
        if shape:  # any dtype of that shape, or the given one
            dtype = element_of_shape(shape, dtype) if dtype is not None else \
                ElementPattern("vector" if len(shape) == 1 else "matrix", *shape)
    return NdarrayType(dtype, ndim, boundary=boundary, needs_grad=needs_grad)


def is_integral(dt) -> bool:
    """Taichi's `ti.types.is_integral(dt)`: an integer dtype (signed or unsigned)."""
    return isinstance(dt, DType) and dt.is_int


def is_signed(dt) -> bool:
    """Taichi's `ti.types.is_signed(dt)`: a signed integer or a float dtype."""
    if not isinstance(dt, DType) or dt.kind == "bool":
        raise TypeError(f"is_signed needs a scalar dtype, not {dt!r}")
    return dt.kind in ("int", "float")


def is_real(dt) -> bool:
    """Taichi's `ti.types.is_real(dt)`: a float dtype."""
    return isinstance(dt, DType) and dt.is_float


def _scalar_dtype(dtype) -> DType:
    if not isinstance(dtype, DType):
        dtype = as_element_type(dtype)
        if not isinstance(dtype, DType):
            raise TypeError(f"vectors and matrices hold a scalar dtype such as gr.f32, not {dtype!r}")
    return dtype


def vector(n: int | None = None, dtype: DType | None = None) -> VectorType | ElementPattern:
    """A vector of n scalars: `gr.types.vector(3, gr.f32)` (dtype f32 when left out). Kernels keep
    vectors in scalar registers, so any length works (Taichi warns past 32 components: so many
    registers per thread are slow). Without n, as in Taichi, it is a pattern for
    `gr.types.ndarray(dtype=gr.types.vector())`: arrays of any vector (of that dtype if given)."""
    if n is None:
        return ElementPattern("vector", None, None, None if dtype is None else _scalar_dtype(dtype))
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"vector length must be a positive int, got {n!r}")
    return VectorType(n, _scalar_dtype(f32 if dtype is None else dtype))


def matrix(n: int | None = None, m: int | None = None, dtype: DType | None = None) -> MatrixType | ElementPattern:
    """An n-by-m matrix: `gr.types.matrix(3, 3, gr.f32)` (any size, as vectors; dtype f32 when
    left out). Without n or m, as in Taichi, a pattern for `gr.types.ndarray(dtype=...)`: arrays of
    any matrix whose given sizes and dtype agree (not of vectors)."""
    for x in (n, m):
        if x is not None and (isinstance(x, bool) or not isinstance(x, int) or x < 1):
            raise ValueError(f"matrix shape must be positive ints, got {n!r}x{m!r}")
    if n is None or m is None:
        return ElementPattern("matrix", n, m, None if dtype is None else _scalar_dtype(dtype))
    return MatrixType(n, m, _scalar_dtype(f32 if dtype is None else dtype))


def texture(num_dimensions: int) -> TextureType:
    """Annotation for a sampled texture argument (a gr.Texture): `tex.sample_lod(uv, lod)` filters at
    normalized coordinates uv (bilinear, repeat addressing), `tex.fetch(index, lod)` reads a texel;
    both give a vector of 4 f32 (docs/runtime.md, "Textures")."""
    return TextureType(num_dimensions)


def rw_texture(num_dimensions: int, fmt=None, lod: int = 0) -> RWTextureType:
    """Annotation for a storage texture argument of format `fmt` (a gr.Texture of that format) at mip
    level `lod`: `tex.load(index)` reads a texel (4 f32), `tex.store(index, value)` writes one
    (value: 4 numbers)."""
    return RWTextureType(num_dimensions, fmt, lod)


def container_field(elem, shape, needs_grad: bool, offset, kwargs):
    """A field of vector / matrix type `elem` with Taichi's container arguments (`layout=`,
    `order=`, `needs_dual=`, `name=`): `vec3.field(...)`, `gr.Vector.field(...)`."""
    kwargs.pop("layout", None)  # every field is one array of structures, in row-major order: what
    kwargs.pop("order", None)   # kernels and to_numpy see does not depend on Taichi's layout choice
    needs_grad = needs_grad or bool(kwargs.pop("needs_dual", False))  # a needs_grad container has a .dual
    name = kwargs.pop("name", "")
    if kwargs:
        raise TypeError(f"unexpected argument(s) {', '.join(map(repr, kwargs))}")
    if shape is None:
        return _new_field(elem, needs_grad=needs_grad, name=name, offset=offset)
    return _new_field(elem, shape=shape, needs_grad=needs_grad, name=name, offset=offset)


def _type_field(self, shape=None, offset=None, needs_grad: bool = False, **kwargs):
    """`vec3.field(shape=n)`: a field of this vector / matrix type (Taichi's VectorType.field)."""
    return container_field(self, shape, needs_grad, offset, kwargs)


def _type_ndarray(self, shape=(), needs_grad: bool = False, **kwargs):
    """`vec3.ndarray(shape=n)`: an ndarray of this vector / matrix type."""
    kwargs.pop("layout", None)
    if kwargs:
        raise TypeError(f"unexpected argument(s) {', '.join(map(repr, kwargs))}")
    return _new_ndarray(self, shape, needs_grad=needs_grad)


# compiler/types.py cannot import the runtime: the container constructors are attached here, in the
# namespace that makes vector and matrix types, which gr.math (vec3, mat2, ...) imports too, so that
# `gr.math.vec3.ndarray(4)` works whatever gfxrt name a program used first
for _t in (VectorType, MatrixType):
    _t.field = _type_field
    _t.ndarray = _type_ndarray

NDArray = ndarray  # Taichi's alias: gr.types.NDArray(dtype=..., ndim=...)


def template() -> Template:
    """Annotation for an argument baked in at compile time (one specialization per value)."""
    return Template()


def sparse_matrix_builder() -> SparseMatrixBuilderType:
    """Annotation for a gr.linalg.SparseMatrixBuilder argument, filled in the kernel with
    `A[i, j] += v` (and `-=`): Taichi's `ti.types.sparse_matrix_builder()`."""
    return SparseMatrixBuilderType()


# Taichi's `ti.types.primitive_types`: the scalar types as lists (Taichi's tests parametrize over them)
primitive_types = SimpleNamespace(
    real_types=[f16, f32, f64, float], integer_types=[i8, i16, i32, i64, u8, u16, u32, u64, int],
    f16=f16, f32=f32, f64=f64, i8=i8, i16=i16, i32=i32, i64=i64, u8=u8, u16=u16, u32=u32, u64=u64, u1=u1,
    float16=f16, float32=f32, float64=f64, int8=i8, int16=i16, int32=i32, int64=i64,
    uint8=u8, uint16=u16, uint32=u32, uint64=u64)
primitive_types.all_types = primitive_types.real_types + primitive_types.integer_types
