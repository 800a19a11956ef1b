"""reductions (a codegen pass): atomics on one uniform address inside a parallel task
become per-thread accumulators, combined per block at the end of the task, then applied
with one atomic per block (`s += x[i]` on a kernel-scope total, `loss[None] += ...`).

The rewritten task lists its `Reduction`s; the code generator emits the accumulator
initialization before the grid-stride loop and the block combine after it (subgroup ops
where the target has them, else a tree in workgroup memory).
"""
from __future__ import annotations

from ..ir import VARYING, AtomicAttr, KernelIR, Node, Op, Reduction, map_block, node_key, walk_node
from ..types import f16

_BIN = {"add": Op.ADD, "sub": Op.SUB, "min": Op.MIN, "max": Op.MAX, "and": Op.BITAND, "or": Op.BITOR,
        "xor": Op.BITXOR, "mul": Op.MUL}
REDUCIBLE = frozenset(_BIN) - {"mul"}  # gr.atomic_mul stays a (compare-and-swap) atomic


def atomic_value(op: str, old: Node, v: Node) -> Node:
    """The value an atomic `op` leaves: old op v."""
    return Node(_BIN[op], old.dtype, (old, v), loc=v.loc)


def _uniform(n: Node) -> bool:
    """The same value on every thread of the task: constants and arguments only."""
    return all(x.op not in (Op.VAR, Op.SPECIAL) and x.op not in VARYING for x in walk_node(n))


def reductions(ir: KernelIR) -> KernelIR:
    kinds = {b.name: b.kind for b in ir.buffers}
    tried: dict[str, int] = {}
    for t in ir.tasks:
        if t.kind != "range" or t.active is not None:  # capped (adstack) tasks: threads leave early
            continue
        groups: dict[tuple, Reduction] = {}

        def stmt(s: Node, t=t, groups=groups):
            if s.op is not Op.ATOMIC:
                return [s]
            a: AtomicAttr = s.attr
            idx, v = s.args[:2]
            if a.dest is not None or a.op not in REDUCIBLE or kinds[a.buf] == "shared" or v.dtype == f16 \
                    or not _uniform(idx):
                return [s]
            cls = "add" if a.op in ("add", "sub") else a.op
            key = (a.buf, node_key(idx), cls, v.dtype)
            red = groups.get(key)
            if red is None:
                name = _fresh(ir, f"acc{len(groups)}", tried)
                ir.locals[name] = v.dtype
                red = groups[key] = Reduction(name, cls, a.buf, idx, v.dtype)
            acc = Node(Op.VAR, v.dtype, attr=red.acc, loc=s.loc)
            return [Node(Op.ASSIGN, attr=red.acc, args=(atomic_value(a.op, acc, v),), loc=s.loc)]
        t.body = map_block(t.body, stmt)
        t.reductions = t.reductions + tuple(groups.values())
    return ir


def _fresh(ir: KernelIR, base: str, tried: dict[str, int]) -> str:
    """`base`, else `base_k` for the least k free; `tried` keeps where each base's search
    ended (every task's first accumulator is acc0: from 0 each time, n tasks cost n^2 / 2)."""
    k = tried.get(base, 0)
    name = f"{base}_{k}" if k else base
    while name in ir.locals:
        k += 1
        name = f"{base}_{k}"
    tried[base] = k
    return name
