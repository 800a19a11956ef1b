"""python -m bench.probes.fmod64_parts

Which part of gfxrt's f64 fmod (compiler/codegen/wgsl_opsem.py, `gr_fmod_f64`) makes the H100
compute `o1[i] = x7[i] * (1 & x8[i])` (u32 x7, i64 x8) as x7 in the same kernel (opsem fuzz
seed 263; bench/probes/opsem263.py, rows "no ^ 0 % x0" and "v1 f64 % not //"). The fmod's
result is never read, so each variant below may change what it computes: it rewrites one part
of the helper's text (an f64 division, a u64 product, a u64 -> f64 conversion, the loop, ...)
and prints how many of the product's 48 elements come out wrong with it. The "old" rows put back
the step's f64 division by my (the form before the fix, 15 of 48 wrong on the H100); each other
part changed with it kept 15 wrong, except a product in the division's place or dropping its use
(0 wrong).
"""
from __future__ import annotations

import numpy as np

import gfxrt as gr
from compiler.codegen import wgsl_exprs

from .opsem263 import MUL, V0, V1, _kernel
from .opsem_bisect import _fuzz_module

BODY = [V0, MUL, V1.replace("//", "%")]
STEP = "f64(r) * bitcast<f64>(u64(1023u + s) << 52u) * ry"
STEP_DIV = "f64(r) * bitcast<f64>(u64(1023u + s) << 52u) / f64(my)"
OLD = [(STEP, STEP_DIV)]  # the step before the fix: an f64 division by my
VARIANTS = {  # tag: [(old, new), ...] applied to the helper's text, in order
    "as is (f32 reciprocal)": [],
    "old: / f64(my)": OLD,
    "old; step: * f64(my)": [*OLD, (STEP_DIV, STEP_DIV.replace("/ f64(my)", "* f64(my)"))],
    "old; step: q ^ my, not q * my": [*OLD, ("q * my", "q ^ my")],
    "old; step: bitcast, not f64(r)": [*OLD, ("i32(f64(r) *", "i32(bitcast<f64>(r) *")],
    "old; step: no i32(f64)": [*OLD, ("u64(bitcast<u32>(i32(" + STEP_DIV + ")))", "u64(bitcast<u32>(s))")],
    "old; step returns r": [*OLD, ("  let q = u64(", "  return r;\n  let q = u64(")],
    "old; no loop": [*OLD, ("  if (d > 16u) {\n    d = d - 16u;", "  if (d > 1000u) {\n    d = d - 16u;")],
    "old; no subnormal branches": [*OLD, ("if (u32(ax >> 32u) < 0x100000u)", "if (false)"),
                                   ("if (u32(ay >> 32u) < 0x100000u)", "if (false)")],
    "old; fr: bitcast, not f64(r)": [*OLD, ("let fr = bitcast<u64>(f64(r));", "let fr = r;")],
    "old; return after class tests": [*OLD, ("  var mx = ", "  return x;\n  var mx = ")],
    "old; return after one step": [*OLD, ("  if (d > 16u) {\n    d = d - 16u;",
                                          "  return bitcast<f64>(r);\n  if (d > 16u) {\n    d = d - 16u;")],
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
            print(f"{tag:32s} {int((o1 != want).sum()):5d} wrong", flush=True)
    finally:
        wgsl_exprs.HELPERS["fmod_f64"] = original
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
