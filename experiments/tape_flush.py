"""The ad_tape case's host time per forward+backward against the Tape's submit policy: gradient
launches per submission (gfxrt.ad.autodiff.FLUSH_EVERY) and the retirement FIFO's depth
(GfxRuntime.PENDING_RETIREMENTS_DEPTH), batches of `inner` passes with one sync, as the bench
times them; plus the forward alone.

Run: `python -m experiments.tape_flush [n] [inner] [--profile]` (--profile: cProfile of 20 passes at
the default policy, the host's functions by their own time).
"""
from __future__ import annotations

import statistics
import sys
import time

import gfxrt as gr
from experiments.ad_time import tape_case  # noqa: E402
from gfxrt.ad import autodiff

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
N = int(ARGS[0]) if ARGS else 1 << 20
INNER = int(ARGS[1]) if len(ARGS) > 1 else 6
PROFILE = "--profile" in sys.argv


def per_pass(fn, batches: int = 9) -> float:
    out = []
    for _ in range(batches):
        gr.sync()
        t = time.perf_counter()
        for _ in range(INNER):
            fn()
        gr.sync()
        out.append((time.perf_counter() - t) / INNER)
    return statistics.median(out) * 1e3


def main():
    gr.init()
    rt = gr.runtime()
    forward, fwd_bwd, *_ = tape_case(N)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 1.5:  # clocks up
        fwd_bwd()
        gr.sync()
    if PROFILE:
        import cProfile
        import pstats
        cProfile.runctx("for _ in range(20): fwd_bwd()\ngr.sync()", globals(), {"fwd_bwd": fwd_bwd, "gr": gr},
                        "/tmp/tape_flush.prof")
        pstats.Stats("/tmp/tape_flush.prof").sort_stats("tottime").print_stats(18)
    print(f"{rt.dev.adapter.summary}  n = {N}, {INNER} passes per sync; ms per pass (median of 9 batches)")
    print(f"forward                          {per_pass(forward):7.3f}")
    for every in (8, 32, 1000):
        for depth in (3, 8):
            autodiff.FLUSH_EVERY, rt.PENDING_RETIREMENTS_DEPTH = every, depth
            w0 = rt.stats()["waits"]
            ms = per_pass(fwd_bwd)
            print(f"Tape: flush every {every:4d}, depth {depth}  {ms:7.3f}  waits per pass "
                  f"{(rt.stats()['waits'] - w0) / (9 * INNER):.2f}")


if __name__ == "__main__":
    main()
