"""Scalar semantics of the oracle: Python's operators on fixed-width types (SEMANTICS.md;
numpy's behaviour on the type where Python's is unbounded) and, for floats, a bound on how far
a correct device may be from the oracle.

A float value is a pair (v, e): v is what IEEE arithmetic on the type gives, one rounding per
operation, as the oracle computes it; e bounds |device - v|. e == 0 means the device computes
exactly v (inputs, constants and exact operations on exact values: + - * are correctly rounded
in Vulkan). Otherwise each operation adds a rounding of its result (a GPU may fuse a * b + c,
skipping the product's rounding) and, for builtins, their documented accuracy. A subnormal value
may be flushed to zero (a GPU may, for f32 and f64): inputs, constants and results below TINY
carry an error of TINY (`exact`, `finish`).

Discrete decisions on floats (comparisons, casts to int, floor, `//`, `%`, the branch cut of
atan2, domain edges) raise Unstable when the device's value could decide the other way. In a
profile without `extreme` values, operations outside ordinary values (NaN, overflow, shift counts
>= the width, float `%` / `//` of huge quotients, ...) raise OutOfProfile: another engineer is
fixing those semantics (SEMANTICS.md); the extreme profile checks them.
"""
from __future__ import annotations

import math
import struct
from fractions import Fraction

import numpy as np

from .dtypes import BITS, int_range, is_signed, wrap

_F = struct.Struct("f")
U = {"f32": 2.0 ** -24, "f64": 2.0 ** -53}           # unit roundoff
TINY = {"f32": 2.0 ** -126, "f64": 2.0 ** -1022}      # smallest normal (GPUs may flush below)
MAXF = {"f32": float(np.finfo(np.float32).max), "f64": float(np.finfo(np.float64).max)}
TRIG_LIMIT = {"f32": 1.0e4, "f64": 1.0e5}             # |x| beyond which sin/cos/tan lose accuracy (docs)


class Unstable(Exception):
    """A decision on a float lies within the error bound of its tie."""


class OutOfProfile(Exception):
    """An operation on extreme values that this profile does not check."""


class Mode:
    """Per-evaluation switches: extreme (check extreme values instead of skipping them) and
    trace (a list receiving the outcome of every float decision; the gradient check compares
    the traces of perturbed runs, and treats points where a builtin's derivative is infinite,
    `sqrt(0)`, as unstable: the chain rule gives inf * 0 there)."""

    def __init__(self, extreme: bool = False, trace: list | None = None):
        self.extreme, self.trace = extreme, trace


MODE = Mode()


def decide(outcome):
    if MODE.trace is not None:
        MODE.trace.append(outcome)
    return outcome


def rnd(x: float, t: str) -> float:
    return _F.unpack(_F.pack(x))[0] if t == "f32" else x


def exact(v: float, t: str) -> tuple:
    """An input or constant of float type t: exact, unless subnormal, which a driver may flush
    to zero wherever it is read (WGSL allows it for f32, Vulkan for every width unless the
    shader asks for DenormPreserve, which naga never does; an H100 flushes)."""
    return (v, TINY[t] if v != 0.0 and abs(v) < TINY[t] else 0.0)


def finish(r_exact: float, e: float, t: str, exact: bool, ulps: float = 2.0) -> tuple:
    """The value of an operation whose mathematically computed result is r_exact (in f64),
    with e the propagated input error; exact: the device computes bit-for-bit the same."""
    r = rnd(r_exact, t)
    if math.isinf(r) or math.isnan(r):
        return special(r, r_exact, e, t)
    if not exact:
        e += ulps * U[t] * abs(r)
    if abs(r) < TINY[t] and (r != 0.0 or not exact):
        e += TINY[t]
    return (r, e)


def special(r: float, r_exact: float, e: float, t: str) -> tuple:
    """An infinite or NaN result."""
    if not MODE.extreme:
        raise OutOfProfile("overflow or NaN")
    if math.isnan(r):
        if e > 0.0 and not math.isnan(r_exact):
            raise Unstable("NaN near a finite value")
        return (r, 0.0)
    if not math.isinf(r_exact) and abs(r_exact) - e <= MAXF[t] * (1 + 2 * U[t]):
        raise Unstable("near overflow")
    return (r, 0.0)


def _nonfinite(*xs) -> bool:
    return any(math.isinf(x) or math.isnan(x) for x in xs)


# -- float arithmetic -------------------------------------------------------------------------------
def _sum(x, ex, y, ey, r_exact, t):
    """A sum of x and y: a device may reassociate a chain of sums (mesa does, on lavapipe:
    `(x - y) + 0.1` ran as `(x + 0.1) - y`) or fuse a product into it, so each sum may differ by
    a rounding of its operands' magnitudes, even one that is exact here (x - y == 0 above)."""
    r = rnd(r_exact, t)
    if ex == 0.0 and ey == 0.0 and (x == 0.0 or y == 0.0):
        return (r, 0.0)
    if math.isinf(r):
        return special(r, r_exact, ex + ey, t)
    e = ex + ey + 2 * U[t] * (abs(x) + abs(y))
    if abs(r) < TINY[t]:
        e += TINY[t]
    return (r, e)


def fadd(a, b, t):
    (x, ex), (y, ey) = a, b
    if _nonfinite(x, y):
        return special_op(lambda p, q: p + q, a, b, t)
    return _sum(x, ex, y, ey, x + y, t)


def fsub(a, b, t):
    (x, ex), (y, ey) = a, b
    if _nonfinite(x, y):
        return special_op(lambda p, q: p - q, a, b, t)
    return _sum(x, ex, y, ey, x - y, t)


def _product_exact(x: float, y: float, r: float, t: str) -> bool:
    if t == "f32":
        return x * y == r               # an f32 x f32 product is exact in f64
    return Fraction(x) * Fraction(y) == Fraction(r)


def fmul(a, b, t):
    (x, ex), (y, ey) = a, b
    if _nonfinite(x, y):
        return special_op(lambda p, q: p * q, a, b, t)
    p = x * y
    e = abs(x) * ey + abs(y) * ex + ex * ey
    exact = ex == 0.0 and ey == 0.0 and math.isfinite(rnd(p, t)) and _product_exact(x, y, rnd(p, t), t)
    return finish(p, e, t, exact)


def fdiv(a, b, t):
    (x, ex), (y, ey) = a, b
    if y == 0.0 or abs(y) <= ey or _nonfinite(x, y):
        if ey > 0.0 and abs(y) <= ey and not MODE.extreme:
            raise OutOfProfile("division by a value near zero")
        if ey > 0.0 and abs(y) <= ey:
            raise Unstable("division by a value near zero")
        return special_op(_ieee_div, a, b, t)
    q = x / y
    e = (ex + abs(q) * ey) / (abs(y) - ey)
    m, k = math.frexp(abs(y))
    exact = ex == 0.0 and ey == 0.0 and m == 0.5 and rnd(q, t) == q
    return finish(q, e, t, exact, ulps=6.0)       # the driver's division: a few ulp (docs)


def _ieee_div(p: float, q: float) -> float:
    with np.errstate(all="ignore"):
        return float(np.float64(p) / np.float64(q))


def special_op(fn, a, b, t):
    """IEEE on non-finite operands (extreme profile only)."""
    if not MODE.extreme:
        raise OutOfProfile("non-finite operand")
    (x, ex), (y, ey) = a, b
    r = fn(x, y)
    if math.isnan(r) or math.isinf(r):
        if (ex > 0.0 and math.isfinite(x)) or (ey > 0.0 and math.isfinite(y)):
            # the finite operand's error could matter (inf * 0 vs inf * tiny)
            if any(v == 0.0 or abs(v) <= ev for v, ev in ((x, ex), (y, ey)) if math.isfinite(v)):
                raise Unstable("non-finite arithmetic near zero")
        return (rnd(r, t), 0.0)
    return finish(r, ex + ey, t, ex == 0.0 and ey == 0.0)


def fneg(a, t):
    return (-a[0], a[1])


def fabs(a, t):
    decide(a[0] >= 0.0)
    return (abs(a[0]), a[1])


def fminmax(op: str, a, b, t):
    (x, ex), (y, ey) = a, b
    if math.isnan(x) or math.isnan(y):
        if not MODE.extreme:
            raise OutOfProfile("NaN")
        return (math.nan, 0.0)                     # numpy: NaN propagates
    pick_x = (x <= y) if op == "min" else (x >= y)
    decide(pick_x)
    if abs(x - y) > (ex + ey) * 1.0000001:      # the device picks the same operand: its own error
        return (x, ex) if pick_x else (y, ey)
    return (x, max(ex, ey)) if pick_x else (y, max(ex, ey))


def fcompare(op: str, a, b) -> bool:
    (x, ex), (y, ey) = a, b
    if math.isnan(x) or math.isnan(y):
        if not MODE.extreme:
            raise OutOfProfile("NaN comparison")
        return op == "!="
    e = ex + ey
    if e > 0.0 and abs(x - y) <= e * 1.0000001 + 0.0:
        raise Unstable(f"{x} {op} {y} within {e}")
    return decide(CMP[op](x, y))


CMP = {"<": lambda p, q: p < q, "<=": lambda p, q: p <= q, ">": lambda p, q: p > q,
       ">=": lambda p, q: p >= q, "==": lambda p, q: p == q, "!=": lambda p, q: p != q}


def fstep(fn, a, t):
    """floor / ceil: a step function; the same on the whole error interval, or Unstable."""
    x, ex = a
    if not math.isfinite(x):
        if not MODE.extreme:
            raise OutOfProfile("floor of a non-finite value")
        return (x, 0.0)
    f = math.floor if fn == "floor" else math.ceil
    r = f(x)
    if ex > 0.0 and (f(x - ex) != r or f(x + ex) != r):
        raise Unstable(f"{fn}({x}) within {ex} of a step")
    decide(r)
    return (math.copysign(float(r), x), 0.0)  # a zero result keeps x's sign: ceil(-0.5) is -0.0


def _floor_parts(a, b, t):
    """The quotient a / b (float64) and whether floor(a / b) is decided the same way on the
    whole error box; raises Unstable / OutOfProfile."""
    (x, ex), (y, ey) = a, b
    if _nonfinite(x, y) or y == 0.0:
        if not MODE.extreme:
            raise OutOfProfile("float // or % of non-finite values or by zero")
        return None
    if abs(y) <= ey:
        raise Unstable("divisor near zero")
    q = x / y
    if not MODE.extreme and abs(q) >= (2.0 ** 22 if t == "f32" else 2.0 ** 50):
        raise OutOfProfile("float // or % with a huge quotient")
    if ex > 0.0 or ey > 0.0:
        corners = [(x + sx * ex) / (y + sy * ey) for sx in (-1, 1) for sy in (-1, 1)]
        lo, hi = min(corners), max(corners)
        w = 4 * U[t] * max(abs(lo), abs(hi))
        if math.floor(lo - w) != math.floor(hi + w):
            raise Unstable("quotient near an integer")
    elif not MODE.extreme:
        w = 8 * U[t] * abs(q)
        if math.floor(q - w) != math.floor(q + w):
            raise OutOfProfile("float // or % with a quotient within rounding of an integer")
    return q


def _np_pair(a, b, t):
    ft = np.float32 if t == "f32" else np.float64
    return ft(a[0]), ft(b[0])


def ffloordiv(a, b, t):
    _floor_parts(a, b, t)
    x, y = _np_pair(a, b, t)
    with np.errstate(all="ignore"):
        r = float(np.floor_divide(x, y))
    decide(r)
    if math.isnan(r) or math.isinf(r):
        return (r, 0.0)
    return (r, 0.0)


def fmod(a, b, t):
    q = _floor_parts(a, b, t)
    x, y = _np_pair(a, b, t)
    with np.errstate(all="ignore"):
        r = float(np.remainder(x, y))
    if q is None:
        return (r, 0.0)
    (xv, ex), (_, ey) = a, b
    e = ex + abs(math.floor(q)) * ey
    if not MODE.extreme:   # today's a - b * floor(a / b): a few roundings of |a| (SEMANTICS.md fixes it)
        e += 4 * U[t] * (abs(xv) + abs(r))
    exact = ex == 0.0 and ey == 0.0 and MODE.extreme
    return finish(r, e, t, exact)


# -- float builtins ---------------------------------------------------------------------------------
def _acc(fn: str, x: float, r: float, t: str, y: float = 0.0) -> float:
    """The documented accuracy of a builtin (docs/language.md "Math", "Types")."""
    if fn in ("sqrt", "rsqrt"):   # the driver's: Vulkan allows sqrt as 1 / inversesqrt (about 5 ulp)
        return 12 * U[t] * abs(r)
    if t == "f32":
        return 1e-5 * abs(r)
    ulp = 2 * U[t]
    if fn in ("sin", "cos"):
        return 16 * ulp * abs(r) + abs(x) * 2.0 ** -50
    if fn == "tan":
        return (16 * ulp * abs(r) + abs(x) * 2.0 ** -50) * (1 + r * r)
    if fn in ("exp", "tanh"):
        return (16 + 4 * abs(x)) * ulp * abs(r)
    if fn == "pow":
        return (16 + 4 * abs(y * math.log(abs(x)) if x != 0.0 else 0.0)) * ulp * abs(r)
    if fn == "log":
        return 16 * ulp * abs(r) + 4 * ulp
    return 16 * ulp * abs(r)


_MONO = {"exp": math.exp, "log": math.log, "sqrt": math.sqrt, "tanh": math.tanh, "atan": math.atan,
         "asin": math.asin, "acos": math.acos, "rsqrt": lambda v: 1.0 / math.sqrt(v)}
_DOMAIN = {"log": (0.0, False), "sqrt": (0.0, True), "rsqrt": (0.0, False)}


def fmath(fn: str, a, t: str, nonneg: bool = False):
    """fn(a); nonneg: the argument is >= 0 on the device too (abs(...) and the like), so a
    square root near 0 is continuous rather than a domain edge."""
    x, ex = a
    if not math.isfinite(x):
        if not MODE.extreme:
            raise OutOfProfile("math on a non-finite value")
        with np.errstate(all="ignore"):
            return (rnd(_np_special(fn, x), t), 0.0)
    if MODE.trace is not None and ((fn in ("sqrt", "rsqrt", "log") and x == 0.0)
                                   or (fn in ("asin", "acos") and abs(x) == 1.0)):
        raise Unstable(f"a derivative singularity: {fn}({x})")   # its gradient is infinite there
    if fn in ("sin", "cos", "tan"):
        if abs(x) + ex > TRIG_LIMIT[t]:
            raise OutOfProfile("trigonometry of a large argument")
        if fn == "tan":
            k = math.floor((x - ex) / math.pi - 0.5)
            if k != math.floor((x + ex) / math.pi - 0.5) or abs(math.cos(x)) < 1e-6:
                raise Unstable("tan near a pole")
            r = math.tan(x)
            prop = max(abs(math.tan(x - ex) - r), abs(math.tan(x + ex) - r)) if ex else 0.0
        else:
            r = math.sin(x) if fn == "sin" else math.cos(x)
            prop = min(ex, 2.0)
        return finish(r, prop + _acc(fn, x, r, t), t, False)
    f = _MONO[fn]
    if fn in ("asin", "acos"):
        if abs(x) > 1.0:
            if not MODE.extreme:
                raise OutOfProfile(f"{fn} outside [-1, 1]")
            return (math.nan, 0.0)
        if abs(x) + ex >= 1.0 and ex > 0.0:
            raise Unstable(f"{fn} near the edge of its domain")
    if fn in _DOMAIN:
        lo, closed = _DOMAIN[fn]
        if x < lo or (x == lo and not closed):
            if not MODE.extreme:
                raise OutOfProfile(f"{fn} outside its domain")
            with np.errstate(all="ignore"):
                return (rnd(_np_special(fn, x), t), 0.0)
        if ex > 0.0 and x - ex <= lo:
            if fn == "sqrt" and nonneg:   # continuous at 0: sqrt(x + e) - sqrt(x) <= sqrt(e)
                r = math.sqrt(x)
                return finish(r, math.sqrt(x + ex) - r + math.sqrt(ex) + _acc(fn, x, r, t), t, False)
            raise Unstable(f"{fn} near the edge of its domain")
    if fn == "exp" and x + ex > (88.0 if t == "f32" else 709.0):
        if not MODE.extreme:
            raise OutOfProfile("exp overflow")
    try:
        r = f(x)
        prop = max(abs(f(x - ex) - r), abs(f(x + ex) - r)) if ex else 0.0
    except OverflowError:
        return special(math.inf, math.inf, ex, t)
    if fn == "sqrt" and ex == 0.0 and rnd(r, t) == r and r * r == x:
        return (rnd(r, t), 0.0) if x >= TINY[t] or x == 0.0 else finish(r, 0.0, t, False)
    return finish(r, prop + _acc(fn, x, r, t), t, False)


NP_NAME = {"asin": "arcsin", "acos": "arccos", "atan": "arctan"}


def _np_special(fn: str, x: float) -> float:
    """numpy's value of fn at a special or out-of-domain argument (NaN, inf, -0.0, ...)."""
    with np.errstate(all="ignore"):
        if fn == "rsqrt":
            return float(np.float64(1.0) / np.sqrt(np.float64(x)))
        return float(getattr(np, NP_NAME.get(fn, fn))(np.float64(x)))


def fatan2(b, a, t):
    """atan2(y, x) with y = b, x = a."""
    (y, ey), (x, ex) = b, a
    if _nonfinite(x, y):
        if not MODE.extreme:
            raise OutOfProfile("atan2 of non-finite values")
        return (rnd(math.atan2(y, x), t), 0.0)
    if ex == 0.0 and ey == 0.0 and (y == 0.0 or x == 0.0):   # exact zeros: Python's (IEEE's) value
        if y == 0.0 and math.copysign(1.0, x) < 0 and not MODE.extreme:
            raise Unstable("atan2(+-0, x < 0): the sign of a zero decides")
        r = math.atan2(y, x)
        return (r, 0.0) if r == 0.0 else finish(r, _acc("atan2", x, r, t), t, False)
    if x < 0.0 and abs(y) <= ey:
        raise Unstable("atan2 on its branch cut")
    dx = max(abs(x) - ex, 0.0)
    dy = max(abs(y) - ey, 0.0)
    d = math.hypot(dx, dy)
    if ex + ey > 0.0 and d == 0.0:
        raise Unstable("atan2 near the origin")
    r = math.atan2(y, x)
    prop = (ex + ey) / d if ex + ey > 0.0 else 0.0
    return finish(r, prop + _acc("atan2", x, r, t), t, False)


def fpow(a, b, t, nonneg: bool = False):
    """a ** b; nonneg: the base is >= 0 on the device too (a positive power of it is then
    continuous at 0)."""
    (x, ex), (y, ey) = a, b
    if _nonfinite(x, y) or (x == 0.0 and ex == 0.0 and y <= 0.0):
        if not MODE.extreme:
            raise OutOfProfile("pow of non-finite values or 0 ** y, y <= 0")
        if ex > 0.0 or ey > 0.0:
            raise Unstable("pow of special values with uncertain operands")
        return _np_pow(x, y, t)
    integral = ey == 0.0 and y == math.floor(y)
    if MODE.trace is not None and x == 0.0 and not integral and y < 1.0:
        raise Unstable("a derivative singularity: x ** y at x = 0, 0 < y < 1")
    if not integral and nonneg and x >= 0.0 and y - ey > 0.0 and x - ex <= 0.0:
        r = math.pow(x, y)
        hi = math.pow(x + ex, y + ey) if x + ex >= 1.0 else math.pow(x + ex, y - ey)
        return finish(r, abs(hi - r) + r + _acc("pow", x, r, t, y), t, False)
    if not integral:
        if x - ex <= 0.0:
            if x + ex < 0.0 and ex == 0.0 and ey == 0.0:   # a negative base, a fractional exponent: NaN
                if not MODE.extreme:
                    raise OutOfProfile("pow of a negative base")
                return _np_pow(x, y, t)
            raise Unstable("pow with a base near or below zero")
    elif x < 0.0 and abs(y) > 64 and not MODE.extreme:
        raise OutOfProfile("pow of a negative base with a huge exponent")
    elif y < 0.0 and abs(x) <= ex:
        raise Unstable("a negative power of a value near zero")
    if MODE.extreme and x < 0.0 and not integral:
        return _np_pow(x, y, t)
    try:
        r = math.pow(x, y)
    except OverflowError:     # a negative base keeps its sign for an odd exponent
        inf = -math.inf if x < 0.0 and integral and y % 2 == 1 else math.inf
        return special(inf, inf, ex + ey, t)
    try:
        if integral and y >= 1.0:
            prop = y * (abs(x) + ex) ** (y - 1) * ex
        elif integral and y == 0.0:
            prop = 0.0
        else:
            prop = max(abs(math.pow(x + sx * ex, y + sy * ey) - r) for sx in (-1, 1) for sy in (-1, 1))
    except OverflowError:
        raise Unstable("pow: the operands' error bound overflows") from None
    return finish(r, prop + _acc("pow", x, r, t, y), t, False)


def _np_pow(x: float, y: float, t: str):
    """np.power elementwise (C99's pow; on a scalar exponent 0.5 numpy takes sqrt instead)."""
    ft = np.float32 if t == "f32" else np.float64
    with np.errstate(all="ignore"):
        return (float(np.power(np.array([x], ft), np.array([y], ft))[0]), 0.0)


# -- conversions ------------------------------------------------------------------------------------
def f2f(a, src: str, dst: str):
    if src == dst or dst == "f64":
        return a
    x, e = a
    if not math.isfinite(x):
        if not MODE.extreme:
            raise OutOfProfile("non-finite")
        return (rnd(x, dst), 0.0)
    r = rnd(x, dst)
    if math.isinf(r):
        return special(r, x, e, dst)
    exact = e == 0.0 and r == x
    return finish(x, e, dst, exact)


def i2f(v: int, dst: str):
    r = rnd(float(v), dst)
    exact = math.isfinite(r) and int(r) == v
    return finish(float(v), 0.0, dst, exact)


def f2i(a, dst: str) -> int:
    """Truncation toward zero, saturating, NaN -> 0 (SEMANTICS.md)."""
    x, e = a
    lo, hi = int_range(dst)
    if math.isnan(x):
        if not MODE.extreme:
            raise OutOfProfile("NaN to int")
        return 0
    if not MODE.extreme and not (lo - 1 < x - e and x + e < hi + 1):
        raise OutOfProfile("float to int out of range")

    def sat(v: float) -> int:
        if math.isinf(v):
            return hi if v > 0 else lo
        return min(max(math.trunc(v), lo), hi)
    r = sat(x)
    if e > 0.0 and (sat(x - e) != r or sat(x + e) != r):
        raise Unstable(f"int({x}) within {e} of a step")
    return decide(r)


# -- integers ---------------------------------------------------------------------------------------
def ifloordiv(x: int, y: int, t: str) -> int:
    return 0 if y == 0 else wrap(x // y, t)


def imod(x: int, y: int, t: str) -> int:
    return 0 if y == 0 else wrap(x % y, t)


def ipow(x: int, y: int, t: str) -> int:
    if y >= 0:
        return wrap(pow(x, y, 1 << BITS[t]), t)
    # docs: "a negative run-time exponent truncates toward zero"
    if x == 0:
        if not MODE.extreme:
            raise OutOfProfile("0 ** negative")
        raise Unstable("0 ** negative is not defined by the docs")
    if x == 1:
        return 1
    if x == -1 or (is_signed(t) and wrap(x, t) == -1):
        return 1 if y % 2 == 0 else -1
    return 0


def ishift(op: str, x: int, n: int, t: str) -> int:
    w = BITS[t]
    if not 0 <= n < w:
        if not MODE.extreme:
            raise OutOfProfile("shift count outside [0, width)")
        if op == "<<":
            return 0
        return -1 if x < 0 else 0
    return wrap(x << n, t) if op == "<<" else x >> n
