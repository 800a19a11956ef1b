"""Reverse mode through a run-time loop: backward / forward time ratio.

    v = x[i]; for j in range(cnt[i]): v = sin(v) * 0.95 + 0.01; y[i] = v

with trip counts 0..31, the case where peers fail or are slow (WGPU-NOTES.md). The
forward is the kernel itself; the backward is `kernel.grad` (counting pre-pass + forward
sweep pushing onto the adstack + backward sweep). Both are timed to completion (sync), best
of --repeats runs; on a CPU adapter (lavapipe, which runs inside this process) the ratio of
process CPU times is printed too, as it barely depends on what else the machine runs.

    python -m experiments.autodiff [--n 262144] [--repeats 7] [--strategies]

By default the grad kernel differentiates the loop through its preaccumulated Jacobian
(compiler/autodiff/preacc.py). --strategies repeats the measurement with every loop through
the adstack, its first level in workgroup then in private memory (GFXRT_AD_LOOPS,
GFXRT_ADSTACK_SHARED), and times a loop-free grad kernel with and without its gradient reads
hoisted to the start of the item (modes 'grad' and 'grad_alias').
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

import gfxrt as gr
from bench.benchmarks.autodiff import sin_loop_kernel

sin_loop = sin_loop_kernel(gr)  # the suite's ad_loop kernel


def reference(xs: np.ndarray, cs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float64 values and dy/dx of the same loop."""
    v = xs.astype(np.float64)
    d = np.ones_like(v)
    for j in range(int(cs.max(initial=0))):
        m = j < cs
        d[m] *= np.cos(v[m]) * 0.95
        v[m] = np.sin(v[m]) * 0.95 + 0.01
    return v, d


def _best(fn, repeats: int, clock=time.perf_counter) -> float:
    """Best of `repeats` runs (like timeit): the least disturbed by other load."""
    times = []
    for _ in range(repeats):
        t = clock()
        fn()
        times.append(clock() - t)
    return min(times)


def _device_times(forward, backward, repeats: int):
    """Best device time of the forward kernel and of the whole grad launch (its pre-pass and
    grad tasks), from gr.profile() timestamps; (None, None) without timestamp queries."""
    fwd, bwd = [], []
    for _ in range(repeats):
        with gr.profile() as p:
            forward()
        fwd.append(sum(t for name, t in p.records))
        with gr.profile() as p:
            backward()
        bwd.append(sum(t for name, t in p.records if name.startswith("sin_loop")))
    if getattr(p, "mode", "host") == "host":
        return None, None
    return min(fwd), min(bwd)


def run(n: int, repeats: int = 7, seed: int = 0) -> dict:
    """Time forward and backward over n elements; returns times (s), their ratio and the
    gradient error against a float64 reference."""
    rng = np.random.default_rng(seed)
    xs = rng.uniform(-1.0, 1.0, n).astype(np.float32)
    cs = rng.integers(0, 32, n).astype(np.int32)
    x, y = gr.ndarray(gr.f32, n, needs_grad=True), gr.ndarray(gr.f32, n, needs_grad=True)
    cnt = gr.ndarray(gr.i32, n)
    x.from_numpy(xs)
    cnt.from_numpy(cs)

    def forward():
        sin_loop(x, cnt, y)
        gr.sync()

    def backward():
        y.grad.fill(1.0)
        sin_loop.grad(x, cnt, y)
        gr.sync()

    forward()
    x.grad.fill(0.0)
    backward()  # compiles, sizes the heap; also the checked run
    sample = slice(0, min(n, 1 << 16))  # a float64 reference on a prefix keeps large n quick
    _, d = reference(xs[sample], cs[sample])
    err = float(np.abs(x.grad.to_numpy()[sample] - d).max())
    fill_only = _best(lambda: (y.grad.fill(1.0), gr.sync()), repeats)
    t_fwd = _best(forward, repeats)
    t_bwd = _best(backward, repeats) - fill_only
    out = {"n": n, "forward_s": t_fwd, "backward_s": t_bwd, "ratio": t_bwd / t_fwd, "max_grad_error": err,
           "device": gr.device().name}
    dev_f, dev_b = _device_times(forward, backward, repeats)
    if dev_f:  # timestamp queries: device time of the kernels alone (the seed fill excluded)
        out.update(device_forward_s=dev_f, device_backward_s=dev_b, device_ratio=dev_b / dev_f)
    if gr.device().is_cpu:  # lavapipe runs in this process: its CPU time is the work, whatever the load
        cpu = time.process_time
        fill_cpu = _best(lambda: (y.grad.fill(1.0), gr.sync()), repeats, cpu)
        out["cpu_ratio"] = (_best(backward, repeats, cpu) - fill_cpu) / _best(forward, repeats, cpu)
    return out


@gr.kernel
def loop_free(x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = gr.sin(x[i]) * x[i]


def hoisting(n: int, repeats: int) -> dict:
    """Device time of loop_free's grad kernel with its gradient reads hoisted ('grad') and as
    emitted in place ('grad_alias', the variant for aliased arguments)."""
    x, y = gr.ndarray(gr.f32, n, needs_grad=True), gr.ndarray(gr.f32, n, needs_grad=True)
    x.from_numpy(np.random.default_rng(0).uniform(-1, 1, n).astype(np.float32))
    loop_free(x, y)
    out = {}
    for mode in ("grad", "grad_alias"):
        def launch(mode=mode):
            loop_free._launch((x, y), {}, mode)
            gr.sync()
        launch()
        best = None
        for _ in range(repeats):
            with gr.profile() as p:
                loop_free._launch((x, y), {}, mode)
            if getattr(p, "mode", "host") == "host":
                return {}
            t = sum(t for _, t in p.records)
            best = t if best is None else min(best, t)
        out[mode] = best
        if gr.device().is_cpu:  # lavapipe runs in this process: CPU time is robust to other load
            out[f"{mode}_cpu"] = _best(launch, repeats, time.process_time)
    return out


STRATEGIES = [("default (auto: Jacobian preaccumulated)", {}),
              ("adstack, first level in workgroup memory", {"GFXRT_AD_LOOPS": "adstack", "GFXRT_ADSTACK_SHARED": "1"}),
              ("adstack, first level in private memory", {"GFXRT_AD_LOOPS": "adstack", "GFXRT_ADSTACK_SHARED": "0"})]


def strategies(n: int, repeats: int) -> None:
    """One line per reverse-mode strategy (gr.init() re-reads the environment knobs)."""
    saved = {k: os.environ.get(k) for k in ("GFXRT_AD_LOOPS", "GFXRT_ADSTACK_SHARED")}
    try:
        for label, env in STRATEGIES:
            for k in saved:
                os.environ.pop(k, None)
            os.environ.update(env)
            gr.init()
            r = run(n, repeats)
            dev = (f"device fwd {r['device_forward_s'] * 1e3:.3f} ms bwd {r['device_backward_s'] * 1e3:.3f} ms "
                   f"ratio {r['device_ratio']:.2f}") if "device_ratio" in r else "no timestamps"
            cpu = f", CPU-time ratio {r['cpu_ratio']:.2f}" if "cpu_ratio" in r else ""
            print(f"{label:44s} {dev}{cpu}, wall ratio {r['ratio']:.2f}, max grad err {r['max_grad_error']:.1e}",
                  flush=True)
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None)
            if v is not None:
                os.environ[k] = v
        gr.init()
    h = hoisting(n, repeats)
    if h:
        cpu = (f"; CPU time {h['grad_cpu'] * 1e3:.3f} ms vs {h['grad_alias_cpu'] * 1e3:.3f} ms"
               if "grad_cpu" in h else "")
        print(f"loop-free grad (y = sin(x) * x): gradient reads hoisted {h['grad'] * 1e3:.3f} ms, "
              f"in place {h['grad_alias'] * 1e3:.3f} ms (device time){cpu}")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m experiments.autodiff")
    ap.add_argument("--n", type=int, default=1 << 18)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--strategies", action="store_true", help="compare the reverse-mode strategies")
    a = ap.parse_args(argv)
    if a.strategies:
        print(f"device: {gr.device().name}, n = {a.n}")
        strategies(a.n, a.repeats)
        return
    r = run(a.n, a.repeats)
    print(f"device: {r['device']}")
    print(f"n = {r['n']}: forward {r['forward_s'] * 1e3:.2f} ms, backward {r['backward_s'] * 1e3:.2f} ms, "
          f"backward/forward = {r['ratio']:.2f}, max |grad - float64 reference| = {r['max_grad_error']:.2e}")
    if "device_ratio" in r:
        print(f"device time (timestamp queries): forward {r['device_forward_s'] * 1e3:.3f} ms, backward "
              f"{r['device_backward_s'] * 1e3:.3f} ms, backward/forward = {r['device_ratio']:.2f}")
    if "cpu_ratio" in r:
        print(f"CPU-time ratio (lavapipe works in this process; robust to other load): {r['cpu_ratio']:.2f}")


if __name__ == "__main__":
    main()
