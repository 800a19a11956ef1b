"""The single-pass scan (kernels/scan.py, decoupled look-back) on a GPU: is it right, and which
tile size is fastest (issue 13).

1. Correctness against numpy at awkward sizes (1, 2, a tile +- 1, non-multiples, 2^22 + 3),
   int32 / uint32 / float32, inclusive and exclusive, out of place and in place, each size
   launched several times in a row on device arrays (the state array's regions alternate),
   and a recorded graph replayed. Any mismatch is printed and the script exits 1.
2. Timing at 2^20 and 2^24 int32, inclusive, out of place: host seconds per call (batches of
   calls, one sync each, median) and device seconds (`gr.profile()`), for PER_LANE values
   (elements per thread: tiles of 256 * PER_LANE) and for the multi-pass scan.

Run: `python -m experiments.scan_lookback` (needs a GPU the single pass runs on, or
`--force` to run it anyway, e.g. `--small` sizes on lavapipe); `--per-lane 16,24` checks those
tile sizes; `--diag i32` checks launch by launch and prints the state array at a wrong one;
`--block-k 0,64` checks and times those look-backs (0: one thread, K > 0: the whole block, K tiles
a step); `--timing` only times (with variants that give wrong results, for timing only: no look-back,
no final write).
"""
from __future__ import annotations

import statistics
import sys
import time

import numpy as np
from gfxrt.kernels import scan

import gfxrt as gr
from gfxrt import kernels


def _want(x, inclusive):
    if x.dtype == np.float32:
        c = np.cumsum(x.astype(np.float64))
        return c if inclusive else c - x
    wide = np.uint64 if x.dtype == np.uint32 else np.int64
    c = np.cumsum(x, dtype=wide)
    return (c if inclusive else c - x.astype(wide)).astype(x.dtype)


def _same(got, want, dt):
    if dt == np.float32:
        return np.allclose(got, want, rtol=1e-5, atol=1e-2)
    return np.array_equal(got, want)


def check(big: int) -> int:
    rng = np.random.default_rng(7)
    L = scan.LTILE
    sizes = [1, 2, 3, 31, 32, 33, 255, 257, L - 1, L, L + 1, 2 * L - 1, 2 * L + 1, 7 * L + 123,
             *rng.integers(1, 40 * L, 6).tolist(), big + 3]
    bad = 0
    for n in sizes:
        for dt in (np.int32, np.uint32, np.float32):
            if dt == np.float32:
                x = rng.integers(-8, 8, n).astype(np.float32)  # integral: exact in f32 below 2^24
            elif dt == np.uint32:
                x = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)  # wraps
            else:
                x = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)  # wraps
            xd = gr.ndarray({np.int32: gr.i32, np.uint32: gr.u32, np.float32: gr.f32}[dt], n)
            xd.from_numpy(x)
            yd = gr.ndarray(xd.element_type, n)
            for inclusive in (True, False):
                for rep in range(3):
                    scan.scan(xd, yd, inclusive=inclusive)
                    if rep != 1:
                        ok = _same(yd.to_numpy(), _want(x, inclusive), dt)
                        if not ok:
                            bad += 1
                            print(f"WRONG n={n} {dt.__name__} inclusive={inclusive} rep={rep}")
            zd = gr.ndarray(xd.element_type, n)
            zd.from_numpy(x)
            scan.exclusive(zd, zd)  # in place
            if not _same(zd.to_numpy(), _want(x, False), dt):
                bad += 1
                print(f"WRONG in place n={n} {dt.__name__}")
    # a graph of two scans, replayed: the state array must be clean after every replay
    x = rng.integers(-100, 100, 3 * L + 5).astype(np.int32)
    xd, yd, zd = gr.ndarray(gr.i32, x.size), gr.ndarray(gr.i32, x.size), gr.ndarray(gr.i32, x.size)
    xd.from_numpy(x)
    with gr.graph() as g:
        scan.inclusive(xd, yd)
        scan.exclusive(yd, zd)
    for _ in range(4):
        g.replay()
        if not np.array_equal(zd.to_numpy(), _want(_want(x, True), False)):
            bad += 1
            print("WRONG graph replay")
    print(f"correctness: {len(sizes)} sizes x 3 dtypes x inclusive/exclusive x 3 launches, in place, graph: "
          f"{bad} wrong")
    return bad


def _time(fn, inner):
    t = time.perf_counter()
    while time.perf_counter() - t < 0.4:   # the GPU's clocks ramp up (bench/timing.py's warm_s)
        fn()
        gr.sync()
    host = []
    for _ in range(9):
        t = time.perf_counter()
        for _ in range(inner):
            fn()
        gr.sync()
        host.append((time.perf_counter() - t) / inner)
    dev = None
    if not gr.runtime().dev.is_cpu:
        with gr.profile() as p:
            for _ in range(inner):
                fn()
            gr.sync()
        dev = sum(r["total"] for r in p.summary().values()) / inner
    return statistics.median(host), dev


BLOCK_KS = (0, 32, 64, 128, 256)   # the look-back: one thread (0) or the whole block, K tiles a step


def timing(sizes):
    for n in sizes:
        x = np.random.default_rng(5).integers(0, 4, n).astype(np.int32)
        xd, yd = gr.ndarray(gr.i32, n), gr.ndarray(gr.i32, n)
        xd.from_numpy(x)
        want = np.cumsum(x).astype(np.int32)
        inner = max(5, min(200, (1 << 28) // (8 * n)))
        runs = [(f"single pass PER_LANE={v} K={k}", lambda v=v, k=k, a=xd, b=yd: scan._lookback(a, b, True, v, "", k))
                for v in (16, 24) for k in BLOCK_KS]
        runs += [(f"  {d} (wrong) PER_LANE={v}", lambda v=v, d=d, a=xd, b=yd: scan._lookback(a, b, True, v, d))
                 for d, v in (("nolookback", 16), ("nolookback", 24), ("nowrite", 16), ("nowrite", 24))]
        runs.append(("multi-pass (reduce, then scan)", lambda a=xd, b=yd: scan._scan(a, b, True, True, 0)))
        runs.append(("kernels.memcpy (the bandwidth bound)", lambda a=xd, b=yd: kernels.memcpy(b, a)))
        for name, fn in runs:
            yd.fill(0)
            fn()
            ok = "wrong" in name or np.array_equal(yd.to_numpy(), x if "memcpy" in name else want)
            h, d = _time(fn, inner)
            dtxt = f"{d * 1e6:8.1f} us  {8 * n / d / 1e9:7.0f} GB/s" if d else "n/a"
            print(f"2^{n.bit_length() - 1} {name:34s} host {h * 1e6:8.1f} us {8 * n / h / 1e9:7.0f} GB/s | "
                  f"device {dtxt} {'' if ok else 'WRONG'}")


def diag(dt) -> int:
    """Launch by launch, synced, on fresh state: which launch goes wrong, and the state then."""
    rng = np.random.default_rng(3)
    L = scan.LTILE
    np_dt = {"i32": np.int32, "u32": np.uint32, "f32": np.float32}[dt]
    st = scan.scratch("scan.state", gr.u32, scan.HEAD + 4 * 1024)
    words = (st.shape[0] - scan.HEAD) // 2
    bad = 0
    for n in (1, 1, 1, 33, L - 1, L, L + 1, 2 * L + 1, 5 * L + 77, 40 * L + 3, 200 * L + 9, 1, 2 * L):
        x = rng.integers(-100, 100, n).astype(np_dt) if dt != "u32" else rng.integers(0, 100, n).astype(np_dt)
        xd = gr.ndarray(getattr(gr, dt), n)
        xd.from_numpy(x)
        yd = gr.ndarray(getattr(gr, dt), n)
        for inclusive in (True, False):
            scan._lookback(xd, yd, inclusive)
            got, want = yd.to_numpy(), _want(x, inclusive)
            if not _same(got, want, np_dt):
                bad += 1
                s = st.to_numpy()
                wrong = np.nonzero(got != want)[0] if np_dt != np.float32 else np.nonzero(~np.isclose(got, want))[0]
                T = -(-n // L)
                print(f"  WRONG n={n} tiles={T} inclusive={inclusive}: {wrong.size} wrong, first at {wrong[:4]} "
                      f"(tile {wrong[0] // L}), got {got[wrong[:3]]} want {want[wrong[:3]]}")
                for r in (0, 1):
                    b = scan.HEAD + r * words
                    print(f"    head {s[:scan.HEAD]} region {r}: {s[b:b + 2 * min(T, 8)]}")
                st.from_numpy(np.zeros(st.shape[0], np.uint32))
    print(f"diag {dt}: {bad} wrong launches")
    return bad


if __name__ == "__main__":
    gr.init()
    print(gr.runtime().dev.name, "| single pass by default:", scan.uses_lookback())
    if "--force" in sys.argv:
        scan.LOOKBACK = True
    if "--diag" in sys.argv:  # --diag i32|u32|f32
        sys.exit(1 if diag(sys.argv[sys.argv.index("--diag") + 1]) else 0)
    if "--block-k" in sys.argv:
        BLOCK_KS = tuple(int(a) for a in sys.argv[sys.argv.index("--block-k") + 1].split(","))
    if "--timing" in sys.argv:
        timing([1 << 20, 1 << 24])
        sys.exit(0)
    small = "--small" in sys.argv
    bad = 0
    for v in (int(a) for a in (sys.argv[sys.argv.index("--per-lane") + 1] if "--per-lane" in sys.argv
                               else str(scan.PER_LANE)).split(",")):
        scan.PER_LANE, scan.LTILE = v, scan.B * v
        for k in BLOCK_KS:
            scan.BLOCK_K = k
            print(f"PER_LANE={v} K={k}:", end=" ")
            bad += check(1 << (16 if small else 22))
    timing([1 << 16] if small else [1 << 20, 1 << 24])
    sys.exit(1 if bad else 0)
