"""What gr.random() and the own f32 transcendentals cost on this adapter (issue 11 item 7, issue 12 item 7).

Times, per kernel over 2^24 elements (median of 20 launches, wall with a sync each):
a plain store, one gr.random() per element, four gr.random() per element, and loops of
32 gr.sin / gr.exp per element (compute-bound).
Run: python -m experiments.random_cost [log2n]   (GPU machine: . .gl/enter.sh && python3 ...)
"""
import sys
import time

import numpy as np

import gfxrt as gr

gr.init()
n = 1 << int(sys.argv[1] if len(sys.argv) > 1 else 24)
y = gr.ndarray(gr.f32, (n,))


@gr.kernel
def plain(y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(y.shape[0]):
        y[i] = gr.f32(i) * 0.5


@gr.kernel
def rand1(y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(y.shape[0]):
        y[i] = gr.random()


@gr.kernel
def rand4(y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(y.shape[0]):
        y[i] = gr.random() + gr.random() + gr.random() + gr.random()


@gr.kernel
def sins(y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(y.shape[0]):
        v = gr.f32(i) * 1e-6
        for _ in range(32):
            v = gr.sin(v) + 0.5
        y[i] = v


@gr.kernel
def exps(y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(y.shape[0]):
        v = gr.f32(i) * 1e-9
        for _ in range(32):
            v = gr.exp(-v)
        y[i] = v


for k in (plain, rand1, rand4, sins, exps):
    k(y)
    gr.sync()
    ts = []
    for _ in range(20):
        t = time.perf_counter()
        k(y)
        gr.sync()
        ts.append(time.perf_counter() - t)
    print(f"{k.__name__:6s} n=2^{n.bit_length() - 1}: {np.median(ts) * 1e3:.3f} ms")
r = y.to_numpy()
rand1(y)
r = y.to_numpy()
print(f"rand1 mean {r.mean():.4f} var {r.var():.4f} (uniform: 0.5, 0.0833)")
