"""Single-pass scan variants on a GPU, timed against each other (issue 13): device time per call of
each variant, interleaved round by round (so that clock changes hit every variant alike), median
over rounds; and, with `--stats`, how far each tile looked back (kernels/scan.py's diag "stats":
look-back steps and tiles summed per tile).

Run: `python -m experiments.scan_ab [--n 16777216] [--rounds 7] [--stats]
[--variants 16:0,16:64,24:64] [--b]` (PER_LANE:BLOCK_K[:threads a block]; BLOCK_K 0 = one thread looks back;
`--diag 16:32:nobarrier[:128]` adds a timing-only variant of kernels/scan.py's diag argument;
--b adds scan_b_kernel.py's subgroup-wide look-back, which hangs at 2-6 tiles, for its time)."""
from __future__ import annotations

import statistics
import sys
import time

import numpy as np
from gfxrt.kernels import scan

import gfxrt as gr
from gfxrt import kernels


def _arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def device_per_call(fn, calls):
    with gr.profile() as p:
        for _ in range(calls):
            fn()
        gr.sync()
    return sum(r["total"] for r in p.summary().values()) / calls


def main():
    gr.init()
    n = int(_arg("--n", 1 << 24))
    rounds = int(_arg("--rounds", 7))
    variants = [tuple(int(v) for v in a.split(":")) for a in _arg("--variants", "16:0,16:64,24:0,24:64").split(",")]
    x = np.random.default_rng(5).integers(0, 4, n).astype(np.int32)
    xd, yd = gr.ndarray(gr.i32, n), gr.ndarray(gr.i32, n)
    xd.from_numpy(x)
    want = np.cumsum(x).astype(np.int32)
    variants = [(*v, scan.B)[:3] for v in variants]
    fns = {f"PER_LANE={v} K={k} block {b}": (lambda v=v, k=k, b=b: scan._lookback(xd, yd, True, v, "", k, b))
           for v, k, b in variants}
    for d in _arg("--diag", "").split(","):     # timing-only variants (may give wrong results)
        if d:
            v, k, name, *b = d.split(":")
            b = int(b[0]) if b else scan.B
            fns[f"PER_LANE={v} K={k} block {b} diag {name}"] = lambda v=int(v), k=int(k), name=name, b=b: \
                scan._lookback(xd, yd, True, v, name, k, b)
    if "--b" in sys.argv:   # the subgroup-wide look-back that hangs at 2-6 tiles (scan_b_kernel.py), for its time
        from experiments import scan_b_kernel as K
        K.DBG[0] = gr.ndarray(gr.u32, 80 * (n // scan.LTILE + 2))
        fns["version B (subgroup look-back, hangs small)"] = lambda: K._lookback(xd, yd, True)
    fns["nolookback (wrong) PER_LANE=16"] = lambda: scan._lookback(xd, yd, True, 16, "nolookback", 0)
    fns["kernels.memcpy"] = lambda: kernels.memcpy(yd, xd)
    for name, fn in fns.items():
        yd.fill(0)
        fn()
        if "wrong" not in name and "diag" not in name and not np.array_equal(yd.to_numpy(), x if "memcpy" in name else want):
            print("WRONG", name)
    t = time.perf_counter()
    while time.perf_counter() - t < 0.5:
        for fn in fns.values():
            fn()
        gr.sync()
    calls = max(5, min(50, (1 << 30) // (8 * n)))
    got = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            got[name].append(device_per_call(fn, calls))
    print(f"{gr.runtime().dev.name}: n = 2^{n.bit_length() - 1} int32, device us per call, median (min) of "
          f"{rounds} rounds x {calls} calls")
    for name, ts in got.items():
        m = statistics.median(ts)
        print(f"  {name:34s} {m * 1e6:7.1f} ({min(ts) * 1e6:6.1f})  {8 * n / m / 1e9:6.0f} GB/s")
    if "--stats" in sys.argv:
        for v, k, b in variants:
            for _ in range(3):
                scan._lookback(xd, yd, True, v, "", k, b)
            scan._lookback(xd, yd, True, v, "stats", k, b)
            tiles = -(-n // (b * v))
            s = yd.to_numpy()[: 2 * tiles].reshape(tiles, 2)[1:]
            steps, depth = s[:, 0], s[:, 1]
            q = [10, 50, 90, 99]
            print(f"  PER_LANE={v} K={k} block {b}: {tiles} tiles; steps p{q} = {np.percentile(steps, q)}, max {steps.max()}; "
                  f"tiles summed p{q} = {np.percentile(depth, q)}, max {depth.max()}")
            for lo, hi in ((1, 1000), (1000, 2000), (2000, tiles)):
                if hi > tiles or lo >= hi:
                    continue
                print(f"    tiles {lo}-{hi}: mean steps {steps[lo - 1:hi - 1].mean():.1f}, "
                      f"mean summed {depth[lo - 1:hi - 1].mean():.1f}")


if __name__ == "__main__":
    main()
