"""Static types of expressions (docs/language.md's rules, through dtypes.py) and the checks
that make a program valid in the language; shared by the generator, the oracle and the
shrinker. An invalid program raises InvalidProgram: the generator must never make one, and
the shrinker discards a candidate that is one."""
from __future__ import annotations

from .dtypes import DEFAULT_FLOAT, DEFAULT_INT, adopt, is_float, is_int, literal_type, promote
from .program import Bin, BoolOp, Call, Cast, Compare, Const, Expr, IfExp, Load, Math, Select, Shape, Unary, Var

FLOAT_FNS = ("sin", "cos", "tan", "tanh", "exp", "log", "sqrt", "rsqrt", "asin", "acos", "atan")
STEP_FNS = ("floor", "ceil")
ARITH = ("+", "-", "*", "/", "//", "%", "**", "min", "max", "atan2")
BITS_OPS = ("&", "|", "^", "<<", ">>")
CAST_STYLE_TYPE = {"int": DEFAULT_INT, "float": DEFAULT_FLOAT}


class InvalidProgram(Exception):
    """The program breaks a rule of the language (a generator or shrinker bug, never a finding)."""


class Ctx:
    """What expressions can name: arrays (name -> Array), funcs (name -> Func) and the visible
    variables (name -> type)."""

    def __init__(self, arrays: dict, funcs: dict, variables: dict):
        self.arrays, self.funcs, self.vars = arrays, funcs, variables


def is_const(e: Expr) -> bool:
    return isinstance(e, Const)


def operand_types(a: Expr, b: Expr, ctx: Ctx) -> tuple[str, str]:
    """The two operands' types, a Python number adopting its neighbour's."""
    if is_const(a) and is_const(b):
        raise InvalidProgram("an operation on two constants (Python would fold it)")
    if is_const(a):
        tb = expr_type(b, ctx)
        return adopt(a.value, tb), tb
    ta = expr_type(a, ctx)
    if is_const(b):
        return ta, adopt(b.value, ta)
    return ta, expr_type(b, ctx)


def bin_types(e: Bin, ctx: Ctx) -> tuple[str, str, str]:
    """(left operand type, right operand type, result type) of a binary operation; the
    operands are converted to the first two before the operation."""
    ta, tb = operand_types(e.a, e.b, ctx)
    if e.op in BITS_OPS:
        if not (is_int(ta) and is_int(tb)):
            raise InvalidProgram(f"bit operation on {ta}, {tb}")
        if e.op in ("<<", ">>"):
            # the count's type must not decide the result: the same type, or a Python number
            if ta != tb and not is_const(e.b):
                raise InvalidProgram("shift by a count of another type")
            return ta, ta, ta
        t = promote(ta, tb)
        return t, t, t
    if e.op not in ARITH:
        raise InvalidProgram(f"unknown operator {e.op}")
    if ta == "bool" or tb == "bool":
        raise InvalidProgram("arithmetic on bools")
    t = promote(ta, tb)
    if e.op in ("/", "atan2") and not is_float(t):
        t = DEFAULT_FLOAT
    if e.op == "**" and not is_float(t) and is_const(e.b) and e.b.value < 0:
        t = DEFAULT_FLOAT
    return t, t, t


def expr_type(e: Expr, ctx: Ctx) -> str:
    if isinstance(e, Const):
        return literal_type(e.value)
    if isinstance(e, Var):
        if e.name not in ctx.vars:
            raise InvalidProgram(f"{e.name!r} is not defined here")
        return ctx.vars[e.name]
    if isinstance(e, Load):
        a = ctx.arrays.get(e.arr)
        if a is None or len(e.idx) != len(a.shape):
            raise InvalidProgram(f"bad load of {e.arr}")
        for k in e.idx:
            if not is_int(expr_type(k, ctx)):
                raise InvalidProgram("a non-integer index")
        return a.dtype
    if isinstance(e, Shape):
        return "i32"
    if isinstance(e, Bin):
        return bin_types(e, ctx)[2]
    if isinstance(e, Unary):
        if is_const(e.a):
            raise InvalidProgram("an operation on a constant")
        t = expr_type(e.a, ctx)
        if e.op == "not":
            return "bool"
        if e.op == "invert":
            if not is_int(t):
                raise InvalidProgram("~ of a non-integer")
            return t
        if t == "bool":
            raise InvalidProgram("negation of a bool")
        return t
    if isinstance(e, Compare):
        if all(is_const(x) for x in e.operands):
            raise InvalidProgram("a comparison of constants")
        for a, b in zip(e.operands, e.operands[1:]):
            if not (is_const(a) and is_const(b)):
                ta, tb = operand_types(a, b, ctx)
                if "bool" in (ta, tb):
                    raise InvalidProgram("a comparison of bools")
        return "bool"
    if isinstance(e, BoolOp):
        for v in e.values:
            if expr_type(v, ctx) != "bool":
                raise InvalidProgram("and/or of a non-bool")
        return "bool"
    if isinstance(e, (IfExp, Select)):
        if expr_type(e.cond, ctx) != "bool":
            raise InvalidProgram("a non-bool condition")
        ta, tb = operand_types(e.a, e.b, ctx)
        if "bool" in (ta, tb) and ta != tb:
            raise InvalidProgram("select between bool and number")
        return ta if ta == tb else promote(ta, tb)
    if isinstance(e, Math):
        if is_const(e.a):
            raise InvalidProgram("a builtin of a constant")
        t = expr_type(e.a, ctx)
        if t == "bool":
            raise InvalidProgram("math on a bool")
        if e.fn == "abs":
            return t
        if e.fn in STEP_FNS:
            return t
        if e.fn not in FLOAT_FNS:
            raise InvalidProgram(f"unknown builtin {e.fn}")
        return t if is_float(t) else DEFAULT_FLOAT
    if isinstance(e, Cast):
        if is_const(e.a):
            raise InvalidProgram("a cast of a constant")
        if expr_type(e.a, ctx) == "bool":
            raise InvalidProgram("a cast of a bool")
        return CAST_STYLE_TYPE.get(e.style, e.to)
    if isinstance(e, Call):
        f = ctx.funcs.get(e.func)
        if f is None or len(f.params) != len(e.args):
            raise InvalidProgram(f"bad call of {e.func}")
        for a in e.args:
            if expr_type(a, ctx) == "bool":
                raise InvalidProgram("a bool argument")
        return f.ret
    raise InvalidProgram(f"unknown expression {type(e).__name__}")


def cast_type(e: Cast) -> str:
    return CAST_STYLE_TYPE.get(e.style, e.to)
