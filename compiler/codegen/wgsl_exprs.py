"""WGSL spellings of IR expressions: literals, one format per op, helper functions."""
from __future__ import annotations

import math
import struct

from ..ir import Op
from ..types import DType, f16, f64, i32, u1

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

# Python semantics: floor division and a modulo with the divisor's sign; x // 0 and x % 0 give 0
HELPERS: dict[str, str] = {
    "floordiv_i32": """fn gr_floordiv_i32(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  if (b == -1) { return 0 - a; }
  let q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) { return q - 1; }
  return q;
}""",
    "mod_i32": """fn gr_mod_i32(a: i32, b: i32) -> i32 {
  if (b == 0 || b == -1) { return 0; }
  let r = a % b;
  if ((r != 0) && ((r < 0) != (b < 0))) { return r + b; }
  return r;
}""",
    "div_u32": """fn gr_div_u32(a: u32, b: u32) -> u32 { if (b == 0u) { return 0u; } return a / b; }""",
    "rem_u32": """fn gr_rem_u32(a: u32, b: u32) -> u32 { if (b == 0u) { return 0u; } return a % b; }""",
    "mod_float": """fn gr_mod_{t}(a: {t}, b: {t}) -> {t} {{ return a - b * floor(a / b); }}""",
    "pow_float": """fn gr_pow_{t}(a: {t}, b: {t}) -> {t} {{
  if (a >= {t}(0) || b != round(b)) {{ return pow(a, b); }}
  let m = pow(-a, b);
  if (abs(b % {t}(2)) == {t}(1)) {{ return -m; }}
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

def _register_64bit_helpers() -> None:
    from .wgsl_types import F64_HELPERS, HELPERS64
    HELPERS.update(HELPERS64)
    HELPERS.update(F64_HELPERS)


SUBGROUP_FN = {"add": "subgroupAdd", "mul": "subgroupMul", "min": "subgroupMin", "max": "subgroupMax",
               "and": "subgroupAnd", "or": "subgroupOr", "xor": "subgroupXor",
               "inclusive_add": "subgroupInclusiveAdd", "inclusive_mul": "subgroupInclusiveMul",
               "exclusive_add": "subgroupExclusiveAdd", "exclusive_mul": "subgroupExclusiveMul",
               "broadcast_first": "subgroupBroadcastFirst", "all": "subgroupAll", "any": "subgroupAny",
               "elect": "subgroupElect", "shuffle": "subgroupShuffle", "shuffle_xor": "subgroupShuffleXor",
               "shuffle_up": "subgroupShuffleUp", "shuffle_down": "subgroupShuffleDown"}


def helper_source(name: str, t: str) -> str:
    if name not in HELPERS:
        _register_64bit_helpers()
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
        return f"bitcast<f64>({struct.unpack('<Q', struct.pack('<d', v))[0]}lu)"
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
        return f"bitcast<f32>({0x7F800000 if big else 0xFF800000}u)"
    if t == i32:
        return literal(2**31 - 1, t) if big else literal(-(2**31), t)
    return literal(0xFFFFFFFF, t) if big else literal(0, t)


def combine(op: str, a: str, b: str) -> str:
    return {"add": f"({a} + {b})", "min": f"min({a}, {b})", "max": f"max({a}, {b})", "and": f"({a} & {b})",
            "or": f"({a} | {b})", "xor": f"({a} ^ {b})", "sub": f"({a} - {b})",
            "mul": f"({a} * {b})"}[op]
