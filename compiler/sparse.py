"""Sparse SNodes as the compiler sees them: plain data, no device.

A sparse node (Taichi's `pointer`, `bitmasked`, `dynamic`) keeps its cells' state in one
*meta* field (gfxrt/taichi/snode.py allocates it):

- `pointer` / `bitmasked`: one bit per cell of the node (u32 words, row-major), set when the
  cell is active;
- `dynamic`: one i32 per cell of its parent, the list's length.

Fields under a sparse node keep dense storage. Invariant: an inactive cell's data is zero
(deactivating a cell zeroes the data of every field under it and the state of every sparse
node under it), so a read needs no check and reads of inactive cells give 0, as Taichi
documents. A write activates the cell on every sparse level above the element (an atomic or
of its bit, or for `dynamic` an atomic max of the length); a struct-for visits the elements
whose cells are active on every level (docs/design.md, "Sparse SNodes").

Indices: each node has its axes (Taichi's gr.i, gr.j, ... numbers) and its extent per axis;
an element of a field with extents E maps to the node's cell `I[a] // (E[a] // ext[a])` on
each axis of the node.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import semantic as sem
from .builtins import Builtin
from .ir import Op

# A pooled dynamic node's chunk table (gfxrt/data/pool.py builds it, compiler/frontend/pool.py
# looks chunks up): where a key's probe starts, `(key * POOL_HASH mod 2^32) mod capacity`, and
# how many slots it looks at.
POOL_HASH = 0x9E3779B1
POOL_MAX_PROBES = 64


class SparseNode:
    """One sparse SNode: `kind` ('pointer', 'bitmasked', 'dynamic'), its `axes` (sorted axis
    numbers), `ext` (extent per axis, the node's own resolution), `meta` (the field of the
    cells' state: `meta_words` u32 words of one bit per cell, row-major over `meta_shape`, or
    for dynamic one i32 length per list), `parent` (the nearest sparse ancestor or None),
    `dyn_axis` and `cap` (dynamic only: the list's axis and capacity) and `members`: (field,
    axes) of every field placed under the node and (node, axes) of every sparse node under
    it, whose data or state deactivating a cell zeroes."""

    def __init__(self, kind: str, axes: tuple, ext: tuple, parent: SparseNode | None, dyn_axis: int | None = None):
        self.kind, self.axes, self.ext, self.parent, self.dyn_axis = kind, tuple(axes), tuple(ext), parent, dyn_axis
        self.cap = ext[axes.index(dyn_axis)] if dyn_axis is not None else None
        self.bits = kind != "dynamic"
        self.meta: Any = None
        self.members: list[tuple[Any, tuple]] = []
        # a dynamic node whose fields live in a chunk pool (gfxrt/data/pool.py): its `chunk` size
        # and its `head`, `next`, `count` fields; None: dense storage
        self.pool: Any = None
        self.pool_decided = False  # set by the first field placed (the decision is per node)

    @property
    def meta_words(self) -> tuple:
        """The meta field's shape: one u32 per 32 cells, or one i32 per list."""
        if not self.bits:
            return self.meta_shape
        n = 1
        for e in self.meta_shape:
            n *= e
        return ((n + 31) // 32,)

    @property
    def meta_axes(self) -> tuple:
        """The axes the meta field is indexed by: the node's, less a dynamic node's list axis."""
        return tuple(a for a in self.axes if a != self.dyn_axis)

    @property
    def meta_shape(self) -> tuple:
        return tuple(e for a, e in zip(self.axes, self.ext) if a != self.dyn_axis)

    def chain(self) -> list[SparseNode]:
        """This node and its sparse ancestors, root first."""
        out, n = [], self
        while n is not None:
            out.append(n)
            n = n.parent
        return out[::-1]

    def __repr__(self) -> str:
        return f"<sparse {self.kind} axes={self.axes} ext={self.ext}>"


@dataclass(frozen=True)
class SparseField:
    """What a field under a sparse node tells the compiler (`field.__gfxrt_sparse__`): the
    innermost sparse node above it and the field's axes (one per dimension, in order)."""

    node: SparseNode
    axes: tuple

    @property
    def signature(self) -> tuple:
        """What the compiled code depends on (the offline cache's fingerprint of the field)."""
        return self.axes, tuple((n.kind, n.axes, n.ext, n.pool and n.pool.chunk) for n in self.node.chain())


def cell_of(axes: tuple, ext: tuple, index: dict, node: SparseNode, div, key=lambda a: a) -> dict:
    """The cell of `node` holding the point `index` (axis -> value) of a space with `axes`
    and extents `ext`: axis -> index[a] // (ext[a] // node.ext[a]), through `div(v, d)`."""
    e = dict(zip(axes, ext))
    out = {}
    for a, n in zip(node.axes, node.ext):
        if a not in e or e[a] % n:
            raise ValueError(f"{node!r} does not divide the index space {dict(zip(axes, ext))}")
        out[a] = div(index[a], e[a] // n)
    return out


def row_major(shape: tuple, idx) -> Any:
    flat = 0
    for e, v in zip(shape, idx):
        flat = flat * e + v
    return flat


def host_activate(sf: SparseField, shape: tuple, points, metas: dict, np) -> dict:
    """Activate the elements at `points` (one index array per dimension) of a field with
    `shape` on every sparse level: the new meta arrays, from the old ones in `metas`
    (node -> numpy array). What a host write does."""
    point = {a: np.asarray(points[d], np.int64) for d, a in enumerate(sf.axes)}
    out = {}
    for n in sf.node.chain():
        c = cell_of(sf.axes, shape, point, n, lambda v, d: v // d)
        m = metas[n].copy()
        if n.bits:
            flat = row_major(n.meta_shape, [c[a] for a in n.meta_axes]) + np.zeros((), np.int64)
            np.bitwise_or.at(m, flat >> 5, (np.uint32(1) << (flat & 31).astype(np.uint32)))
        elif n.meta_axes:
            np.maximum.at(m, tuple(c[a] for a in n.meta_axes), (c[n.dyn_axis] + 1).astype(m.dtype))
        elif c[n.dyn_axis].size:  # one list (a dynamic node under the root)
            m = np.maximum(m, c[n.dyn_axis].max() + 1).astype(m.dtype)
        out[n] = m
    return out


# -- Taichi's builtins: gr.activate & co. (their lowerings: compiler/frontend/sparse.py) --------------

_DOCS = {
    "activate": "gr.activate(snode, I): make cell I of a pointer / bitmasked SNode (and its ancestors) active.",
    "deactivate": "gr.deactivate(snode, I): make cell I inactive; what lies in it reads 0 afterwards. On a "
                  "dynamic SNode: empty the list of cell I.",
    "is_active": "gr.is_active(snode, I): 1 if cell I of a pointer / bitmasked SNode is active, else 0.",
    "append": "gr.append(snode, I, v): append v to the list of cell I of a dynamic SNode; returns its position.",
    "length": "gr.length(snode, I): the length of the list of cell I of a dynamic SNode.",
}


def _sparse_builtin(name: str) -> Builtin:
    def lower(fe, args, kwargs, loc):
        return fe.sparse_builtin(name, args, kwargs, loc)
    return Builtin(name, lower, None, _DOCS[name])


def _rescale_lower(fe, args, kwargs, loc):
    if len(args) != 3 or kwargs:
        fe.error("gr.rescale_index(a, b, I) takes a field or SNode a, an SNode b and an index vector I", loc)
    a, b, index = args
    items = list(index.items) if hasattr(index, "items") and not isinstance(index, dict) else list(index)
    sa, sb = tuple(a.shape), tuple(b.shape)
    out = []
    for k, v in enumerate(items):
        if k < min(len(sa), len(sb)) and sa[k] > sb[k]:  # Taichi's rescale_index: down, or up to b's resolution
            v = sem.binary(Op.FLOORDIV, v, sa[k] // sb[k], loc)
        elif k < min(len(sa), len(sb)) and sa[k] < sb[k]:
            v = sem.binary(Op.MUL, v, sb[k] // sa[k], loc)
        out.append(v)
    return fe.make_vector(tuple(out), None, loc)


SPARSE_BUILTINS = {n: _sparse_builtin(n) for n in _DOCS}
SPARSE_BUILTINS["rescale_index"] = Builtin(
    "rescale_index", _rescale_lower, None, "gr.rescale_index(a, b, I): index I of field / SNode a at the "
    "resolution of SNode b (each component divided by a.shape[k] // b.shape[k], or multiplied by b.shape[k] // "
    "a.shape[k] when b is finer), as Taichi's.")


def host_active(sf: SparseField, shape: tuple, metas: dict, np):
    """The activity of every element of a field with `shape` (a bool array), from the meta
    arrays `metas` (node -> its meta as a numpy array): the host's struct-for."""
    grid = np.indices(shape, dtype=np.int64) if shape else np.zeros((0,), np.int64)
    point = {a: grid[d] for d, a in enumerate(sf.axes)}
    active = np.ones(shape, bool)
    for n in sf.node.chain():
        c = cell_of(sf.axes, shape, point, n, lambda v, d: v // d)
        if n.bits:
            flat = row_major(n.meta_shape, [c[a] for a in n.meta_axes])
            active &= ((metas[n].astype(np.int64)[flat >> 5] >> (flat & 31)) & 1) != 0
        else:
            m = metas[n][tuple(c[a] for a in n.meta_axes)] if n.meta_axes else metas[n][()]
            active &= c[n.dyn_axis] < m
    return active
