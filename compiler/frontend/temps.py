"""After lowering: kernel-scope variables used by more than one task move into the
kernel's 'temps' buffer (one u32 word each), and the 'status' buffer is sized for the
debug checks.

Each task is its own entry point, so a variable assigned by serial code and read by a
later parallel loop (or reduced by one, `s += x[i]`) cannot stay in a register: its reads
become LOADs of its word and its assignments STOREs.
"""
from __future__ import annotations

from ..errors import CompileError
from ..ir import KernelIR, Node, Op, const, map_block, map_exprs, walk, walk_task
from ..spec import status_words
from ..types import i32


def finalize(fe) -> KernelIR:
    ir: KernelIR = fe.ir
    users: dict[str, set[int]] = {}
    for k, t in enumerate(ir.tasks):
        for n in walk_task(t):  # the extent of a parallel loop counts as part of its task
            if n.op in (Op.VAR, Op.ASSIGN) and n.attr in fe.kernel_vars:
                users.setdefault(n.attr, set()).add(k)
            elif n.op is Op.FOR and n.attr in fe.kernel_vars:
                users.setdefault(n.attr, set()).add(k)
    for name, tasks in sorted(users.items()):
        if len(tasks) > 1:
            fe.temp_slot(name)
    _check_reductions(fe)
    if fe.temp_slots:
        buf = fe.internal_buffer("temps")
        buf.size = len(fe.temp_slots)
        slots = fe.temp_slots

        def expr(n: Node) -> Node:
            if n.op is Op.VAR and n.attr in slots:
                return Node(Op.LOAD, n.dtype, (const(slots[n.attr], i32, n.loc),), attr=buf.name, loc=n.loc)
            return n

        def stmt(s: Node):
            if s.op is Op.FOR and s.attr in slots:
                raise CompileError("a loop variable of kernel scope cannot be used by several loops; copy it into "
                                   "another variable", s.loc, ir.name)
            if s.args:
                s = s.with_(args=tuple(map_exprs(a, expr) for a in s.args))
            if s.op is Op.ASSIGN and s.attr in slots:
                return [Node(Op.STORE, attr=buf.name, args=(const(slots[s.attr], i32, s.loc), s.args[0]), loc=s.loc)]
            return [s]
        for t in ir.tasks:
            t.body = map_block(t.body, stmt)
            if t.extent is not None:
                t.extent = map_exprs(t.extent, expr)
        for name in slots:
            ir.locals.pop(name, None)
    nasserts = sum(1 for t in ir.tasks for n in walk(t.body) if n.op is Op.ASSERT)
    if nasserts:
        fe.internal_buffer("status").size = status_words(nasserts)
    return ir


def _check_reductions(fe) -> None:
    """A variable reduced by a parallel loop has no defined value inside that loop."""
    ir = fe.ir
    temps = next((b.name for b in ir.buffers if b.kind == "temps"), None)
    if temps is None:
        return
    by_slot = {v: k for k, v in fe.temp_slots.items()}
    for t in ir.tasks:
        if t.kind != "range":
            continue
        reduced = {n.args[0].attr for n in walk(t.body) if n.op is Op.ATOMIC and n.attr.buf == temps
                   and n.args[0].op is Op.CONST}
        for n in walk(t.body):
            if n.op is Op.VAR and n.attr in fe.temp_slots and fe.temp_slots[n.attr] in reduced:
                name = fe.python_name(by_slot[fe.temp_slots[n.attr]])
                raise CompileError(f"{name!r} is reduced in this parallel loop (`{name} += ...`), so its value is "
                                   "only defined after the loop; read it after the loop", n.loc, ir.name)
