"""python -m experiments.opsem263

The H100's opsem-fuzz seed 263 (docs/testing.md, "Open"): `o1[i] = x7[i] * ((1 & x8[i]) ^ (0 % x0[i]))`
(x7 u32, x8 and x0 i64) gave 1 instead of 0 at element 0, also with every other output dropped
(experiments/opsem_bisect.py), but only beside two locals that are never read:
`v0 = gr.cast(x3[i], gr.i32) * x3[i]` and `v1 = min(x8[i] % 33, x7[i] << 7) // abs(gr.min(-1, x5[i]))`.
This runs variants of that kernel on the seed's own data and prints, for each, how many of the
elements are wrong and the first one, to find which part the wrong value needs.
"""
from __future__ import annotations

import linecache

import numpy as np

import gfxrt as gr
from experiments.opsem_bisect import _fuzz_module

V0 = "v0 = (gr.cast(x3[i], gr.i32) * x3[i])"
V1 = "v1 = (min((x8[i] % 33), (x7[i] << 7)) // abs(gr.min((-1), x5[i])))"
FULL = "o1[i] = (x7[i] * ((1 & x8[i]) ^ (0 % x0[i])))"
MUL = "o1[i] = x7[i] * (1 & x8[i])"
OWN_DIV = ["b = abs(gr.min((-1), x5[i]))", "a = gr.cast(min((x8[i] % 33), (x7[i] << 7)), gr.f64)",
           "y = gr.cast(1.0 / gr.cast(b, gr.f32), gr.f64)", "y = y + y * (1.0 - b * y)",
           "y = y + y * (1.0 - b * y)", "q = a * y", "v1 = gr.floor(q + y * (a - b * q))"]
VARIANTS = {  # tag: (body, o1's expected value, o2's or None)
    "as found": ([V0, FULL, V1], "x7*bit", None),
    "without v0": ([FULL, V1], "x7*bit", None),
    "without v1": ([V0, FULL], "x7*bit", None),
    "alone": ([FULL], "x7*bit", None),
    "v1 without //": ([V0, FULL, "v1 = min((x8[i] % 33), (x7[i] << 7))"], "x7*bit", None),
    "v1 = x8 % 33": ([FULL, "v1 = x8[i] % 33"], "x7*bit", None),
    "v1 = x8 % 33, kept": ([FULL, "o2[i] = x8[i] % 33"], "x7*bit", "x8%33"),
    "no x7 *": ([V0, "o1[i] = ((1 & x8[i]) ^ (0 % x0[i]))", V1], "bit", None),
    "no ^ 0 % x0": ([V0, MUL, V1], "x7*bit", None),
    "1 & x8 only": ([V0, "o1[i] = (1 & x8[i])", V1], "bit", None),
    "0 % x0 only": ([V0, "o1[i] = (0 % x0[i])", V1], "0", None),
    "mul; x8 % 33 kept": ([MUL, "o2[i] = x8[i] % 33"], "x7*bit", "x8%33"),
    "mul; x8 % d kept (d=33)": ([MUL, "o2[i] = x8[i] % d"], "x7*bit", "x8%33"),
    "mul; x8 // 33 kept": ([MUL, "o2[i] = x8[i] // 33"], "x7*bit", "x8//33"),
    "mul; x8 % 32 kept": ([MUL, "o2[i] = x8[i] % 32"], "x7*bit", "x8%32"),
    "mul; u64(x8) % 33 kept": ([MUL, "o2[i] = gr.cast(gr.cast(x8[i], gr.u64) % 33, gr.i64)"], "x7*bit", "u64(x8)%33"),
    "i64(x7) mul; x8 % 33": (["o1[i] = gr.cast(x7[i], gr.i64) * (1 & x8[i])", "o2[i] = x8[i] % 33"], "x7*bit", "x8%33"),
    "mul reversed; x8 % 33": (["o1[i] = (1 & x8[i]) * x7[i]", "o2[i] = x8[i] % 33"], "x7*bit", "x8%33"),
    "x8 % 33 first; mul": (["o2[i] = x8[i] % 33", MUL], "x7*bit", "x8%33"),
    # which part of v1's f64 floor division the wrong value needs: the division itself, or
    # anything f64; and whether a division of our own (an f32 reciprocal refined in f64) avoids it
    "v1 * not //": ([V0, MUL, V1.replace("//", "*")], "x7*bit", None),
    "v1 / not //": ([V0, MUL, V1.replace("//", "/")], "x7*bit", None),
    "v1 own division": ([V0, MUL, *OWN_DIV], "x7*bit", None),
    "v1 f64 % not //": ([V0, MUL, V1.replace("//", "%")], "x7*bit", None),
    "v1 floor(/) not //": ([V0, MUL, "v1 = gr.floor(min((x8[i] % 33), (x7[i] << 7)) / abs(gr.min((-1), x5[i])))"],
                           "x7*bit", None),
}
ARGS = [("x0", "i64"), ("x3", "f32"), ("x5", "f64"), ("x7", "u32"), ("x8", "i64"), ("o1", "i64"), ("o2", "i64")]


def _kernel(tag: str, body: list[str]):
    sig = ", ".join(f"{n}: gr.types.ndarray(dtype=gr.{t}, ndim=1)" for n, t in ARGS) + ", d: gr.i64"
    name = "opsem263_" + "".join(c if c.isalnum() else "_" for c in tag)
    src = f"def {name}({sig}):\n    for i in range(o1.shape[0]):\n" + "".join(f"        {ln}\n" for ln in body)
    filename = f"<{name}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"gr": gr}
    exec(compile(src, filename, "exec"), ns)  # noqa: S102 - the probe's kernel
    return gr.kernel(ns[name])


def main() -> int:
    T = _fuzz_module()
    inputs, data = T._build(263)[:2]
    x0, x3, x5, x7, x8 = (data[n] for n in ("x0", "x3", "x5", "x7", "x8"))
    n = len(x8)
    bit = (x8 & 1).astype(np.int64)
    want = {"bit": bit, "0": np.zeros(n, np.int64), "x7*bit": x7.astype(np.int64) * bit, None: None,
            "x8%33": np.mod(x8, 33), "x8//33": np.floor_divide(x8, 33), "x8%32": np.mod(x8, 32),
            "u64(x8)%33": (x8.astype(np.uint64) % np.uint64(33)).astype(np.int64)}
    print(f"{gr.device().name}; {n} elements; element 0: x0={x0[0]} x7={x7[0]} x8={x8[0]}", flush=True)
    for tag, (body, w, w2) in VARIANTS.items():
        o1, o2 = np.zeros(n, np.int64), np.zeros(n, np.int64)
        _kernel(tag, body)(x0, x3, x5, x7, x8, o1, o2, 33)
        w, w2 = want[w], want[w2]
        bad = np.flatnonzero(o1 != w)
        first = f"; first o1[{bad[0]}] = {o1[bad[0]]}, want {w[bad[0]]}" if len(bad) else ""
        o2_bad = "" if w2 is None else f"; o2: {int((o2 != w2).sum())} wrong"
        print(f"{tag:26s} {len(bad):5d} wrong{first}{o2_bad}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
