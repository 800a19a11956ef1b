"""`gr.lang.ops`: Taichi's `ti.lang.ops`, the module of its operators as functions, which programs
import by path (`from gfxrt.lang.ops import atomic_add`). The math and atomic functions are the
gr builtins themselves; Python's operators as functions (`add`, `cmp_lt`, `bit_sar`, `ifte`, ...)
are @gr.func functions whose bodies are the operators, so they mean in kernels and on the host
exactly what the operators do."""
from __future__ import annotations

from gfxrt.compiler.builtins import BUILTINS as _B
from gfxrt.compiler.func import func

from ..taichi.ops import BUILTINS as _T
from ..taichi.rng import random

_SAME = ("abs", "acos", "asin", "atan2", "atomic_add", "atomic_and", "atomic_max", "atomic_min", "atomic_mul",
         "atomic_or", "atomic_sub", "atomic_xor", "bit_cast", "bit_shr", "cast", "ceil", "clz", "cos", "exp",
         "floor", "log", "logical_not", "max", "min", "popcnt", "pow", "raw_div", "raw_mod", "round", "rsqrt",
         "select", "sin", "sqrt", "tan", "tanh")
globals().update({n: _T.get(n, _B.get(n)) for n in _SAME})


@func
def add(a, b):
    return a + b


@func
def sub(a, b):
    return a - b


@func
def mul(a, b):
    return a * b


@func
def truediv(a, b):
    return a / b


@func
def floordiv(a, b):
    return a // b


@func
def mod(a, b):
    return a % b


@func
def neg(a):
    return -a


@func
def bit_and(a, b):
    return a & b


@func
def bit_or(a, b):
    return a | b


@func
def bit_xor(a, b):
    return a ^ b


@func
def bit_not(a):
    return ~a


@func
def bit_shl(a, b):
    return a << b


@func
def bit_sar(a, b):
    return a >> b  # on signed integers `>>` is the arithmetic shift (bit_shr is the logical one)


@func
def logical_and(a, b):
    return a and b


@func
def logical_or(a, b):
    return a or b


@func
def cmp_lt(a, b):
    return a < b


@func
def cmp_le(a, b):
    return a <= b


@func
def cmp_gt(a, b):
    return a > b


@func
def cmp_ge(a, b):
    return a >= b


@func
def cmp_eq(a, b):
    return a == b


@func
def cmp_ne(a, b):
    return a != b


@func
def ifte(cond, a, b):
    return a if cond else b


__all__ = [*_SAME, "random", "add", "sub", "mul", "truediv", "floordiv", "mod", "neg", "bit_and", "bit_or", "bit_xor",
           "bit_not", "bit_shl", "bit_sar", "logical_and", "logical_or", "cmp_lt", "cmp_le", "cmp_gt", "cmp_ge",
           "cmp_eq", "cmp_ne", "ifte"]
