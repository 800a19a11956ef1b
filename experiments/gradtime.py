import sys
import time

import numpy as np

import gfxrt as gr


@gr.kernel
def f(x: gr.types.ndarray(dtype=gr.f32, ndim=1), cnt: gr.types.ndarray(dtype=gr.i32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        v = x[i]
        for _j in range(cnt[i]):
            v = gr.sin(v) * 0.95 + 0.01
        y[i] = v
n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 18
rng = np.random.default_rng(0)
x = gr.ndarray(gr.f32, n, needs_grad=True); x.from_numpy(rng.uniform(-1, 1, n).astype(np.float32))
cnt = gr.ndarray(gr.i32, n); cnt.from_numpy(rng.integers(0, 32, n).astype(np.int32))
y = gr.ndarray(gr.f32, n, needs_grad=True)
f(x, cnt, y); y.grad.fill(1.0); f.grad(x, cnt, y); gr.sync()
for _rep in range(3):
    t = time.perf_counter()
    for _ in range(50): f.grad(x, cnt, y)
    gr.sync(); tg = (time.perf_counter() - t) / 50
    t = time.perf_counter()
    for _ in range(50): f(x, cnt, y)
    gr.sync(); tf = (time.perf_counter() - t) / 50
    print(f"grad {tg*1e3:.3f} ms  fwd {tf*1e3:.3f} ms", flush=True)
with gr.profile() as p:
    f.grad(x, cnt, y); f(x, cnt, y)
p.table()
