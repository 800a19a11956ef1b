"""Debug mode: check the global data access rule of differentiable kernels.

A gradient kernel re-reads the arrays its kernel read, so a kernel must not overwrite an
element it has read in the same launch (`y[i] = y[i] * 2` makes y's gradient see the new
value). With gr.init(debug=True), kernels that take a needs_grad array get a shadow word
per element of every array they both read and write: a read sets bit 1, a write (store or
atomic update) sets bit 2 and fails the check if bit 1 was set. Failures are reported
through the status protocol (compiler/spec.py) at the next sync, naming the array and line.
"""
from __future__ import annotations

from ..ir import AtomicAttr, Buffer, KernelIR, Node, Op, walk, walk_node
from ..spec import STATUS_ACCESS_RULE
from ..types import i32, u32
from . import build as B

READ, WRITTEN = 1, 2


def check_access_rule(ir: KernelIR) -> KernelIR:
    """Instrument `ir` (in place) when it takes a needs_grad array; returns it."""
    if not any(b.needs_grad for b in ir.buffers):
        return ir
    loaded, written = set(), set()
    for t in ir.tasks:
        for n in walk(t.body):
            if n.op is Op.LOAD:
                loaded.add(n.attr)
            elif n.op is Op.STORE:
                written.add(n.attr)
            elif n.op is Op.ATOMIC:
                written.add(n.attr.buf)
    checked = {b.name: f"{b.name}.access" for b in ir.buffers
               if b.name in loaded & written and b.kind in ("arg", "field")}
    if not checked:
        return ir
    for b in list(ir.buffers):
        if b.name in checked:
            ir.buffers.append(Buffer(checked[b.name], u32, "access_shadow", source=b.source, of=b.name))
    inst = _Instrument(ir, checked)
    for t in ir.tasks:
        t.body = tuple(inst.block(t.body))
    return ir


class _Instrument:
    def __init__(self, ir: KernelIR, shadows: dict[str, str]):
        self.ir = ir
        self.shadows = shadows
        self.names = B.Names(ir)
        self.old = self.names.new("ad.access", u32)

    def reads(self, exprs) -> list[Node]:
        out = []
        for e in exprs:
            for n in walk_node(e):
                if n.op is Op.LOAD and n.attr in self.shadows:
                    out.append(B.atomic("or", self.shadows[n.attr], n.args[0], B.c(READ, u32), n.loc))
        return out

    def write(self, buf: str, idx: Node, s: Node) -> list[Node]:
        if buf not in self.shadows:
            return []
        line = f" (line {s.loc.line} of {s.loc.file})" if s.loc else ""
        msg = (f"kernel {self.ir.name!r} reads an element of {buf!r} and then overwrites it in the same "
               f"launch{line}: its gradient would re-read the new value. Write the result to another array")
        mark = Node(Op.ATOMIC, attr=AtomicAttr("or", self.shadows[buf], self.old), args=(idx, B.c(WRITTEN, u32)),
                    loc=s.loc)
        ok = B.cmp(Op.EQ, B.bin(Op.BITAND, B.var(self.old, u32), B.c(READ, u32)), B.c(0, u32))
        return [mark, Node(Op.ASSERT, args=(ok,), attr=(STATUS_ACCESS_RULE, msg), loc=s.loc)]

    def block(self, block) -> list[Node]:
        out = []
        for s in block:
            out += self.reads(s.args)
            if s.op is Op.STORE:
                out += self.write(s.attr, s.args[0], s)
            elif s.op is Op.ATOMIC:
                out += self.write(s.attr.buf, s.args[0], s)
            if s.op is Op.WHILE:
                body = (*self.block(s.blocks[0]), *self.reads(s.args))
                s = s.with_(blocks=(body,))
            elif s.blocks:
                s = s.with_(blocks=tuple(tuple(self.block(b)) for b in s.blocks))
            out.append(s)
        return out


__all__ = ["check_access_rule", "i32"]
