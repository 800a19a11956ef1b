"""The program tests/test_runtime_nonumpy.py runs twice, with numpy and with numpy blocked
(`sys.modules['numpy'] = None` first, as in a browser tab's Pyodide): saxpy, a gradient through a
run-time loop, a Tape, a graph replay, a return value. Without numpy its data goes in as lists and
array.array and comes back by to_list(); with numpy as numpy arrays by from_numpy / to_numpy (the
reference). Prints its results as JSON (the two runs must print the same)."""
import array
import json
import sys

NUMPY = "--block-numpy" not in sys.argv
if NUMPY:
    import numpy as np
else:
    sys.modules["numpy"] = None  # import numpy now raises ImportError

import gfxrt as gr  # noqa: E402


def put(a, data):
    a.from_numpy(np.array(data, a.dtype.numpy) if NUMPY else data)


def get(a):
    return a.to_numpy().tolist() if NUMPY else a.to_list()


gr.init()
n = 8
x = gr.ndarray(gr.f32, n, needs_grad=True)
y = gr.ndarray(gr.f32, n, needs_grad=True)
cnt = gr.ndarray(gr.i32, n)
loss = gr.ndarray(gr.f32, (), needs_grad=True)
m = gr.ndarray(gr.f16, (2, 3))
put(x, [0.1 * i for i in range(n)])
put(cnt, array.array("i", [i % 4 for i in range(n)]))
put(m, [[0.1, 2, 3], [4, 5.5, -6]])


@gr.kernel
def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


@gr.kernel
def loop(x: gr.types.ndarray(dtype=gr.f32, ndim=1), cnt: gr.types.ndarray(dtype=gr.i32, ndim=1),
         y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        v = x[i]
        for _ in range(cnt[i]):  # a run-time trip count: its gradient keeps values on the adstack
            v = gr.sqrt(v * v + 1.0) * 1.5 + v * v
        y[i] += v


@gr.kernel
def total(y: gr.types.ndarray(dtype=gr.f32, ndim=1), loss: gr.types.ndarray(dtype=gr.f32, ndim=0)):
    for i in range(y.shape[0]):
        loss[None] += y[i] * y[i]


@gr.kernel
def ssum(y: gr.types.ndarray(dtype=gr.f32, ndim=1)) -> gr.f32:
    s = 0.0
    for i in range(y.shape[0]):
        s += y[i]
    return s


f = gr.field(gr.f32, 4)  # a field: Taichi's container
put(f, [1.5, -2, 3, 4])


@gr.kernel
def scale(k: gr.f32):
    for i in f:
        f[i] *= k


scale(2.0)
f[2] = 7  # a host write of one element
m[0, 1] = -1.25  # an f16 element: shares its word with a neighbour
out = {"m": get(m), "field": get(f), "field1": f[1], "m01": m[0, 1]}
y.fill(1.0)
saxpy(2.0, x, y)
out["saxpy"] = get(y)
y.fill(0)
y.grad.fill(1.0)
loop(x, cnt, y)
loop.grad(x, cnt, y)
out["loop"], out["loop_grad"] = get(y), get(x.grad)
y.fill(0)
x.grad.fill(0)
with gr.Tape(loss=loss):
    loop(x, cnt, y)
    total(y, loss)
out["tape_loss"], out["tape_grad"] = get(loss), get(x.grad)
out["ret"] = ssum(y)
with gr.graph() as g:
    saxpy(0.5, x, y)
g.replay()
g.replay()
out["graph"] = get(y)
if not NUMPY:
    try:
        x.to_numpy()
    except ImportError as e:  # a clear error naming the way without numpy
        out["to_numpy_error"] = "use .to_list()" in str(e)
else:
    out["to_numpy_error"] = True
out["numpy"] = sys.modules.get("numpy") is not None
print(json.dumps(out))
