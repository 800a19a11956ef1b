"""demote_atomics: atomics no other thread can race with become plain read-modify-writes.

- In a serial task only one thread runs: every atomic is demoted.
- In a parallel task, a buffer whose every access uses the thread's own element (the flat
  index of the loop variables, `x[i]` / `x[i, j]`, or a component of it) is private to the
  thread at each index: `y[i] += x[i]` needs no atomic.

A buffer with no atomic left gets a plain (non-atomic) binding in the generated code.
"""
from __future__ import annotations

from ..ir import VARYING, AtomicAttr, KernelIR, Node, Op, Task, map_block, walk, walk_node
from ..types import DType, u1
from .reductions import atomic_value

_MEMORY = (Op.LOAD, Op.STORE, Op.ATOMIC)


def _buf(n: Node) -> str:
    return n.attr.buf if n.op is Op.ATOMIC else n.attr


def _flat_of(n: Node, names: tuple[str, ...]) -> bool:
    """n == flat row-major index of exactly these loop variables (any extents)."""
    if len(names) == 1:
        return n.op is Op.VAR and n.attr == names[0]
    if n.op is not Op.ADD:
        return False
    prefix, last = n.args
    if not (last.op is Op.VAR and last.attr == names[-1]):
        return False
    if prefix.op is not Op.MUL:
        return False
    inner, extent = prefix.args
    return _invariant(extent) and _flat_of(inner, names[:-1])


def _invariant(n: Node) -> bool:
    return all(x.op not in (Op.VAR, Op.SPECIAL) and x.op not in VARYING for x in walk_node(n))


def owned_index(n: Node, names: tuple[str, ...]) -> bool:
    """The index of an element (or of component k of an element) of the thread's own."""
    if not names:
        return False
    if _flat_of(n, names):
        return True
    if n.op is Op.ADD and n.args[1].op is Op.CONST:
        n, k = n.args[0], n.args[1].attr
    else:
        k = 0
    if n.op is Op.MUL and n.args[1].op is Op.CONST and 0 <= k < n.args[1].attr:
        return _flat_of(n.args[0], names)
    return False


def _single_assignment(task: Task) -> bool:
    counts = {v: 0 for v in task.loop_vars}
    for n in walk(task.body):
        if n.op is Op.ASSIGN and n.attr in counts:
            counts[n.attr] += 1
        if n.op is Op.FOR and n.attr in counts:
            return False
    return all(c == 1 for c in counts.values())


def private_buffers(task: Task) -> set[str]:
    """Buffers every access of which (in this parallel task) is at the thread's own index."""
    if not task.loop_vars or not _single_assignment(task):
        return set()
    ok: dict[str, bool] = {}
    for n in walk(task.body):
        if n.op in _MEMORY:
            b = _buf(n)
            ok[b] = ok.get(b, True) and owned_index(n.args[0], task.loop_vars)
    return {b for b, v in ok.items() if v}


def rmw(s: Node, value_dtype: DType) -> list[Node]:
    """An ATOMIC statement as plain load / (old value) / store."""
    a: AtomicAttr = s.attr
    idx, v = s.args[:2]
    old = Node(Op.LOAD, value_dtype, (idx,), attr=a.buf, loc=s.loc)
    out = []
    if a.dest:
        out.append(Node(Op.ASSIGN, attr=a.dest, args=(old,), loc=s.loc))
        old = Node(Op.VAR, value_dtype, attr=a.dest, loc=s.loc)
    if a.op == "cas":  # old == expected ? value : old
        new = Node(Op.SELECT, value_dtype, (Node(Op.EQ, u1, (old, s.args[2]), loc=s.loc), v, old), loc=s.loc)
    else:
        new = atomic_value(a.op, old, v)
    out.append(Node(Op.STORE, attr=a.buf, args=(idx, new), loc=s.loc))
    return out


def demote_atomics(ir: KernelIR) -> KernelIR:
    for t in ir.tasks:
        private = None if t.kind == "serial" else private_buffers(t)

        def stmt(s: Node, private=private):
            if s.op is Op.ATOMIC and (private is None or s.attr.buf in private):
                return rmw(s, s.args[1].dtype)
            return [s]
        t.body = map_block(t.body, stmt)
    return ir
