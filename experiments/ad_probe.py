"""Where does the grad launch's device time go on this GPU? Variants of the adstack knobs."""
import dataclasses
import sys

import numpy as np

import gfxrt as gr
from experiments.autodiff import sin_loop
from gfxrt.ad import adstack

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24
rng = np.random.default_rng(0)
xs = rng.uniform(-1, 1, n).astype(np.float32); cs = rng.integers(0, 32, n).astype(np.int32)

def measure(label, threads=None, private=None, forced=None):
    if threads: adstack.THREADS_GPU = threads
    gr.init(adstack_size=forced)
    dev = gr.device()
    if private is not None:
        dev.target = dataclasses.replace(dev.target, adstack_private=private)
    x, y = gr.ndarray(gr.f32, n, needs_grad=True), gr.ndarray(gr.f32, n, needs_grad=True)
    cnt = gr.ndarray(gr.i32, n); x.from_numpy(xs); cnt.from_numpy(cs)
    sin_loop(x, cnt, y); y.grad.fill(1.0); sin_loop.grad(x, cnt, y); gr.sync()
    best_f = best_b = 1e9; per = {}
    for _ in range(5):
        with gr.profile() as p:
            sin_loop(x, cnt, y)
        best_f = min(best_f, sum(t for _, t in p.records))
        y.grad.fill(1.0); gr.sync()
        with gr.profile() as p:
            sin_loop.grad(x, cnt, y)
        best_b = min(best_b, sum(t for _, t in p.records))
        for k, t in p.records: per[k] = min(per.get(k, 1e9), t)
    print(f"{label:40s} fwd {best_f*1e3:7.3f} ms  bwd {best_b*1e3:7.3f} ms  ratio {best_b/best_f:5.2f}  {{{', '.join(f'{k}: {v*1e3:.3f}' for k, v in per.items())}}}", flush=True)
    adstack.THREADS_GPU = 1 << 18

print(gr.device().name, "n =", n)
measure("default (2^18 threads, 32 private)")
measure("private 0", private=0)
measure("private 8", private=8)
measure("private 48", private=48)
measure("threads 2^16", threads=1 << 16)
measure("threads 2^20", threads=1 << 20)
measure("threads 2^22", threads=1 << 22)
measure("forced adstack_size=32 (no pre-pass)", forced=32)
measure("forced 32, private 0", forced=32, private=0)
