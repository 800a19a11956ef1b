"""gfxrt's own f64 math on this adapter vs numpy: worst relative / absolute error and where.
Run: python -m experiments.f64_math   (GPU machine: . .gl/enter.sh && python3 ...)
"""
import numpy as np

import gfxrt as gr

gr.init()
D1 = gr.types.ndarray(dtype=gr.f64, ndim=1)


@gr.kernel
def m(x: D1, o: gr.types.ndarray(dtype=gr.f64, ndim=2)):
    for i in range(x.shape[0]):
        a = x[i]
        o[0, i] = gr.sin(a)
        o[1, i] = gr.cos(a)
        o[2, i] = gr.exp(a * 0.01)
        o[3, i] = gr.log(abs(a))
        o[4, i] = a / 3.0
        o[5, i] = a - gr.floor(a * 0.6366197723675814 + 0.5) * 1.57079632673412561417


rng = np.random.default_rng(0)
x = np.concatenate([rng.uniform(-10, 10, 200), rng.uniform(-700, 700, 30), [1e-300, -1e-5, 0.5, 1e5]])
o = np.zeros((6, len(x)))
m(x, o)
k = np.floor(x * 0.6366197723675814 + 0.5)
want = [np.sin(x), np.cos(x), np.exp(x * 0.01), np.log(abs(x)), x / 3.0, x - k * 1.57079632673412561417]
for j, (nm, w) in enumerate(zip(["sin", "cos", "exp", "log", "x/3", "x-k*C1"], want)):
    ab = np.abs(o[j] - w)
    rel = ab / np.maximum(np.abs(w), 1e-300)
    i = int(np.argmax(rel))
    print(f"{nm:6s} max rel {rel.max():.2e} at x={x[i]!r} (got {o[j][i]!r}, want {w[i]!r}); max abs {ab.max():.2e}")
