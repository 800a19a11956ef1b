"""The program tests/test_runtime_nonumpy.py runs twice, with numpy and with numpy blocked
(`sys.modules['numpy'] = None` first, as in a browser tab's Pyodide): saxpy, a gradient through a
run-time loop, a Tape, a graph replay, a return value, vector / matrix arguments, values and
containers (gr.Vector / gr.Matrix on the host, element reads and writes). Without numpy its data goes in as lists and
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


def host(v):
    """A gr.Vector / gr.Matrix value as nested lists (the numpy class and the list class alike)."""
    return v.tolist()


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

# -- vectors and matrices: arguments, host values, containers' elements --------------------------
vec3 = gr.types.vector(3, gr.f32)
mat2 = gr.types.matrix(2, 2, gr.f32)
vf = gr.Vector.field(3, gr.f32, 4)
mn = gr.Matrix.ndarray(2, 2, gr.f32, 3)
put(vf, [[i, 0.5 * i, -i] for i in range(4)])
put(mn, [[[1, 2], [3, 4]], [[5, 6], [7, 8]], [[0.25, 0], [0, -1]]])


@gr.kernel
def affine(m: mat2, v: gr.math.vec3, s: vec3, a: gr.types.ndarray(dtype=mat2, ndim=1)) -> vec3:
    for i in vf:
        vf[i] = vf[i] * v + s
    for i in range(a.shape[0]):
        a[i] = a[i] @ m
    return v.cross(s)


u = gr.Vector([1.0, 2.0, 0.5])
out["ret_vec"] = host(affine(gr.Matrix([[0, 1], [1, 0]]), u, [0.1, 0.2, 0.3], mn))  # host values and a list
out["ret_vec2"] = host(affine([[2, 0], [0, 0.5]], gr.math.vec3(1, -1, 2), vec3(0), mn))
out["vfield"], out["mnd"] = get(vf), get(mn)
vn = gr.Vector.ndarray(3, gr.f32, 2)
vn.from_numpy([gr.Vector([1, 2, 3]), vec3(4, 5, 6)])  # a list of gr.Vector values
out["vn"] = get(vn)
vn.fill(vec3(0.5, 1, 2))  # one element's value in every element
out["vn_fill"] = get(vn)
e = vf[1]  # a gr.Vector that writes through
e.y = 9.5
vf[2] = [7, 8, 9]
mn[0] = [[1, -1], [0.5, 2]]
mn[1] = 3  # broadcast
m = mn[2]
m[1, 0] = 4.0
out["elements"] = [host(vf[1]), vf[1].x, host(vf[2]), host(mn[0]), host(mn[1]), host(mn[2])]
out["vfield2"], out["mnd2"] = get(vf), get(mn)
w = gr.Vector([3.0, 4.0, 12.0], gr.f32)
r = gr.Matrix([[1, 2], [3, 4]], gr.f32)
out["host_math"] = [w.norm(), host(w * 2 + 1), host(w.normalized()), w.dot(u), host(w.cross(u)),
                    host(r @ r), host(r.T), round(r.determinant(), 9),
                    [[round(x, 9) for x in row] for row in host(r.inverse())],  # (LAPACK's last bits differ)
                    bool(w == [3, 4, 12]),
                    host(gr.Matrix.identity(gr.f32, 2)), host(vec3(1.5)), w.n, r.m]

# -- a struct argument with a vector member, a struct field's element ------------------------------
P = gr.types.struct(a=gr.f32, n=gr.i32, v=vec3)
sf = P.field(shape=2)


@gr.kernel
def use_struct(p: P) -> gr.f32:
    sf[1] = p
    return p.a * p.n + p.v.dot(p.v)


out["struct"] = [use_struct(P(a=1.5, n=3, v=[1, 2, 0.5])), use_struct({"a": 0.25, "n": -2, "v": u}),
                 sf[1].to_dict()["v"].tolist(), sf[1] == {"a": 0.25, "n": -2, "v": [1, 2, 0.5]}]
out["numpy"] = sys.modules.get("numpy") is not None
print(json.dumps(out))
