"""WGSL for the 64-bit and narrow scalar types (docs/language.md, "Types").

- 64-bit (`f64`, `i64`, `u64`): WGSL's f64 / i64 / u64 as naga accepts them with the adapter
  features `shader-f64` / `shader-int64`. As kernel scalars they travel as two u32 words
  (`pK_lo`, `pK_hi`; immediates and uniform slots hold 4-byte fields) joined through u64, so
  an f64 scalar needs `shader-int64` too. SPIR-V's GLSL.std.450 has 32-bit transcendental
  functions only (an f64 `sin` compiles and returns garbage on Vulkan): f64 `sin cos tan
  asin acos atan atan2 tanh exp log pow` are gfxrt's own (F64_HELPERS below).
  64-bit atomics need wgpu-native's `shader-int64-atomic-all-ops` (WebGPU has none): native
  on i64 / u64, compare-and-swap on u64 words for f64 (wgsl_stmts.View with word "u64").
- narrow (`i8`, `i16`, `u8`, `u16`): storage types. An array of them is `array<u32>` of
  packed words (4 or 2 elements per word, little-endian, as numpy lays them out, so a numpy
  array uploads byte for byte); a load extracts (sign-extends) its bits into an i32 / u32; a
  store is a compare-and-swap loop on its word (other threads may store the neighbours of
  the element at the same time), so a written narrow array is `array<atomic<u32>>`; atomic
  updates (`h[j] += 1`) are compare-and-swap loops on the word as well.
  Values compute in i32 / u32 and wrap when converted to the narrow type (a store, a cast).
"""
from __future__ import annotations

from ..types import DType
from . import wgsl_nonfinite as nonfinite

FEATURE = {"f64": "shader-f64", "i64": "shader-int64", "u64": "shader-int64"}


def features_of(t: DType) -> set[str]:
    """The adapter features a value of dtype t needs."""
    return {FEATURE[t.name]} if t.name in FEATURE else set()


def missing_feature(t: DType, feature: str) -> str:
    alt = "gr.f32" if t.is_float else "gr.i32 / gr.u32"
    return (f"{t} needs the adapter feature '{feature}', which this device lacks (WebGPU has no 64-bit "
            f"types without it); use {alt}")


def param_expr(ref: str, t: DType) -> str:
    """A 64-bit scalar argument from its two u32 words."""
    joined = f"(u64({ref}_lo) | (u64({ref}_hi) << 32u))"
    return joined if t.kind == "uint" else f"bitcast<{t.wgsl}>{joined}"


def param_fields(name: str, t: DType) -> str:
    return f"{name}_lo: u32, {name}_hi: u32" if t.wide else ""


def cast(t: DType, arg: str, src: DType) -> str:
    """`gr.cast(x, t)`: narrow targets wrap to their bits (sign-extended for i8 / i16). (Floats to
    integers and 32-bit integers to 64-bit ones: wgsl_opsem.)"""
    if t.kind == "bool" and src.wide and src.is_int:
        return f"(!{is_zero64(arg)})"  # not bool(x): a 64-bit comparison
    if not t.narrow:
        return f"{t.wgsl}({arg})"
    inner = arg if src.wgsl == t.wgsl else f"{t.wgsl}({arg})"
    return f"extractBits({inner}, 0u, {t.bits}u)"


# 64-bit integer comparisons, floor division and modulo (Python semantics: x // 0 == x % 0 == 0).
# Every comparison of 64-bit integers, the user's and the helpers' own, is made of 32-bit ones on
# the two halves: on an NVIDIA H100 (driver 580) a 64-bit comparison evaluated beside a 64-bit
# integer or f64 division came out as if unsigned: `if x + x <= 3: continue` then `o[i] = x // 5`
# stored for every negative x (experiments/i64_branch.py: 57 of 128 values wrong, 0 with the
# halves), and `v = 1 if x * 2 > 1 else 0` beside an f64 division chose 1 for x < 0 (progfuzz
# seeds 22580 and 20851). A half is `u32(b >> 32u)` of the bits b; equality is a zero XOR.
# `min`, `max`, `abs` and the truth of a 64-bit integer are helpers built on them, and the f64
# helpers test their operands' bits (NaN, zero, sign) as 32-bit words (wgsl_opsem.py, below).
def _hi(v: str, signed: bool) -> str:
    return f"bitcast<i32>(u32(bitcast<u64>({v}) >> 32u))" if signed else f"u32(bitcast<u64>({v}) >> 32u)"


def _lo(v: str) -> str:
    return f"u32(bitcast<u64>({v}))"


def is_zero64(v: str) -> str:
    """`v == 0` for a u64 expression `v`, by 32-bit halves."""
    return f"(({_hi(v, False)} | {_lo(v)}) == 0u)"


def neg64(v: str) -> str:
    """`v < 0` for an i64 expression `v`: the sign of its high half."""
    return f"({_hi(v, True)} < 0i)"


def lt64(a: str, b: str, signed: bool) -> str:
    """`a < b` for 64-bit integer expressions (named values: each appears twice), by halves."""
    ah, bh = _hi(a, signed), _hi(b, signed)
    return f"({ah} < {bh} || ({ah} == {bh} && {_lo(a)} < {_lo(b)}))"


def _lt(signed: bool) -> str:
    return "fn gr_lt_{t}(a: {t}, b: {t}) -> bool {{ return " + lt64("a", "b", signed) + "; }}"


def _minmax(name: str, signed: bool) -> str:
    lo, hi = ("a", "b") if name == "min" else ("b", "a")  # select(f, t, c): a < b picks min a, max b
    return (f"fn gr_{name}_{{t}}(a: {{t}}, b: {{t}}) -> {{t}} {{{{ return select({hi}, {lo}, "
            + lt64("a", "b", signed) + "); }}")


HELPERS64 = {
    "lt_int": _lt(True),
    "lt_uint": _lt(False),
    "min_int": _minmax("min", True), "min_uint": _minmax("min", False),
    "max_int": _minmax("max", True), "max_uint": _minmax("max", False),
    "abs_int": "fn gr_abs_{t}(a: {t}) -> {t} {{ return select(a, -a, " + neg64("a") + "); }}",
    "eq64": "fn gr_eq_{t}(a: {t}, b: {t}) -> bool {{ let d = bitcast<u64>(a) ^ bitcast<u64>(b); return "
            + is_zero64("d") + "; }}",
    # a / b of u64s (b != 0) by shifting and subtracting over the quotient's bits, not the
    # driver's 64-bit division: on the H100, `x7 * (1 & x8)` (u32 x7, i64 x8) gave x7 (as if
    # 1 & x8 were 1) in a kernel that also took a 64-bit `%` or `//` by anything but a power of
    # two (opsem fuzz seed 263; experiments/opsem263.py). Operands below 2**32 take the 32-bit
    # division. z is the opaque zero (wgsl_loops.OPAQUE_ZERO) for the loop's counter.
    "udiv64": """fn gr_udiv64(a: u64, b: u64, z: u32) -> u64 {
  let ah = u32(a >> 32u);
  let bh = u32(b >> 32u);
  if ((ah | bh) == 0u) { return u64(u32(a) / u32(b)); }
  if """ + lt64("a", "b", False) + """ { return u64(0); }
  let la = select(countLeadingZeros(ah), 32u + countLeadingZeros(u32(a)), ah == 0u);
  let lb = select(countLeadingZeros(bh), 32u + countLeadingZeros(u32(b)), bh == 0u);
  var k = (lb - la) ^ z;  // the quotient has at most k + 1 bits
  var d = b << k;
  var r = a;
  var q = u64(0);
  loop {
    q = q << 1u;
    if (!""" + lt64("r", "d", False) + """) { r = r - d; q = q | u64(1); }
    if (k == 0u) { break; }
    k = k - 1u;
    d = d >> 1u;
  }
  return q;
}""",
    # through u64 magnitudes, as gr_floordiv_i32 (wgsl_exprs.py): Vulkan leaves signed
    # remainders (and divisions) of negative operands undefined, and an H100 gets them wrong
    "floordiv_int": """fn gr_floordiv_{t}(a: {t}, b: {t}, z: u32) -> {t} {{
  let na = """ + neg64("a") + """;
  let nb = """ + neg64("b") + """;
  let ua = select(bitcast<u64>(a), u64(0) - bitcast<u64>(a), na);
  let ub = select(bitcast<u64>(b), u64(0) - bitcast<u64>(b), nb);
  if """ + is_zero64("ub") + """ {{ return {t}(0); }}
  let q = gr_udiv64(ua, ub, z);
  if (na == nb) {{ return bitcast<{t}>(q); }}
  let rem = ua - q * ub;
  return bitcast<{t}>(u64(0) - (q + select(u64(1), u64(0), """ + is_zero64("rem") + """)));
}}""",
    "mod_int": """fn gr_mod_{t}(a: {t}, b: {t}, z: u32) -> {t} {{
  let na = """ + neg64("a") + """;
  let nb = """ + neg64("b") + """;
  let ua = select(bitcast<u64>(a), u64(0) - bitcast<u64>(a), na);
  let ub = select(bitcast<u64>(b), u64(0) - bitcast<u64>(b), nb);
  if """ + is_zero64("ub") + """ {{ return {t}(0); }}
  let r = ua - gr_udiv64(ua, ub, z) * ub;
  let m = select(r, ub - r, !""" + is_zero64("r") + """ && (na != nb));
  return select(bitcast<{t}>(m), bitcast<{t}>(u64(0) - m), nb);
}}""",
    "div_uint": "fn gr_div_{t}(a: {t}, b: {t}, z: u32) -> {t} {{ if " + is_zero64("b")
                + " {{ return {t}(0); }} return gr_udiv64(a, b, z); }}",
    "rem_uint": "fn gr_rem_{t}(a: {t}, b: {t}, z: u32) -> {t} {{ if " + is_zero64("b")
                + " {{ return {t}(0); }} return a - gr_udiv64(a, b, z) * b; }}",
    # popcnt / clz of a 64-bit integer from its two 32-bit halves (ops.py: POPCNT, CLZ)
    "popcnt64": "fn gr_popcnt_{t}(x: {t}) -> {t} {{ return bitcast<{t}>(u64(countOneBits(" + _lo("x")
                + ") + countOneBits(" + _hi("x", False) + "))); }}",
    "clz64": "fn gr_clz_{t}(x: {t}) -> {t} {{ let h = " + _hi("x", False) + "; return bitcast<{t}>(u64(select("
             "countLeadingZeros(h), 32u + countLeadingZeros(" + _lo("x") + "), h == 0u))); }}",
}
HELPER_DEPS64 = {name: ("udiv64",) for name in ("floordiv_int", "mod_int", "div_uint", "rem_uint")}


class PackedView:
    """An array of a narrow integer dtype: packed u32 words (see the module docstring)."""

    kind = "packed"

    def __init__(self, dtype: DType, written: bool):
        self.dtype = dtype
        self.written = written

    atomic = property(lambda self: self.written)
    words = True

    def elem_type(self) -> str:
        return "atomic<u32>" if self.written else "u32"

    def _at(self, buf: str, idx: str) -> tuple[str, str]:
        per = 4 // self.dtype.size
        shift = {4: 2, 2: 1}[per]
        return f"{buf}[({idx}) >> {shift}u]", f"(u32({idx}) & {per - 1}u) * {self.dtype.bits}u"

    def load_packed(self, buf: str, idx: str) -> str:
        ref, off = self._at(buf, idx)
        word = f"atomicLoad(&{ref})" if self.written else ref
        if self.dtype.kind == "int":
            return f"extractBits(bitcast<i32>({word}), {off}, {self.dtype.bits}u)"
        return f"extractBits({word}, {off}, {self.dtype.bits}u)"

    def store_packed(self, buf: str, idx: str, value: str, ind: str, out: list[str], comment: str) -> None:
        ref, _ = self._at(buf, "i_")
        _, off = self._at(buf, "i_")
        out.append(f"{ind}{{  // {self.dtype} store: compare-and-swap on its u32 word{comment}")
        out.append(f"{ind}  let i_ = {idx};")
        out.append(f"{ind}  let v_ = u32({value});")
        out.append(f"{ind}  var old_ = atomicLoad(&{ref});")
        out.append(f"{ind}  loop {{")
        out.append(f"{ind}    let r_ = atomicCompareExchangeWeak(&{ref}, old_, insertBits(old_, v_, {off}, "
                   f"{self.dtype.bits}u));")
        out.append(f"{ind}    if (r_.exchanged) {{ break; }}")
        out.append(f"{ind}    old_ = r_.old_value;")
        out.append(f"{ind}  }}")
        out.append(f"{ind}}}")

    def atomic_packed(self, buf: str, idx: str, op: str, value: str, dest: str | None, ind: str, out: list[str],
                      comment: str) -> None:
        """`dest = old; x[idx] = old op value` (wrapped to the narrow type), by compare-and-swap on
        the element's word."""
        from .wgsl_exprs import combine
        ref, off = self._at(buf, "i_")
        ct = self.dtype.wgsl  # i32 / u32: the compute type
        old = (f"extractBits(bitcast<i32>(old_), {off}, {self.dtype.bits}u)" if self.dtype.kind == "int"
               else f"extractBits(old_, {off}, {self.dtype.bits}u)")
        out.append(f"{ind}{{  // {self.dtype} atomic {op}: compare-and-swap on its u32 word{comment}")
        out.append(f"{ind}  let i_ = {idx};")
        out.append(f"{ind}  let v_ = {ct}({value});")
        out.append(f"{ind}  var old_ = atomicLoad(&{ref});")
        out.append(f"{ind}  loop {{")
        out.append(f"{ind}    let e_ = {old};")
        new = f"insertBits(old_, u32({combine(op, 'e_', 'v_', self.dtype)}), {off}, {self.dtype.bits}u)"
        out.append(f"{ind}    let r_ = atomicCompareExchangeWeak(&{ref}, old_, {new});")
        out.append(f"{ind}    if (r_.exchanged) {{ break; }}")
        out.append(f"{ind}    old_ = r_.old_value;")
        out.append(f"{ind}  }}")
        if dest:
            out.append(f"{ind}  {dest} = {old};")
        out.append(f"{ind}}}")


# -- f64 math: SPIR-V's GLSL.std.450 computes sin, exp, ... for 32-bit floats only (an f64
# call compiles and returns garbage on Vulkan), so f64 gets its own: range reduction and
# Taylor / atanh series in double precision (a few ulps; sin / cos / tan of |x| > 1e6 lose
# accuracy: their reduction by pi/2 is exact only below that).
_INF = nonfinite.inf("f64")
_NAN = nonfinite.nan("f64")
_PIO2_HI, _PIO2_LO = "1.5707963267948966lf", "6.123233995736766e-17lf"
_PI_HI, _PI_LO = "3.141592653589793lf", "1.2246467991473532e-16lf"
_LN2_HI, _LN2_LO = "6.93147180369123816490e-01lf", "1.90821492927058770002e-10lf"


# Tests on an f64's bits compare 32-bit words, as 64-bit integers do (above): the high word
# |x|'s sign-free high word, the low word the rest of the significand.
def _mag_hi(x: str) -> str:
    return f"({_hi(x, False)} & 0x7fffffffu)"


def _mag_above(x: str, hi: str) -> str:
    """|x|'s bits > the bits hi 00000000 (named x: it appears twice)."""
    return f"({_mag_hi(x)} > {hi} || ({_mag_hi(x)} == {hi} && {_lo(x)} != 0u))"


def _nan(x: str) -> str:
    """x is NaN, on the bits: naga's `x != x` is OpFOrdNotEqual, false for NaN (wgsl_opsem.py)."""
    return _mag_above(x, "0x7ff00000u")


def _inf_or_nan(x: str) -> str:
    return f"({_mag_hi(x)} >= 0x7ff00000u)"


def _is_inf(x: str) -> str:
    return f"({_mag_hi(x)} == 0x7ff00000u && {_lo(x)} == 0u)"


def _above_one(x: str) -> str:
    """|x| > 1, infinite or NaN, on the bits."""
    return _mag_above(x, "0x3ff00000u")


def _with_sign(r: str, x: str) -> str:
    """r (>= 0) with x's sign bit."""
    return f"bitcast<f64>(bitcast<u64>({r}) | (bitcast<u64>({x}) & 0x8000000000000000lu))"


def _signed(r: str, x: str) -> str:
    """r with its sign flipped where x's sign bit is set (an odd function computed at |x|)."""
    return f"bitcast<f64>(bitcast<u64>({r}) ^ (bitcast<u64>({x}) & 0x8000000000000000lu))"



F64_HELPERS = {
    "pow2_f64": """fn gr_pow2_f64(e: i32) -> f64 { return bitcast<f64>(u64(e + 1023) << 52u); }""",
    "exp_f64": f"""fn gr_exp_f64(x: f64) -> f64 {{
  if ({_nan('x')}) {{ return x; }}
  if (x > 709.782712893384lf) {{ return {_INF}; }}
  if (x < -745.1332191019412lf) {{ return 0.0lf; }}
  let k = round(x * 1.4426950408889634lf);
  let r = (x - k * {_LN2_HI}) - k * {_LN2_LO};
  var p = 1.0lf;
  for (var n = 14; n >= 1; n = n - 1) {{ p = 1.0lf + p * r / f64(n); }}
  let ki = i32(k);
  let h = ki >> 1u;  // floor(ki / 2) with no signed division (tests/test_lang_intdiv.py)
  return p * gr_pow2_f64(h) * gr_pow2_f64(ki - h);
}}""",
    "log_f64": f"""fn gr_log_f64(x0: f64) -> f64 {{
  if ({_nan('x0')} || x0 < 0.0lf) {{ return {_NAN}; }}
  if (x0 == 0.0lf) {{ return -{_INF}; }}
  if (x0 > 1.7976931348623157e308lf) {{ return x0; }}
  var x = x0;
  var e = 0;
  if (x < 2.2250738585072014e-308lf) {{ x = x * 18014398509481984.0lf; e = -54; }}
  let bits = bitcast<u64>(x);
  e = e + i32(bits >> 52u) - 1023;
  var m = bitcast<f64>((bits & 4503599627370495lu) | 4607182418800017408lu);
  if (m > 1.4142135623730951lf) {{ m = m * 0.5lf; e = e + 1; }}
  let s = (m - 1.0lf) / (m + 1.0lf);
  let z = s * s;
  var p = 0.0lf;
  for (var n = 13; n >= 1; n = n - 1) {{ p = (p + 1.0lf / f64(2 * n + 1)) * z; }}
  let fe = f64(e);
  return fe * {_LN2_HI} + (fe * {_LN2_LO} + (2.0lf * s + 2.0lf * s * p));
}}""",
    "sincos_f64": f"""fn gr_sincos_f64(x: f64) -> vec2<f64> {{
  if ({_inf_or_nan('x')}) {{ return vec2<f64>({_NAN}, {_NAN}); }}
  let k = round(x * 0.6366197723675814lf);
  let r = ((x - k * 1.57079632673412561417lf) - k * 6.07710050630396597660e-11lf) - k * 2.02226624871116645580e-21lf;
  let z = r * r;
  var s = 1.0lf;
  var c = 1.0lf;
  for (var n = 11; n >= 1; n = n - 1) {{
    s = 1.0lf - s * z / f64((2 * n) * (2 * n + 1));
    c = 1.0lf - c * z / f64((2 * n - 1) * (2 * n));
  }}
  s = s * r;
  let q = i32(k - 4.0lf * floor(k * 0.25lf));
  if (q == 0) {{ return vec2<f64>(s, c); }}
  if (q == 1) {{ return vec2<f64>(c, -s); }}
  if (q == 2) {{ return vec2<f64>(-s, -c); }}
  return vec2<f64>(-c, s);
}}""",
    # sin and tan are odd: computed at |x|, x's sign bit applied (sin(-0.0) is -0.0)
    "sin_f64": f"fn gr_sin_f64(x: f64) -> f64 {{ return {_signed('gr_sincos_f64(abs(x)).x', 'x')}; }}",
    "cos_f64": "fn gr_cos_f64(x: f64) -> f64 { return gr_sincos_f64(abs(x)).y; }",
    "tan_f64": f"""fn gr_tan_f64(x: f64) -> f64 {{
  let v = gr_sincos_f64(abs(x));
  return {_signed('v.x / v.y', 'x')};
}}""",
    "atan_f64": f"""fn gr_atan_f64(x: f64) -> f64 {{
  if ({_nan('x')}) {{ return x; }}
  var a = abs(x);
  let flip = a > 1.0lf;
  if (flip) {{ a = 1.0lf / a; }}
  let h1 = a / (1.0lf + sqrt(1.0lf + a * a));
  let h = h1 / (1.0lf + sqrt(1.0lf + h1 * h1));
  let z = h * h;
  var p = 0.0lf;
  for (var n = 15; n >= 1; n = n - 1) {{ p = (1.0lf / f64(2 * n + 1) - p) * z; }}
  var r = 4.0lf * (h - h * p);
  if (flip) {{ r = ({_PIO2_HI} - r) + {_PIO2_LO}; }}
  return {_with_sign('r', 'x')};
}}""",
    # C99's atan2 (numpy's), as gr_atan2_f32: the angle of (|x|, |y|) in [0, pi], y's sign bit
    # applied; NaN, infinities (on the bits) and zeros (`== 0.0`) give their exact quadrant angles
    "atan2_f64": f"""fn gr_atan2_f64(y: f64, x: f64) -> f64 {{
  let ax = bitcast<u64>(x) & 0x7ffffffffffffffflu;
  let ay = bitcast<u64>(y) & 0x7ffffffffffffffflu;
  if ({_nan('x')} || {_nan('y')}) {{ return {_NAN}; }}
  let xneg = {neg64('x')};
  let xinf = {_is_inf('x')};
  let yinf = {_is_inf('y')};
  var r: f64;
  if (xinf || yinf || x == 0.0lf || y == 0.0lf) {{
    r = select(select({_PIO2_HI}, select(0.0lf, {_PI_HI}, xneg), y == 0.0lf || xinf),
               select(0.7853981633974483lf, 2.356194490192345lf, xneg), xinf && yinf);
  }} else {{
    let t = gr_atan_f64(bitcast<f64>(ay) / bitcast<f64>(ax));
    r = select(t, ({_PI_HI} - t) + {_PI_LO}, xneg);
  }}
  return {_with_sign('r', 'y')};
}}""",
    # |x| > 1, infinite or NaN: NaN (SPIR-V leaves sqrt of a negative undefined)
    "asin_f64": f"""fn gr_asin_f64(x: f64) -> f64 {{
  if ({_above_one('x')}) {{ return {_NAN}; }}
  return gr_atan2_f64(x, sqrt((1.0lf - x) * (1.0lf + x)));
}}""",
    "acos_f64": f"""fn gr_acos_f64(x: f64) -> f64 {{
  if ({_above_one('x')}) {{ return {_NAN}; }}
  return gr_atan2_f64(sqrt((1.0lf - x) * (1.0lf + x)), x);
}}""",
    # tanh(|x|) >= 0, x's sign bit applied (tanh(-0.0) is -0.0)
    "tanh_f64": """fn gr_tanh_f64(x: f64) -> f64 {
  let a = abs(x);
  if (""" + _nan("a") + """) { return x; }
  if (a > 22.0lf) { return """ + _with_sign("1.0lf", "x") + """; }
  var r: f64;
  if (a < 0.5lf) {
    let z = a * a;
    var s = 1.0lf;
    var c = 1.0lf;
    for (var n = 10; n >= 1; n = n - 1) {
      s = 1.0lf + s * z / f64((2 * n) * (2 * n + 1));
      c = 1.0lf + c * z / f64((2 * n - 1) * (2 * n));
    }
    r = a * s / c;
  } else {
    let t = gr_exp_f64(-2.0lf * a);
    r = (1.0lf - t) / (1.0lf + t);
  }
  return """ + _with_sign("r", "x") + """;
}""",
    # C99's pow (numpy's), as gr_pow_f32; integer exponents up to 1024 by squaring
    "pow_f64": f"""fn gr_pow_f64(a: f64, b: f64) -> f64 {{
  let b0 = {is_zero64('bitcast<u64>(b) & 0x7ffffffffffffffflu')};
  if (b0 || a == 1.0lf || ({_hi('a', False)} == 0xbff00000u && {_lo('a')} == 0u && {_is_inf('b')})) {{ return 1.0lf; }}
  if ({_nan('a')} || {_nan('b')}) {{ return {_NAN}; }}
  if (b == round(b) && abs(b) <= 1024.0lf) {{
    var e = i32(abs(b));
    var base = a;
    var r = 1.0lf;
    loop {{
      if (e == 0) {{ break; }}
      if ((e & 1) != 0) {{ r = r * base; }}
      base = base * base;
      e = e >> 1u;
    }}
    return select(r, 1.0lf / r, b < 0.0lf);
  }}
  let aa = abs(a);
  var m = select(gr_exp_f64(b * gr_log_f64(aa)), select(0.0lf, {_INF}, b < 0.0lf), aa == 0.0lf);
  if (!{neg64('a')} || {_inf_or_nan('b')}) {{ return m; }}
  let finite_nonzero = {_mag_hi('a')} < 0x7ff00000u && !{is_zero64('bitcast<u64>(a) & 0x7ffffffffffffffflu')};
  if (b != round(b)) {{ return select(m, {_NAN}, finite_nonzero); }}
  if (abs(b - 2.0lf * trunc(b * 0.5lf)) == 1.0lf) {{ return -m; }}  // exact, unlike OpFRem
  return m;
}}""",
}
# the helpers each f64 function calls
HELPER_DEPS64.update({"exp_f64": ("pow2_f64",), "sin_f64": ("sincos_f64",), "cos_f64": ("sincos_f64",),
                      "tan_f64": ("sincos_f64",), "atan2_f64": ("atan_f64",), "asin_f64": ("atan2_f64",),
                      "acos_f64": ("atan2_f64",), "tanh_f64": ("exp_f64",), "pow_f64": ("exp_f64", "log_f64")})
