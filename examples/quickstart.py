"""The README's quickstart: saxpy on the GPU (or lavapipe), its gradient, and numpy arguments,
each checked against numpy."""
import numpy as np

import gfxrt as gr


@gr.kernel
def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):        # a top-level loop runs in parallel
        y[i] = a * x[i] + y[i]


n = 1 << 20
x = gr.ndarray(gr.f32, shape=(n,), needs_grad=True)
y = gr.ndarray(gr.f32, shape=(n,), needs_grad=True)
xs = np.random.rand(n).astype(np.float32)
x.from_numpy(xs)
y.fill(1.0)
saxpy(2.0, x, y)                       # device arrays: no copies
print("device:", gr.device().name)
print("y[:4] =", y.to_numpy()[:4], " max error vs numpy:", np.abs(y.to_numpy() - (2 * xs + 1)).max())

y.grad.fill(1.0)
saxpy.grad(2.0, x, y)                  # reverse mode: d(sum y)/dx = a
print("x.grad[:4] =", x.grad.to_numpy()[:4])

ys = np.ones(n, np.float32)
saxpy(3.0, xs, ys)                     # numpy arrays: copied in, and back because y is written
print("numpy-argument max error:", np.abs(ys - (3 * xs + 1)).max())
