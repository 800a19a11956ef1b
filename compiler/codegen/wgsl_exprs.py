"""WGSL spellings of IR expressions: literals, each op's format (from its row, compiler/ops.py), helper functions."""
from __future__ import annotations

import math
import struct

from ..ir import Op
from ..ops import DEFS
from ..types import DType, f16, f64, i32, u1
from . import wgsl_nonfinite as nonfinite
from . import wgsl_opsem
from .wgsl_loops import OPAQUE_ZERO
from .wgsl_types import F64_HELPERS, HELPER_DEPS64, HELPERS64


def spelling(op: Op, at: DType) -> tuple[str, str | None]:
    """(format, helper or None) of op on operands of dtype `at`, from its row (compiler/ops.py):
    `{0}`, `{1}`, ... the operands, `{t}` the type, `{z}` the opaque zero (wgsl_loops.OPAQUE_ZERO)."""
    w = DEFS[op].wgsl
    for key in (at.wgsl, at.kind + "64" if at.wide else None, at.kind, ""):
        if key in w:
            fmt, helper = (w[key], None) if isinstance(w[key], str) else w[key]
            return fmt.replace("{t}", at.wgsl).replace("{z}", OPAQUE_ZERO), helper
    raise KeyError(f"{op.name} has no WGSL spelling for {at}")


# Python semantics: floor division and a modulo with the divisor's sign; x // 0 and x % 0 give 0.
# Signed operands go through their u32 magnitudes: Vulkan leaves OpSRem / OpSMod (and OpSDiv)
# with a negative operand undefined, and NVIDIA's drivers round differently from lavapipe, while
# OpUDiv / OpUMod are exact everywhere. The WGSL this compiler emits has no `/` or `%` on i32.
HELPERS: dict[str, str] = {
    "floordiv_i32": """fn gr_floordiv_i32(a: i32, b: i32) -> i32 {
  let ua = select(u32(a), 0u - u32(a), a < 0i);
  let ub = select(u32(b), 0u - u32(b), b < 0i);
  if (ub == 0u) { return 0i; }
  let q = ua / ub;
  if ((a < 0i) == (b < 0i)) { return i32(q); }
  return i32(0u - (q + select(0u, 1u, q * ub != ua)));
}""",
    "mod_i32": """fn gr_mod_i32(a: i32, b: i32) -> i32 {
  let ua = select(u32(a), 0u - u32(a), a < 0i);
  let ub = select(u32(b), 0u - u32(b), b < 0i);
  if (ub == 0u) { return 0i; }
  let r = ua % ub;
  let m = select(r, ub - r, (r != 0u) && ((a < 0i) != (b < 0i)));
  return select(i32(m), i32(0u - m), b < 0i);
}""",
    "div_u32": """fn gr_div_u32(a: u32, b: u32) -> u32 { if (b == 0u) { return 0u; } return a / b; }""",
    "rem_u32": """fn gr_rem_u32(a: u32, b: u32) -> u32 { if (b == 0u) { return 0u; } return a % b; }""",
    "pow_float": """fn gr_pow_{t}(a: {t}, b: {t}) -> {t} {{
  if (b == {t}(0) || a == {t}(1)) {{ return {t}(1); }}
  if (max(bitcast<u32>(f32(a)) & 0x7fffffffu, bitcast<u32>(f32(b)) & 0x7fffffffu) > 0x7f800000u) {{ return a + b; }}
  if (a >= {t}(0) || b != round(b)) {{ return pow(a, b); }}
  let m = pow(-a, b);
  if (abs(b - {t}(2) * trunc(b * {t}(0.5))) == {t}(1)) {{ return -m; }}
  return m;
}}""",
    # integer power by squaring; a negative exponent truncates the real result toward zero.
    # z is the opaque zero (wgsl_loops.OPAQUE_ZERO): the squaring loop's counter starts from
    # `b ^ z`, so the NVIDIA driver's trip-count analysis cannot tie it to how b was computed
    "ipow": """fn gr_ipow_{t}(a: {t}, b: {t}, z: u32) -> {t} {{
  if (b < {t}(0)) {{
    if (a == {t}(1)) {{ return {t}(1); }}
    if (a == {t}(0) - {t}(1)) {{ return select({t}(1), {t}(0) - {t}(1), (b & {t}(1)) != {t}(0)); }}
    return {t}(0);
  }}
  var r: {t} = {t}(1); var base = a; var e = b ^ {t}(z);
  loop {{
    if (e <= {t}(0)) {{ break; }}
    if ((e & {t}(1)) != {t}(0)) {{ r = r * base; }}
    base = base * base; e = e >> 1u;
  }}
  return r;
}}""",
}

# f32 math of our own (Cephes single-precision algorithms: Cody-Waite range reduction and
# minimax polynomials) instead of the driver's builtins (the ops of cost 2 in compiler/ops.py).
# Vulkan only asks sin/cos for 2**-11 absolute error, atan for 4096 ulp, and inherits tanh, pow,
# asin and acos from exp/log/atan formulas, and drivers differ (NVIDIA's fast paths, lavapipe's
# acos: 1e-4 off). These use only + - * /, sqrt, floor/round and bit casts, and stay within ~1e-6 relative of the exact
# result (a few ulp near zero) on every adapter, with or without fused multiply-add.
_NAN, _INF, _NINF = nonfinite.nan("f32"), nonfinite.inf("f32"), nonfinite.inf("f32", negative=True)
HELPERS.update({
    # x = q pi/2 + r, |r| <= pi/4 (q * the first two parts of pi/2 is exact for |x| < 12000);
    # returns (sin r, cos r, q mod 4). The partial remainders pass through their bits XOR `zero`,
    # the opaque zero (wgsl_loops.OPAQUE_ZERO): NVIDIA's compiler reassociates float subtraction,
    # `((x - q c1) - q c2) - q c3` into `x - q (c1 + c2 + c3)`, even with c2 and c3 opaque, which
    # undoes the reduction (cos(1.5679574) 1.5e-5 relative off: the error of pi/2 in f32)
    "sincos_f32": """fn gr_sincos_f32(x: f32, zero: u32) -> vec3<f32> {
  let q = round(x * 0.636619772367581f);
  let r1 = bitcast<f32>(bitcast<u32>(x - q * 1.5703125f) ^ zero);
  let r2 = bitcast<f32>(bitcast<u32>(r1 - q * 4.837512969970703125e-4f) ^ zero);
  let r = r2 - q * 7.54978995489188216e-8f;
  let z = r * r;
  let s = r + r * z * (-1.6666654611e-1f + z * (8.3321608736e-3f + z * (-1.9515295891e-4f)));
  let c = (1.0f - 0.5f * z)
          + z * z * (4.166664568298827e-2f + z * (-1.388731625493765e-3f + z * 2.443315711809948e-5f));
  return vec3<f32>(s, c, q - 4.0f * floor(q * 0.25f));
}""",
    # sin and tan are odd: computed at |x|, x's sign bit applied (sin(-0.0) is -0.0);
    # an infinite or NaN x gives NaN, decided on the bits
    "sin_f32": """fn gr_sin_f32(x: f32, zero: u32) -> f32 {
  let v = gr_sincos_f32(abs(x), zero);
  let m = select(v.x, v.y, v.z == 1.0f || v.z == 3.0f);
  let r = bitcast<u32>(select(m, -m, v.z >= 2.0f)) ^ (bitcast<u32>(x) & 0x80000000u);
  return select(bitcast<f32>(r), """ + _NAN + """, (bitcast<u32>(x) & 0x7fffffffu) >= 0x7f800000u);
}""",
    "cos_f32": """fn gr_cos_f32(x: f32, zero: u32) -> f32 {
  let v = gr_sincos_f32(abs(x), zero);
  let m = select(v.y, v.x, v.z == 1.0f || v.z == 3.0f);
  return select(select(m, -m, v.z == 1.0f || v.z == 2.0f), """ + _NAN + """,
                (bitcast<u32>(x) & 0x7fffffffu) >= 0x7f800000u);
}""",
    "tan_f32": """fn gr_tan_f32(x: f32, zero: u32) -> f32 {
  let v = gr_sincos_f32(abs(x), zero);
  let r = bitcast<u32>(select(v.x / v.y, -v.y / v.x, v.z == 1.0f || v.z == 3.0f)) ^ (bitcast<u32>(x) & 0x80000000u);
  return select(bitcast<f32>(r), """ + _NAN + """, (bitcast<u32>(x) & 0x7fffffffu) >= 0x7f800000u);
}""",
    # x = n ln2 + r; e^r by a polynomial, 2^n as two exact powers of two (n in [-173, 128])
    "exp_f32": """fn gr_exp_f32(x0: f32) -> f32 {
  if ((bitcast<u32>(x0) & 0x7fffffffu) > 0x7f800000u) { return x0; }  // NaN (clamp would lose it)
  let x = clamp(x0, -120.0f, 89.0f);
  let n = round(x * 1.44269504088896341f);
  let r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
  let p = (((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r + 4.1665795894e-2f) * r
           + 1.6666665459e-1f) * r + 5.0000001201e-1f) * (r * r) + r + 1.0f;
  let n1 = i32(n) >> 1u;
  let n2 = i32(n) - n1;
  return p * bitcast<f32>(u32(n1 + 127i) << 23u) * bitcast<f32>(u32(n2 + 127i) << 23u);
}""",
    # x = m 2^e with m in [sqrt(1/2), sqrt(2)); log(m) by a polynomial in m - 1
    "log_f32": """fn gr_log_f32(x: f32) -> f32 {
  if ((bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u) { return x; }  // NaN
  if (!(x > 0.0f)) { return select(""" + _NAN + ", " + _NINF + """, x == 0.0f); }
  if (x == """ + _INF + """) { return x; }
  let tiny = x < 1.17549435e-38f;
  let bits = bitcast<u32>(select(x, x * 8388608.0f, tiny));
  var e = f32(i32((bits >> 23u) & 0xffu) - 126i) - select(0.0f, 23.0f, tiny);
  var m = bitcast<f32>((bits & 0x007fffffu) | 0x3f000000u);
  if (m < 0.707106781186547524f) { e = e - 1.0f; m = m + m - 1.0f; } else { m = m - 1.0f; }
  let z = m * m;
  var y = ((((((((7.0376836292e-2f * m - 1.1514610310e-1f) * m + 1.1676998740e-1f) * m - 1.2420140846e-1f) * m
           + 1.4249322787e-1f) * m - 1.6668057665e-1f) * m + 2.0000714765e-1f) * m - 2.4999993993e-1f) * m
           + 3.3333331174e-1f) * m * z;
  y = y - 2.12194440e-4f * e;
  y = y - 0.5f * z;
  return (m + y) + 0.693359375f * e;
}""",
    "atan_f32": """fn gr_atan_f32(x: f32) -> f32 {
  let a = abs(x);
  let big = a > 2.414213562373095f;
  let mid = a > 0.4142135623730950f;
  let t = select(select(a, (a - 1.0f) / (a + 1.0f), mid), -1.0f / a, big);
  let base = select(select(0.0f, 0.7853981633974483f, mid), 1.5707963267948966f, big);
  let z = t * t;
  let y = base + ((((8.05374449538e-2f * z - 1.38776856032e-1f) * z + 1.99777106478e-1f) * z - 3.33329491539e-1f)
                  * z * t + t);
  let ux = bitcast<u32>(x);  // y >= 0: x's sign bit gives the sign (-0.0 gives -0.0); NaN stays NaN
  return select(bitcast<f32>(bitcast<u32>(y) | (ux & 0x80000000u)), x, (ux & 0x7fffffffu) > 0x7f800000u);
}""",
    # C99's atan2 (numpy's): the angle of (|x|, |y|) in [0, pi] from atan(|y| / |x|), y's sign
    # bit applied; NaN, infinities (on the bits) and zeros give their exact quadrant angles
    # (atan2(-0.0, -1) is -pi, atan2(inf, inf) pi/4). A zero is what `== 0.0` says, so where an
    # adapter flushes subnormals, a subnormal is a zero of its sign (never 0 / 0 in the division)
    "atan2_f32": """fn gr_atan2_f32(y: f32, x: f32) -> f32 {
  let ux = bitcast<u32>(x);
  let uy = bitcast<u32>(y);
  let ax = ux & 0x7fffffffu;
  let ay = uy & 0x7fffffffu;
  if (max(ax, ay) > 0x7f800000u) { return """ + _NAN + """; }
  let xneg = ux > 0x7fffffffu;
  let xinf = ax == 0x7f800000u;
  let yinf = ay == 0x7f800000u;
  var r: f32;
  if (xinf || yinf || x == 0.0f || y == 0.0f) {
    r = select(select(1.5707963267948966f, select(0.0f, 3.141592653589793f, xneg), y == 0.0f || xinf),
               select(0.7853981633974483f, 2.356194490192345f, xneg), xinf && yinf);
  } else {
    let t = gr_atan_f32(bitcast<f32>(ay) / bitcast<f32>(ax));
    r = select(t, 3.141592653589793f - t, xneg);
  }
  return bitcast<f32>(bitcast<u32>(r) | (uy & 0x80000000u));
}""",
    "asin_f32": """fn gr_asin_f32(x: f32) -> f32 {
  let a = abs(x);
  let hi = a > 0.5f;
  let z = select(a * a, 0.5f * (1.0f - a), hi);
  let t = select(a, sqrt(z), hi);
  var r = ((((4.2163199048e-2f * z + 2.4181311049e-2f) * z + 4.5470025998e-2f) * z + 7.4953002686e-2f) * z
           + 1.6666752422e-1f) * z * t + t;
  r = select(r, 1.5707963267948966f - (r + r), hi);
  let ux = bitcast<u32>(x);  // |x| > 1, infinite or NaN: NaN
  return select(bitcast<f32>(bitcast<u32>(r) | (ux & 0x80000000u)), """ + _NAN + """, (ux & 0x7fffffffu) > 0x3f800000u);
}""",
    "acos_f32": """fn gr_acos_f32(x: f32) -> f32 {
  if ((bitcast<u32>(x) & 0x7fffffffu) > 0x3f800000u) { return """ + _NAN + """; }  // |x| > 1, infinite or NaN
  if (x < -0.5f) { return 3.141592653589793f - 2.0f * gr_asin_f32(sqrt(0.5f * (1.0f + x))); }
  if (x > 0.5f) { return 2.0f * gr_asin_f32(sqrt(0.5f * (1.0f - x))); }
  return 1.5707963267948966f - gr_asin_f32(x);
}""",
    # tanh(|x|) >= 0, x's sign bit applied (tanh(-0.0) is -0.0); NaN decided on the bits (min would lose it)
    "tanh_f32": """fn gr_tanh_f32(x: f32) -> f32 {
  let ux = bitcast<u32>(x);
  if ((ux & 0x7fffffffu) > 0x7f800000u) { return x; }
  let a = abs(x);
  var t: f32;
  if (a < 0.625f) {
    let z = a * a;
    t = ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z + 1.33314422036e-1f) * z
         - 3.33332819422e-1f) * z * a + a;
  } else {
    t = 1.0f - 2.0f / (gr_exp_f32(2.0f * min(a, 20.0f)) + 1.0f);
  }
  return bitcast<f32>(bitcast<u32>(t) | (ux & 0x80000000u));
}""",
    # C99's pow (numpy's): an integer b up to 1024 by squaring (Taichi's integer powers: each
    # product rounded, `x ** 2` is x * x); else |a| ** b as exp(b log |a|) (0 and infinities come out of exp / log);
    # a negative sign bit of a (-0.0, -inf included) with an odd integer b gives -|a| ** b, a
    # finite negative a with a finite non-integer b NaN; (-1) ** +-inf is 1
    "pow_f32": """fn gr_pow_f32(a: f32, b: f32) -> f32 {
  let ua = bitcast<u32>(a);
  let ab = bitcast<u32>(b) & 0x7fffffffu;
  if (ab == 0u || a == 1.0f || (ua == 0xbf800000u && ab == 0x7f800000u)) { return 1.0f; }
  if (max(ua & 0x7fffffffu, ab) > 0x7f800000u) { return """ + _NAN + """; }
  if (b == round(b) && abs(b) <= 1024.0f) {  // by squaring, as Taichi's integer powers (and gr_pow_f64)
    var e = i32(abs(b));
    var base = a;
    var r = 1.0f;
    loop {
      if (e == 0) { break; }
      if ((e & 1) != 0) { r = r * base; }
      base = base * base;
      e = e >> 1u;
    }
    return select(r, 1.0f / r, b < 0.0f);
  }
  let m = gr_exp_f32(b * gr_log_f32(abs(a)));
  if (ua < 0x80000000u) { return m; }
  if (ab >= 0x7f800000u) { return m; }
  if (b != round(b)) { return select(m, """ + _NAN + """, ua < 0xff800000u && ua > 0x80000000u); }
  if (abs(b - 2.0f * trunc(b * 0.5f)) == 1.0f) { return -m; }
  return m;
}""",
})
HELPER_DEPS = {"sin_f32": ("sincos_f32",), "cos_f32": ("sincos_f32",), "tan_f32": ("sincos_f32",),
               "atan2_f32": ("atan_f32",), "acos_f32": ("asin_f32",), "tanh_f32": ("exp_f32",),
               "pow_f32": ("exp_f32", "log_f32")}
HELPERS.update(wgsl_opsem.HELPERS)
HELPER_DEPS.update(wgsl_opsem.HELPER_DEPS)
HELPERS.update(HELPERS64)
HELPERS.update(F64_HELPERS)
HELPER_DEPS.update(HELPER_DEPS64)


def with_deps(helpers: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """The helpers and every helper they call."""
    out, todo = set(), list(helpers)
    while todo:
        h = todo.pop()
        if h not in out:
            out.add(h)
            todo += [(d, h[1]) for d in HELPER_DEPS.get(h[0], ())]
    return out


SUBGROUP_FN = {"add": "subgroupAdd", "mul": "subgroupMul", "min": "subgroupMin", "max": "subgroupMax",
               "and": "subgroupAnd", "or": "subgroupOr", "xor": "subgroupXor",
               "inclusive_add": "subgroupInclusiveAdd", "inclusive_mul": "subgroupInclusiveMul",
               "exclusive_add": "subgroupExclusiveAdd", "exclusive_mul": "subgroupExclusiveMul",
               "broadcast_first": "subgroupBroadcastFirst", "all": "subgroupAll", "any": "subgroupAny",
               "elect": "subgroupElect", "shuffle": "subgroupShuffle", "shuffle_xor": "subgroupShuffleXor",
               "shuffle_up": "subgroupShuffleUp", "shuffle_down": "subgroupShuffleDown"}


def helper_source(name: str, t: str) -> str:
    src = HELPERS[name]
    if "{t}" not in src:
        return src
    return src.replace("{t}", t).replace("{{", "{").replace("}}", "}")


def wgsl_type(t: DType) -> str:
    return t.wgsl


def literal(value, t: DType) -> str:
    """A WGSL literal of exactly type t (narrow integers are spelled in their compute type)."""
    if t == u1:
        return "true" if value else "false"
    if t.is_int and t.size == 8:
        return _literal64(int(value), t)
    if t.kind == "uint":
        return f"{int(value) & 0xFFFFFFFF}u"
    if t.kind == "int":
        v = int(value)
        return f"i32({v + 1} - 1)" if v == -(2**31) else f"{v}i"
    v = float(value)
    if t == f64:
        if math.isfinite(v):
            r = repr(v)
            return f"{r}lf" if ("e" in r or "." in r) else f"{r}.0lf"
        return nonfinite.from_bits(struct.unpack('<Q', struct.pack('<d', v))[0], "f64")
    if t == f16:
        if math.isfinite(v) and abs(v) <= 65504.0:
            r = repr(v)
            return f"{r}h" if ("e" in r or "." in r) else f"{r}.0h"
        return nonfinite.nan("f16") if math.isnan(v) else nonfinite.inf("f16", v < 0)
    if math.isnan(v):
        return nonfinite.nan("f32")
    if abs(v) > 3.4028235677973366e38:  # rounds to infinity in f32
        return nonfinite.inf("f32", v < 0)
    v32 = struct.unpack("<f", struct.pack("<f", v))[0]
    if v32 != 0.0 and abs(v32) < 1.1754943508222875e-38:  # subnormal: spell the bits
        return f"bitcast<f32>({struct.unpack('<I', struct.pack('<f', v32))[0]}u)"
    s = repr(v32)
    return (s if ("e" in s or "." in s) else s + ".0") + "f"


def _literal64(v: int, t: DType) -> str:
    if t.kind == "uint":
        return f"{v & 0xFFFFFFFFFFFFFFFF}lu"
    v = ((v + 2**63) % 2**64) - 2**63
    return f"(i64({v + 1}li) - 1li)" if v == -(2**63) else f"{v}li"


def identity(op: str, t: DType) -> str:
    """The identity element of a reduction operator, as a WGSL literal."""
    if op == "add" or op in ("or", "xor"):
        return literal(0, t)
    if t.wide:  # f64 / i64 / u64
        lo, hi = (float("-inf"), float("inf")) if t.is_float else t.int_range
        return literal(-1 if op == "and" else (hi if op == "min" else lo), t)
    if op == "and":
        return literal(-1, t) if t == i32 else literal(0xFFFFFFFF, t)
    big = op == "min"
    if t.is_float:
        return nonfinite.inf("f32", negative=not big)
    if t == i32:
        return literal(2**31 - 1, t) if big else literal(-(2**31), t)
    return literal(0xFFFFFFFF, t) if big else literal(0, t)


def is_nan_bits(x: str, t: DType) -> str | None:
    """x is NaN, on the bits (naga's `x != x` is ordered, false for NaN); None: not f32 / f64."""
    if t.wgsl == "f32":
        return f"((bitcast<u32>({x}) & 0x7fffffffu) > 0x7f800000u)"
    if t.wgsl == "f64":
        return f"((bitcast<u64>({x}) & 0x7ffffffffffffffflu) > 0x7ff0000000000000lu)"
    return None


def combine(op: str, a: str, b: str, t: DType) -> str:
    """a op b for atomics and reductions (a, b: side-effect-free expressions of type t). Float
    min / max propagate NaN as np.minimum / np.maximum do (WGSL's may return the other operand)."""
    if op in ("min", "max") and is_nan_bits(a, t):
        return f"select(select({op}({a}, {b}), {b}, {is_nan_bits(b, t)}), {a}, {is_nan_bits(a, t)})"
    return {"add": f"({a} + {b})", "min": f"min({a}, {b})", "max": f"max({a}, {b})", "and": f"({a} & {b})",
            "or": f"({a} | {b})", "xor": f"({a} ^ {b})", "sub": f"({a} - {b})",
            "mul": f"({a} * {b})"}[op]
