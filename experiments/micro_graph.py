"""python -m experiments.micro_graph [--quick] [--json PATH]

Graph replay and batched copies (issue 6):

- a graph of 200 tiny launches: host time per kernel of `g.replay()` against the same 200
  launches issued eagerly, both recording only (no submit) and with the submit that follows
  (`rt.flush()`); for one kernel repeated ("same": after the first launch a replay is one
  dispatch call per kernel) and for four kernels with scalars over four arrays taking turns
  ("mixed": every launch changes pipeline, bind group and scalars);
- `gr.copy_tensors` of 64 small host arrays against 64 `from_numpy` calls (host time, and
  time to completion: calls, one launch that reads the arrays, `gr.sync()`), and of 64 small
  device arrays to the host against 64 `to_numpy` calls.

`run(quick)` returns the figures as a dict.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import gfxrt as gr

LAUNCHES = 200
COPIES, COPY_ELEMS = 64, 256


def _kernels():
    """The tiny kernels of experiments.micro_runtime, plus two more shapes for mixed graphs."""
    from experiments.micro_runtime import _kernels as runtime_kernels
    tiny, add_s, _ = runtime_kernels()

    @gr.kernel
    def axpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(1):
            y[i] = a * x[i] + y[i]

    @gr.kernel
    def mul_i(k: gr.i32, x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(1):
            x[i] = x[i] * k
    return tiny, add_s, axpy, mul_i


def _programs():
    """(name, issue()) pairs: each issues LAUNCHES tiny launches."""
    tiny, add_s, axpy, mul_i = _kernels()
    xs = [gr.ndarray(gr.f32, 16) for _ in range(4)]

    def same():
        x = xs[0]
        for _ in range(LAUNCHES):
            tiny(x)

    def mixed():
        a, b, c, d = xs
        for _ in range(LAUNCHES // 4):
            tiny(a)
            add_s(0.5, b)
            axpy(0.25, a, c)
            mul_i(1, d)
    return [("same", same), ("mixed", mixed)]


def _median_per(fn, per: int, reps: int, submit: bool) -> float:
    """Median over `reps` (each after a sync) of the host seconds of fn() (+ the flush that
    submits it, when `submit`), divided by `per`."""
    rt = gr.runtime()
    out = []
    for _ in range(reps):
        gr.sync()
        t = time.perf_counter()
        fn()
        if submit:
            rt.flush()
        out.append((time.perf_counter() - t) / per)
    gr.sync()
    return statistics.median(out)


def graph_figures(quick: bool) -> dict:
    rt = gr.runtime()
    reps = 7 if quick else 31
    saved = rt.AUTO_FLUSH_DISPATCHES
    out = {}
    for name, issue in _programs():
        issue()  # compile, warm the caches
        with gr.graph() as g:
            issue()
        g.replay()
        try:
            rt.AUTO_FLUSH_DISPATCHES = 1 << 30  # record-only figures: no auto-flush inside the 200
            out[f"{name}_eager_record_us"] = 1e6 * _median_per(issue, LAUNCHES, reps, False)
            out[f"{name}_replay_record_us"] = 1e6 * _median_per(g.replay, LAUNCHES, reps, False)
        finally:
            rt.AUTO_FLUSH_DISPATCHES = saved
        out[f"{name}_eager_us"] = 1e6 * _median_per(issue, LAUNCHES, reps, True)
        out[f"{name}_replay_us"] = 1e6 * _median_per(g.replay, LAUNCHES, reps, True)
        out[f"{name}_replay10_us"] = 1e6 * _median_per(lambda g=g: g.replay(10), 10 * LAUNCHES, max(3, reps // 4), True)
        out[f"{name}_ratio"] = out[f"{name}_replay_us"] / out[f"{name}_eager_us"]
        out[f"{name}_record_ratio"] = out[f"{name}_replay_record_us"] / out[f"{name}_eager_record_us"]
        g.release()
    return out


def copy_figures(quick: bool) -> dict:
    reps = 7 if quick else 31
    tiny = _kernels()[0]
    rng = np.random.default_rng(0)
    devs = [gr.ndarray(gr.f32, COPY_ELEMS) for _ in range(COPIES)]
    hosts = [rng.random(COPY_ELEMS, dtype=np.float32) + 0.5 for _ in range(COPIES)]
    ups = list(zip(devs, hosts))
    outs = [np.empty(COPY_ELEMS, np.float32) for _ in range(COPIES)]
    downs = list(zip(outs, devs))

    def separate():
        for d, h in ups:
            d.from_numpy(h)

    def batched():
        gr.copy_tensors(ups)

    def complete(fn):
        def run():
            fn()
            tiny(devs[-1])  # a launch after the copies: forces their submit
            gr.sync()
        return run

    def separate_down():
        for o, d in downs:
            o[...] = d.to_numpy()

    f = {}
    for name, fn in (("from_numpy", separate), ("copy_tensors", batched)):
        fn()
        f[f"upload_{name}_us"] = 1e6 * _median_per(fn, 1, reps, False)
        f[f"upload_{name}_complete_us"] = 1e6 * _median_per(complete(fn), 1, reps, False)
    gr.copy_tensors(ups)
    batched()
    want = [h.copy() for h in hosts]
    gr.copy_tensors(downs)
    if not all(np.array_equal(o, w) for o, w in zip(outs, want)):
        raise AssertionError("copy_tensors moved the wrong data")
    f["download_to_numpy_us"] = 1e6 * _median_per(separate_down, 1, max(3, reps // 4), False)
    f["download_copy_tensors_us"] = 1e6 * _median_per(lambda: gr.copy_tensors(downs), 1, reps, False)
    f["upload_speedup"] = f["upload_from_numpy_us"] / f["upload_copy_tensors_us"]
    f["upload_complete_speedup"] = f["upload_from_numpy_complete_us"] / f["upload_copy_tensors_complete_us"]
    f["download_speedup"] = f["download_to_numpy_us"] / f["download_copy_tensors_us"]
    return f


def check_replay() -> None:
    """The replayed 200 launches compute what the eager ones do (run before timing)."""
    tiny = _kernels()[0]
    x, y = gr.ndarray(gr.f32, 16), gr.ndarray(gr.f32, 16)
    with gr.graph() as g:
        for _ in range(LAUNCHES):
            tiny(x)
    g.replay(2)
    for _ in range(2 * LAUNCHES):
        tiny(y)
    if not np.array_equal(x.to_numpy(), y.to_numpy()) or x.to_numpy()[0] != 2 * LAUNCHES:
        raise AssertionError("graph replay computed a different result from eager launches")
    g.release()


def run(quick: bool = False) -> dict:
    """All figures: {'device': ..., 'same_replay_us': ..., 'upload_speedup': ..., ...}."""
    figures = {"device": gr.device().name}
    check_replay()
    figures.update(graph_figures(quick))
    figures.update(copy_figures(quick))
    return figures


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m experiments.micro_graph")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args(argv)
    figs = run(args.quick)
    for k, v in figs.items():
        print(f"{k:32s} {v:12.3f}" if isinstance(v, float) else f"{k:32s} {v}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(figs, fh, indent=1)


if __name__ == "__main__":
    main()
