"""Python's operators in WGSL, right on every adapter (docs/language.md, "Arithmetic follows
Python"; the reference is compiler/opsem.py).

What plain WGSL would get wrong, and what is emitted instead:
- float `%` and `//`: WGSL's `%` is `a - b * trunc(a / b)` (wrong by up to |a| ulps for a large
  quotient). `gr_fmod_*` is C's fmod, exact: the integer significands are reduced as musl's
  fmodf does, 8 (f32) or 11 (f64) exponent bits per unsigned remainder. `%` fixes its sign as
  Python does; `//` is numpy's divmod algorithm on it. A constant divisor 2**k (k >= 0) takes
  a short exact path.
- NaN: naga turns `!=` into OpFOrdNotEqual (false for NaN, so `x != x` is false), and Vulkan lets
  drivers assume no NaN / infinity without SignedZeroInfNanPreserve (which naga never asks for):
  lavapipe folds `x - x`, `0 * x`, `0 / x` and `x / 0` to 0, GLSL.std.450 FMax returns the
  non-NaN operand. Float comparisons, min / max and those identities (a constant zero, identical
  operands) therefore decide NaN on the bits (integer operations no driver reasons away); the
  float operation only decides the rest.
- float -> int: SPIR-V leaves out-of-range conversions undefined (naga clamps to the largest
  float below 2**31 first, and a NaN becomes INT_MIN on lavapipe): `gr_cvt_*` saturates to the
  type's range, NaN -> 0.
- shifts: WGSL shifts by the count modulo the width; numpy's rule gives 0 (or -1 for `>>` of a
  negative signed value) for a count outside [0, width).
- 32-bit integers widened to 64 bits (see `_SEXT`).
"""
from __future__ import annotations

import math

from ..ir import COMPARE, Node, Op
from ..types import DType
from . import wgsl_nonfinite as nonfinite
from .wgsl_types import is_zero64, lt64, neg64

# per float type: bits type, masks, literals; f16 works on its exact f32 value
_F = {
    "f32": dict(sign="0x80000000u", inf="0x7f800000u", sfx="f",
                nan=nonfinite.nan("f32"), bits="bitcast<u32>({x})", from_bits="bitcast<f32>({x})",
                hi="bitcast<u32>({x})", lo="0u", infhi="0x7f800000u"),
    "f64": dict(sign="0x8000000000000000lu", inf="0x7ff0000000000000lu",
                sfx="lf", nan=nonfinite.nan("f64"), bits="bitcast<u64>({x})",
                from_bits="bitcast<f64>({x})", hi="u32(bitcast<u64>({x}) >> 32u)", lo="u32(bitcast<u64>({x}))",
                infhi="0x7ff00000u"),
    "f16": dict(sign="0x80000000u", inf="0x7f800000u", sfx="h",
                nan=nonfinite.nan("f16"), bits="bitcast<u32>(f32({x}))",
                from_bits="f16(bitcast<f32>({x}))", hi="bitcast<u32>(f32({x}))", lo="0u", infhi="0x7f800000u"),
}


def _fill(src: str, t: str) -> str:
    p = _F[t]
    out = src.replace("$T", t).replace("$SIGN", p["sign"])
    out = out.replace("$INFHI", p["infhi"]).replace("$INF", p["inf"]).replace("$NAN", p["nan"])
    out = out.replace("$S", p["sfx"])
    for name, fmt in (("$BITS(", "bits"), ("$FROM(", "from_bits"), ("$HI(", "hi"), ("$LO(", "lo")):
        while name in out:
            out = _macro(out, name, p[fmt])
    return out


def _macro(src: str, name: str, fmt: str) -> str:
    i = src.index(name)
    j, depth = i + len(name), 1
    while depth:
        depth += {"(": 1, ")": -1}.get(src[j], 0)
        j += 1
    return src[:i] + fmt.format(x=src[i + len(name):j - 1]) + src[j:]


# Tests on a float's bits compare 32-bit words: $HI(x) is the word with the sign and the exponent,
# $LO(x) the rest of an f64's significand (0u for f32): a 64-bit comparison beside a division is
# not safe on NVIDIA (wgsl_types.py, "64-bit integer comparisons")
_GENERIC = {
    "isnan": """fn gr_isnan_$T(x: $T) -> bool {
  let h = $HI(x) & 0x7fffffffu;
  return h > $INFHI || (h == $INFHI && $LO(x) != 0u);
}""",
    "finite": "fn gr_finite_$T(x: $T) -> bool { return ($HI(x) & 0x7fffffffu) < $INFHI; }",
    "iszero": "fn gr_iszero_$T(x: $T) -> bool { return (($HI(x) & 0x7fffffffu) | $LO(x)) == 0u; }",
    "signdiff": "fn gr_signdiff_$T(a: $T, b: $T) -> bool { return (($HI(a) ^ $HI(b)) & 0x80000000u) != 0u; }",
    # max / min propagate NaN (np.maximum); the NaN operand itself is returned
    "max": """fn gr_max_$T(a: $T, b: $T) -> $T {
  return select(select(max(a, b), b, gr_isnan_$T(b)), a, gr_isnan_$T(a));
}""",
    "min": """fn gr_min_$T(a: $T, b: $T) -> $T {
  return select(select(min(a, b), b, gr_isnan_$T(b)), a, gr_isnan_$T(a));
}""",
    # identities drivers fold without looking at NaN / infinity (x - x, x / x, x * 0, 0 / x, x / 0)
    "selfsub": "fn gr_selfsub_$T(x: $T) -> $T { return select($NAN, 0.0$S, gr_finite_$T(x)); }",
    "selfdiv": """fn gr_selfdiv_$T(x: $T) -> $T {
  return select($NAN, 1.0$S, gr_finite_$T(x) && !gr_iszero_$T(x));
}""",
    "mul0": """fn gr_mul0_$T(x: $T, z: $T) -> $T {
  return select($NAN, $FROM(($BITS(x) ^ $BITS(z)) & $SIGN), gr_finite_$T(x));
}""",
    "zerodiv": """fn gr_zerodiv_$T(z: $T, x: $T) -> $T {
  return select($NAN, $FROM(($BITS(x) ^ $BITS(z)) & $SIGN), !gr_iszero_$T(x) && !gr_isnan_$T(x));
}""",
    "divzero": """fn gr_divzero_$T(x: $T, z: $T) -> $T {
  return select($FROM((($BITS(x) ^ $BITS(z)) & $SIGN) | $INF), $NAN, gr_iszero_$T(x) || gr_isnan_$T(x));
}""",
    # Python's sign rule on an exact fmod r of a by b: the divisor's sign, +-0 as copysign(0, b)
    "pymod": """fn gr_pymod_$T(r: $T, b: $T) -> $T {
  if (gr_iszero_$T(r)) { return $FROM($BITS(b) & $SIGN); }
  if (gr_signdiff_$T(r, b)) { return r + b; }
  return r;
}""",
    "mod": "fn gr_mod_$T(a: $T, b: $T) -> $T { return gr_pymod_$T(gr_fmod_$T(a, b), b); }",
    # b == +-2**k, k >= 0: a / b, its trunc, the product and the difference are exact
    "modp2": "fn gr_modp2_$T(a: $T, b: $T) -> $T { return gr_pymod_$T(a - trunc(a / b) * b, b); }",
    # numpy's npy_divmod: (a - fmod(a, b)) / b, corrected by the remainder's sign, then floored
    # with a snap to the nearest integer; x // 0 is x / 0 (+-inf, NaN)
    "floordiv": """fn gr_floordiv_$T(a: $T, b: $T) -> $T {
  let sign = ($BITS(a) ^ $BITS(b)) & $SIGN;
  if (gr_iszero_$T(b)) { return select($FROM(sign | $INF), $NAN, gr_iszero_$T(a) || gr_isnan_$T(a)); }
  let m = gr_fmod_$T(a, b);
  var div = (a - m) / b;
  if (!gr_iszero_$T(m) && gr_signdiff_$T(m, b)) { div = div - 1.0$S; }
  if (gr_iszero_$T(div)) { return $FROM(sign); }
  let f = floor(div);
  return select(f, f + 1.0$S, div - f > 0.5$S);
}""",
    # b == +-2**k, k >= 0: floor(a / b) is exact, unless a / b is so small that it was flushed to zero
    "floordivp2": """fn gr_floordivp2_$T(a: $T, b: $T) -> $T {
  let f = floor(a / b);
  let neg = gr_signdiff_$T(a, b) && !gr_iszero_$T(a) && gr_iszero_$T(f);
  return select(select(f, -1.0$S, neg), $NAN, !gr_finite_$T(a));
}""",
}
_CMP = {Op.LT: ("lt", "<", "false"), Op.LE: ("le", "<=", "false"), Op.GT: ("gt", ">", "false"),
        Op.GE: ("ge", ">=", "false"), Op.EQ: ("eq", "==", "false"), Op.NE: ("ne", "!=", "true")}
for _op, (_name, _sym, _nan) in _CMP.items():
    _GENERIC[_name] = (f"fn gr_{_name}_$T(a: $T, b: $T) -> bool {{ return select({_nan}, a {_sym} b, "
                       "!(gr_isnan_$T(a) || gr_isnan_$T(b))); }")

# C's fmod, exact (NaN for b == 0 or an infinite a). With the significands mx, my normalized to
# [2^23, 2^24) (f64: [2^52, 2^53)) and |x| = mx 2^ex, |y| = my 2^ey, |x| mod |y| is
# (mx 2^(ex - ey)) mod my, reduced up to 16 exponent bits per step: the quotient q < 2^16 of a
# step is estimated in floating point (within one of the truth even with a division of f32
# accuracy) and the remainder r 2^s - q my, computed modulo 2^32 (2^64) and corrected by one my,
# is exact. The common case (ex - ey <= 16) is one step and no loop. The result, an exact
# multiple of y's unit in the last place, is r 2^ey: the exact float of r with ey added to its
# exponent (or its bits shifted, for a subnormal). Leading bits come from exact int -> float
# conversions, not firstLeadingBit (which a CPU adapter computes lane by lane). An unsigned
# remainder instead of the estimate would cost a scalar division per lane there.
_FMOD = {
    "f32": """fn gr_fmod_step_f32(r: u32, s: u32, my: u32, fy: f32) -> u32 {
  let q = bitcast<u32>(i32(f32(r) * bitcast<f32>((127u + s) << 23u) / fy));
  var e = bitcast<i32>((r << s) - q * my);
  e = select(e, e + i32(my), e < 0i);
  return bitcast<u32>(select(e, e - i32(my), e >= i32(my)));
}
fn gr_fmod_f32(x: f32, y: f32) -> f32 {
  let ux = bitcast<u32>(x);
  let ax = ux & 0x7fffffffu;
  let ay = bitcast<u32>(y) & 0x7fffffffu;
  if (ax >= 0x7f800000u || ay > 0x7f800000u || ay == 0u) { return gr_f32_bits(0x7fc00000u); }
  if (ax < ay) { return x; }
  var mx = (ax & 0x7fffffu) | 0x800000u;
  var ex = i32(ax >> 23u);
  if (ax < 0x800000u) { let sh = 150u - (bitcast<u32>(f32(ax)) >> 23u); mx = ax << sh; ex = 1i - i32(sh); }
  var my = (ay & 0x7fffffu) | 0x800000u;
  var ey = i32(ay >> 23u);
  if (ay < 0x800000u) { let sh = 150u - (bitcast<u32>(f32(ay)) >> 23u); my = ay << sh; ey = 1i - i32(sh); }
  let fy = f32(my);
  var d = u32(ex - ey);
  var r = gr_fmod_step_f32(select(mx, mx - my, mx >= my), min(d, 16u), my, fy);
  if (d > 16u) {
    d = d - 16u;
    loop {
      let s = min(d, 16u);
      r = gr_fmod_step_f32(r, s, my, fy);
      d = d - s;
      if (d == 0u) { break; }
    }
  }
  if (r == 0u) { return bitcast<f32>(ux & 0x80000000u); }
  let fr = bitcast<u32>(f32(r));
  var bits = fr + bitcast<u32>((ey - 150i) << 23u);
  if (i32(fr >> 23u) + ey - 150i < 1i) {
    bits = select(r << u32(max(ey - 1i, 0i)), r >> u32(max(1i - ey, 0i)), ey < 1i);
  }
  return bitcast<f32>(bits | (ux & 0x80000000u));
}""",
    "f64": """fn gr_fmod_step_f64(r: u64, s: u32, my: u64, fy: f64) -> u64 {
  let q = u64(bitcast<u32>(i32(f64(r) * bitcast<f64>(u64(1023u + s) << 52u) / fy)));
  let e0 = (r << s) - q * my;  // as i64 in [-my, 2 my): its comparisons by 32-bit halves (wgsl_types)
  let e = select(e0, e0 + my, """ + neg64("e0") + """);
  return select(e, e - my, !""" + lt64("e", "my", False) + """);
}
fn gr_fmod_f64(x: f64, y: f64) -> f64 {
  let ux = bitcast<u64>(x);
  let ax = ux & 0x7ffffffffffffffflu;
  let ay = bitcast<u64>(y) & 0x7ffffffffffffffflu;
  if (!gr_finite_f64(x) || gr_isnan_f64(y) || gr_iszero_f64(y)) { return gr_f64_bits(0x7ff8000000000000lu); }
  if (""" + lt64("ax", "ay", False) + """) { return x; }
  var mx = (ax & 0xffffffffffffflu) | 0x10000000000000lu;
  var ex = i32(u32(ax >> 52u));
  if (u32(ax >> 32u) < 0x100000u) {
    let sh = 1075u - u32(bitcast<u64>(f64(ax)) >> 52u);
    mx = ax << sh;
    ex = 1i - i32(sh);
  }
  var my = (ay & 0xffffffffffffflu) | 0x10000000000000lu;
  var ey = i32(u32(ay >> 52u));
  if (u32(ay >> 32u) < 0x100000u) {
    let sh = 1075u - u32(bitcast<u64>(f64(ay)) >> 52u);
    my = ay << sh;
    ey = 1i - i32(sh);
  }
  let fy = f64(my);
  var d = u32(ex - ey);
  var r = gr_fmod_step_f64(select(mx - my, mx, """ + lt64("mx", "my", False) + """), min(d, 16u), my, fy);
  if (d > 16u) {
    d = d - 16u;
    loop {
      let s = min(d, 16u);
      r = gr_fmod_step_f64(r, s, my, fy);
      d = d - s;
      if (d == 0u) { break; }
    }
  }
  if (""" + is_zero64("r") + """) { return bitcast<f64>(ux & 0x8000000000000000lu); }
  let fr = bitcast<u64>(f64(r));
  var bits = select(fr - (u64(1075i - ey) << 52u), fr + (u64(ey - 1075i) << 52u), ey >= 1075i);
  if (i32(u32(fr >> 52u)) + ey - 1075i < 1i) {
    bits = select(r << u32(max(ey - 1i, 0i)), r >> u32(max(1i - ey, 0i)), ey < 1i);
  }
  return bitcast<f64>(bits | (ux & 0x8000000000000000lu));
}""",
    "f16": "fn gr_fmod_f16(x: f16, y: f16) -> f16 { return f16(gr_fmod_f32(f32(x), f32(y))); }",
}

_DEPS = {"max": ("isnan",), "min": ("isnan",), "selfsub": ("finite",), "selfdiv": ("finite", "iszero"),
         "mul0": ("finite",), "zerodiv": ("isnan", "iszero"), "divzero": ("isnan", "iszero"),
         "pymod": ("iszero", "signdiff"), "mod": ("pymod", "fmod"), "modp2": ("pymod",),
         "floordiv": ("fmod", "isnan", "iszero", "signdiff"), "floordivp2": ("finite", "iszero", "signdiff"),
         **{name: ("isnan",) for name, _, _ in _CMP.values()}}

HELPERS: dict[str, str] = {}
HELPER_DEPS: dict[str, tuple[str, ...]] = {}
for _t in _F:
    for _name, _src in _GENERIC.items():
        HELPERS[f"{_name}_{_t}"] = _fill(_src, _t)
        HELPER_DEPS[f"{_name}_{_t}"] = tuple(f"{d}_{_t}" for d in _DEPS.get(_name, ()))
    HELPERS[f"fmod_{_t}"] = _FMOD[_t]
HELPER_DEPS["fmod_f16"] = ("fmod_f32",)
HELPER_DEPS["fmod_f64"] = ("finite_f64", "isnan_f64", "iszero_f64")

# -- shifts (numpy's rule) --------------------------------------------------------------------
_INT = {"i32": ("0i", 32), "u32": ("0u", 32), "i64": ("0li", 64), "u64": ("0lu", 64)}
for _t, (_zero, _w) in _INT.items():
    for _c in ("u32", "u64"):
        _n = "n" if _c == "u32" else "min(select(u32(n), 255u, u32(n >> 32u) != 0u), 255u)"  # 32-bit compares
        HELPERS[f"shl_{_t}_{_c}"] = (f"fn gr_shl_{_t}_{_c}(a: {_t}, n: {_c}) -> {_t} {{ let c = {_n}; "
                                     f"return select({_zero}, a << (c & {_w - 1}u), c < {_w}u); }}")
        HELPERS[f"shr_{_t}_{_c}"] = (
            f"fn gr_shr_{_t}_{_c}(a: {_t}, n: {_c}) -> {_t} {{ return a >> min({_n}, {_w - 1}u); }}" if _t[0] == "i"
            else f"fn gr_shr_{_t}_{_c}(a: {_t}, n: {_c}) -> {_t} {{ let c = {_n}; "
                 f"return select({_zero}, a >> (c & {_w - 1}u), c < {_w}u); }}")

# -- float -> integer conversions: truncate, saturate, NaN -> 0 --------------------------------
_TARGETS = {"i32": ("i32", -2**31, 2**31 - 1), "u32": ("u32", 0, 2**32 - 1), "i64": ("i64", -2**63, 2**63 - 1),
            "u64": ("u64", 0, 2**64 - 1), "i8": ("i32", -128, 127), "i16": ("i32", -2**15, 2**15 - 1),
            "u8": ("u32", 0, 255), "u16": ("u32", 0, 2**16 - 1)}


def _int_lit(v: int, ct: str) -> str:
    if ct == "i32":
        return f"i32({v + 1}i - 1i)" if v == -2**31 else f"{v}i"
    if ct == "i64":
        return f"(i64({v + 1}li) - 1li)" if v == -2**63 else f"{v}li"
    return f"{v}{'u' if ct == 'u32' else 'lu'}"


for _d, (_ct, _lo, _hi) in _TARGETS.items():
    for _s in ("f32", "f64"):
        _sfx = _F[_s]["sfx"]
        # lo and hi + 1 are powers of two (or 0): exact in f32 and f64
        HELPERS[f"cvt_{_d}_{_s}"] = (
            f"fn gr_cvt_{_d}_{_s}(x: {_s}) -> {_ct} {{ return select(select(select({_ct}(x), {_int_lit(_lo, _ct)}, "
            f"x <= {float(_lo)!r}{_sfx}), {_int_lit(_hi, _ct)}, x >= {float(_hi + 1)!r}{_sfx}), {_int_lit(0, _ct)}, "
            f"gr_isnan_{_s}(x)); }}")
        HELPER_DEPS[f"cvt_{_d}_{_s}"] = (f"isnan_{_s}",)
    HELPERS[f"cvt_{_d}_f16"] = f"fn gr_cvt_{_d}_f16(x: f16) -> {_ct} {{ return gr_cvt_{_d}_f32(f32(x)); }}"
    HELPER_DEPS[f"cvt_{_d}_f16"] = (f"cvt_{_d}_f32",)


# -- 32-bit integers widened to 64 bits, by the source's signedness: naga picks OpSConvert /
# OpUConvert by the target's (`i64(u32)` came out sign-extended, `u64(i32)` zero-extended), and
# lavapipe (Mesa 22.3) compares OpSConvert's result wrongly (`i64(x) < 0` is false for x = -5):
# a signed value is assembled from its two words
_SEXT = "(u64(bitcast<u32>(x >> 31u)) << 32u) | u64(bitcast<u32>(x))"
HELPERS["widen_i64_i32"] = f"fn gr_widen_i64_i32(x: i32) -> i64 {{ return bitcast<i64>({_SEXT}); }}"
HELPERS["widen_u64_i32"] = f"fn gr_widen_u64_i32(x: i32) -> u64 {{ return {_SEXT}; }}"
HELPERS["widen_i64_u32"] = "fn gr_widen_i64_u32(x: u32) -> i64 { return bitcast<i64>(u64(x)); }"


# -- emission ---------------------------------------------------------------------------------------
def same_value(a: Node, b: Node) -> bool:
    """Structurally the same expression, so the same value within one evaluation (what a driver's
    value numbering would see as one value)."""
    if a is b:
        return True
    if a.op is not b.op or a.dtype != b.dtype or a.attr != b.attr or len(a.args) != len(b.args):
        return False
    if a.op is Op.SUBGROUP:
        return False
    return all(same_value(x, y) for x, y in zip(a.args, b.args, strict=True))


def _pow2(n: Node) -> bool:
    """A constant +-2**k with k >= 0 (so a / n neither overflows nor loses bits)."""
    if n.op is not Op.CONST:
        return False
    v = abs(float(n.attr))
    return math.isfinite(v) and v >= 1.0 and math.frexp(v)[0] == 0.5


def expr(n: Node, args: list[str], helpers: set) -> str | None:
    """The WGSL of n where Python's semantics need more than WGSL's operator, else None."""
    if not n.args:
        return None
    op, at = n.op, n.args[0].dtype

    def call(name: str, *xs: str) -> str:
        helpers.add((name, ""))
        return f"gr_{name}({', '.join(xs)})"

    if op in (Op.SHL, Op.SHR) and at is not None and at.is_int:
        return _shift(n, args, call)
    if op is Op.CAST and at.is_int and not at.wide and n.dtype.is_int and n.dtype.wide and at.wgsl != "u32" or \
            op is Op.CAST and at.wgsl == "u32" and n.dtype.wgsl == "i64":
        return call(f"widen_{n.dtype.wgsl}_{at.wgsl}", args[0])
    if at is None or not at.is_float:
        return None
    t = at.wgsl
    if op is Op.CAST and n.dtype.is_int:
        return call(f"cvt_{n.dtype.name}_{t}", args[0])
    if op is Op.CAST and n.dtype.kind == "bool":
        return call(f"ne_{t}", args[0], f"{t}(0)")
    if op in COMPARE:
        return call(f"{_CMP[op][0]}_{t}", *args)
    if op in (Op.MIN, Op.MAX):
        return call(f"{op.name.lower()}_{t}", *args)
    if op in (Op.MOD, Op.FLOORDIV):
        name = "mod" if op is Op.MOD else "floordiv"
        return call(f"{name}{'p2' if _pow2(n.args[1]) else ''}_{t}", *args)
    if len(n.args) != 2:
        return None
    a, b = n.args
    if op is Op.SUB and same_value(a, b):
        return call(f"selfsub_{t}", args[0])
    if op is Op.ADD and (b.op is Op.NEG and same_value(a, b.args[0]) or a.op is Op.NEG and same_value(a.args[0], b)):
        return call(f"selfsub_{t}", args[0] if b.op is Op.NEG else args[1])
    if op is Op.DIV and same_value(a, b):
        return call(f"selfdiv_{t}", args[0])
    if op is Op.DIV and a.op is Op.CONST and float(a.attr) == 0.0 and b.op is not Op.CONST:
        return call(f"zerodiv_{t}", *args)
    if op is Op.DIV and b.op is Op.CONST and float(b.attr) == 0.0 and a.op is not Op.CONST:
        return call(f"divzero_{t}", *args)
    if op is Op.MUL:
        for x, z in ((0, 1), (1, 0)):
            if n.args[z].op is Op.CONST and float(n.args[z].attr) == 0.0 and n.args[x].op is not Op.CONST:
                return call(f"mul0_{t}", args[x], args[z])
    return None


def _shift(n: Node, args: list[str], call) -> str:
    t: DType = n.dtype
    width = t.bits
    count = n.args[1]
    if count.op is Op.CONST:  # numpy's rule decided now
        k = int(count.attr)
        if k < width:
            return f"({args[0]} {'<<' if n.op is Op.SHL else '>>'} {k}u)"
        if n.op is Op.SHL or t.kind == "uint":
            return _INT[t.wgsl][0]
        return f"({args[0]} >> {width - 1}u)"
    return call(f"{'shl' if n.op is Op.SHL else 'shr'}_{t.wgsl}_{count.dtype.wgsl}", *args)


__all__ = ["HELPERS", "HELPER_DEPS", "expr", "same_value"]
