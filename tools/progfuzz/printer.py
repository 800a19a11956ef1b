"""Prints a Program as the Python source of its `@gr.func`s and its `@gr.kernel` (named `kern`).
Every compound expression is parenthesized, so Python's precedence never changes what the
representation means."""
from __future__ import annotations

import math

from .dtypes import gr_name
from .program import (
    Assign,
    Atomic,
    AugAssign,
    Bin,
    BoolOp,
    Break,
    Call,
    Cast,
    Compare,
    Const,
    Continue,
    For,
    Func,
    If,
    IfExp,
    Load,
    Math,
    NdFor,
    Program,
    Return,
    Select,
    Serialize,
    Shape,
    Store,
    Unary,
    Var,
    While,
)

INFIX = ("+", "-", "*", "/", "//", "%", "**", "&", "|", "^", "<<", ">>")
KERNEL_NAME = "kern"


def literal(v) -> str:
    if isinstance(v, bool):
        return repr(v)
    if isinstance(v, float):
        if math.isinf(v):
            return "(gr.math.inf)" if v > 0 else "(-gr.math.inf)"
        if math.isnan(v):
            return "(gr.math.nan)"
    s = repr(v)
    return f"({s})" if s.startswith("-") else s


def expr(e) -> str:
    if isinstance(e, Const):
        return literal(e.value)
    if isinstance(e, Var):
        return e.name
    if isinstance(e, Load):
        if not e.idx:
            return f"{e.arr}[None]"
        return f"{e.arr}[{', '.join(expr(k) for k in e.idx)}]"
    if isinstance(e, Shape):
        return f"{e.arr}.shape[{e.dim}]"
    if isinstance(e, Bin):
        if e.op in INFIX:
            return f"({expr(e.a)} {e.op} {expr(e.b)})"
        if e.op == "atan2":
            return f"gr.atan2({expr(e.a)}, {expr(e.b)})"
        return f"{e.op}({expr(e.a)}, {expr(e.b)})"
    if isinstance(e, Unary):
        return {"neg": "(-{})", "invert": "(~{})", "not": "(not {})"}[e.op].format(expr(e.a))
    if isinstance(e, Compare):
        parts = [expr(e.operands[0])]
        for op, x in zip(e.ops, e.operands[1:]):
            parts += [op, expr(x)]
        return "(" + " ".join(parts) + ")"
    if isinstance(e, BoolOp):
        return "(" + f" {e.op} ".join(expr(v) for v in e.values) + ")"
    if isinstance(e, IfExp):
        return f"({expr(e.a)} if {expr(e.cond)} else {expr(e.b)})"
    if isinstance(e, Select):
        return f"gr.select({expr(e.cond)}, {expr(e.a)}, {expr(e.b)})"
    if isinstance(e, Math):
        if e.fn == "abs":
            return f"abs({expr(e.a)})"
        return f"gr.{e.fn}({expr(e.a)})"
    if isinstance(e, Cast):
        if e.style == "int":
            return f"int({expr(e.a)})"
        if e.style == "float":
            return f"float({expr(e.a)})"
        if e.style == "ctor":
            return f"{gr_name(e.to)}({expr(e.a)})"
        return f"gr.cast({expr(e.a)}, {gr_name(e.to)})"
    if isinstance(e, Call):
        return f"{e.func}({', '.join(expr(a) for a in e.args)})"
    raise TypeError(f"cannot print {type(e).__name__}")


def block(stmts, ind: str) -> list[str]:
    out = []
    for s in stmts:
        out += stmt(s, ind)
    return out or [ind + "pass"]


def stmt(s, ind: str) -> list[str]:
    nxt = ind + "    "
    if isinstance(s, Assign):
        ann = f": {gr_name(s.ann)}" if s.ann else ""
        return [f"{ind}{s.name}{ann} = {expr(s.value)}"]
    if isinstance(s, AugAssign):
        return [f"{ind}{s.name} {s.op}= {expr(s.value)}"]
    if isinstance(s, Store):
        target = expr(Load(s.arr, s.idx))
        return [f"{ind}{target} {s.op or ''}= {expr(s.value)}"]
    if isinstance(s, Atomic):
        return [f"{ind}gr.atomic_{s.kind}({expr(s.target)}, {expr(s.value)})"]
    if isinstance(s, If):
        lines = [f"{ind}if {expr(s.cond)}:", *block(s.body, nxt)]
        orelse = s.orelse
        while len(orelse) == 1 and isinstance(orelse[0], If):
            lines += [f"{ind}elif {expr(orelse[0].cond)}:", *block(orelse[0].body, nxt)]
            orelse = orelse[0].orelse
        if orelse:
            lines += [f"{ind}else:", *block(orelse, nxt)]
        return lines
    if isinstance(s, For):
        return [f"{ind}for {s.var} in range({', '.join(expr(a) for a in s.args)}):", *block(s.body, nxt)]
    if isinstance(s, NdFor):
        return [f"{ind}for {', '.join(s.vars)} in gr.ndrange({', '.join(expr(a) for a in s.extents)}):",
                *block(s.body, nxt)]
    if isinstance(s, While):
        return [f"{ind}while {expr(s.cond)}:", *block(s.body, nxt)]
    if isinstance(s, Break):
        return [f"{ind}break"]
    if isinstance(s, Continue):
        return [f"{ind}continue"]
    if isinstance(s, Return):
        return [f"{ind}return {', '.join(expr(v) for v in s.values)}"]
    if isinstance(s, Serialize):
        return [f"{ind}gr.loop_config(serialize=True)"]
    raise TypeError(f"cannot print {type(s).__name__}")


def func(f: Func) -> list[str]:
    params = ", ".join(f"{n}: {gr_name(t)}" for n, t in f.params)
    return ["@gr.func", f"def {f.name}({params}) -> {gr_name(f.ret)}:", *block(f.body, "    ")]


def kernel_lines(p: Program) -> list[str]:
    k = p.kernel
    params = [f"{a.name}: gr.types.ndarray(dtype={gr_name(a.dtype)}, ndim={len(a.shape)})" for a in k.arrays]
    params += [f"{s.name}: {gr_name(s.dtype)}" for s in k.scalars]
    ret = ""
    if len(k.ret) == 1:
        ret = f" -> {gr_name(k.ret[0])}"
    elif k.ret:
        ret = f" -> ({', '.join(gr_name(t) for t in k.ret)})"
    return ["@gr.kernel", f"def {KERNEL_NAME}({', '.join(params)}){ret}:", *block(k.body, "    ")]


def source(p: Program) -> str:
    """The module text: `import gfxrt as gr`, the funcs, the kernel."""
    lines = ["import gfxrt as gr", ""]
    for f in p.funcs:
        lines += ["", *func(f), ""]
    lines += ["", *kernel_lines(p), ""]
    return "\n".join(lines)
