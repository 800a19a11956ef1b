"""Python's operators on fixed-width scalars, as numpy computes them on numpy scalars of the type
(docs/language.md, "Arithmetic follows Python"): the reference the constant folder
(passes/simplify.py), the IR interpreter (interp.py) and the host functions share with the WGSL
the code generator emits (codegen/wgsl_opsem.py).

Values are Python numbers: a float of dtype f32 / f16 holds a value of that type (`round_to`),
an integer of any dtype holds its value in the type's range (`wrap`). Each float operation rounds
once to its type, as IEEE does (computing f32 in double, then rounding, is exact for + - * / and
sqrt: a double has more than twice the bits).
"""
from __future__ import annotations

import math
import struct
from typing import Protocol


class DType(Protocol):
    """What these rules read of a scalar dtype (compiler/types.py's DType): they compute on Python
    numbers and import no type table, so Python-scope values (compiler/hostmatrix_list.py) use them too."""

    kind: str
    size: int

    @property
    def bits(self) -> int: ...

    @property
    def is_float(self) -> bool: ...

    @property
    def int_range(self) -> tuple[int, int]: ...


_NAN = float("nan")
_INF = float("inf")


def round_to(v: float, t: DType) -> float:
    """v rounded to the float dtype t (f16, f32: round to nearest even; inf past the range)."""
    v = float(v)
    if t.size == 8 or not math.isfinite(v):
        return v
    fmt = "<f" if t.size == 4 else "<e"
    try:
        return struct.unpack(fmt, struct.pack(fmt, v))[0]
    except OverflowError:  # struct refuses what rounds to infinity
        return math.copysign(_INF, v)


def wrap(v: int, t: DType) -> int:
    """An integer wrapped to the integer dtype t (two's complement), or a bool."""
    if t.kind == "bool":
        return bool(v)
    bits = t.bits
    v = int(v) & ((1 << bits) - 1)
    if t.kind == "int" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def to_int(v: float, t: DType) -> int:
    """A float converted to the integer dtype t: truncated toward zero, saturated to t's range;
    NaN gives 0."""
    if math.isnan(v):
        return 0
    lo, hi = t.int_range
    if v >= hi:
        return hi
    if v <= lo:
        return lo
    return int(v)


def convert(v, t: DType):
    """`t(v)` (a CAST): floats round, float -> int saturates, int -> int wraps."""
    if t.kind == "bool":
        return bool(v)
    if t.is_float:
        return round_to(float(v), t)
    if isinstance(v, float):
        return to_int(v, t)
    return wrap(int(v), t)


# -- float % and // ------------------------------------------------------------------------------

def fmod(a: float, b: float) -> float:
    """C's fmod, exact: NaN for b == 0, an infinite a or a NaN."""
    if math.isnan(a) or math.isnan(b) or math.isinf(a) or b == 0:
        return _NAN
    return math.fmod(a, b)  # exact, so also the exact fmod of two f32 / f16 values


def _sign_differs(x: float, b: float) -> bool:
    return (x < 0) != (b < 0)


def divmod_float(a: float, b: float, t: DType) -> tuple[float, float]:
    """numpy's npy_divmod on the float dtype t: (a // b, a % b), each step rounded to t."""
    r = lambda v: round_to(v, t)  # noqa: E731
    mod = fmod(a, b)
    if b == 0:
        return quotient(a, b), mod
    div = r(r(a - mod) / b)
    if mod != 0:  # also for NaN, as numpy
        if _sign_differs(mod, b):
            mod = r(mod + b)
            div = r(div - 1.0)
    else:
        mod = math.copysign(0.0, b)
    if div != 0:
        floordiv = float(math.floor(div)) if math.isfinite(div) else div
        if div - floordiv > 0.5:
            floordiv = r(floordiv + 1.0)
    else:
        floordiv = math.copysign(0.0, quotient(a, b))
    return floordiv, mod


def quotient(a: float, b: float) -> float:
    """IEEE a / b (Python raises for b == 0)."""
    if b != 0 or math.isnan(b):
        return a / b
    if a == 0 or math.isnan(a):
        return _NAN
    return _INF if (math.copysign(1, a) > 0) == (math.copysign(1, b) > 0) else -_INF


def floordiv_float(a: float, b: float, t: DType) -> float:
    return divmod_float(a, b, t)[0]


def mod_float(a: float, b: float, t: DType) -> float:
    return divmod_float(a, b, t)[1]


# -- integers --------------------------------------------------------------------------------------

def floordiv_int(a: int, b: int, t: DType) -> int:
    """Floor division; x // 0 == 0; wraps (INT_MIN // -1 == INT_MIN)."""
    return 0 if b == 0 else wrap(a // b, t)


def mod_int(a: int, b: int, t: DType) -> int:
    """Modulo with the divisor's sign; x % 0 == 0."""
    return 0 if b == 0 else wrap(a % b, t)


def shift(a: int, n: int, t: DType, left: bool) -> int:
    """numpy's shifts on the integer dtype t of width W: the count n is read as unsigned (a negative
    count is huge); n >= W gives 0 for `<<`, and for `>>` 0 or -1 (a negative signed a)."""
    width = t.bits
    if 0 <= n < width:
        return wrap(a << n, t) if left else wrap(a >> n, t)
    if left:
        return 0
    return -1 if a < 0 else 0


# -- ** min max ------------------------------------------------------------------------------------

def is_odd_integer(b: float) -> bool:
    return math.isfinite(b) and b == math.floor(b) and math.fmod(b, 2.0) != 0


POW_BY_SQUARING = 1024  # integer exponents up to this: by squaring (gr_pow_f32 / gr_pow_f64, as Taichi)


def pow_by_squaring(a: float, k: int, t: DType) -> float:
    """a ** k for an integer k as Taichi's demote_operations computes it, and the device's
    gr_pow_f32 / gr_pow_f64: r *= base for each set bit of |k|, base *= base, each product
    rounded to t; 1 / r for a negative k."""
    r, base, e = 1.0, a, abs(k)
    while e:
        if e & 1:
            r = round_to(r * base, t)
        base = round_to(base * base, t)
        e >>= 1
    if k >= 0:
        return r
    return round_to(1.0 / r, t) if r != 0 else math.copysign(_INF, r)


def pow_float(a: float, b: float, t: DType) -> float:
    """np.power on the float dtype t (C99's pow): a negative base takes its sign from an integer
    exponent's parity (however large); a non-integer exponent of a finite negative base gives
    NaN (of -inf: inf or 0, as of inf)."""
    if b == 0:
        return 1.0
    if math.isnan(a) or math.isnan(b):
        return 1.0 if a == 1 else _NAN
    if -_INF < a < 0 and math.isfinite(b) and b != math.floor(b):
        return _NAN
    if math.isfinite(b) and b == math.floor(b) and abs(b) <= POW_BY_SQUARING:
        return pow_by_squaring(a, int(b), t)
    try:
        v = math.pow(a, b)
    except OverflowError:
        v = -_INF if a < 0 and is_odd_integer(b) else _INF
    except ValueError:  # 0 ** negative
        v = -_INF if math.copysign(1, a) < 0 and is_odd_integer(b) else _INF
    return round_to(v, t)


def minimum(a, b):
    """np.minimum: NaN if either is NaN (any number type, numpy scalars included)."""
    if a != a:  # noqa: PLR0124 - NaN
        return a
    if b != b:  # noqa: PLR0124
        return b
    return b if b < a else a


def maximum(a, b):
    """np.maximum: NaN if either is NaN."""
    if a != a:  # noqa: PLR0124 - NaN
        return a
    if b != b:  # noqa: PLR0124
        return b
    return b if b > a else a


__all__ = ["round_to", "wrap", "to_int", "convert", "fmod", "divmod_float", "floordiv_float", "mod_float",
           "quotient", "floordiv_int", "mod_int", "shift", "pow_float",
           "pow_by_squaring", "POW_BY_SQUARING", "minimum", "maximum", "is_odd_integer"]
