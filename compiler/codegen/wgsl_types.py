"""WGSL for the 64-bit and narrow scalar types (docs/language.md, "Types").

- 64-bit (`f64`, `i64`, `u64`): WGSL's f64 / i64 / u64 as naga accepts them with the adapter
  features `shader-f64` / `shader-int64`. As kernel scalars they travel as two u32 words
  (`pK_lo`, `pK_hi`; immediates and uniform slots hold 4-byte fields) joined through u64, so
  an f64 scalar needs `shader-int64` too. SPIR-V's GLSL.std.450 has 32-bit transcendental
  functions only (an f64 `sin` compiles and returns garbage on Vulkan): those raise a
  CompileError; `sqrt`, `abs`, `floor`, `ceil`, `round`, `min`, `max`, `+ - * /` are exact.
  No 64-bit atomics (WebGPU has none; wgpu's int64 atomics are native-only extensions).
- narrow (`i8`, `i16`, `u8`, `u16`): storage types. An array of them is `array<u32>` of
  packed words (4 or 2 elements per word, little-endian, as numpy lays them out, so a numpy
  array uploads byte for byte); a load extracts (sign-extends) its bits into an i32 / u32; a
  store is a compare-and-swap loop on its word (other threads may store the neighbours of
  the element at the same time), so a written narrow array is `array<atomic<u32>>`.
  Values compute in i32 / u32 and wrap when converted to the narrow type (a store, a cast).
"""
from __future__ import annotations

from ..errors import CompileError
from ..ir import Op
from ..types import DType

# f64 operations SPIR-V (GLSL.std.450) only defines for 16/32-bit floats
F64_UNSUPPORTED = {Op.SIN: "sin", Op.COS: "cos", Op.TAN: "tan", Op.ASIN: "asin", Op.ACOS: "acos",
                   Op.ATAN: "atan", Op.ATAN2: "atan2", Op.TANH: "tanh", Op.EXP: "exp", Op.LOG: "log",
                   Op.POW: "pow"}

FEATURE = {"f64": "shader-f64", "i64": "shader-int64", "u64": "shader-int64"}


def features_of(t: DType) -> set[str]:
    """The adapter features a value of dtype t needs."""
    return {FEATURE[t.name]} if t.name in FEATURE else set()


def missing_feature(t: DType, feature: str) -> str:
    alt = "gr.f32" if t.is_float else "gr.i32 / gr.u32"
    return (f"{t} needs the adapter feature '{feature}', which this device lacks (WebGPU has no 64-bit "
            f"types without it); use {alt}")


def check_f64_op(n, kernel: str) -> None:
    """Raise for an f64 operation the Vulkan backend cannot do."""
    name = F64_UNSUPPORTED.get(n.op)
    if name is None or not any(a.dtype.name == "f64" for a in n.args):
        return
    if n.op is Op.POW and n.args[1].op is Op.CONST and float(n.args[1].attr).is_integer():
        return
    raise CompileError(f"{name} on f64 is not available: SPIR-V (GLSL.std.450) defines it for 32-bit floats "
                       f"only, so WebGPU on Vulkan cannot compute it in double precision; compute it in f32 "
                       f"(gr.{name}(gr.f32(x))) or write it with + - * / sqrt", n.loc, kernel)


def param_expr(ref: str, t: DType) -> str:
    """A 64-bit scalar argument from its two u32 words."""
    joined = f"(u64({ref}_lo) | (u64({ref}_hi) << 32u))"
    return joined if t.kind == "uint" else f"bitcast<{t.wgsl}>{joined}"


def param_fields(name: str, t: DType) -> str:
    return f"{name}_lo: u32, {name}_hi: u32" if t.wide else ""


def cast(t: DType, arg: str, src: DType) -> str:
    """`gr.cast(x, t)`: narrow targets wrap to their bits (sign-extended for i8 / i16)."""
    if not t.narrow:
        return f"{t.wgsl}({arg})"
    inner = arg if src.wgsl == t.wgsl else f"{t.wgsl}({arg})"
    return f"extractBits({inner}, 0u, {t.bits}u)"


# 64-bit integer floor division / modulo, Python semantics (x // 0 == x % 0 == 0)
HELPERS64 = {
    "floordiv_int": """fn gr_floordiv_{t}(a: {t}, b: {t}) -> {t} {{
  if (b == {t}(0)) {{ return {t}(0); }}
  if (b == {t}(0) - {t}(1)) {{ return {t}(0) - a; }}
  let q = a / b;
  if ((a % b != {t}(0)) && ((a < {t}(0)) != (b < {t}(0)))) {{ return q - {t}(1); }}
  return q;
}}""",
    "mod_int": """fn gr_mod_{t}(a: {t}, b: {t}) -> {t} {{
  if (b == {t}(0) || b == {t}(0) - {t}(1)) {{ return {t}(0); }}
  let r = a % b;
  if ((r != {t}(0)) && ((r < {t}(0)) != (b < {t}(0)))) {{ return r + b; }}
  return r;
}}""",
    "div_uint": """fn gr_div_{t}(a: {t}, b: {t}) -> {t} {{ if (b == {t}(0)) {{ return {t}(0); }} return a / b; }}""",
    "rem_uint": """fn gr_rem_{t}(a: {t}, b: {t}) -> {t} {{ if (b == {t}(0)) {{ return {t}(0); }} return a % b; }}""",
}

TYPED_FMT64 = {
    (Op.FLOORDIV, "int"): ("gr_floordiv_{t}({0}, {1})", "floordiv_int"),
    (Op.MOD, "int"): ("gr_mod_{t}({0}, {1})", "mod_int"),
    (Op.FLOORDIV, "uint"): ("gr_div_{t}({0}, {1})", "div_uint"),
    (Op.MOD, "uint"): ("gr_rem_{t}({0}, {1})", "rem_uint"),
    (Op.NEG, "uint"): ("({t}(0) - {0})", None),
}
SHIFT64 = {Op.SHL: "({0} << ({1} & 63u))", Op.SHR: "({0} >> ({1} & 63u))"}


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
