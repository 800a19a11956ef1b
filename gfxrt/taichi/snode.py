"""Taichi's layout API, dense part: `gr.root.dense(gr.ij, (n, m)).place(x, y)`.

A field declared without a shape (`x = gr.field(gr.f32)`) is *unplaced* until an SNode
places it; placing allocates it with the shape its path of `dense` nodes gives: one
dimension per distinct axis (in axis order), each the product of the sizes along that axis
(`root.dense(gr.i, 4).dense(gr.i, 8)` gives shape (32,), as in Taichi). Each field keeps
one buffer of its own, row-major in its logical index: Taichi's AoS / SoA choice is a
memory-layout detail that changes no result. A field with needs_grad=True gets its gradient
placed the same way (`lazy_grad()` and `place(x.grad)` are accepted and change nothing).

Sparse SNodes (`pointer`, `bitmasked`, `dynamic`) keep their fields' storage dense and the
cells' state in one meta field per node, a bit per cell (compiler/sparse.py: the model and its
invariant; compiler/frontend/sparse.py: what kernels do with them). `hash` and quantized
storage (bit_struct, quant_array) raise `gr.GfxrtError`.
"""
from __future__ import annotations

import math

from gfxrt.compiler.errors import GfxrtError
from gfxrt.compiler.sparse import SPARSE_BUILTINS, SparseField, SparseNode
from gfxrt.compiler.types import element_shape, i32, scalar_of, u32

from ..data import pool as pool_mod
from ..data.field import _FIELDS, Field, unplaced_field  # noqa: F401  (snode.__all__)
from ..data.ndarray import _spec_id, as_shape
from ..data.pool import ChunkPool
from ..engine import context
from ..kernel import invalidate_all


class Axis:
    """One index axis of a layout: `gr.i` is axis 0, `gr.j` axis 1, ..."""

    def __init__(self, index: int):
        self.index = index

    def __repr__(self) -> str:
        return f"gr.axes({self.index})"


def axes(*indices: int) -> tuple[Axis, ...]:
    """The axes with these numbers: `gr.axes(0, 1)` is `gr.ij`."""
    for k in indices:
        if not isinstance(k, int) or not 0 <= k < 8:
            raise ValueError(f"an axis is an int from 0 to 7, got {k!r}")
    return tuple(Axis(k) for k in indices)


i, j, k, l = axes(0, 1, 2, 3)  # noqa: E741  (Taichi's names)
ij, ik, jk, ijk, ijkl = axes(0, 1), axes(0, 2), axes(1, 2), axes(0, 1, 2), axes(0, 1, 2, 3)

def _axis_list(indices) -> tuple[int, ...]:
    if isinstance(indices, Axis):
        indices = (indices,)
    try:
        out = tuple(a.index if isinstance(a, Axis) else int(a) for a in indices)
    except TypeError:
        raise TypeError(f"SNode axes must be gr.i / gr.ij / gr.axes(...), got {indices!r}") from None
    if len(set(out)) != len(out):
        raise ValueError(f"an SNode names an axis twice: {indices!r}")
    return out


class SNode:
    """A node of the layout tree. Only `dense` nodes (and the root) hold fields."""

    def __init__(self, parent: SNode | None = None, dims: tuple = (), kind: str = "root"):
        self._parent = parent
        self._dims = dims  # ((axis, size), ...) of this node
        self.kind = kind
        self.fields: list[Field] = []
        self.children: list[SNode] = []
        self._sparse: SparseNode | None = None  # pointer / bitmasked / dynamic: its compiler data
        self._chunk: int | None = None  # dynamic: Taichi's chunk_size (the pool's granule)

    __gfxrt_compile_time__ = True  # its methods (`x.snode.parent()`) run while a kernel compiles
    __gfxrt_placed__ = None  # a place node (`x.snode`): the field x (gr.get_addr(x.snode, I))

    @property
    def __gfxrt_iter__(self) -> tuple:
        """What a struct-for over this node iterates (`for i, j in block`): its axes, its
        shape and the sparse node whose active cells it visits (itself or the nearest sparse
        ancestor; None under dense nodes only)."""
        path = self._path()
        axes = tuple(sorted({a for n in path for a, _ in n._dims}))
        return axes, self.shape, next((n._sparse for n in reversed(path) if n._sparse is not None), None)

    @property
    def __gfxrt_snode__(self) -> SparseNode | None:
        """The sparse node as the compiler sees it (compiler/sparse.py); None for dense nodes."""
        return self._sparse

    # -- building the tree ---------------------------------------------------------------
    @staticmethod
    def _block(kind: str, indices, dimensions) -> tuple[tuple, tuple]:
        ax = _axis_list(indices)
        sizes = as_shape(dimensions, f"{kind}() sizes")
        if len(sizes) == 1:
            sizes *= len(ax)  # one size for every axis (`dense(gr.ijk, 4)`, `pointer(gr.ijk, [8])`, as Taichi)
        if len(sizes) != len(ax):
            raise ValueError(f"{kind}({indices!r}, {dimensions!r}): one size per axis")
        if any(d < 1 for d in sizes):
            raise ValueError(f"{kind} sizes must be positive, got {sizes}")
        return ax, sizes

    def dense(self, indices, dimensions) -> SNode:
        """A dense block of `dimensions` cells along `indices` (gr.i, gr.ij, ...) under this node."""
        child = SNode(self, tuple(zip(*self._block("dense", indices, dimensions))), "dense")
        self.children.append(child)
        return child

    def _sparse_child(self, kind: str, ax: tuple, sizes: tuple, dyn_axis=None) -> SNode:
        child = SNode(self, tuple(zip(ax, sizes)), kind)
        path = child._path()
        above = next((n._sparse for n in reversed(path[:-1]) if n._sparse is not None), None)
        axes = tuple(sorted({a for n in path for a, _ in n._dims}))
        if dyn_axis is not None and any(a == dyn_axis for n in path[:-1] for a, _ in n._dims):
            raise GfxrtError("a dynamic SNode's axis must not appear above it (Taichi's rule too)")
        sn = SparseNode(kind, axes, child.shape, above, dyn_axis)
        sn.meta = Field(u32 if sn.bits else i32, sn.meta_words)
        for p in sn.chain()[:-1]:
            p.members.append((sn, sn.meta_axes))
        child._sparse = sn
        _SPARSE.append(sn)
        self.children.append(child)
        return child

    def pointer(self, indices, dimensions) -> SNode:
        """Cells along `indices` that are active only once written or activated (Taichi's
        pointer). gfxrt backs them densely, with one activity bit per cell."""
        return self._sparse_child("pointer", *self._block("pointer", indices, dimensions))

    def bitmasked(self, indices, dimensions) -> SNode:
        """Cells along `indices`, each active or not (Taichi's bitmasked): struct-for loops
        visit the active ones only."""
        return self._sparse_child("bitmasked", *self._block("bitmasked", indices, dimensions))

    def dynamic(self, index, dimension, chunk_size=None) -> SNode:
        """A list of at most `dimension` cells along `index` per parent cell (Taichi's
        dynamic): gr.append / gr.length / writes grow it, gr.deactivate empties it.
        Large ones live in a chunk pool (gfxrt/data/pool.py), whose chunks hold at most
        `chunk_size` elements (Taichi's allocation granule); a program sees no difference."""
        ax, sizes = self._block("dynamic", index, dimension)
        if len(ax) != 1:
            raise ValueError("dynamic() takes one axis")
        if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
            raise ValueError(f"dynamic(): chunk_size must be a positive int, got {chunk_size!r}")
        child = self._sparse_child("dynamic", ax, sizes, ax[0])
        child._chunk = chunk_size
        return child

    def hash(self, *args, **kwargs):
        raise GfxrtError("SNode kind 'hash' is not supported (Taichi deprecated it): use pointer or bitmasked")

    def bit_struct(self, *args, **kwargs):
        raise GfxrtError("SNode kind 'bit_struct' (quantized storage) is not supported; store full-width "
                         "gr.i32 / gr.f32 fields")

    bit_array = quant_array = bit_struct

    def place(self, *fields, offset=None) -> SNode:
        """Allocate each field (and its gradient, if it has one) with this node's shape;
        `offset=` (Taichi's) is the index of the fields' first element per axis."""
        for f in fields:
            if isinstance(f, (list, tuple)):
                self.place(*f, offset=offset)
                continue
            if getattr(type(f), "__gfxrt_struct_field__", False):  # a struct field: its members (taichi/structs.py)
                self.place(*f.members.values(), offset=offset)
                continue
            if not isinstance(f, Field):
                raise TypeError(f"place() takes fields declared with gr.field(dtype), not {type(f).__name__}")
            if getattr(f, "_pending", None) is None:
                if f.derived_from is not None and getattr(f, "shape", None) == self.shape:
                    continue  # `place(x.grad)` after x (and its grad) were placed: nothing to do
                raise GfxrtError(f"{f!r} is already placed (or was created with a shape): a field is placed once")
            pool = self._pool_for(f, offset)
            _materialize(f, self.shape, offset, pool)
            self._place_sparse(f)
            f.snode = SNode(self, (), "place")  # Taichi's x.snode: a place node; .parent() is this node
            f.snode.__gfxrt_placed__ = f
            self.fields.append(f)
            primal = f.derived_from[1] if f.derived_from else None
            if primal is not None and not _is_pending(primal):  # `place(x.grad)` after x
                _add_grad(primal, f)
        return self

    def _pool_for(self, f: Field, offset) -> ChunkPool | None:
        """The chunk pool a field placed here lives in (gfxrt/data/pool.py), or None (dense).
        A dynamic node under dense nodes only, with its fields placed directly under it, is
        pooled when the dense storage of its first field would exceed POOL_THRESHOLD_BYTES:
        below that dense storage costs little and needs no chain walk per access."""
        sn = self._sparse
        if sn is None or sn.kind != "dynamic" or sn.parent is not None or offset is not None:
            return None
        axes = tuple(sorted({a for n in self._path() for a, _ in n._dims}))
        if axes != sn.axes or axes[-1] != sn.dyn_axis:
            return None
        if not sn.pool_decided:
            sn.pool_decided = True
            dtype = f._pending[0]
            nbytes = math.prod(self.shape) * scalar_of(dtype).size * math.prod(element_shape(dtype))
            if nbytes > pool_mod.POOL_THRESHOLD_BYTES:
                sn.pool = ChunkPool(sn, sn.meta_shape, sn.cap, self._chunk or sn.cap,
                                    scalar_of(dtype).size * math.prod(element_shape(dtype)))
        if sn.pool is not None and f._pending[1]:
            raise GfxrtError(f"{f._pending[0]} fields with needs_grad=True cannot be placed in a dynamic SNode "
                             "as large as this one (its lists live in a chunk pool, which gradients do not have)")
        return sn.pool

    def _place_sparse(self, f: Field) -> None:
        """A field under sparse nodes: tell the compiler (f.__gfxrt_sparse__) and make it a
        member of each, so deactivating a cell zeroes it."""
        path = self._path()
        inner = next((n._sparse for n in reversed(path) if n._sparse is not None), None)
        if inner is None:
            return
        axes = tuple(sorted({a for n in path for a, _ in n._dims}))
        f.__gfxrt_sparse__ = SparseField(inner, axes)
        for sn in inner.chain():
            sn.members.append((f, axes))

    def lazy_grad(self) -> SNode:
        """Give every float field under this node a gradient, as Taichi does (under `gr.root`:
        every live field, those created with a shape included). Fields declared with
        needs_grad=True have theirs already."""
        if self._parent is None and not isinstance(self, FieldsBuilder):
            fields = [f for f in list(_FIELDS.values()) if f._rt is context.runtime()]
        else:
            fields = self._subtree_fields()
        grads = {id(f.grad) for f in fields if f.grad is not None}
        added = False
        for f in fields:
            if _is_pending(f.grad):
                _materialize(f.grad, f.shape, f.offset)
                _add_grad(f, f.grad)
                added = True
            elif f.grad is None and id(f) not in grads and f.derived_from is None and f._scalar.is_float \
                    and getattr(f, "const_data", None) is None and getattr(f, "_pool", None) is None:
                _add_grad(f, Field(f.element_type, f.shape, offset=f.offset))
                added = True
        if added:
            invalidate_all()  # kernels compiled before see the fields' new gradients
        return self

    def _subtree_fields(self) -> list[Field]:
        out = list(self.fields)
        for c in self.children:
            out += c._subtree_fields()
        return out

    def lazy_dual(self) -> SNode:
        """Give every float field under this node a forward-mode tangent (`.dual`, allocated
        on first use), as Taichi does. In gfxrt a tangent comes with a gradient, so this is
        `lazy_grad()`: such fields can be FwdMode's loss and param."""
        return self.lazy_grad()

    # -- inspecting ----------------------------------------------------------------------
    def _path(self) -> list[SNode]:
        out, n = [], self
        while n is not None:
            out.append(n)
            n = n._parent
        return out[::-1]

    @property
    def shape(self) -> tuple[int, ...]:
        """One extent per distinct axis on the path from the root, in axis order."""
        sizes: dict[int, int] = {}
        for n in self._path():
            for a, d in n._dims:
                sizes[a] = sizes.get(a, 1) * d
        return tuple(sizes[a] for a in sorted(sizes))

    def parent(self, n: int = 1):
        p = self
        for _ in range(n):
            p = p._parent
            if p is None:
                return None
        return p

    def deactivate_all(self) -> None:
        """Deactivate every cell under this node: sparse cells become inactive, and as in
        Taichi, the fields under it read 0 (dense cells are always active: zero-filled)."""
        if self._sparse is not None:
            self._sparse.meta.fill(0)
            if self._sparse.pool is not None:
                self._sparse.pool.reset()
        for f in self.fields:
            f.fill(0)
        for c in self.children:
            c.deactivate_all()

    def __repr__(self) -> str:
        return f"<gr SNode {self.kind} shape={self.shape}>"


class FieldsBuilder(SNode):
    """`gr.FieldsBuilder()`: a separate layout tree; `finalize()` returns a tree handle."""

    def finalize(self, raise_warning: bool = True) -> SNodeTree:
        return SNodeTree(self)


class SNodeTree:
    def __init__(self, root: SNode):
        self.root = root

    def destroy(self) -> None:
        """Release the tree's fields' memory (the fields can no longer be used)."""
        def walk(n):
            for f in n.fields:
                f._buffer = None
            for c in n.children:
                walk(c)
        walk(self.root)


root = SNode()


def _is_pending(f) -> bool:
    return f is not None and "_pending" in f.__dict__


def _materialize(f: Field, shape: tuple[int, ...], offset=None, pool: ChunkPool | None = None) -> None:
    dtype, needs_grad = f._pending
    grad, derived = f.grad, f.derived_from
    del f.__dict__["_pending"]
    Field.__init__(f, dtype, shape, needs_grad=False, offset=offset,
                   storage_shape=None if pool is None else (pool.slots * pool.chunk,))
    f.derived_from = derived
    if pool is not None:
        f._pool = pool
        pool.add(f)
        f.grad = None  # pooled fields have no gradient (see SNode._pool_for)
        return
    if grad is None:
        return
    if needs_grad and _is_pending(grad):
        _materialize(grad, shape, offset)
    if _is_pending(grad):
        f.grad = grad  # declared, not placed: place(x.grad) or lazy_grad() places it
    else:
        _add_grad(f, grad)


def _add_grad(f: Field, grad: Field) -> None:
    """Make `grad` the gradient of the allocated field f (f becomes needs_grad)."""
    from gfxrt.compiler.spec import FieldInfo

    grad.derived_from = ("grad", f)
    f.needs_grad, f.grad = True, grad
    f._info = FieldInfo(id(f), f.element_type, f.shape, True, f.offset)  # the element type: a Vector field stays one
    f._spec_id = _spec_id((f.element_type, len(f.shape), True, f.chunks))


_SPARSE: list[SparseNode] = []  # every sparse node made (gr.deactivate_all_snodes)


def deactivate_all_snodes() -> None:
    """Taichi's `ti.deactivate_all_snodes()`: every sparse cell becomes inactive (what lies
    under it reads 0); dense cells keep their values."""
    rt = context.runtime()
    for sn in _SPARSE:
        if sn.meta._rt is not rt or sn.meta.__dict__.get("_buffer") is None:
            continue  # from before the last gr.init / a destroyed tree
        sn.meta.fill(0)
        if sn.pool is not None:
            sn.pool.reset()
        for f, _ in sn.members:
            f = f.meta if isinstance(f, SparseNode) else f
            if f._rt is rt and f.__dict__.get("_buffer") is not None:
                f.fill(0)

__all__ = ["Axis", "axes", "i", "j", "k", "l", "ij", "ik", "jk", "ijk", "ijkl", "SNode", "FieldsBuilder",
           "SNodeTree", "root", "unplaced_field", "SPARSE_BUILTINS", "deactivate_all_snodes"]
