"""NaN and the infinities as values the shader computes, never constant expressions.

WGSL forbids a constant expression whose value is NaN or infinite (`bitcast<f32>(0x7fc00000u)`
is one): Chrome's compiler (Tint) rejects the shader ("value nan cannot be represented as
'f32'"); naga accepts it. So every non-finite value gfxrt emits is `gr_f32_bits(BITS)` (or
`gr_f64_bits`, or `f16(gr_f32_bits(BITS))`): a call of a user function is a runtime
expression, the driver inlines it, and the bits are exactly the pattern given (NaN stays the
quiet NaN 0x7fc00000). `declarations(src)` gives the functions a shader's source calls, so
each shader declares the ones it uses once.
"""
from __future__ import annotations

import re

NAN32, INF32, NINF32 = 0x7FC00000, 0x7F800000, 0xFF800000
NAN64, INF64, NINF64 = 0x7FF8000000000000, 0x7FF0000000000000, 0xFFF0000000000000

_FNS = {
    "gr_f32_bits": "fn gr_f32_bits(b: u32) -> f32 { return bitcast<f32>(b); }",
    "gr_f64_bits": "fn gr_f64_bits(b: u64) -> f64 { return bitcast<f64>(b); }",
}


def from_bits(bits: int, t: str) -> str:
    """The float of WGSL type t ('f32', 'f16' on its f32 value, 'f64') with these bits, computed at run time."""
    if t == "f64":
        return f"gr_f64_bits({bits:#x}lu)"
    call = f"gr_f32_bits({bits:#x}u)"
    return f"f16({call})" if t == "f16" else call


def nan(t: str) -> str:
    return from_bits(NAN64 if t == "f64" else NAN32, t)


def inf(t: str, negative: bool = False) -> str:
    if t == "f64":
        return from_bits(NINF64 if negative else INF64, t)
    return from_bits(NINF32 if negative else INF32, t)


def declarations(src: str) -> list[str]:
    """The declarations of the bit-pattern functions that src calls."""
    return [decl for name, decl in _FNS.items() if re.search(rf"\b{name}\(", src)]
