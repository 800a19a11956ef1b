"""Which other outputs of an opsem-fuzz kernel does a wrong value need? For a failing seed of
tests/test_lang_opsem_fuzz.py (its message names `seed S, oK[I]`), drop the other outputs' stores
one at a time while oK[I] stays wrong on this adapter, and print the smallest kernel and the
values. Found for: the H100's seed 263, `x7 * ((1 & x8) ^ (0 % x0))` (i64), wrong only beside the
kernel's other outputs (docs/testing.md, "Open").

    python -m experiments.opsem_bisect --seed 263 --out 1 --elem 0
"""
from __future__ import annotations

import argparse
import importlib.util
import linecache
import os

import numpy as np

import gfxrt as gr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _fuzz_module():
    path = os.path.join(ROOT, "tests", "test_lang_opsem_fuzz.py")
    spec = importlib.util.spec_from_file_location("opsem_fuzz", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _wrong(T, seed, keep, k, i, built, tag):
    """Run the kernel with only the outputs in `keep` stored; (is oK[I] wrong, got, want, source)."""
    inputs, data, exprs, evals, lets, outs = built
    shown = [e if j in keep else None for j, e in enumerate(exprs)]
    body_exprs = [e if e is not None else "0" for e in shown]
    name = f"opsem_bisect_{seed}_{tag}"
    src = T._kernel_source(name, inputs, outs, lets, body_exprs)
    src = "\n".join(ln for ln in src.splitlines()
                    if not (ln.strip().startswith("o") and ln.strip().endswith("= 0")))
    filename = f"<{name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"gr": gr}
    exec(compile(src, filename, "exec"), ns)  # noqa: S102 - the generated kernel
    results = [np.zeros(T.N, t.numpy) for t in outs]
    gr.kernel(ns[name])(*[data[n] for n, _ in inputs], *results)
    env = {n: T._leaf(data[n][i], tt) for n, tt in inputs}
    want = T._to(evals[k](env), outs[k])
    try:
        T._compare_value(results[k][i], want, outs[k], "")
        return False, results[k][i], want, src
    except AssertionError:
        return True, results[k][i], want, src


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--out", type=int, required=True, help="K of oK[I] in the failure message")
    ap.add_argument("--elem", type=int, required=True, help="I of oK[I]")
    a = ap.parse_args(argv)
    T = _fuzz_module()
    built = T._build(a.seed)
    keep = set(range(len(built[2])))
    bad, got, want, src = _wrong(T, a.seed, keep, a.out, a.elem, built, "all")
    print(f"all {len(keep)} outputs: o{a.out}[{a.elem}] = {got!r}, want {want[0]!r}: {'WRONG' if bad else 'right'}")
    if not bad:
        return 0
    for j in sorted(keep - {a.out}):
        trial = keep - {j}
        still, g, _, _ = _wrong(T, a.seed, trial, a.out, a.elem, built, f"no{j}")
        verdict = "still wrong: dropped" if still else f"right: o{j} is needed"
        print(f"  without o{j}: {g!r} ({verdict})")
        if still:
            keep = trial
    bad, got, want, src = _wrong(T, a.seed, keep, a.out, a.elem, built, "min")
    print(f"smallest ({'WRONG' if bad else 'right'}: got {got!r}, want {want[0]!r}):\n{src}")
    inputs, data = built[0], built[1]
    print("inputs at the element:", {n: data[n][a.elem].item() for n, _ in inputs})
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
