"""Typing rules: how operands are converted and what type an operation yields.

Kept apart from the AST visitor (as Triton's frontend keeps its `semantic` module) so the
rules can be read in one place. Every function takes IR nodes or Python constants and
returns a typed IR node with explicit CASTs, so the IR the passes see is fully typed.
"""
from __future__ import annotations

from contextlib import contextmanager

from . import opsem
from .errors import CompileError
from .ir import Loc, Node, Op, const
from .ops import DEFS, evaluate
from .types import SCALARS, DType, compute_type, f32, i32, promote, u1, u32, u64

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


def python_dtype(dt):
    """Python's `float` / `int` / `bool` given as a dtype: the default dtypes, as in Taichi
    (`gr.floor(x, int)`, `gr.random(float)`); anything else unchanged."""
    if dt is float or dt is int:
        return DEFAULTS["fp" if dt is float else "ip"]
    return u1 if dt is bool else dt


def dtype_of_const(v) -> DType:
    if isinstance(v, bool):
        return u1
    if isinstance(v, int):
        return DEFAULTS["ip"]
    if isinstance(v, float):
        return DEFAULTS["fp"]
    raise TypeError(f"{type(v).__name__} is not a kernel scalar")


def as_dtype(t):
    """A dtype argument as Taichi reads one: Python's `float` and `int` name gr.init's default_fp and
    default_ip (`gr.cast(x, float)`, `v.cast(int)`, `gr.Vector.zero(float, 2)`); anything else is
    returned as it is, for the caller to check."""
    if t is float:
        return DEFAULTS["fp"]
    if t is int:
        return DEFAULTS["ip"]
    return t


def is_const(v) -> bool:
    return isinstance(v, (bool, int, float))


def as_node(v, loc: Loc | None = None, dtype: DType | None = None) -> Node:
    """An IR node for a node or a Python constant, cast to `dtype` if given."""
    if isinstance(v, Node):
        return cast(v, dtype) if dtype is not None else v
    if is_const(v):
        t = dtype or dtype_of_const(v)
        if dtype is None and type(v) is int and not t.int_range[0] <= v <= t.int_range[1]:
            raise CompileError(f"integer literal {v} is out of the range of default_ip {t}: give it a dtype "
                               f"(gr.u32({v}), gr.i64({v})) or gr.init(default_ip=gr.i64), as in Taichi", loc)
        return const(opsem.convert(v, t), t, loc)
    raise CompileError(f"expected a scalar value, got {type(v).__name__}", loc)


def cast(n: Node, t: DType) -> Node:
    """Convert a node to dtype t (no node when it already has it)."""
    if n.dtype == t:
        return n
    if n.op is Op.CONST:
        return const(opsem.convert(n.attr, t), t, n.loc)
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
    """A typed binary operation on nodes or constants (its typing rule: compiler/ops.py); folds
    constants in Python."""
    ta, tb = operand_types(a, b)
    rule = DEFS[op].typing
    if rule in ("bits", "shift") and (ta.is_float or tb.is_float):
        raise CompileError(f"bitwise operator needs integer operands, got {ta} and {tb}", loc)
    if is_const(a) and is_const(b):
        return fold_binary(op, a, b, loc)
    if rule == "logic":
        return Node(op, u1, (truth(a, loc), truth(b, loc)), loc=loc)
    if rule in ("bits", "shift"):
        if not (ta.is_int or ta == u1) or not (tb.is_int or tb == u1):
            raise CompileError(f"bitwise operator needs integer operands, got {ta} and {tb}", loc)
        t = promote(ta, tb)
        if rule == "shift":  # the count as unsigned: a negative one is huge (numpy's rule)
            if is_const(b) and not 0 <= b < 2**32:
                b = 2**32 - 1
            return Node(op, t, (as_node(a, loc, t), as_node(b, loc, u64 if tb.wide else u32)), loc=loc)
        return Node(op, t, (as_node(a, loc, t), as_node(b, loc, t)), loc=loc)
    t = promote(ta, tb)
    if rule == "float" and not t.is_float or rule == "pow" and not t.is_float and is_const(b) and b < 0:
        t = DEFAULTS["fp"]
    na, nb = as_node(a, loc, t), as_node(b, loc, t)
    return Node(op, u1 if rule == "compare" else t, (na, nb), loc=loc)


def unary(op: Op, a, loc: Loc | None = None):
    d = DEFS[op]
    if op is Op.BITNOT and dtype_of(a).is_float:  # Taichi: "takes integral inputs only"
        raise CompileError(f"`~` (bitwise not) takes integral inputs only, got {dtype_of(a)}", loc)
    if is_const(a) and d.py is not None:
        return fold_unary(op, a, loc)
    t = compute_type(dtype_of(a))
    if d.typing == "logic":
        return Node(Op.NOT, u1, (truth(a, loc),), loc=loc)
    if d.typing == "int" and not t.is_int:
        raise CompileError(f"gr.{d.name.lower()} needs an integer operand, got {t}", loc)
    if d.typing in ("float", "round") and not t.is_float:
        if d.typing == "round":
            return a
        t = DEFAULTS["fp"]
    if op is Op.NEG and t == u1:
        t = i32
    if is_const(a):  # an op Python has no operator for (popcnt): the device's value in t
        return evaluate(op, (opsem.convert(a, t),), t, t)
    return Node(op, t, (as_node(a, loc, t),), loc=loc)


def truth(v, loc: Loc | None = None) -> Node:
    """The bool value of a scalar: x != 0 for numbers."""
    if is_const(v):
        return const(bool(v), u1, loc)
    if v.dtype == u1:
        return v
    return Node(Op.NE, u1, (v, const(opsem.convert(0, v.dtype), v.dtype, loc)), loc=loc)


def select(c, a, b, loc: Loc | None = None):
    ta, tb = operand_types(a, b)
    t = promote(ta, tb) if ta != tb else ta
    return Node(Op.SELECT, t, (truth(c, loc), as_node(a, loc, t), as_node(b, loc, t)), loc=loc)


def fold_binary(op: Op, a, b, loc=None):
    """op of two Python numbers, as Python computes it (compiler/ops.py, `py`)."""
    try:
        r = DEFS[op].py(a, b)
    except (ZeroDivisionError, ValueError, OverflowError) as e:
        raise CompileError(f"constant expression fails: {e}", loc) from None
    if isinstance(r, complex):  # (-8.0) ** (1 / 3): Python gives a complex number, kernels have none
        raise CompileError(f"constant expression fails: {a!r} ** {b!r} is not a real number", loc)
    return r


def fold_unary(op: Op, a, loc=None):
    """op of a Python number, as the device computes it: the math functions give C99's (numpy's)
    NaN or infinity where Python's math raises, and floor / ceil / round of a float is a float."""
    try:
        return DEFS[op].py(a)
    except (ValueError, OverflowError, ZeroDivisionError) as e:
        raise CompileError(f"constant expression fails: {e}", loc) from None
