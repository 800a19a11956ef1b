"""The IR verifier: checks the invariants every pass must keep (types, names, block shapes)."""
from __future__ import annotations

from ..errors import GfxrtError
from ..ir import (
    ATOMIC_OPS,
    BINARY,
    COMPARE,
    EXPRS,
    SPECIALS,
    STMTS,
    SUBGROUP_OPS,
    UNARY,
    AtomicAttr,
    KernelIR,
    Node,
    Op,
)
from ..types import i32, u1


class IRVerifyError(GfxrtError):
    """The IR broke an invariant: a compiler bug."""


def verify(ir: KernelIR) -> None:
    bufs = {b.name: b for b in ir.buffers}
    params = {p.name for p in ir.params}

    def fail(msg: str, n: Node):
        raise IRVerifyError(f"{ir.name}: {msg} in {n!r} at {n.loc}")

    def memory(n: Node, name: str, value_dtype):
        b = bufs.get(name)
        if b is None:
            fail(f"unknown buffer {name!r}", n)
        if n.args[0].dtype != i32:
            fail("index must be i32", n)
        if not b.words and value_dtype != b.dtype:
            fail(f"{value_dtype} value on a {b.dtype} buffer", n)

    def expr(n: Node):
        if n.op not in EXPRS:
            fail("statement used as expression", n)
        if n.dtype is None:
            fail("untyped expression", n)
        for a in n.args:
            expr(a)
        op = n.op
        if op is Op.VAR and n.attr not in ir.locals:
            fail(f"unknown local {n.attr!r}", n)
        elif op is Op.VAR and ir.locals[n.attr] != n.dtype:
            fail(f"local {n.attr!r} read as {n.dtype}, declared {ir.locals[n.attr]}", n)
        elif op is Op.PARAM and n.attr not in params:
            fail(f"unknown param {n.attr!r}", n)
        elif op is Op.LOAD:
            memory(n, n.attr, n.dtype)
        elif op is Op.SPECIAL and (n.attr not in SPECIALS or n.dtype != i32):
            fail("bad special value", n)
        elif op is Op.SUBGROUP and SUBGROUP_OPS.get(n.attr, -1) != len(n.args):
            fail("bad subgroup op", n)
        elif op is Op.LENGTH and (n.attr not in bufs or n.dtype != i32):
            fail(f"bad buffer length of {n.attr!r}", n)
        if op in BINARY and op not in (Op.SHL, Op.SHR) and n.args[0].dtype != n.args[1].dtype:
            fail("operand types differ", n)
        if op in COMPARE or op in (Op.AND, Op.OR, Op.NOT):
            if n.dtype != u1:
                fail("comparison must be bool", n)
        if op is Op.SELECT and (n.args[0].dtype != u1 or n.args[1].dtype != n.args[2].dtype):
            fail("bad select operands", n)
        if op in UNARY and op not in (Op.CAST, Op.BITCAST, Op.NOT) and n.args[0].dtype != n.dtype:
            fail("unary operand type differs from result", n)

    def stmts(block, depth, top_continue=False):
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
            elif s.op is Op.STORE:
                memory(s, s.attr, s.args[1].dtype)
            elif s.op is Op.ATOMIC:
                a = s.attr
                if not isinstance(a, AtomicAttr) or a.op not in ATOMIC_OPS:
                    fail("bad atomic", s)
                if len(s.args) != (3 if a.op == "cas" else 2) or (a.op == "cas" and (
                        s.args[2].dtype != s.args[1].dtype or not s.args[1].dtype.is_int)):
                    fail("bad atomic operands (cas: index, integer value, expected of its dtype)", s)
                memory(s, a.buf, s.args[1].dtype)
                if a.dest is not None and ir.locals.get(a.dest) != s.args[1].dtype:
                    fail("atomic result local has the wrong type", s)
            elif s.op is Op.IF and len(s.blocks) != 2:
                fail("if needs two blocks", s)
            elif s.op in (Op.WHILE, Op.FOR) and len(s.blocks) != 1:
                fail("loop needs one block", s)
            elif s.op is Op.FOR and (ir.locals.get(s.attr) != i32 or any(a.dtype != i32 for a in s.args)):
                fail("for loops run over i32", s)
            elif s.op is Op.BREAK and depth == 0 or s.op is Op.CONTINUE and depth == 0 and not top_continue:
                fail("jump outside loop", s)
            elif s.op in (Op.IF, Op.WHILE, Op.ASSERT) and s.args[0].dtype != u1:
                fail("condition must be bool", s)
            for b in s.blocks:
                stmts(b, depth + (s.op in (Op.WHILE, Op.FOR)), top_continue)

    for t in ir.tasks:
        # `continue` at the top of a parallel body ends that iteration; `break` may not leave it
        stmts(t.body, 0, top_continue=t.kind == "range")
        if t.kind == "range":
            expr(t.extent)
            if t.index_var not in ir.locals:
                fail(f"unknown index local {t.index_var!r}", t.extent)
        for r in t.reductions:
            expr(r.index)
            if r.acc not in ir.locals or r.buf not in bufs:
                fail("bad reduction", r.index)
        stmts(t.prologue, 0)
        if t.active is not None:
            expr(t.active)
            for v in (t.thread_var, t.active_var):
                if ir.locals.get(v) != i32:
                    raise IRVerifyError(f"{ir.name}: task {t.name} needs i32 local {v!r}")
