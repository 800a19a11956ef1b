"""Which element of an array an index addresses, relative to a parallel task's own item.

Reverse mode may replace a grad kernel's atomic scatter by a gather (gather.py) only where it
can prove which items touch which elements. In a range task whose item index is `i` (the
task's injective local, reverse.py `_injective_index`), `column(idx, buf, i)` recognizes

    a[i + c]                       1-D: element i + c
    a[u..., i + c]                 two or more dimensions of scalars: column i + c of row u,
                                   u uniform (params and constants only)

and returns (row, c): the uniform part of the flat index (`u * inner`) and the constant
column offset c, or (None, c) for a flat index `i + c` (any array; also `a[1, i - 1]` of a
field, whose constant row folds into c). Two items i != i' then address different elements
through the same offset c, whatever their rows: the columns differ, and the bounds rule keeps
a column below the last extent (`Buffer.inner`), so that a column never spills into the next
row. A flat index the user computed by hand on a 1-D array (`a[t * n + i]`) is not
recognized: nothing bounds `i` by `n` there.
"""
from __future__ import annotations

from ..ir import Buffer, Node, Op, walk_node
from ..types import i32

# ops whose value is the same for every item when their operands are
_UNIFORM = frozenset({Op.CONST, Op.PARAM, Op.ADD, Op.SUB, Op.MUL, Op.NEG, Op.FLOORDIV, Op.MOD, Op.MIN, Op.MAX})


def is_uniform(e: Node) -> bool:
    """True when `e` reads nothing but params and constants."""
    return all(n.op in _UNIFORM for n in walk_node(e))


def offset(e: Node, item: str) -> int | None:
    """c when e is `item + c` (c a constant int, possibly 0, through any nesting of + and -
    with constants), else None."""
    if e.op is Op.VAR:
        return 0 if e.attr == item else None
    if e.op in (Op.ADD, Op.SUB) and len(e.args) == 2:
        a, b = e.args
        if _int(b):
            c = offset(a, item)
            return None if c is None else c + (b.attr if e.op is Op.ADD else -b.attr)
        if e.op is Op.ADD and _int(a):
            c = offset(b, item)
            return None if c is None else c + a.attr
    return None


def _int(n: Node) -> bool:
    return n.op is Op.CONST and isinstance(n.attr, int) and not isinstance(n.attr, bool)


def loop_start(e: Node, index_var: str) -> tuple[Node, int] | None:
    """(begin, step) when e computes a range task's item from its thread index: `index_var`
    (begin 0, step 1), `begin + index_var` or `begin + index_var * step` (step a nonzero
    constant); None otherwise. The caller decides what `begin` may read."""
    if e.op is Op.VAR and e.attr == index_var:
        return Node(Op.CONST, i32, attr=0), 1
    if e.op is not Op.ADD:
        return None
    begin, scaled = e.args
    if scaled.op is Op.VAR and scaled.attr == index_var:  # (a step of 1, folded)
        return begin, 1
    if scaled.op is Op.MUL:
        t, step = scaled.args
        if t.op is Op.VAR and t.attr == index_var and step.op is Op.CONST and step.attr != 0:
            return begin, step.attr
    return None


def _is_inner(n: Node, inner) -> bool:
    if isinstance(inner, str):
        return n.op is Op.PARAM and n.attr == inner
    return n.op is Op.CONST and n.attr == inner


def column(idx: Node, buf: Buffer, item: str) -> tuple[Node | None, int] | None:
    """(uniform row part of the flat index or None, column offset c) when `idx` addresses
    column `item + c` of `buf` (see the module docstring); None when that is not provable."""
    c = offset(idx, item)
    if c is not None:
        return None, c
    if buf.inner is None or idx.op is not Op.ADD:
        return None
    for row, col in (idx.args, idx.args[::-1]):
        c = offset(col, item)
        if c is None or row.op is not Op.MUL:
            continue
        a, b = row.args
        if (_is_inner(b, buf.inner) and is_uniform(a)) or (_is_inner(a, buf.inner) and is_uniform(b)):
            return row, c
    return None  # (a constant row, `33 + (i - 1)`, is a flat offset: `offset` above)
