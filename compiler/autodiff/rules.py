"""The derivative table: one row per differentiable op.

`PARTIALS[op](y, *xs)` returns, for the node y = op(*xs), the partial derivative dy/dx_k of
each operand as an IR expression over the values y and xs (None where the operand gets no
gradient). Reverse mode multiplies them by the node's adjoint (adj_xk += dy/dxk * adj_y),
forward mode by the operands' tangents (dot_y = sum dy/dxk * dot_xk); both use this table.

Non-differentiable ops (floor, ceil, round, sign, comparisons, logic, bit operations, integer
casts, bitcasts) have no row or give None: their gradient is zero.
"""
from __future__ import annotations

from ..ir import Node, Op
from . import build as B


def _one(x: Node) -> Node:
    return B.c(1, x.dtype)


def _k(v, x: Node) -> Node:
    return B.c(v, x.dtype)


def _sq(x: Node) -> Node:
    return B.mul(x, x)


def _pow(y, a, b):
    # d/da a^b = b * a^(b-1); d/db a^b = a^b * log(a), taken as 0 where a <= 0
    if B.is_const(b):
        e = b.attr - 1.0
        da = B.mul(b, a if e == 1.0 else _one(a) if e == 0.0 else B.bin(Op.POW, a, _k(e, b)))
    else:
        da = B.mul(b, B.bin(Op.POW, a, B.sub(b, _one(b))))
    db = B.select(B.cmp(Op.GT, a, _k(0, a)), B.mul(y, B.un(Op.LOG, a)), _k(0, a))
    return da, db


def _atan2(y, a, b):
    # atan2(a, b): d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2)
    r = B.add(_sq(a), _sq(b))
    return B.div(b, r), B.neg(B.div(a, r))


PARTIALS = {
    Op.NEG: lambda y, x: (_k(-1, x),),
    Op.ABS: lambda y, x: (B.un(Op.SIGN, x),),
    Op.SQRT: lambda y, x: (B.div(_k(0.5, x), y),),
    Op.RSQRT: lambda y, x: (B.mul(_k(-0.5, x), B.mul(y, _sq(y))),),
    Op.EXP: lambda y, x: (y,),
    Op.LOG: lambda y, x: (B.div(_one(x), x),),
    Op.SIN: lambda y, x: (B.un(Op.COS, x),),
    Op.COS: lambda y, x: (B.neg(B.un(Op.SIN, x)),),
    Op.TAN: lambda y, x: (B.add(_one(x), _sq(y)),),
    Op.ASIN: lambda y, x: (B.un(Op.RSQRT, B.sub(_one(x), _sq(x))),),
    Op.ACOS: lambda y, x: (B.neg(B.un(Op.RSQRT, B.sub(_one(x), _sq(x)))),),
    Op.ATAN: lambda y, x: (B.div(_one(x), B.add(_one(x), _sq(x))),),
    Op.TANH: lambda y, x: (B.sub(_one(x), _sq(y)),),
    Op.CAST: lambda y, x: (_one(y) if x.dtype.is_float and y.dtype.is_float else None,),
    Op.ADD: lambda y, a, b: (_one(a), _one(b)),
    Op.SUB: lambda y, a, b: (_one(a), _k(-1, b)),
    Op.MUL: lambda y, a, b: (b, a),
    Op.DIV: lambda y, a, b: (B.div(_one(b), b), B.neg(B.div(y, b))),
    Op.POW: _pow,
    Op.MIN: lambda y, a, b: (B.select(B.cmp(Op.LE, a, b), _one(a), _k(0, a)),
                             B.select(B.cmp(Op.LE, a, b), _k(0, b), _one(b))),
    Op.MAX: lambda y, a, b: (B.select(B.cmp(Op.GE, a, b), _one(a), _k(0, a)),
                             B.select(B.cmp(Op.GE, a, b), _k(0, b), _one(b))),
    Op.ATAN2: _atan2,
    Op.MOD: lambda y, a, b: (_one(a), B.neg(B.un(Op.FLOOR, B.div(a, b)))),
    Op.SELECT: lambda y, cond, a, b: (None, B.select(cond, _one(a), _k(0, a)),
                                      B.select(cond, _k(0, b), _one(b))),
}
"""op -> partial derivatives of a float-valued node with respect to each operand."""


def partials(op: Op, y: Node, xs: tuple[Node, ...]) -> tuple[Node | None, ...]:
    """dy/dx_k for y = op(*xs), None for operands without gradient (integer, boolean, or
    an op with no row: floor, comparisons, bit operations, ...)."""
    if not y.dtype.is_float or op not in PARTIALS:
        return (None,) * len(xs)
    out = PARTIALS[op](y, *xs)
    return tuple(p if p is not None and x.dtype.is_float else None for p, x in zip(out, xs))


DIFFERENTIABLE = frozenset(PARTIALS)
