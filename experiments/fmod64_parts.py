"""python -m experiments.fmod64_parts

Which part of gfxrt's f64 fmod (compiler/codegen/wgsl_opsem.py, `gr_fmod_f64`) makes the H100
compute `o1[i] = x7[i] * (1 & x8[i])` (u32 x7, i64 x8) as x7 in the same kernel (opsem fuzz
seed 263; experiments/opsem263.py, rows "no ^ 0 % x0" and "v1 f64 % not //"). The fmod's
result is never read, so each variant below may change what it computes: it rewrites one part
of the helper's text (an f64 division, a u64 product, a u64 -> f64 conversion, the loop, ...)
and prints how many of the product's 48 elements come out wrong with it.

On the H100 (driver 580.159.04, 2026-11-27) 15 of 48 were wrong "as is" and with most single
changes; 0 with `* fy` in place of `/ fy`, without the estimate's i32 conversion, or with the step
returning early. Multiplying by an f32 reciprocal of fy instead (an exact fmod still, tried as the
fix) left 15 wrong: the division is not the cause by itself, so the fmod keeps it.
"""
from __future__ import annotations

import numpy as np
from gfxrt.compiler.codegen import wgsl_exprs

import gfxrt as gr
from experiments.opsem263 import MUL, V0, V1, _kernel
from experiments.opsem_bisect import _fuzz_module

BODY = [V0, MUL, V1.replace("//", "%")]
STEP_DIV = "f64(r) * bitcast<f64>(u64(1023u + s) << 52u) / fy"
VARIANTS = {  # tag: [(old, new), ...] applied to the helper's text
    "as is": [],
    "step: * fy, not / fy": [(STEP_DIV, STEP_DIV.replace("/ fy", "* fy"))],
    "step: * f32 reciprocal of fy": [(STEP_DIV, STEP_DIV.replace("/ fy", "* f64(1.0f / f32(fy))"))],
    "step: q ^ my, not q * my": [("q * my", "q ^ my")],
    "step: bitcast, not f64(r)": [("i32(f64(r) *", "i32(bitcast<f64>(r) *")],
    "step: no i32(f64)": [("u64(bitcast<u32>(i32(" + STEP_DIV + ")))", "u64(bitcast<u32>(s))")],
    "step returns r": [("  let q = u64(", "  return r;\n  let q = u64(")],
    "no loop": [("  if (d > 16u) {\n    d = d - 16u;", "  if (d > 1000u) {\n    d = d - 16u;")],
    "no subnormal branches": [("if (u32(ax >> 32u) < 0x100000u)", "if (false)"), ("if (u32(ay >> 32u) < 0x100000u)", "if (false)")],
    "fr: bitcast, not f64(r)": [("let fr = bitcast<u64>(f64(r));", "let fr = r;")],
    "fy: bitcast, not f64(my)": [("let fy = f64(my);", "let fy = bitcast<f64>(my);")],
    "return after class tests": [("  var mx = ", "  return x;\n  var mx = ")],
    "return after one step": [("  if (d > 16u) {\n    d = d - 16u;", "  return bitcast<f64>(r);\n  if (d > 16u) {\n    d = d - 16u;")],
}


def main() -> int:
    gr.init(offline_cache=False)
    T = _fuzz_module()
    inputs, data = T._build(263)[:2]
    x0, x3, x5, x7, x8 = (data[n] for n in ("x0", "x3", "x5", "x7", "x8"))
    n = len(x8)
    want = x7.astype(np.int64) * (x8 & 1)
    original = wgsl_exprs.HELPERS["fmod_f64"]
    print(f"{gr.device().name}; {n} elements", flush=True)
    try:
        for tag, edits in VARIANTS.items():
            src = original
            for old, new in edits:
                assert old in src, (tag, old)
                src = src.replace(old, new)
            wgsl_exprs.HELPERS["fmod_f64"] = src
            o1, o2 = np.zeros(n, np.int64), np.zeros(n, np.int64)
            _kernel("fmod64 " + tag, BODY)(x0, x3, x5, x7, x8, o1, o2, 33)
            print(f"{tag:28s} {int((o1 != want).sum()):5d} wrong", flush=True)
    finally:
        wgsl_exprs.HELPERS["fmod_f64"] = original
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
