"""A sparse matrix builder in a kernel: `A[i, j] += v` appends the triplet (i, j, v).

Taichi's `ti.types.sparse_matrix_builder()` argument. The builder's Python object exposes
`__gfxrt_triplets__ = (index_field, value_field, capacity)`: an i32 field whose word 0 counts the
triplets and whose words 1 + 2k, 2 + 2k hold triplet k's row and column, and a field of the
builder's dtype with triplet k's value at k. An update takes a slot with one atomic add on the
counter and writes the triplet there when the slot is below the capacity; the counter keeps
counting past it, so the host sees an overflow instead of losing triplets silently. Only `+=`
and `-=` (a negated value) are updates: a builder cannot be read or assigned, as in Taichi.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from .. import semantic as sem
from ..ir import AtomicAttr, Loc, Node, Op, const
from ..types import i32, u1
from .values import ArrayValue, Compound


@dataclass(frozen=True)
class TripletsValue:
    """A builder bound in a kernel: its two fields and its capacity."""

    name: str
    index: ArrayValue
    values: ArrayValue
    capacity: int


class TripletLV:
    """`A[i, j]` on a builder: a target of `+=` / `-=` only."""

    def __init__(self, b: TripletsValue, row: Node, col: Node, label: str):
        self.b, self.row, self.col, self.label = b, row, col, label

    def load(self, fe, loc):
        fe.error(f"{self.label}: a sparse matrix builder is filled with `+=` or `-=`; it cannot be read "
                 "(build() it into a gr.linalg.SparseMatrix first)", loc)

    def store(self, fe, value, loc):
        fe.error(f"{self.label}: a sparse matrix builder is filled with `+=` or `-=`, not assigned "
                 "(entries at the same position add up when it is built)", loc)

    def atomic(self, fe, op, value, loc, want_old):
        if op not in ("add", "sub"):
            self.load(fe, loc)
        b = self.b
        v = sem.as_node(fe.scalar(value, loc), loc, b.values.dtype)
        if op == "sub":
            v = sem.unary(Op.NEG, v, loc)
        v = fe.materialize(v, loc)
        slot = fe.new_local("triplet", i32)
        one = const(1, i32, loc)
        fe.emit(Node(Op.ATOMIC, attr=AtomicAttr("add", b.index.buf, slot), args=(const(0, i32, loc), one), loc=loc))
        k = Node(Op.VAR, i32, attr=slot, loc=loc)
        fits = Node(Op.LT, u1, (k, const(b.capacity, i32, loc)), loc=loc)
        with fe.block() as write:
            at = Node(Op.ADD, i32, (Node(Op.MUL, i32, (k, const(2, i32, loc)), loc=loc), const(1, i32, loc)), loc=loc)
            fe.emit(Node(Op.STORE, attr=b.index.buf, args=(at, self.row), loc=loc))
            at1 = Node(Op.ADD, i32, (at, const(1, i32, loc)), loc=loc)
            fe.emit(Node(Op.STORE, attr=b.index.buf, args=(at1, self.col), loc=loc))
            fe.emit(Node(Op.STORE, attr=b.values.buf, args=(k, v), loc=loc))
        fe.emit(Node(Op.IF, args=(fits,), blocks=(tuple(write), ()), loc=loc))
        return None


class TripletsMixin:
    def bind_triplets(self, obj, name: str) -> TripletsValue:
        index, values, capacity = obj.__gfxrt_triplets__
        return TripletsValue(name, self.bind_field(index, f"{name}_ij", None),
                             self.bind_field(values, f"{name}_v", None), int(capacity))

    def triplet_lvalue(self, b: TripletsValue, sl, loc: Loc) -> TripletLV:
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        vals = [self.visit(it) for it in items]
        if len(vals) == 1 and isinstance(vals[0], Compound) and len(vals[0].shape) == 1:
            vals = list(vals[0].items)  # an index vector from gr.grouped(...)
        if len(vals) != 2:
            self.error(f"{b.name} is a sparse matrix builder: index it with a row and a column, `{b.name}[i, j]`",
                       loc)
        ij = [self.scalar(x, loc) for x in vals]
        if not all(sem.dtype_of(x).is_int for x in ij):
            self.error(f"{b.name}[i, j]: the row and column must be integers", loc)
        row, col = (self.materialize(sem.as_node(x, loc, i32), loc) for x in ij)
        return TripletLV(b, row, col, f"{b.name}[...]")
