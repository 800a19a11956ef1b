"""Typing rules: how operands are converted and what type an operation yields.

Kept apart from the AST visitor (as Triton's frontend keeps its `semantic` module) so the
rules can be read in one place. Every function takes IR nodes or Python constants and
returns a typed IR node with explicit CASTs, so the IR the passes see is fully typed.
"""
from __future__ import annotations

import math
from contextlib import contextmanager

from . import opsem
from .errors import CompileError
from .ir import COMPARE, Loc, Node, Op, const
from .types import SCALARS, DType, compute_type, f32, i32, promote, u1, u32, u64

ARITH = frozenset({Op.ADD, Op.SUB, Op.MUL, Op.DIV, Op.FLOORDIV, Op.MOD, Op.POW, Op.MIN, Op.MAX,
                   Op.ATAN2})
BITWISE = frozenset({Op.BITAND, Op.BITOR, Op.BITXOR, Op.SHL, Op.SHR})
FLOAT_ONLY = frozenset({Op.SQRT, Op.RSQRT, Op.EXP, Op.LOG, Op.SIN, Op.COS, Op.TAN, Op.ASIN,
                        Op.ACOS, Op.ATAN, Op.TANH, Op.FLOOR, Op.CEIL, Op.ROUND, Op.ATAN2})


# the dtypes of Python numbers in kernels: gr.init(default_fp=gr.f64, default_ip=gr.i64) as in Taichi
DEFAULTS = {"fp": f32, "ip": i32}


@contextmanager
def defaults(fp: str = "f32", ip: str = "i32"):
    """Lower with these default float / int dtypes (names, as in `Target.default_fp`)."""
    saved = dict(DEFAULTS)
    DEFAULTS.update(fp=SCALARS[fp], ip=SCALARS[ip])
    try:
        yield
    finally:
        DEFAULTS.update(saved)


def dtype_of_const(v) -> DType:
    if isinstance(v, bool):
        return u1
    if isinstance(v, int):
        return DEFAULTS["ip"]
    if isinstance(v, float):
        return DEFAULTS["fp"]
    raise TypeError(f"{type(v).__name__} is not a kernel scalar")


def is_const(v) -> bool:
    return isinstance(v, (bool, int, float))


def as_node(v, loc: Loc | None = None, dtype: DType | None = None) -> Node:
    """An IR node for a node or a Python constant, cast to `dtype` if given."""
    if isinstance(v, Node):
        return cast(v, dtype) if dtype is not None else v
    if is_const(v):
        t = dtype or dtype_of_const(v)
        return const(_convert(v, t), t, loc)
    raise CompileError(f"expected a scalar value, got {type(v).__name__}", loc)


def _convert(v, t: DType):
    """A Python constant as a value of dtype t: floats round to t, float -> int truncates and
    saturates (NaN -> 0), int -> int wraps (compiler/opsem.py)."""
    return opsem.convert(v, t)


def cast(n: Node, t: DType) -> Node:
    """Convert a node to dtype t (no node when it already has it)."""
    if n.dtype == t:
        return n
    if n.op is Op.CONST:
        return const(_convert(n.attr, t), t, n.loc)
    return Node(Op.CAST, t, (n,), loc=n.loc)


def dtype_of(v) -> DType:
    return v.dtype if isinstance(v, Node) else dtype_of_const(v)


def _adopt(v, t: DType) -> DType:
    """The dtype a Python constant takes next to a value of dtype t: like NumPy 2, a Python
    number adopts the other operand's dtype when the kinds allow (`h * 2.0` stays f16,
    `u + 1` stays u32); otherwise it keeps its own (`i + 0.5` is f32)."""
    if isinstance(v, bool):
        return t if t == u1 or t.is_int else u1
    if isinstance(v, int):
        if t.is_int and not t.int_range[0] <= v <= t.int_range[1]:
            wider = promote(t, DEFAULTS["ip"])  # 2**40 next to an i32 is an i64 under default_ip=i64
            return wider if wider.int_range[0] <= v <= wider.int_range[1] else t
        return t if t.is_int or t.is_float else DEFAULTS["ip"]
    return t if t.is_float else DEFAULTS["fp"]


def operand_types(a, b) -> tuple[DType, DType]:
    ta, tb = dtype_of(a), dtype_of(b)
    if is_const(a) and not is_const(b):
        ta = _adopt(a, tb)
    elif is_const(b) and not is_const(a):
        tb = _adopt(b, ta)
    return ta, tb


def binary(op: Op, a, b, loc: Loc | None = None):
    """A typed binary operation on nodes or constants; folds constants in Python."""
    ta, tb = operand_types(a, b)
    if op in BITWISE and (ta.is_float or tb.is_float):
        raise CompileError(f"bitwise operator needs integer operands, got {ta} and {tb}", loc)
    if is_const(a) and is_const(b):
        return fold_binary(op, a, b, loc)
    if op in (Op.AND, Op.OR):
        return Node(op, u1, (truth(a, loc), truth(b, loc)), loc=loc)
    if op in BITWISE:
        if not (ta.is_int or ta == u1) or not (tb.is_int or tb == u1):
            raise CompileError(f"bitwise operator needs integer operands, got {ta} and {tb}", loc)
        t = promote(ta, tb)
        if op in (Op.SHL, Op.SHR):  # the count as unsigned: a negative one is huge (numpy's rule)
            if is_const(b) and not 0 <= b < 2**32:
                b = 2**32 - 1
            return Node(op, t, (as_node(a, loc, t), as_node(b, loc, u64 if tb.wide else u32)), loc=loc)
        return Node(op, t, (as_node(a, loc, t), as_node(b, loc, t)), loc=loc)
    t = promote(ta, tb)
    if op in (Op.DIV, Op.ATAN2) and not t.is_float:
        t = DEFAULTS["fp"]
    if op is Op.POW and not t.is_float and is_const(b) and b < 0:
        t = DEFAULTS["fp"]
    na, nb = as_node(a, loc, t), as_node(b, loc, t)
    if op in COMPARE:
        return Node(op, u1, (na, nb), loc=loc)
    return Node(op, t, (na, nb), loc=loc)


def unary(op: Op, a, loc: Loc | None = None):
    if is_const(a):
        return fold_unary(op, a, loc)
    t = compute_type(dtype_of(a))
    if op is Op.NOT:
        return Node(Op.NOT, u1, (truth(a, loc),), loc=loc)
    if op in FLOAT_ONLY and not t.is_float:
        if op in (Op.FLOOR, Op.CEIL, Op.ROUND):
            return a
        t = DEFAULTS["fp"]
    if op is Op.NEG and t == u1:
        t = i32
    return Node(op, t, (as_node(a, loc, t),), loc=loc)


def truth(v, loc: Loc | None = None) -> Node:
    """The bool value of a scalar: x != 0 for numbers."""
    if is_const(v):
        return const(bool(v), u1, loc)
    if v.dtype == u1:
        return v
    return Node(Op.NE, u1, (v, const(_convert(0, v.dtype), v.dtype, loc)), loc=loc)


def select(c, a, b, loc: Loc | None = None):
    ta, tb = operand_types(a, b)
    t = promote(ta, tb) if ta != tb else ta
    return Node(Op.SELECT, t, (truth(c, loc), as_node(a, loc, t), as_node(b, loc, t)), loc=loc)


_PY_BINARY = {
    Op.ADD: lambda a, b: a + b, Op.SUB: lambda a, b: a - b, Op.MUL: lambda a, b: a * b,
    Op.DIV: lambda a, b: a / b, Op.FLOORDIV: lambda a, b: a // b, Op.MOD: lambda a, b: a % b,
    Op.POW: lambda a, b: a ** b, Op.MIN: min, Op.MAX: max, Op.ATAN2: math.atan2,
    Op.BITAND: lambda a, b: a & b, Op.BITOR: lambda a, b: a | b, Op.BITXOR: lambda a, b: a ^ b,
    Op.SHL: lambda a, b: a << b, Op.SHR: lambda a, b: a >> b,
    Op.EQ: lambda a, b: a == b, Op.NE: lambda a, b: a != b, Op.LT: lambda a, b: a < b,
    Op.LE: lambda a, b: a <= b, Op.GT: lambda a, b: a > b, Op.GE: lambda a, b: a >= b,
    Op.AND: lambda a, b: bool(a and b), Op.OR: lambda a, b: bool(a or b),
}

_PY_UNARY = {
    Op.NEG: lambda a: -a, Op.NOT: lambda a: not a, Op.BITNOT: lambda a: ~a, Op.ABS: abs,
    Op.SQRT: math.sqrt, Op.RSQRT: lambda a: 1.0 / math.sqrt(a), Op.EXP: math.exp,
    Op.LOG: math.log, Op.SIN: math.sin, Op.COS: math.cos, Op.TAN: math.tan,
    Op.ASIN: math.asin, Op.ACOS: math.acos, Op.ATAN: math.atan, Op.TANH: math.tanh,
    Op.FLOOR: math.floor, Op.CEIL: math.ceil, Op.ROUND: round,
    Op.SIGN: lambda a: (a > 0) - (a < 0),
}


def fold_binary(op: Op, a, b, loc=None):
    try:
        r = _PY_BINARY[op](a, b)
    except (ZeroDivisionError, ValueError, OverflowError) as e:
        raise CompileError(f"constant expression fails: {e}", loc) from None
    if isinstance(r, complex):  # (-8.0) ** (1 / 3): Python gives a complex number, kernels have none
        raise CompileError(f"constant expression fails: {a!r} ** {b!r} is not a real number", loc)
    return r


def fold_unary(op: Op, a, loc=None):
    """op of a Python number, as the device computes it: the math functions give C99's (numpy's)
    NaN or infinity where Python's math raises, and floor / ceil / round of a float is a float."""
    if op in (Op.FLOOR, Op.CEIL, Op.ROUND) and isinstance(a, float):  # math's are ints
        return float(_PY_UNARY[op](a)) if math.isfinite(a) else a
    try:
        return _PY_UNARY[op](a)
    except (ValueError, OverflowError, ZeroDivisionError) as e:
        if op in FLOAT_ONLY:
            return _c99(op, a)
        raise CompileError(f"constant expression fails: {e}", loc) from None


def _c99(op: Op, a) -> float:
    """What C99 and numpy give where Python's math raises: sqrt, log and rsqrt below zero, asin
    and acos outside [-1, 1], sin / cos / tan of an infinity: NaN; log(±0) -inf, rsqrt(±0) ±inf;
    exp beyond the largest double: inf."""
    if op is Op.EXP:
        return math.inf
    if a == 0 and op is Op.LOG:
        return -math.inf
    if a == 0 and op is Op.RSQRT:
        return math.copysign(math.inf, a)
    return math.nan
