"""What the loop form costs (issue 21, item 1): device time of loop-heavy kernels, best of 20 launches.
Run it once per compiler (e.g. PYTHONPATH=<an old checkout> for the form before) on the same machine:

    python3 experiments/loopbreak/cost.py            # prints one line per kernel: name, ms
"""
from __future__ import annotations

import time

import numpy as np

import gfxrt as gr

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)


@gr.kernel
def sin_loop(x: F1, cnt: I1, y: F1):
    for i in range(x.shape[0]):
        v = x[i]
        for _ in range(cnt[i]):
            v = gr.sin(v) * 0.95 + 0.01
        y[i] = v


@gr.kernel
def arg_loop(x: F1, n: gr.i32, y: F1):
    for i in range(x.shape[0]):
        acc = 0.0
        for j in range(n):
            acc += x[(i + j) % x.shape[0]] * 0.5
        y[i] = acc


@gr.kernel
def index_loop(x: F1, y: F1):
    for i in range(x.shape[0]):
        acc = 0.0
        for j in range(i % 64, 128 - i % 64):
            acc += x[(i + j) % x.shape[0]]
        y[i] = acc


@gr.kernel
def const_loop(x: F1, y: F1):
    for i in range(x.shape[0]):
        acc = 0.0
        for j in range(16):
            acc += x[(i + j) % x.shape[0]] * j
        y[i] = acc


@gr.kernel
def while_loop(x: F1, y: F1):
    for i in range(x.shape[0]):
        k = i % 32
        acc = 0.0
        while k < 96:
            acc += x[(i + k) % x.shape[0]]
            k += 1
        y[i] = acc


def best(f, *args, reps=20):
    f(*args)
    gr.sync()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f(*args)
        gr.sync()
        ts.append(time.perf_counter() - t0)
    return min(ts) * 1e3


def main():
    n = 1 << 20 if not gr.runtime().dev.is_cpu else 1 << 14
    rng = np.random.default_rng(0)
    x = gr.ndarray(gr.f32, (n,))
    x.from_numpy(rng.random(n, dtype=np.float32))
    y = gr.ndarray(gr.f32, (n,))
    cnt = gr.ndarray(gr.i32, (n,))
    cnt.from_numpy(rng.integers(32, 96, n).astype(np.int32))
    print(f"{'sin_loop':12s} {best(sin_loop, x, cnt, y):8.3f} ms")
    print(f"{'arg_loop':12s} {best(arg_loop, x, 64, y):8.3f} ms")
    print(f"{'index_loop':12s} {best(index_loop, x, y):8.3f} ms")
    print(f"{'const_loop':12s} {best(const_loop, x, y):8.3f} ms")
    print(f"{'while_loop':12s} {best(while_loop, x, y):8.3f} ms")


if __name__ == "__main__":
    main()
