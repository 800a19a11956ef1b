"""Builtins declared, not coded: one row per function of the kernel language.

Each row names the function, how it lowers to IR and what it computes on the host (so the
same `gr.sin` also works on Python numbers outside kernels). `gfxrt` re-exports these
objects; the frontend recognizes them by type when a kernel calls them.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import semantic as sem
from .ir import Op


@dataclass(frozen=True, eq=False)
class Builtin:
    """A function usable inside kernels. `lower(fe, args, kwargs, loc)` returns a value."""

    name: str
    lower: Callable
    host: Callable | None
    doc: str

    def __call__(self, *args, **kwargs):
        if self.host is None:
            raise RuntimeError(f"gr.{self.name} can only be called inside a @gr.kernel or @gr.func")
        return self.host(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<gfxrt builtin {self.name}>"


def _elementwise(fn):
    """Lift a scalar lowering over vector/matrix arguments (the frontend's `map_values`)."""
    def lower(fe, args, kwargs, loc):
        if kwargs:
            fe.error("this builtin takes no keyword arguments", loc)
        return fe.map_values(lambda *xs: fn(*xs, loc), args, loc)
    return lower


def _unary_row(op: Op, np_fn, doc):
    return op, _elementwise(lambda a, loc: sem.unary(op, a, loc)), np_fn, doc


def _binary_row(op: Op, np_fn, doc):
    return op, _elementwise(lambda a, b, loc: sem.binary(op, a, b, loc)), np_fn, doc


def _rsqrt(x):
    return 1.0 / np.sqrt(x)


def _clamp_lower(fe, args, kwargs, loc):
    if len(args) != 3:
        fe.error("clamp(x, lo, hi) takes three arguments", loc)
    return fe.map_values(
        lambda x, lo, hi: sem.binary(Op.MIN, sem.binary(Op.MAX, x, lo, loc), hi, loc), args, loc)


def _select_lower(fe, args, kwargs, loc):
    if len(args) != 3:
        fe.error("select(cond, a, b) takes three arguments", loc)
    return fe.map_values(lambda c, a, b: sem.select(c, a, b, loc), args, loc)


ROWS: dict[str, tuple] = {
    # name: (op, lowering, host function, doc)
    "sin": _unary_row(Op.SIN, np.sin, "Sine of x (radians)."),
    "cos": _unary_row(Op.COS, np.cos, "Cosine of x (radians)."),
    "tan": _unary_row(Op.TAN, np.tan, "Tangent of x (radians)."),
    "asin": _unary_row(Op.ASIN, np.arcsin, "Arcsine of x."),
    "acos": _unary_row(Op.ACOS, np.arccos, "Arccosine of x."),
    "tanh": _unary_row(Op.TANH, np.tanh, "Hyperbolic tangent of x."),
    "exp": _unary_row(Op.EXP, np.exp, "e to the power x."),
    "log": _unary_row(Op.LOG, np.log, "Natural logarithm of x."),
    "sqrt": _unary_row(Op.SQRT, np.sqrt, "Square root of x."),
    "rsqrt": _unary_row(Op.RSQRT, _rsqrt, "1 / sqrt(x)."),
    "abs": _unary_row(Op.ABS, np.abs, "Absolute value of x."),
    "floor": _unary_row(Op.FLOOR, np.floor, "Largest integer value not greater than x."),
    "ceil": _unary_row(Op.CEIL, np.ceil, "Smallest integer value not less than x."),
    "atan2": _binary_row(Op.ATAN2, np.arctan2, "Angle of the point (x, y): atan2(y, x)."),
    "min": _binary_row(Op.MIN, np.minimum, "Smaller of a and b."),
    "max": _binary_row(Op.MAX, np.maximum, "Larger of a and b."),
    "pow": _binary_row(Op.POW, np.power, "a to the power b."),
    "clamp": (None, _clamp_lower, lambda x, lo, hi: np.clip(x, lo, hi), "x limited to [lo, hi]."),
    "select": (None, _select_lower, lambda c, a, b: np.where(c, a, b),
               "a where cond is true, else b; both sides are evaluated."),
}

BUILTINS: dict[str, Builtin] = {
    name: Builtin(name, lower, host, doc) for name, (_op, lower, host, doc) in ROWS.items()
}
