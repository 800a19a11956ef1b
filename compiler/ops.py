"""The op table: each expression op of the IR declared once, in one row (docs/design.md, "Ops"):
arity, group, typing rule (semantic.py), evaluation on Python numbers (`py`, the frontend's
folding) and on fixed-width values (`dev`, else `py`; `evaluate`: the constant folder and the IR
interpreter), WGSL spelling (the code generator), derivative (autodiff/rules.py), cost class and,
for a builtin, its numpy host function and doc. `Op`, the op groups and every per-op table of the
passes are derived from the rows.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from . import opsem
from .npcompat import fn, np
from .types import DType

_NAN, _INF = math.nan, math.inf


@dataclass(frozen=True)
class OpDef:
    """One op. `typing`: 'same' (the promoted operand type), 'float' (integers become the default
    float), 'round' (float; identity on integers), 'pow', 'bits' (integers or bools), 'shift',
    'int' (integers only), 'compare' and 'logic' (bool results), 'none' (built by passes only).
    `wgsl`: operand-type key -> format or (format, helper); keys tried in order: the WGSL type
    ('f32'), 'int64' / 'uint64' for a 64-bit integer, the kind ('int', 'uint', 'float'), '';
    `{t}` is the operand type, `{z}` the opaque zero (codegen/wgsl_loops.py). `d(B, y, *xs)`: the
    partial derivatives of y = op(*xs) as IR (B: compiler/autodiff/build.py). `cost`: 0 cheap,
    1 a hardware instruction worth computing once (sqrt), 2 a function of gfxrt's own WGSL."""

    name: str
    arity: int
    group: str
    typing: str
    py: Callable | None = None
    dev: Callable | None = None
    wgsl: dict = field(default_factory=dict)
    d: Callable | None = None
    cost: int = 0
    host: Callable | None = None
    doc: str = ""


def _libm(fn, err=lambda *xs: _NAN):
    """A math function with C99's (numpy's) value where Python's math raises."""
    def f(*xs):
        try:
            return fn(*xs)
        except (ValueError, OverflowError, ZeroDivisionError):
            return err(*xs)
    return f


def _rounding(fn):
    """floor / ceil / round: a float stays a float of a's sign (ceil(-0.5) is -0.0; an infinity or
    NaN itself)."""
    return lambda a: (math.copysign(fn(a), a) if math.isfinite(a) else a) if isinstance(a, float) else fn(a)


def _own(name: str, arity: int = 1, zero: bool = False) -> dict:
    """The spelling of a math function: WGSL's builtin (f16), gfxrt's own f32 and f64 helpers."""
    xs = ", ".join(f"{{{i}}}" for i in range(arity))
    return {"": f"{name}({xs})", "f32": (f"gr_{name}_f32({xs}{', {z}' if zero else ''})", f"{name}_f32"),
            "f64": (f"gr_{name}_f64({xs})", f"{name}_f64")}


def _i64(fmt: str, helper: str, **plain) -> dict:
    """A spelling through a helper for 64-bit integers (`helper` may name the kind as {k})."""
    return {**plain, "int64": (fmt, helper.format(k="int")), "uint64": (fmt, helper.format(k="uint"))}


def _sign(a, t: DType):
    return a if t.is_float and a != a else (a > 0) - (a < 0)  # noqa: PLR0124 - NaN stays NaN (np.sign)


def _by_kind(on_float, on_int):
    return lambda a, b, t: (on_float if t.is_float else on_int)(a, b, t)


def _ipow(a: int, b: int, t: DType) -> int:
    if b < 0:  # the device's gr_ipow: the real result truncated toward zero
        return 1 if a == 1 else ((-1 if b & 1 else 1) if a == -1 else 0)
    return pow(a, b, 1 << t.bits)


def _host_ints(x):
    """x as a numpy integer array at least 32 bits wide (as kernels compute), and its bits."""
    a = np.asarray(x)
    if a.dtype.kind not in "iu":
        raise TypeError(f"expected integers, got {a.dtype}")
    a = a.astype(f"{a.dtype.kind}{max(a.dtype.itemsize, 4)}")
    return a, a.view(f"u{a.dtype.itemsize}")


def _popcnt_host(x):
    a, u = _host_ints(x)
    return np.unpackbits(u[..., None].view(np.uint8), axis=-1).sum(-1).astype(a.dtype)[()]


def _clz_host(x):
    a, u = _host_ints(x)
    width, n = 8 * u.dtype.itemsize, np.zeros(u.shape, a.dtype)  # n: the bit length
    for s in (32, 16, 8, 4, 2, 1):
        if s < width:
            big = (u >> s) != 0
            n, u = n + np.where(big, s, 0).astype(a.dtype), np.where(big, u >> s, u)
    return (width - n - (u != 0)).astype(a.dtype)[()]


def _d_pow(B, y, a, b):
    # d/da a^b = b * a^(b-1); d/db a^b = a^b * log(a), taken as 0 where a <= 0
    if B.is_const(b):
        e = b.attr - 1.0
        da = B.mul(b, a if e == 1.0 else B.k(1, a) if e == 0.0 else B.bin(Op.POW, a, B.k(e, b)))
    else:
        da = B.mul(b, B.bin(Op.POW, a, B.sub(b, B.k(1, b))))
    return da, B.select(B.cmp(Op.GT, a, B.k(0, a)), B.mul(y, B.un(Op.LOG, a)), B.k(0, a))


def _d_atan2(B, y, a, b):
    # atan2(a, b): d/da = b / (a^2 + b^2), d/db = -a / (a^2 + b^2)
    r = B.add(B.sq(a), B.sq(b))
    return B.div(b, r), B.neg(B.div(a, r))


def _d_minmax(cmp):
    return lambda B, y, a, b: (B.select(B.cmp(cmp(), a, b), B.k(1, a), B.k(0, a)),
                               B.select(B.cmp(cmp(), a, b), B.k(0, b), B.k(1, b)))


def _float(op, fn, d, doc, host, cost=2, zero=False, err=lambda *xs: _NAN):
    """A math function of float arguments (integers are converted to the default float); cost 2:
    spelled through gfxrt's own helpers for f32 and f64."""
    arity = 2 if op == "atan2" else 1
    wgsl = _own(op, arity, zero) if cost == 2 else {"": f"{op}({{0}})"}
    return OpDef(op.upper(), arity, "math", "float", _libm(fn, err), wgsl=wgsl, d=d, cost=cost, host=host, doc=doc)


def _cmp(name, fn, fmt, fmt64, helper):
    return OpDef(name, 2, "compare", "compare", fn, wgsl=_i64(fmt64, helper, **{"": fmt}))


_ROWS = (
    # -- unary
    OpDef("NEG", 1, "arith", "same", lambda a: -a,
          wgsl={"int": "(-{0})", "float": "(-{0})", "uint": "(0u - {0})", "uint64": "({t}(0) - {0})"},
          d=lambda B, y, x: (B.k(-1, x),)),
    OpDef("NOT", 1, "logic", "logic", lambda a: not a, wgsl={"": "(!{0})"}),
    OpDef("BITNOT", 1, "bitwise", "same", lambda a: ~a, wgsl={"": "(~{0})"}),
    OpDef("ABS", 1, "arith", "same", abs, wgsl={"": "abs({0})", "int64": ("gr_abs_{t}({0})", "abs_int")},
          d=lambda B, y, x: (B.un(Op.SIGN, x),), host=fn("abs"), doc="Absolute value of x."),
    _float("sqrt", math.sqrt, lambda B, y, x: (B.div(B.k(0.5, x), y),), "Square root of x.", fn("sqrt"), cost=1),
    OpDef("RSQRT", 1, "math", "float", _libm(lambda a: 1.0 / math.sqrt(a),
                                             lambda a: math.copysign(_INF, a) if a == 0 else _NAN),
          wgsl={"": "inverseSqrt({0})"}, d=lambda B, y, x: (B.mul(B.k(-0.5, x), B.mul(y, B.sq(y))),), cost=1,
          host=lambda x: 1.0 / np.sqrt(x), doc="1 / sqrt(x)."),
    _float("exp", math.exp, lambda B, y, x: (y,), "e to the power x.", fn("exp"), err=lambda a: _INF),
    _float("log", math.log, lambda B, y, x: (B.div(B.k(1, x), x),), "Natural logarithm of x.", fn("log"),
           err=lambda a: -_INF if a == 0 else _NAN),
    _float("sin", math.sin, lambda B, y, x: (B.un(Op.COS, x),), "Sine of x (radians).", fn("sin"), zero=True),
    _float("cos", math.cos, lambda B, y, x: (B.neg(B.un(Op.SIN, x)),), "Cosine of x (radians).", fn("cos"), zero=True),
    _float("tan", math.tan, lambda B, y, x: (B.add(B.k(1, x), B.sq(y)),), "Tangent of x (radians).", fn("tan"),
           zero=True),
    _float("asin", math.asin, lambda B, y, x: (B.un(Op.RSQRT, B.sub(B.k(1, x), B.sq(x))),), "Arcsine of x.",
           fn("arcsin")),
    _float("acos", math.acos, lambda B, y, x: (B.neg(B.un(Op.RSQRT, B.sub(B.k(1, x), B.sq(x)))),),
           "Arccosine of x.", fn("arccos")),
    _float("atan", math.atan, lambda B, y, x: (B.div(B.k(1, x), B.add(B.k(1, x), B.sq(x))),), "Arctangent of x.",
           fn("arctan")),
    _float("tanh", math.tanh, lambda B, y, x: (B.sub(B.k(1, x), B.sq(y)),), "Hyperbolic tangent of x.", fn("tanh")),
    OpDef("FLOOR", 1, "math", "round", _rounding(math.floor), wgsl={"": "floor({0})"}, host=fn("floor"),
          doc="Largest integer value not greater than x (same dtype as x)."),
    OpDef("CEIL", 1, "math", "round", _rounding(math.ceil), wgsl={"": "ceil({0})"}, host=fn("ceil"),
          doc="Smallest integer value not less than x (same dtype as x)."),
    OpDef("SIGN", 1, "math", "none", dev=_sign, wgsl={"": "sign({0})"}),
    OpDef("POPCNT", 1, "bitwise", "int", dev=lambda a, t: bin(a & ((1 << t.bits) - 1)).count("1"),
          wgsl={"": "countOneBits({0})", "int64": ("gr_popcnt_{t}({0})", "popcnt64"),
                "uint64": ("gr_popcnt_{t}({0})", "popcnt64")}, host=_popcnt_host,
          doc="The number of 1 bits of the integer x (two's complement, in x's width: 32 or 64)."),
    OpDef("CLZ", 1, "bitwise", "int", dev=lambda a, t: t.bits - (a & ((1 << t.bits) - 1)).bit_length(),
          wgsl={"": "countLeadingZeros({0})", "int64": ("gr_clz_{t}({0})", "clz64"),
                "uint64": ("gr_clz_{t}({0})", "clz64")}, host=_clz_host,
          doc="The number of leading 0 bits of the integer x in its width (32 or 64; 0 for a negative x)."),
    OpDef("CAST", 1, "convert", "none",  # spelled by the code generator: it depends on both dtypes
          d=lambda B, y, x: (B.k(1, y) if x.dtype.is_float and y.dtype.is_float else None,)),
    OpDef("BITCAST", 1, "convert", "none"),
    # -- binary
    OpDef("ADD", 2, "arith", "same", lambda a, b: a + b, wgsl={"": "({0} + {1})"},
          d=lambda B, y, a, b: (B.k(1, a), B.k(1, b))),
    OpDef("SUB", 2, "arith", "same", lambda a, b: a - b, wgsl={"": "({0} - {1})"},
          d=lambda B, y, a, b: (B.k(1, a), B.k(-1, b))),
    OpDef("MUL", 2, "arith", "same", lambda a, b: a * b, wgsl={"": "({0} * {1})"}, d=lambda B, y, a, b: (b, a)),
    OpDef("DIV", 2, "arith", "float", lambda a, b: a / b,
          dev=lambda a, b, t: opsem.quotient(a, b) if t.is_float else None, wgsl={"": "({0} / {1})"},
          d=lambda B, y, a, b: (B.div(B.k(1, b), b), B.neg(B.div(y, b)))),
    OpDef("FLOORDIV", 2, "arith", "same", lambda a, b: a // b, dev=_by_kind(opsem.floordiv_float, opsem.floordiv_int),
          wgsl={"int": ("gr_floordiv_i32({0}, {1})", "floordiv_i32"), "uint": ("gr_div_u32({0}, {1})", "div_u32"),
                "int64": ("gr_floordiv_{t}({0}, {1}, {z})", "floordiv_int"),
                "uint64": ("gr_div_{t}({0}, {1}, {z})", "div_uint")}),
    OpDef("MOD", 2, "arith", "same", lambda a, b: a % b, dev=_by_kind(opsem.mod_float, opsem.mod_int),
          wgsl={"int": ("gr_mod_i32({0}, {1})", "mod_i32"), "uint": ("gr_rem_u32({0}, {1})", "rem_u32"),
                "int64": ("gr_mod_{t}({0}, {1}, {z})", "mod_int"), "uint64": ("gr_rem_{t}({0}, {1}, {z})", "rem_uint")},
          d=lambda B, y, a, b: (B.k(1, a), B.neg(B.un(Op.FLOOR, B.div(a, b))))),
    OpDef("POW", 2, "math", "pow", lambda a, b: a ** b,
          dev=_by_kind(opsem.pow_float, _ipow),
          wgsl={"f32": ("gr_pow_f32({0}, {1})", "pow_f32"), "f64": ("gr_pow_f64({0}, {1})", "pow_f64"),
                "float": ("gr_pow_{t}({0}, {1})", "pow_float"), "int": ("gr_ipow_{t}({0}, {1}, {z})", "ipow"),
                "uint": ("gr_ipow_{t}({0}, {1}, {z})", "ipow")},
          d=_d_pow, cost=2, host=fn("power"), doc="a to the power b (as a ** b)."),
    OpDef("MIN", 2, "arith", "same", min, dev=lambda a, b, t: opsem.minimum(a, b),
          wgsl=_i64("gr_min_{t}({0}, {1})", "min_{k}", **{"": "min({0}, {1})"}), d=_d_minmax(lambda: Op.LE),
          host=fn("minimum"), doc="Smaller of a and b."),
    OpDef("MAX", 2, "arith", "same", max, dev=lambda a, b, t: opsem.maximum(a, b),
          wgsl=_i64("gr_max_{t}({0}, {1})", "max_{k}", **{"": "max({0}, {1})"}), d=_d_minmax(lambda: Op.GE),
          host=fn("maximum"), doc="Larger of a and b."),
    _float("atan2", math.atan2, _d_atan2, "Angle of the point (x, y): atan2(y, x).", fn("arctan2")),
    OpDef("BITAND", 2, "bitwise", "bits", lambda a, b: a & b, wgsl={"": "({0} & {1})"}),
    OpDef("BITOR", 2, "bitwise", "bits", lambda a, b: a | b, wgsl={"": "({0} | {1})"}),
    OpDef("BITXOR", 2, "bitwise", "bits", lambda a, b: a ^ b, wgsl={"": "({0} ^ {1})"}),
    OpDef("SHL", 2, "bitwise", "shift", lambda a, b: a << b, dev=lambda a, b, t: opsem.shift(a, b, t, True)),
    OpDef("SHR", 2, "bitwise", "shift", lambda a, b: a >> b, dev=lambda a, b, t: opsem.shift(a, b, t, False)),
    _cmp("EQ", lambda a, b: a == b, "({0} == {1})", "gr_eq_{t}({0}, {1})", "eq64"),
    _cmp("NE", lambda a, b: a != b, "({0} != {1})", "(!gr_eq_{t}({0}, {1}))", "eq64"),
    _cmp("LT", lambda a, b: a < b, "({0} < {1})", "gr_lt_{t}({0}, {1})", "lt_{k}"),
    _cmp("LE", lambda a, b: a <= b, "({0} <= {1})", "(!gr_lt_{t}({1}, {0}))", "lt_{k}"),
    _cmp("GT", lambda a, b: a > b, "({0} > {1})", "gr_lt_{t}({1}, {0})", "lt_{k}"),
    _cmp("GE", lambda a, b: a >= b, "({0} >= {1})", "(!gr_lt_{t}({0}, {1}))", "lt_{k}"),
    OpDef("AND", 2, "logic", "logic", lambda a, b: bool(a and b), wgsl={"": "({0} && {1})"}),
    OpDef("OR", 2, "logic", "logic", lambda a, b: bool(a or b), wgsl={"": "({0} || {1})"}),
    # -- ternary
    OpDef("SELECT", 3, "select", "none", wgsl={"": "select({2}, {1}, {0})"},  # args: (cond, if_true, if_false)
          d=lambda B, y, cond, a, b: (None, B.select(cond, B.k(1, a), B.k(0, a)),
                                      B.select(cond, B.k(0, b), B.k(1, b)))),
)

# Op members that are no row: the leaves, SUBGROUP, TEXEL and the statements (compiler/ir.py says what each holds)
_LEAVES = ("CONST", "PARAM", "VAR", "LOAD", "SPECIAL")
_STATEMENTS = ("ASSIGN", "STORE", "ATOMIC", "IF", "WHILE", "FOR", "BREAK", "CONTINUE", "ASSERT", "BARRIER", "PUSH",
               "POP", "LENGTH", "TEXSTORE")
Op = Enum("Op", [*_LEAVES, *(r.name for r in _ROWS), "SUBGROUP", "TEXEL", *_STATEMENTS], module=__name__)
# Members are singletons compared by identity: hash them by identity too (C speed; Enum's own
# __hash__ is a Python call, and passes test `op in SOME_SET` for every node)
Op.__hash__ = object.__hash__

DEFS: dict[Op, OpDef] = {Op[r.name]: r for r in _ROWS}
UNARY = frozenset(op for op, d in DEFS.items() if d.arity == 1)
BINARY = frozenset(op for op, d in DEFS.items() if d.arity == 2)
COMPARE = frozenset(op for op, d in DEFS.items() if d.group == "compare")
# ops whose partial derivatives are worth computing once in reverse mode's forward sweep
EXPENSIVE = frozenset(op for op, d in DEFS.items() if d.cost >= 1)
# ops spelled as a function of gfxrt's own WGSL (15-40 operations the driver inlines at every use)
HEAVY = frozenset(op for op, d in DEFS.items() if d.cost >= 2)
# the `gr.<name>` builtins an op row declares (compiler/builtins.py)
BUILTIN_OPS = {d.name.lower(): op for op, d in DEFS.items() if d.doc}


def evaluate(op: Op, vals, at: DType, t: DType):
    """op on constant values of dtype `at` (the first operand's), a value of dtype t as the device
    computes it (compiler/opsem.py); None where it is not defined here (an integer `/`)."""
    d = DEFS.get(op)
    if d is None or (d.py is None and d.dev is None):
        return None
    vals = [float(v) for v in vals] if at.is_float else [v if isinstance(v, bool) else int(v) for v in vals]
    r = d.dev(*vals, at) if d.dev is not None else d.py(*vals)
    return None if r is None else opsem.convert(r, t)


__all__ = ["Op", "OpDef", "DEFS", "UNARY", "BINARY", "COMPARE", "EXPENSIVE", "HEAVY", "BUILTIN_OPS", "evaluate"]
