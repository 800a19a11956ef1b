"""simplify: constant folding, algebraic identities, small integer powers, dead branches.

Every rewrite keeps the value bit-for-bit where WGSL would compute it exactly (`x * 1`,
`i + 0` on integers, `x ** 2 -> x * x`); folding computes as the device does (compiler/opsem.py).
Float identities that IEEE does not have (`x - x`, `x * 0.0`, `x / x`, `x == x`: NaN and
infinities) or that change the sign of zero (`x + 0.0`) are left alone.
"""
from __future__ import annotations

from .. import opsem
from .. import semantic as sem
from ..ir import VARYING, KernelIR, Node, Op, const, map_block, map_exprs, walk_node
from ..ops import evaluate
from ..types import u1

_MAX_DUP = 8  # largest expression duplicated by x ** n -> x * x * ...


def _const(n: Node) -> bool:
    return n.op is Op.CONST


def _fold(n: Node) -> Node | None:
    """The constant value of an operation on constants, computed as the device does
    (compiler/opsem.py: each float op rounded to its type, integers wrapped); None where it is
    left for run time."""
    vals = [a.attr for a in n.args]
    try:
        if n.op is Op.CAST:
            return sem.cast(n.args[0], n.dtype)
        if n.op is Op.SELECT:
            return n.args[1] if vals[0] else n.args[2]
        v = evaluate(n.op, vals, n.args[0].dtype, n.dtype)
    except (ArithmeticError, ValueError, TypeError, KeyError):  # a failing constant operation is left for run time
        return None
    if v is None or isinstance(v, complex):
        return None
    return const(opsem.convert(v, n.dtype), n.dtype, n.loc)


def _small(n: Node) -> bool:
    return sum(1 for _ in walk_node(n)) <= _MAX_DUP


def _power(n: Node) -> Node | None:
    """x ** c for a constant exponent c as multiplications / sqrt where exact enough."""
    x, e = n.args
    if not _const(e):
        return None
    c = e.attr
    t = n.dtype
    loc = n.loc
    if c == 0 and t.is_int:
        return const(1, t, loc)
    if c == 1:
        return x
    if t.is_float and c == 0.5:
        return Node(Op.SQRT, t, (x,), loc=loc)
    if t.is_float and c == -0.5:
        return Node(Op.RSQRT, t, (x,), loc=loc)
    if c != int(c) or not _small(x):
        return None
    k = int(c)
    if 2 <= abs(k) <= 4:  # by squaring, in the order of gr_pow_f32 / opsem.pow_by_squaring (Taichi's)
        out, base, m = None, x, abs(k)
        while m:
            if m & 1:
                out = base if out is None else Node(Op.MUL, t, (out, base), loc=loc)
            m >>= 1
            if m:
                base = Node(Op.MUL, t, (base, base), loc=loc)
        if k < 0:
            if not t.is_float:
                return None
            out = Node(Op.DIV, t, (const(1.0, t, loc), out), loc=loc)
        return out
    if k == -1 and t.is_float:
        return Node(Op.DIV, t, (const(1.0, t, loc), x), loc=loc)
    return None


def simplify_expr(n: Node, fast_math: bool = False) -> Node:
    """n with its constant operations folded and the identities above applied; `fast_math`
    (gr.init(fast_math=True), as Taichi's default): a float divided by a nonzero constant c is
    multiplied by 1 / c rounded to its type, Taichi's alg_simp rewrite (one rounding more: the
    quotient may differ from the exact division's in the last bit)."""
    op = n.op
    if n.args and all(_const(a) for a in n.args) and op not in VARYING:
        folded = _fold(n)
        if folded is not None:
            return folded
    if op is Op.CAST and n.args[0].dtype == n.dtype:
        return n.args[0]
    a = n.args
    if op is Op.SELECT and _const(a[0]):
        return a[1] if a[0].attr else a[2]
    if op in (Op.AND, Op.OR):
        for x, y in ((a[0], a[1]), (a[1], a[0])):
            if _const(x):
                keep = bool(x.attr) if op is Op.AND else not x.attr
                return y if keep else const(bool(x.attr), u1, n.loc)
    if op is Op.NOT and a[0].op is Op.NOT:
        return a[0].args[0]
    if n.dtype is not None and n.dtype.is_int:
        if op in (Op.ADD, Op.BITOR, Op.BITXOR) and _const(a[1]) and a[1].attr == 0:
            return a[0]
        if op is Op.ADD and _const(a[0]) and a[0].attr == 0:
            return a[1]
        if op is Op.SUB and _const(a[1]) and a[1].attr == 0:
            return a[0]
        if op is Op.MUL and any(_const(x) and x.attr == 0 for x in a):
            return const(0, n.dtype, n.loc)
        if op is Op.FLOORDIV and _const(a[1]) and a[1].attr == 1:
            return a[0]
        if op is Op.MOD and _const(a[1]) and a[1].attr == 1:
            return const(0, n.dtype, n.loc)
    if op is Op.MUL:
        if _const(a[1]) and a[1].attr == 1:
            return a[0]
        if _const(a[0]) and a[0].attr == 1:
            return a[1]
    if op is Op.DIV and n.dtype.is_float and _const(a[1]) and a[1].attr == 1:
        return a[0]
    if fast_math and op is Op.DIV and n.dtype.is_float and _const(a[1]) and a[1].attr != 0:
        r = evaluate(Op.DIV, [opsem.convert(1.0, n.dtype), a[1].attr], n.dtype, n.dtype)
        return Node(Op.MUL, n.dtype, (a[0], const(r, n.dtype, n.loc)), loc=n.loc)
    if op in (Op.SHL, Op.SHR) and _const(a[1]) and a[1].attr >= n.dtype.bits:  # numpy's rule, decided now
        if op is Op.SHL or n.dtype.kind == "uint":
            return const(0, n.dtype, n.loc)
        return Node(Op.SHR, n.dtype, (a[0], const(n.dtype.bits - 1, a[1].dtype, n.loc)), loc=n.loc)
    if op is Op.POW:
        p = _power(n)
        if p is not None:
            return p
    return n


def _terminates(s: Node) -> bool:
    return s.op in (Op.BREAK, Op.CONTINUE)


def simplify_block(block, fast_math: bool = False):
    def expr(n: Node) -> Node:
        return simplify_expr(n, fast_math)

    def stmt(s: Node):
        if s.args:
            s = s.with_(args=tuple(map_exprs(a, expr) for a in s.args))
        if s.op is Op.IF:
            c = s.args[0]
            if _const(c):
                return list(s.blocks[0] if c.attr else s.blocks[1])
            if not s.blocks[0] and not s.blocks[1]:
                return []
        if s.op is Op.WHILE and _const(s.args[0]) and not s.args[0].attr:
            return []
        if s.op is Op.FOR and all(_const(x) for x in s.args):
            b, e, st = (x.attr for x in s.args)
            if st == 0 or not range(b, e, st):  # (step 0 runs nothing; the frontend's check reports it)
                return []
        if s.op is Op.ASSERT and _const(s.args[0]) and s.args[0].attr:
            return []
        return [s]
    out = map_block(block, stmt)
    return _drop_after_jumps(out)


def _drop_after_jumps(block):
    res = []
    for s in block:
        if s.blocks:
            s = s.with_(blocks=tuple(_drop_after_jumps(b) for b in s.blocks))
        res.append(s)
        if _terminates(s):
            break
    return tuple(res)


def simplify(ir: KernelIR, fast_math: bool = False) -> KernelIR:
    for t in ir.tasks:
        t.body = simplify_block(t.body, fast_math)
        if t.extent is not None:
            t.extent = map_exprs(t.extent, simplify_expr)
    return ir

