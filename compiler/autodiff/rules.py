"""The derivative rules, one per differentiable op (declared in its row of compiler/ops.py).

`PARTIALS[op](B, y, *xs)` returns, for the node y = op(*xs), the partial derivative dy/dx_k of
each operand as an IR expression over the values y and xs (None where the operand gets no
gradient). Reverse mode multiplies them by the node's adjoint (adj_xk += dy/dxk * adj_y),
forward mode by the operands' tangents (dot_y = sum dy/dxk * dot_xk); both use this table.

Non-differentiable ops (floor, ceil, round, sign, comparisons, logic, bit operations, integer
casts, bitcasts) have no rule or give None: their gradient is zero.
"""
from __future__ import annotations

from ..ir import Node, Op
from ..ops import DEFS
from . import build as B

PARTIALS = {op: d.d for op, d in DEFS.items() if d.d is not None}
"""op -> d(B, y, *xs): partial derivatives of a float-valued node with respect to each operand."""


def partials(op: Op, y: Node, xs: tuple[Node, ...]) -> tuple[Node | None, ...]:
    """dy/dx_k for y = op(*xs), None for operands without gradient (integer, boolean, or
    an op with no rule: floor, comparisons, bit operations, ...)."""
    if not y.dtype.is_float or op not in PARTIALS:
        return (None,) * len(xs)
    out = PARTIALS[op](B, y, *xs)
    return tuple(p if p is not None and x.dtype.is_float else None for p, x in zip(out, xs))
