"""Where a tiny dispatch's device time goes (issue 13).

Each figure is device time from timestamp queries, per dispatch, median of REPS:

- span: one timestamp at the start and one at the end of the pass holding N launches (what
  the device really spends on them, nothing inserted between the dispatches);
- span+ts: the same pass with a timestamp written before and after every dispatch (the
  inside-pass profiler's recording), to show what those writes cost;
- profile: `gr.profile()`'s sum of per-dispatch intervals (what `python -m bench` reported
  before issue 13);
- p(span): `gr.profile(per_kernel=False)`'s total (timestamps at the start and end of each
  submission; what `python -m bench` reports since);
- wall: host seconds per launch of 20 batches of N launches and one sync (throughput).

Cases: N eager launches of x = 0.99 x + 0.01 on 16 float32 ("tiny", each launch depends on
the previous one), the same on N different arrays (no hazards), the graph replay of the
tiny launches, and saxpy at 1 MB.

Run: `python -m experiments.dispatch_time [N]` (needs timestamp-query).
"""
from __future__ import annotations

import statistics
import sys
import time

import numpy as np

import gfxrt as gr
from gfxrt.engine import ffi
from gfxrt.engine.memory import QUERY

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200
REPS = 7


@gr.kernel
def tiny(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        x[i] = 0.99 * x[i] + 0.01


@gr.kernel
def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


class Span:
    """Timestamps at the start and end of one pass that holds whatever `fn` records (and,
    with `each`, before and after every dispatch of it)."""

    def __init__(self, rt, each=False):
        self.rt = rt
        self.each = each
        cap = 2 * N * 4 + 2
        self.qs = rt.device.create_query_set(type="timestamp", count=cap)
        self.rb = rt.device.create_buffer(size=8 * cap, usage=QUERY)
        self.period = ffi.timestamp_period(rt.queue)
        self.parts = []

    def __call__(self, fn) -> float:
        rt = self.rt
        gr.sync()
        rt.open_pass(self.qs, 0, 1)
        k = [2]
        if self.each:
            orig = ffi.dispatch

            def timed(p, *a):
                ffi.write_timestamp(p, self.qs, k[0])
                orig(p, *a)
                ffi.write_timestamp(p, self.qs, k[0] + 1)
                k[0] += 2
            ffi.dispatch = timed
            rt._slow = True  # the checked paths look ffi.dispatch up per call
        try:
            fn()
        finally:
            if self.each:
                ffi.dispatch = orig
                rt.refresh_slow()
        assert rt._pass is not None and rt._recorded <= rt.AUTO_FLUSH_DISPATCHES, "a flush split the span"
        rt.end_pass()
        enc = rt.encoder()
        used = k[0] if self.each else 2
        ffi.resolve_queries(enc, self.qs, 0, used, self.rb, 0)
        rt.flush()
        gr.sync()
        t = np.frombuffer(rt.device.queue.read_buffer(self.rb, 0, 8 * used), np.uint64).astype(np.int64)
        if self.each:  # the dispatches' own intervals and the gaps between them
            inner = t[2:]
            self.parts.append(((inner[1::2] - inner[0::2]).sum() * self.period * 1e-9,
                               (inner[2::2] - inner[1:-1:2]).sum() * self.period * 1e-9))
        return float(t[1] - t[0]) * self.period * 1e-9


def profiled(fn) -> float:
    gr.sync()
    with gr.profile() as p:
        fn()
        gr.sync()
    return sum(t for _, t in p.records)


def span_profiled(fn) -> float:
    gr.sync()
    with gr.profile(per_kernel=False) as p:
        fn()
    return p.total_s


def wall(fn, reps=20) -> float:
    fn()
    gr.sync()
    t = time.perf_counter()
    for _ in range(reps):
        fn()
    gr.sync()
    return (time.perf_counter() - t) / reps


def med(f, *a):
    return statistics.median(f(*a) for _ in range(REPS))


def main():
    gr.init()
    rt = gr.runtime()
    feats = rt.dev.features
    print(f"adapter: {rt.dev.adapter.info.get('device')}; N = {N}; inside-pass timestamps: "
          f"{'timestamp-query-inside-passes' in feats}")
    x = gr.ndarray(gr.f32, 16)
    xs = [gr.ndarray(gr.f32, 16) for _ in range(N)]
    n1 = (1 << 20) // 4 // 3
    a, b = gr.ndarray(gr.f32, n1), gr.ndarray(gr.f32, n1)
    tiny(x)
    saxpy(0.5, a, b)
    for z in xs:
        tiny(z)
    gr.sync()
    with gr.graph() as g:
        for _ in range(N):
            tiny(x)
    cases = {
        "tiny, same array (dependent)": lambda: [tiny(x) for _ in range(N)],
        "tiny, N arrays (independent)": lambda: [tiny(z) for z in xs],
        "tiny, graph replay": (g.replay, lambda: rt.replay_checked(g.records, g._params, g._watch)),
        "saxpy 1 MB (dependent)": lambda: [saxpy(0.5, a, b) for _ in range(N)],
    }
    span, spants = Span(rt), Span(rt, each=True)
    print(f"{'case':34s} {'span us':>9s} {'span+ts':>9s} {'in':>7s} {'gaps':>7s} {'profile':>9s} {'p(span)':>9s} {'wall us':>9s}"
          "  (per dispatch; in / gaps: span+ts's sum of the dispatches' own intervals / of the gaps between)")
    for name, fn in cases.items():
        fn, checked = fn if isinstance(fn, tuple) else (fn, fn)
        s = med(span, fn) / N * 1e6
        spants.parts.clear()
        st = med(spants, checked) / N * 1e6 if "timestamp-query-inside-passes" in feats else float("nan")
        ins = statistics.median(p[0] for p in spants.parts) / N * 1e6 if spants.parts else float("nan")
        gaps = statistics.median(p[1] for p in spants.parts) / N * 1e6 if spants.parts else float("nan")
        pr = med(profiled, fn) / N * 1e6
        ps = med(span_profiled, fn) / N * 1e6
        w = wall(fn) / N * 1e6
        print(f"{name:34s} {s:9.2f} {st:9.2f} {ins:7.2f} {gaps:7.2f} {pr:9.2f} {ps:9.2f} {w:9.2f}")


if __name__ == "__main__":
    main()
