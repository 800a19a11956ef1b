"""The IR verifier: checks the invariants every pass must keep (types, names, block shapes)."""
from __future__ import annotations

from ..errors import GfxrtError
from ..ir import BINARY, COMPARE, EXPRS, STMTS, UNARY, KernelIR, Node, Op
from ..types import i32, u1


class IRVerifyError(GfxrtError):
    """The IR broke an invariant: a compiler bug."""


def verify(ir: KernelIR) -> None:
    bufs = {b.name for b in ir.buffers}
    params = {p.name for p in ir.params}

    def fail(msg: str, n: Node):
        raise IRVerifyError(f"{ir.name}: {msg} in {n!r} at {n.loc}")

    def expr(n: Node):
        if n.op not in EXPRS:
            fail("statement used as expression", n)
        if n.dtype is None:
            fail("untyped expression", n)
        for a in n.args:
            expr(a)
        if n.op is Op.VAR and n.attr not in ir.locals:
            fail(f"unknown local {n.attr!r}", n)
        if n.op is Op.PARAM and n.attr not in params:
            fail(f"unknown param {n.attr!r}", n)
        if n.op is Op.LENGTH and (n.attr not in bufs or n.dtype != i32):
            fail(f"bad buffer length of {n.attr!r}", n)
        if n.op is Op.LOAD:
            if n.attr not in bufs:
                fail(f"unknown buffer {n.attr!r}", n)
            if n.args[0].dtype != i32:
                fail("index must be i32", n)
        if n.op in BINARY and n.op not in (Op.SHL, Op.SHR) and n.args[0].dtype != n.args[1].dtype:
            fail("operand types differ", n)
        if n.op in COMPARE or n.op in (Op.AND, Op.OR, Op.NOT):
            if n.dtype != u1:
                fail("comparison must be bool", n)
        if n.op is Op.SELECT and (n.args[0].dtype != u1 or n.args[1].dtype != n.args[2].dtype):
            fail("bad select operands", n)
        if n.op in UNARY and n.op not in (Op.CAST, Op.BITCAST, Op.NOT) and n.args[0].dtype != n.dtype:
            fail("unary operand type differs from result", n)

    def stmts(block, depth):
        for s in block:
            if s.op not in STMTS:
                fail("expression used as statement", s)
            for a in s.args:
                expr(a)
            if s.op is Op.ASSIGN:
                if s.attr not in ir.locals:
                    fail(f"unknown local {s.attr!r}", s)
                if s.args[0].dtype != ir.locals[s.attr]:
                    fail(f"assigning {s.args[0].dtype} to {ir.locals[s.attr]} local", s)
            elif s.op is Op.POP and s.attr not in ir.locals:
                fail(f"unknown local {s.attr!r}", s)
            elif s.op is Op.STORE and s.attr not in bufs:
                fail(f"unknown buffer {s.attr!r}", s)
            elif s.op is Op.ATOMIC and s.attr.buf not in bufs:
                fail(f"unknown buffer {s.attr.buf!r}", s)
            elif s.op in (Op.IF,) and len(s.blocks) != 2:
                fail("if needs two blocks", s)
            elif s.op in (Op.WHILE, Op.FOR) and len(s.blocks) != 1:
                fail("loop needs one block", s)
            elif s.op in (Op.BREAK, Op.CONTINUE) and depth == 0:
                fail("jump outside loop", s)
            for b in s.blocks:
                stmts(b, depth + (s.op in (Op.WHILE, Op.FOR)))

    for t in ir.tasks:
        stmts(t.body, 1 if t.kind == "range" else 0)
        stmts(t.prologue, 0)
        if t.kind == "range":
            expr(t.extent)
        if t.active is not None:
            expr(t.active)
            for v in (t.thread_var, t.active_var):
                if ir.locals.get(v) != i32:
                    raise IRVerifyError(f"{ir.name}: task {t.name} needs i32 local {v!r}")
