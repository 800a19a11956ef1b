"""Taichi's compute-graph API (`gr.graph.GraphBuilder`, gfxrt/taichi/graph.py) against eager
launches of the same kernels and numpy: the binding of arguments per run (arrays swapped,
scalars changed), the capture cache, and Taichi's errors."""
import numpy as np
import pytest

import gfxrt as gr
from gfxrt.taichi.graph import CACHED_BINDINGS

vec2 = gr.types.vector(2, gr.f32)


@gr.kernel
def axpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in x:
        y[i] = y[i] * 0.5 + a * x[i]


@gr.kernel
def shift(x: gr.types.ndarray(ndim=1), v: vec2):
    for i in x:
        x[i] += v


def _sym():
    A = gr.graph.ArgKind
    return (gr.graph.Arg(A.SCALAR, "a", gr.f32), gr.graph.Arg(A.NDARRAY, "x", gr.f32, ndim=1),
            gr.graph.Arg(A.NDARRAY, "y", dtype=gr.f32, ndim=1))


def _axpy_graph(steps: int = 3):
    a, x, y = _sym()
    b = gr.graph.GraphBuilder()
    seq = b.create_sequential()
    seq.dispatch(axpy, a, x, y)
    seq.dispatch(axpy, a, y, x)          # ping-pong: the same Args in swapped roles
    for _ in range(steps):
        b.append(seq)
    return b.compile()


def _axpy_numpy(a, x, y, steps=3):
    x, y = x.astype(np.float32).copy(), y.astype(np.float32).copy()
    for _ in range(2 * steps):
        y[:] = y * np.float32(0.5) + np.float32(a) * x
        x, y = y, x
    return x, y  # after an even number of swaps: (x, y) again


def _arr(v):
    a = gr.ndarray(gr.f32, len(v))
    a.from_numpy(np.asarray(v, np.float32))
    return a


def test_gr_graph_is_both_the_capture_and_taichis_namespace():
    with gr.graph() as g:
        pass
    assert isinstance(g, gr.Graph)
    assert [k.name for k in gr.graph.ArgKind] == ["SCALAR", "NDARRAY", "MATRIX", "TEXTURE", "RWTEXTURE"]
    assert callable(gr.graph.GraphBuilder) and callable(gr.graph.Arg)
    arg = gr.graph.Arg(gr.graph.ArgKind.NDARRAY, "x", gr.math.vec2, 1)   # Taichi's positional order
    assert (arg.name, arg.dtype(), arg.ndim, arg.field_dim, arg.element_shape) == ("x", gr.f32, 1, 1, (2,))


def test_runs_rebind_arrays_and_scalars_as_eager_launches_do(rng):
    """Every run binds its own arrays and scalars, also after the binding was captured:
    swapped arrays, new scalars, arrays of another length, and back again."""
    g = _axpy_graph()
    n0, n1 = rng.standard_normal((2, 5)), rng.standard_normal((2, 7))
    p = [_arr(n0[0]), _arr(n0[1])]
    q = [_arr(n1[0]), _arr(n1[1])]
    ref = {id(a): a.to_numpy() for a in (*p, *q)}
    plan = [(1.5, p[0], p[1]), (1.5, p[0], p[1]), (1.5, p[0], p[1]), (-2.0, p[0], p[1]), (1.5, p[1], p[0]),
            (1.5, q[0], q[1]), (1.5, p[0], p[1]), (-0.0, q[1], q[0]), (0.0, q[1], q[0]), (1.5, q[1], q[0])]
    for a, x, y in plan:
        g.run({"a": a, "x": x, "y": y, "unused": 3})  # names the graph does not use are ignored
        ref[id(x)], ref[id(y)] = _axpy_numpy(a, ref[id(x)], ref[id(y)])
        for arr in (*p, *q):
            np.testing.assert_allclose(arr.to_numpy(), ref[id(arr)], rtol=1e-6, atol=1e-6)


def test_graph_run_equals_eager_launches_bitwise(rng):
    g = _axpy_graph(steps=4)
    init = rng.standard_normal((2, 300)).astype(np.float32)
    xs, ys = _arr(init[0]), _arr(init[1])
    xe, ye = _arr(init[0]), _arr(init[1])
    for r in range(3):                  # eager, capture, replay
        g.run({"a": 0.25 * r, "x": xs, "y": ys})
        g.run({"a": 0.25 * r, "x": xs, "y": ys})
        for _ in range(2):
            for _ in range(4):
                axpy(0.25 * r, xe, ye)
                axpy(0.25 * r, ye, xe)
    assert np.array_equal(xs.to_numpy(), xe.to_numpy()) and np.array_equal(ys.to_numpy(), ye.to_numpy())


def test_a_binding_runs_eagerly_first_then_from_a_capture_and_old_ones_are_released():
    g = _axpy_graph(steps=1)
    x, y = _arr([1, 2]), _arr([3, 4])
    g.run({"a": 1.0, "x": x, "y": y})
    (entry,) = g._bindings.values()
    assert entry[0] is None                       # first run of a binding: eager
    g.run({"a": 1.0, "x": x, "y": y})
    first = entry[0]
    assert isinstance(first, gr.Graph) and first.state == "ready" and first.stats()["launches"] == 2
    g.run({"a": 1.0, "x": x, "y": y})
    assert entry[0] is first                      # replayed, not captured again
    for k in range(CACHED_BINDINGS):
        g.run({"a": 2.0 + k, "x": x, "y": y})
    assert len(g._bindings) == CACHED_BINDINGS and first.state == "released"
    g.release()
    assert not g._bindings
    g.run({"a": 1.0, "x": x, "y": y})             # still runs


def test_matrix_and_vector_array_arguments():
    A = gr.graph.ArgKind
    b = gr.graph.GraphBuilder()
    b.dispatch(shift, gr.graph.Arg(A.NDARRAY, "x", dtype=gr.math.vec2, ndim=1),
               gr.graph.Arg(A.MATRIX, "v", gr.math.vec2))
    g = b.compile()
    x = gr.Vector.ndarray(2, gr.f32, shape=3)
    for v in ([1.0, 2.0], gr.Vector([1.0, 2.0]), gr.math.vec2(0.5, -1.0)):
        g.run({"x": x, "v": v})
    np.testing.assert_array_equal(x.to_numpy(), np.tile([2.5, 3.0], (3, 1)))


def test_arguments_are_checked_before_anything_runs():
    g = _axpy_graph(steps=1)
    x, y = _arr([1, 2]), _arr([3, 4])
    bad = [({"a": 1.0, "x": x}, TypeError, "missing graph argument"),
           ({"a": 1.0, "x": x, "y": gr.ndarray(gr.i32, 2)}, TypeError, "expected elements of f32"),
           ({"a": 1.0, "x": x, "y": gr.ndarray(gr.f32, (2, 2))}, ValueError, "expected ndim 1"),
           ({"a": x, "x": x, "y": y}, TypeError, "SCALAR"),
           ({"a": 1.0, "x": x, "y": np.zeros(2, np.float32)}, TypeError, "gr.ndarray"),
           ({"a": 1.0, "x": x, "y": gr.Vector.ndarray(2, gr.f32, 2)}, TypeError, "vector"),
           ({"a": 1.0, "x": x, "y": gr.field(gr.f32, 2)}, TypeError, "gr.ndarray")]
    for args, exc, msg in bad:
        with pytest.raises(exc, match=msg):
            g.run(args)
    np.testing.assert_array_equal(y.to_numpy(), [3, 4])


def test_dispatch_checks_the_kernel_signature():
    a, x, y = _sym()
    b = gr.graph.GraphBuilder()
    with pytest.raises(TypeError, match="takes 3 arguments"):
        b.dispatch(axpy, a, x)
    with pytest.raises(TypeError, match="parameter is a scalar"):
        b.dispatch(axpy, x, x, y)
    with pytest.raises(TypeError, match="parameter holds f32"):
        b.dispatch(axpy, a, gr.graph.Arg(gr.graph.ArgKind.NDARRAY, "v", gr.math.vec2, ndim=1), y)
    b.dispatch(axpy, a, x, y)
    with pytest.raises(ValueError, match="two graph arguments are named 'x'"):
        b.dispatch(shift, gr.graph.Arg(gr.graph.ArgKind.NDARRAY, "x", gr.math.vec2, ndim=1),
                   gr.graph.Arg(gr.graph.ArgKind.MATRIX, "v", gr.math.vec2))
    assert sorted(b.compile()._args) == ["a", "x", "y"]  # the refused dispatch declared nothing
    with pytest.raises(TypeError, match="ArgKind.MATRIX needs a vector"):
        gr.graph.Arg(gr.graph.ArgKind.MATRIX, "m", gr.f32)
    with pytest.raises(TypeError, match="element_shape was removed"):
        gr.graph.Arg(gr.graph.ArgKind.NDARRAY, "m", gr.f32, ndim=1, element_shape=(2,))
    with pytest.raises(TypeError, match="needs fmt"):
        gr.graph.Arg(gr.graph.ArgKind.RWTEXTURE, "t", ndim=2)
    with pytest.raises(TypeError, match="takes"):
        gr.graph.Arg(gr.graph.ArgKind.TEXTURE, "t", gr.f32, ndim=2)


def test_an_empty_graph_runs():
    gr.graph.GraphBuilder().compile().run({})


@gr.kernel
def _sum_sq(x: gr.types.ndarray(dtype=gr.f32, ndim=1), loss: gr.types.ndarray(dtype=gr.f32, ndim=0)):
    for i in x:
        loss[None] += x[i] * x[i]


def test_a_run_inside_a_tape_is_differentiated():
    A = gr.graph.ArgKind
    b = gr.graph.GraphBuilder()
    b.dispatch(_sum_sq, gr.graph.Arg(A.NDARRAY, "x", gr.f32, ndim=1), gr.graph.Arg(A.NDARRAY, "loss", gr.f32, ndim=0))
    g = b.compile()
    x = gr.ndarray(gr.f32, 3, needs_grad=True)
    x.from_numpy(np.array([1, 2, 3], np.float32))
    loss = gr.ndarray(gr.f32, (), needs_grad=True)
    for _ in range(3):  # also after the binding has been seen (it would be captured outside a Tape)
        with gr.Tape(loss):
            g.run({"x": x, "loss": loss})
        assert loss[None] == 14.0
        np.testing.assert_array_equal(x.grad.to_numpy(), [2, 4, 6])


@gr.kernel
def _count(n: gr.i32, out: gr.types.ndarray(dtype=gr.i32, ndim=1)):
    for i in range(n):
        out[i] += 1


@gr.data_oriented
class _Counter:
    def __init__(self):
        self.total = gr.field(gr.i32, shape=())

    @gr.kernel
    def add(self, out: gr.types.ndarray(dtype=gr.i32, ndim=1)):
        for i in out:
            self.total[None] += out[i]


def test_scalar_values_data_oriented_methods_and_plain_values():
    A = gr.graph.ArgKind
    c = _Counter()
    b = gr.graph.GraphBuilder()
    sym_out = gr.graph.Arg(A.NDARRAY, "out", gr.i32, ndim=1)
    b.dispatch(_count, gr.graph.Arg(A.SCALAR, "n", gr.i32), sym_out)
    b.dispatch(_count, 2, sym_out)                 # a plain value: bound as it is on every run
    b.dispatch(c.add, sym_out)                     # a method: its object is the template argument
    with pytest.raises(TypeError, match="expected i32, got float"):
        b.dispatch(_count, 2.5, sym_out)           # plain values are checked at dispatch
    g = b.compile()
    out = gr.ndarray(gr.i32, 4)
    for n in (3, 3, 3, 1):
        g.run({"n": n, "out": out})
    np.testing.assert_array_equal(out.to_numpy(), [8, 7, 3, 0])
    assert c.total[None] == 5 + 10 + 15 + 18      # sum(out) after each run
    for bad, exc in ((2.5, TypeError), (1 << 40, ValueError)):
        with pytest.raises(exc):                   # the kernel's own checks, before anything runs
            g.run({"n": bad, "out": out})
    np.testing.assert_array_equal(out.to_numpy(), [8, 7, 3, 0])
