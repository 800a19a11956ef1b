"""`gr.field(dtype, shape)`: a global container kernels use by name.

A field is a device array with a fixed shape that kernels reach as a Python global (or a
template argument) instead of a parameter: `loss = gr.field(gr.f32, shape=())` then
`loss[None] += ...` inside any kernel. It has the methods of `gr.ndarray`, element
access from the host (`loss[None]`, `f[i, j] = v`) included.
"""
from __future__ import annotations

import math
import numbers

from gfxrt.compiler.npcompat import np
from gfxrt.compiler.sparse import host_activate, host_active
from gfxrt.compiler.spec import FieldInfo
from gfxrt.compiler.structs import StructType
from gfxrt.compiler.types import DType, scalar_of

from ..engine import context
from ..errors import CompileError, GfxrtError, GradDtypeError
from .ndarray import _FIELDS, Ndarray, as_element_type  # _FIELDS: FieldInfo.key -> Field (and data_oriented members)


class Field(Ndarray):
    """A global device container; see `gr.field`."""

    _what = "gr.field"
    __gfxrt_sparse__ = None  # under sparse SNodes: compiler.sparse.SparseField (set when placed)
    _pool = None  # in a dynamic SNode's chunk pool: its ChunkPool (gfxrt/data/pool.py)

    def __init__(self, dtype, shape=(), needs_grad: bool = False, offset=None, storage_shape=None):
        super().__init__(dtype, shape, needs_grad=False, storage_shape=storage_shape)
        if needs_grad and not self._scalar.is_float:
            raise GradDtypeError(f"{self.dtype} is not supported for field with `needs_grad=True` or "
                                 "`needs_dual=True`: gradients need a float dtype")
        self.offset = as_offset(offset, self.shape)
        self.needs_grad = bool(needs_grad)
        self.grad = Field(self.element_type, self.shape, offset=self.offset) if needs_grad else None
        stored = None if storage_shape is None else math.prod(self._storage_shape + self.element_shape)
        self._info = FieldInfo(id(self), self.element_type, self.shape, self.needs_grad, self.offset, stored)
        _FIELDS[id(self)] = self

    @property
    def __gfxrt_field__(self) -> FieldInfo:
        """What the compiler needs to know about this field (see compiler.spec.FieldInfo)."""
        return self._info

    def __getattr__(self, attr):
        if "_pending" in self.__dict__:  # declared without a shape and not placed yet (gfxrt/taichi/snode.py)
            raise unplaced_error(self, attr)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

    def __repr__(self) -> str:
        tail = f", offset={self.offset}" if self.offset else ""
        return f"gr.field({self.element_type}, shape={self.shape}{tail})"

    def parent(self, n: int = 1):
        """Taichi's `x.parent()`: the SNode the field is placed under (`x.snode.parent(n)`)."""
        return self.snode.parent(n)

    def _metas(self) -> dict:
        return {n: n.meta.to_numpy() for n in self.__gfxrt_sparse__.node.chain()}

    def _active(self) -> np.ndarray:
        """Under sparse SNodes: which elements are active (a readback of the nodes' state)."""
        return host_active(self.__gfxrt_sparse__, self.shape, self._metas(), np)

    def _activate(self, points) -> None:
        """Under sparse SNodes: activate the elements at `points` (an index array per dimension)."""
        for n, m in host_activate(self.__gfxrt_sparse__, self.shape, points, self._metas(), np).items():
            n.meta.from_numpy(m)

    def _expand(self, mask) -> np.ndarray:
        return mask.reshape(self.shape + (1,) * len(getattr(self, "element_shape", ())))

    def _taichi_shape(self, keep_dims: bool) -> tuple:
        """Taichi's MatrixField.to_numpy shape: an n x 1 matrix element is n numbers unless
        keep_dims; with keep_dims a vector element is an n x 1 matrix."""
        es = tuple(getattr(self.element_type, "shape", ()))
        if len(es) == 2 and es[1] == 1 and not keep_dims:
            es = es[:1]
        elif len(es) == 1 and keep_dims:
            es = es + (1,)
        return tuple(self.shape) + es

    def _np(self, a) -> np.ndarray:
        a = np.asarray(a)
        if a.shape != self._np_shape and a.shape in (self._taichi_shape(False), self._taichi_shape(True)):
            a = a.reshape(self._np_shape)  # Taichi's to_numpy forms come back in
        return super()._np(a)

    def to_numpy(self, dtype=None, keep_dims: bool = False) -> np.ndarray:
        """Ndarray.to_numpy with Taichi's keep_dims (MatrixField.to_numpy(keep_dims=False,
        dtype=None): an n x 1 matrix field gives shape + (n,) unless keep_dims, and a vector
        field gives shape + (n, 1) with it); a pooled field's dense form is built from its lists."""
        if isinstance(dtype, bool):  # Taichi's positional order for matrix fields: to_numpy(keep_dims, dtype)
            dtype, keep_dims = None, dtype
        if self._pool is None:
            out = super().to_numpy(dtype)
        else:
            out = self._pool.dense(self)
            out = out if dtype is None else out.astype(np.dtype(getattr(dtype, "numpy", dtype)))
        return out.reshape(self._taichi_shape(keep_dims))

    def to_list(self) -> list:
        """Ndarray.to_list; a pooled field's dense form is built from its lists (with numpy)."""
        return super().to_list() if self._pool is None else self.to_numpy().tolist()

    def from_numpy(self, a) -> None:
        """Ndarray.from_numpy; under sparse SNodes, as Taichi's, it writes the active elements only."""
        if self._pool is not None:
            self._pool.scatter(self, self._np(a))
            return
        super().from_numpy(a if self.__gfxrt_sparse__ is None else
                           np.where(self._expand(self._active()), self._np(a), 0))

    def fill(self, value) -> None:
        """Ndarray.fill; under sparse SNodes, as Taichi's, it sets the active elements only."""
        if self.__gfxrt_sparse__ is None or (np.ndim(value) == 0 and value == 0):
            super().fill(value)
            return
        if self._pool is not None:
            self._pool.scatter(self, np.broadcast_to(np.asarray(value, self._scalar.numpy), self.element_shape))
            return
        one = np.broadcast_to(np.asarray(value, self._scalar.numpy), self._np_shape)
        super().from_numpy(np.where(self._expand(self._active()), one, 0))

    def __setitem__(self, idx, value) -> None:
        """Ndarray's host write; under sparse SNodes it also activates the element's cells."""
        super().__setitem__(idx, value)
        if self.__gfxrt_sparse__ is not None:
            index = (idx if isinstance(idx, tuple) else (idx,)) if idx is not None else ()
            self._activate([[int(i)] for i in index])

    @context.locked
    def copy_from(self, src, src_offset: int = 0, dst_offset: int = 0, count: int | None = None) -> None:
        """Ndarray.copy_from; also Taichi's converting copy of a whole field of another dtype
        (an i32 field into an f32 one), through the host as numpy's astype (a readback: not
        inside gr.graph() capture). A whole copy into a field under sparse SNodes is Taichi's
        loop over every element: all are written (inactive source elements read 0) and
        activated, also through the host."""
        whole = src_offset == 0 and dst_offset == 0 and count is None
        if self._pool is not None or getattr(src, "_pool", None) is not None:
            raise GfxrtError("copy_from() of a field in a dynamic SNode's chunk pool is not supported: copy in a "
                             "kernel, or through to_numpy() / from_numpy()")
        if whole and isinstance(src, Ndarray) and self.__gfxrt_sparse__ is not None:
            if tuple(src.shape) != tuple(self.shape):
                raise ValueError(f"copy_from: shapes differ ({src.shape} -> {self.shape})")
            Ndarray.from_numpy(self, np.asarray(src.to_numpy()).astype(self._scalar.numpy))
            self._activate(np.indices(self.shape).reshape(len(self.shape), -1))
            return
        if isinstance(src, Field) and src.element_type != self.element_type and whole \
                and getattr(src, "element_shape", ()) == getattr(self, "element_shape", ()):
            if tuple(src.shape) != tuple(self.shape):
                raise ValueError(f"copy_from: shapes differ ({src.shape} -> {self.shape})")
            self.from_numpy(np.asarray(src.to_numpy()).astype(np.dtype(self.dtype.np)))
            return
        super().copy_from(src, src_offset, dst_offset, count)


def as_offset(offset, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Taichi's `offset=` of a field: the index of its first element per axis, an int for a 1-d
    field; () when every axis starts at 0."""
    if offset is None or (isinstance(offset, (tuple, list)) and not offset):
        return ()
    off = (offset,) if isinstance(offset, numbers.Integral) else tuple(offset)
    if len(off) != len(shape) or not all(isinstance(o, numbers.Integral) and not isinstance(o, bool) for o in off):
        raise ValueError(f"offset={offset!r}: one integer per axis of the shape {shape} is needed")
    return tuple(int(o) for o in off) if any(off) else ()


class _ElementKind(type):
    """`isinstance(x, gr.ScalarField)`: a gr.Field whose elements are of that kind (gfxrt has one
    field class; Taichi's names are kinds of it)."""

    def __instancecheck__(cls, obj) -> bool:
        elem = obj.__dict__.get("dtype") if "_pending" in getattr(obj, "__dict__", {}) else \
            getattr(obj, "element_type", None)
        return isinstance(obj, Field) and elem is not None and isinstance(elem, DType) == cls._of_scalars


class ScalarField(Field, metaclass=_ElementKind):
    """Taichi's `ti.ScalarField`: `isinstance(f, gr.ScalarField)` for a field of scalars."""

    _of_scalars = True


class MatrixField(Field, metaclass=_ElementKind):
    """Taichi's `ti.MatrixField`: `isinstance(f, gr.MatrixField)` for a field of vectors or matrices."""

    _of_scalars = False


# struct types: gr.field takes members as a dict (gfxrt/taichi/structs.py, above, re-exports `struct`)

def _member_type(t):
    if isinstance(t, (StructType,)):
        return t
    if isinstance(t, dict):
        return struct(**t)
    return as_element_type(t)


def struct(**members) -> StructType:
    """`gr.types.struct(a=gr.f32, v=vec3, s=other_struct)`: a struct type (Taichi's
    `ti.types.struct`). Call it to make a value: `S(a=1.0, v=vec3(0))` in kernels and on the host."""
    if not members:
        raise ValueError("a struct needs at least one member")
    return StructType(tuple((n, _member_type(t)) for n, t in members.items()))


def field(dtype, shape=None, needs_grad: bool = False, name: str = "", order=None, offset=None,
          needs_dual: bool = False) -> Field:
    """Allocate a global container: `gr.field(gr.f32, shape=(n,))`; kernels use it by name.
    Without a shape (Taichi's `ti.field(ti.f32)`) the field is allocated when an SNode places
    it: `gr.root.dense(gr.i, n).place(x)` (see gfxrt/taichi/snode.py); `shape=()` is a 0-d field.
    Taichi's `order=` (a memory layout) is accepted and changes nothing a program sees;
    `needs_dual=True` (forward mode) is `needs_grad=True`, whose arrays carry the tangents;
    `offset=(o0, o1, ...)` makes `x[o0, o1, ...]` its first element (Taichi's: kernels, loops over
    the field and `x[i]` on the host use these indices; `to_numpy()` starts at the first element)."""
    needs_grad = needs_grad or needs_dual
    context.runtime()
    if isinstance(dtype, dict):  # members as a dict, as gr.Struct.field({...}) takes them
        dtype = struct(**dtype)
    if type(dtype).__name__ == "StructType":  # gr.field(S, shape=...): a struct field (gfxrt/taichi/structs.py)
        return dtype.field(shape=shape, needs_grad=needs_grad, offset=offset)
    if shape is None:
        if offset is not None:
            raise ValueError("offset= needs a shape: give both, or place the field with "
                             "gr.root.dense(...).place(x, offset=...)")
        return unplaced_field(dtype, needs_grad)
    return Field(dtype, shape, needs_grad, offset)


def resolve(key: int, rt=None) -> Field:
    """The live field with this FieldInfo.key (on runtime `rt`, if given)."""
    f = _FIELDS.get(key)
    if f is None:
        raise ValueError("a kernel uses a gr.field that no longer exists; re-create the kernel's globals "
                         "before launching it")
    if rt is not None and f._rt is not rt:
        raise GfxrtError(f"{f!r} was created before the last gr.init(); fields live on one device: create them "
                         "again after gr.init()")
    return f


# Taichi's field without a shape (`gr.field(gr.f32)`), placed later by an SNode (gfxrt/taichi/snode.py)

def unplaced_field(dtype, needs_grad: bool = False, name: str | None = None, _adjoint: bool = False) -> Field:
    """A field without storage yet (`gr.field(gr.f32)`): an SNode's `place` allocates it."""
    dtype = as_element_type(dtype)
    f = Field.__new__(Field)
    f.__dict__.update(dtype=dtype, shape=None, needs_grad=bool(needs_grad), derived_from=None,
                      _pending=(dtype, bool(needs_grad)))
    f.grad = None
    if _adjoint:
        return f
    if scalar_of(dtype).is_float:  # as in Taichi, every float field has an adjoint to place
        f.grad = unplaced_field(dtype, _adjoint=True)
        f.grad.derived_from = ("grad", f)
    elif needs_grad:
        raise GradDtypeError(f"{dtype} is not supported for field with `needs_grad=True` or "
                                 "`needs_dual=True`: gradients need a float dtype")
    return f


def unplaced_error(f: Field, attr: str):
    msg = (f"this gr.field({f.__dict__.get('dtype')}) has no shape and was never placed: place it first "
           "(gr.root.dense(gr.i, n).place(x)) or give it a shape (gr.field(dtype, shape=n))")
    if attr in ("__gfxrt_field__", "_info"):  # the compiler binding it
        return CompileError(msg)
    return GfxrtError(msg)
