"""The README's quickstart: saxpy on the GPU (or lavapipe), checked against numpy."""
import numpy as np

import gfxrt as gr


@gr.kernel
def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


n = 1 << 20
x = gr.ndarray(gr.f32, shape=(n,))
y = gr.ndarray(gr.f32, shape=(n,))
xs, ys = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
x.from_numpy(xs)
y.from_numpy(ys)
saxpy(2.0, x, y)                       # device arrays: no copies
print("device:", gr.device().name)
print("max error vs numpy:", np.abs(y.to_numpy() - (2 * xs + ys)).max())

zs = ys.copy()
saxpy(3.0, xs, zs)                     # numpy arrays: copied in, and back because y is written
print("numpy-argument max error:", np.abs(zs - (3 * xs + ys)).max())
