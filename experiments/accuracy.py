"""Math builtins and integer // % on this adapter vs float64 / Python (issue 11 items 1, 7).

Prints, per builtin, the worst relative error over a sweep of inputs (|err| / max(|ref|, tiny)),
and the count of integer pairs whose // or % differs from Python's.
Run: python -m experiments.accuracy   (on the GPU machine: . .gl/enter.sh && python3 ...)
"""
import numpy as np

import gfxrt as gr

gr.init()
print("adapter:", gr.runtime().dev.adapter.summary if hasattr(gr.runtime().dev, "adapter") else "?")
N = 1 << 16
rng = np.random.default_rng(0)
cases = {
    "sin": (gr.sin, np.sin, np.linspace(-10, 10, N)), "cos": (gr.cos, np.cos, np.linspace(-10, 10, N)),
    "tan": (gr.tan, np.tan, np.linspace(-1.5, 1.5, N)), "asin": (gr.asin, np.arcsin, np.linspace(-1, 1, N)),
    "acos": (gr.acos, np.arccos, np.linspace(-1, 1, N)), "tanh": (gr.tanh, np.tanh, np.linspace(-9, 9, N)),
    "exp": (gr.exp, np.exp, np.linspace(-80, 80, N)), "log": (gr.log, np.log, np.exp(np.linspace(-80, 80, N))),
    "atan": (gr.atan, np.arctan, np.linspace(-50, 50, N)),
    "sqrt": (gr.sqrt, np.sqrt, np.exp(np.linspace(-80, 80, N))), "rsqrt": (gr.rsqrt, lambda v: 1 / np.sqrt(v), np.exp(np.linspace(-80, 80, N))),
}
for name, (g, ref, xs) in cases.items():
    @gr.kernel
    def k(x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1), f: gr.template()):
        for i in range(x.shape[0]):
            y[i] = f(x[i])
    x32 = xs.astype(np.float32)
    y = np.zeros_like(x32)
    k(x32, y, g)
    r = ref(x32.astype(np.float64))
    err = np.abs(y - r) / np.maximum(np.abs(r), 1e-30)
    ulp_err = np.abs(y - r) / np.spacing(np.abs(r).astype(np.float32)).astype(np.float64)
    i = int(np.argmax(err))
    print(f"{name:6s} max rel {err.max():.2e} at x={x32[i]!r} | max ulp {ulp_err.max():.1f} | frac(rel>1e-5) {np.mean(err > 1e-5):.4f}")


@gr.kernel
def idiv(a: gr.types.ndarray(dtype=gr.i32, ndim=1), b: gr.types.ndarray(dtype=gr.i32, ndim=1),
         q: gr.types.ndarray(dtype=gr.i32, ndim=1), r: gr.types.ndarray(dtype=gr.i32, ndim=1)):
    for i in range(a.shape[0]):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


a = rng.integers(-1000, 1000, 4000).astype(np.int32)
b = rng.integers(-50, 50, 4000).astype(np.int32)
b[b == 0] = 7
q = np.zeros_like(a)
r = np.zeros_like(a)
idiv(a, b, q, r)
print("int // mismatches:", int(np.sum(q != a // b)), " % mismatches:", int(np.sum(r != a % b)), "of", len(a))


@gr.kernel
def binary(x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1),
           a: gr.types.ndarray(dtype=gr.f32, ndim=1), p: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        a[i] = gr.atan2(y[i], x[i])
        p[i] = gr.pow(gr.abs(x[i]), y[i])


x = rng.uniform(-10, 10, N).astype(np.float32)
y = rng.uniform(-10, 10, N).astype(np.float32)
a = np.zeros_like(x)
p = np.zeros_like(x)
binary(x, y, a, p)
for name, got, ref in (("atan2", a, np.arctan2(y.astype(np.float64), x)), ("pow", p, np.abs(x.astype(np.float64)) ** y)):
    err = np.abs(got - ref) / np.maximum(np.abs(ref), 1e-30)
    print(f"{name:6s} max rel {err.max():.2e} | frac(rel>1e-5) {np.mean(err > 1e-5):.4f}")
