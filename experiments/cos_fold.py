"""python -m experiments.cos_fold [--seed 6986 ...]

Does the f32 sin/cos reduction survive the driver's compiler? `gr_sincos_f32` reduces
x = q pi/2 + r in three parts, `((x - q c1) - q c2) - q c3`. On the H100, inside progfuzz
seed 6986's kernel, the result matched `x - q (c1 + c2 + c3)` to the last bit: the driver
reassociated the subtractions into `x - q (c1 + c2 + c3)`, and cos(1.5679574) came out 1.5e-5
relative off (docs/testing.md), also with c2 and c3 hidden behind the opaque zero. gfxrt now
passes the partial remainders through their bits XOR the opaque zero (wgsl_loops.OPAQUE_ZERO).

This runs the progfuzz seed twice, each in a fresh process with its own cache folder: with the
helper as gfxrt emits it ("laundered"), and with the earlier literal parts put back ("literal").
On an adapter that folds, "literal" reports a forward mismatch and "laundered" none.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

LITERAL = """fn gr_sincos_f32(x: f32, zero: u32) -> vec3<f32> {
  let q = round(x * 0.636619772367581f);
  let r = ((x - q * 1.5703125f) - q * 4.837512969970703125e-4f) - q * 7.54978995489188216e-8f;
"""


def _child(variant: str, seed: int, out: str) -> int:
    from gfxrt.compiler.codegen import wgsl_exprs

    from tools.progfuzz.__main__ import main

    if variant == "literal":
        text = wgsl_exprs.HELPERS["sincos_f32"]
        head, tail = text.split("  let z = r * r;", 1)
        wgsl_exprs.HELPERS["sincos_f32"] = LITERAL + "  let z = r * r;" + tail
    return main(["--seed", str(seed), "--count", "1", "--shrink-time", "0", "--no-grads", "--out", out])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, nargs="+", default=[6986, 1411])
    ap.add_argument("--child", default=None)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    if a.child:
        return _child(a.child, a.seed[0], a.out)
    for seed, variant in [(s, v) for s in a.seed for v in ("laundered", "literal")]:
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, GFXRT_CACHE_DIR=os.path.join(d, "cache"))
            p = subprocess.run([sys.executable, "-m", "experiments.cos_fold", "--seed", str(seed),
                                "--child", variant, "--out", os.path.join(d, "out")],
                               env=env, capture_output=True, text=True, timeout=300)
            print(f"seed {seed} {variant:9s} exit {p.returncode}:", flush=True)
            print("  " + p.stdout.strip().replace("\n", "\n  "), flush=True)
            if p.returncode not in (0, 1):
                print(p.stderr[-2000:], flush=True)
            for name in sorted(os.listdir(os.path.join(d, "out"))) if os.path.isdir(os.path.join(d, "out")) else ():
                r = subprocess.run([sys.executable, os.path.join(d, "out", name)], env=env, capture_output=True,
                                   text=True, timeout=120)
                print(f"  {name}: " + "\n    ".join((r.stdout + r.stderr).strip().splitlines()[-12:]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
