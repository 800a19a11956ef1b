"""WGSL spellings of IR expressions: literals, one format per op, helper functions."""
from __future__ import annotations

import math
import struct

from ..ir import Op
from ..types import DType, f16, i32, u1, u32

# -- expressions: one format per op ---------------------------------------------------------
EXPR_FMT: dict[Op, str] = {
    Op.ADD: "({0} + {1})", Op.SUB: "({0} - {1})", Op.MUL: "({0} * {1})", Op.DIV: "({0} / {1})",
    Op.MIN: "min({0}, {1})", Op.MAX: "max({0}, {1})", Op.ATAN2: "atan2({0}, {1})",
    Op.BITAND: "({0} & {1})", Op.BITOR: "({0} | {1})", Op.BITXOR: "({0} ^ {1})",
    Op.SHL: "({0} << ({1} & 31u))", Op.SHR: "({0} >> ({1} & 31u))",
    Op.EQ: "({0} == {1})", Op.NE: "({0} != {1})", Op.LT: "({0} < {1})", Op.LE: "({0} <= {1})",
    Op.GT: "({0} > {1})", Op.GE: "({0} >= {1})", Op.AND: "({0} && {1})", Op.OR: "({0} || {1})",
    Op.NOT: "(!{0})", Op.BITNOT: "(~{0})", Op.ABS: "abs({0})",
    Op.SQRT: "sqrt({0})", Op.RSQRT: "inverseSqrt({0})", Op.EXP: "exp({0})", Op.LOG: "log({0})",
    Op.SIN: "sin({0})", Op.COS: "cos({0})", Op.TAN: "tan({0})", Op.ASIN: "asin({0})",
    Op.ACOS: "acos({0})", Op.ATAN: "atan({0})", Op.TANH: "tanh({0})", Op.FLOOR: "floor({0})",
    Op.CEIL: "ceil({0})", Op.ROUND: "round({0})", Op.SIGN: "sign({0})",
    Op.SELECT: "select({2}, {1}, {0})",
}

# ops whose WGSL spelling depends on the operand kind: (op, kind) -> (format, helper or None)
TYPED_FMT: dict[tuple[Op, str], tuple[str, str | None]] = {
    (Op.FLOORDIV, "int"): ("gr_floordiv_i32({0}, {1})", "floordiv_i32"),
    (Op.MOD, "int"): ("gr_mod_i32({0}, {1})", "mod_i32"),
    (Op.FLOORDIV, "uint"): ("gr_div_u32({0}, {1})", "div_u32"),
    (Op.MOD, "uint"): ("gr_rem_u32({0}, {1})", "rem_u32"),
    (Op.FLOORDIV, "float"): ("floor({0} / {1})", None),
    (Op.MOD, "float"): ("gr_mod_{t}({0}, {1})", "mod_float"),
    (Op.POW, "float"): ("gr_pow_{t}({0}, {1})", "pow_float"),
    (Op.POW, "int"): ("gr_ipow_{t}({0}, {1})", "ipow"),
    (Op.POW, "uint"): ("gr_ipow_{t}({0}, {1})", "ipow"),
    (Op.NEG, "int"): ("(-{0})", None),
    (Op.NEG, "float"): ("(-{0})", None),
    (Op.NEG, "uint"): ("(0u - {0})", None),
}

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
    "mod_float": """fn gr_mod_{t}(a: {t}, b: {t}) -> {t} {{ return a - b * floor(a / b); }}""",
    "pow_float": """fn gr_pow_{t}(a: {t}, b: {t}) -> {t} {{
  if (a >= {t}(0) || b != round(b)) {{ return pow(a, b); }}
  let m = pow(-a, b);
  if (abs(b - {t}(2) * trunc(b * {t}(0.5))) == {t}(1)) {{ return -m; }}
  return m;
}}""",
    # integer power by squaring; a negative exponent truncates the real result toward zero
    "ipow": """fn gr_ipow_{t}(a: {t}, b: {t}) -> {t} {{
  if (b < {t}(0)) {{
    if (a == {t}(1)) {{ return {t}(1); }}
    if (a == {t}(0) - {t}(1)) {{ return select({t}(1), {t}(0) - {t}(1), (b & {t}(1)) != {t}(0)); }}
    return {t}(0);
  }}
  var r: {t} = {t}(1); var base = a; var e = b;
  loop {{
    if (e <= {t}(0)) {{ break; }}
    if ((e & {t}(1)) != {t}(0)) {{ r = r * base; }}
    base = base * base; e = e >> 1u;
  }}
  return r;
}}""",
}

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
    """A WGSL literal of exactly type t."""
    if t == u1:
        return "true" if value else "false"
    if t == u32:
        return f"{int(value) & 0xFFFFFFFF}u"
    if t == i32:
        v = int(value)
        return f"i32({v + 1} - 1)" if v == -(2**31) else f"{v}i"
    v = float(value)
    if t == f16:
        if math.isfinite(v) and abs(v) <= 65504.0:
            r = repr(v)
            return f"{r}h" if ("e" in r or "." in r) else f"{r}.0h"
        if math.isnan(v):
            return "f16(bitcast<f32>(2143289344u))"
        return f"f16(bitcast<f32>({0xFF800000 if v < 0 else 0x7F800000}u))"
    if math.isnan(v):
        return "bitcast<f32>(2143289344u)"
    if abs(v) > 3.4028235677973366e38:  # rounds to infinity in f32
        return f"bitcast<f32>({0xFF800000 if v < 0 else 0x7F800000}u)"
    v32 = struct.unpack("<f", struct.pack("<f", v))[0]
    if v32 != 0.0 and abs(v32) < 1.1754943508222875e-38:  # subnormal: spell the bits
        return f"bitcast<f32>({struct.unpack('<I', struct.pack('<f', v32))[0]}u)"
    s = repr(v32)
    return (s if ("e" in s or "." in s) else s + ".0") + "f"


def identity(op: str, t: DType) -> str:
    """The identity element of a reduction operator, as a WGSL literal."""
    if op == "add" or op in ("or", "xor"):
        return literal(0, t)
    if op == "and":
        return literal(-1, t) if t == i32 else literal(0xFFFFFFFF, t)
    big = op == "min"
    if t.is_float:
        return f"bitcast<f32>({0x7F800000 if big else 0xFF800000}u)"
    if t == i32:
        return literal(2**31 - 1, t) if big else literal(-(2**31), t)
    return literal(0xFFFFFFFF, t) if big else literal(0, t)


def combine(op: str, a: str, b: str) -> str:
    return {"add": f"({a} + {b})", "min": f"min({a}, {b})", "max": f"max({a}, {b})", "and": f"({a} & {b})",
            "or": f"({a} | {b})", "xor": f"({a} ^ {b})", "sub": f"({a} - {b})"}[op]
