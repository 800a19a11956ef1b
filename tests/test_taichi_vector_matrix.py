"""Vector and matrix containers, arguments and values as in Taichi: gr.Vector/Matrix.field and
.ndarray, gr.types.vector/matrix, element_shape / n / m / dtype, to_numpy / from_numpy shapes,
fill, vector and matrix kernel arguments and return values, vectors longer than 4. Programs from
Taichi's docs and tests (test_ndarray.py, test_matrix.py, test_field.py), ti renamed to gr."""
import copy

import numpy as np
import pytest

import gfxrt as gr

vec3 = gr.types.vector(3, gr.f32)
mat2 = gr.types.matrix(2, 2, gr.f32)


@pytest.mark.parametrize("shape", [(), 8, (6, 12)])
@pytest.mark.parametrize("dtype", [gr.i32, gr.f32])
def test_container_properties(shape, dtype):  # Taichi's _test_{scalar,vector,matrix}_ndarray
    want = shape if isinstance(shape, tuple) else (shape,)
    s = gr.ndarray(dtype, shape)
    assert s.shape == want and s.element_shape == () and s.dtype == dtype
    v = gr.Vector.ndarray(3, dtype, shape)
    assert v.shape == want and v.element_shape == (3,) and v.dtype == dtype and v.n == 3
    m = gr.Matrix.ndarray(2, 3, dtype, shape)
    assert m.shape == want and m.element_shape == (2, 3) and m.dtype == dtype and (m.n, m.m) == (2, 3)
    f = gr.Matrix.field(2, 3, dtype=dtype, shape=shape)
    assert f.shape == want and f.dtype == dtype and (f.n, f.m) == (2, 3)
    assert f.to_numpy().shape == want + (2, 3)
    assert gr.Vector.field(3, dtype, shape=shape).to_numpy().shape == want + (3,)


def test_compound_element_ndarray():  # Taichi's test_ndarray_compound_element
    n = 10
    b = gr.ndarray(gr.types.vector(3, gr.i32), shape=(n, n))
    assert b.shape == (n, n) and b.element_shape == (3,) and b.dtype == gr.i32
    assert b.element_type == gr.types.vector(3, gr.i32)
    c = gr.ndarray(gr.types.matrix(3, 4, float), shape=(n, n + 1))
    assert c.shape == (n, n + 1) and c.element_shape == (3, 4) and c.dtype == gr.f32


def test_numpy_io_and_fill():  # Taichi's _test_ndarray_numpy_io, test_ndarray_fill
    p, d = 4, 2
    x = gr.Vector.ndarray(d, gr.f32, p)
    x.fill(2)
    y = gr.Vector.ndarray(d, gr.f32, p)
    y.from_numpy(np.ones((p, d), dtype=np.int32) * 2)
    assert (x.to_numpy() == y.to_numpy()).all()
    xm = gr.Matrix.ndarray(2, 2, gr.f32, p)
    xm.fill(2)
    ym = gr.Matrix.ndarray(2, 2, gr.f32, p)
    ym.from_numpy(np.ones((p, 2, 2), dtype=np.int32) * 2)
    assert (xm.to_numpy() == ym.to_numpy()).all()
    f = gr.Vector.field(3, gr.f32, shape=(2, 3))
    f.fill(gr.Vector([1, 2, 3]))   # a vector fills every element
    np.testing.assert_array_equal(f.to_numpy(), np.broadcast_to([1, 2, 3], (2, 3, 3)))
    with pytest.raises(ValueError, match="shape"):
        f.from_numpy(np.zeros((2, 3)))
    x = gr.Vector.ndarray(5, gr.i32, (2,))     # Taichi's test_ndarray_matrix_numpy_io
    x_np = 1 + np.arange(10).reshape(2, 5).astype(np.int32)
    x.from_numpy(x_np)
    assert (x.to_numpy() == x_np).all() and x.to_numpy(dtype=np.float64).dtype == np.float64


def test_matrix_ndarray_taichi_scope():  # Taichi's _test_matrix_ndarray_taichi_scope(_struct_for), grouped
    @gr.kernel
    def func(a: gr.types.ndarray()):
        for i in a:
            for j, k in gr.ndrange(2, 2):
                a[i][j, k] = j * j + k * k

    m = gr.Matrix.ndarray(2, 2, gr.i32, 5)
    func(m)
    assert m[0][0, 0] == 0 and m[1][0, 1] == 1 and m[2][1, 0] == 1 and m[3][1, 1] == 2

    @gr.kernel
    def grouped(a: gr.types.ndarray()):
        for i in gr.grouped(a):
            for j, k in gr.ndrange(2, 2):
                a[i][j, k] = j * j

    a2 = gr.Matrix.ndarray(2, 2, gr.i32, shape=(3, 3))
    grouped(a2)
    np.testing.assert_array_equal(a2.to_numpy(), np.broadcast_to([[0, 0], [1, 1]], (3, 3, 2, 2)))


def test_vector_ndarray_of_ten_taichi_scope_and_numpy():  # Taichi's _test_compiled_functions
    @gr.kernel
    def func(a: gr.types.ndarray(gr.types.vector(n=10, dtype=gr.i32))):
        for i in range(5):
            for j in range(4):
                a[i][j * j] = j * j

    v = gr.Vector.ndarray(10, gr.i32, 5)
    func(v)
    assert v[0][9] == 9 and v[1][0] == 0 and v[2][1] == 1 and v[3][4] == 4
    w = np.zeros((6, 10), dtype=np.int32)
    func(w)
    np.testing.assert_array_equal(w[4], [0, 1, 0, 0, 4, 0, 0, 0, 0, 9])


def test_component_access_in_kernels():
    x = gr.Vector.field(3, gr.f32, shape=(4,))
    m = gr.Matrix.field(2, 2, gr.f32, shape=(4,))

    @gr.kernel
    def fill_xm(pts: gr.types.ndarray(dtype=vec3, ndim=1)):
        for i in x:
            x[i] = gr.Vector([i, 2 * i, 0.0])
            x[i].z = pts[i].x + pts[i][2]
            m[i] = gr.Matrix([[1.0, 0.0], [0.0, 1.0]]) * i
            m[i][0, 1] = x[i][1]

    pts = np.arange(12, dtype=np.float32).reshape(4, 3)
    fill_xm(pts)
    i = np.arange(4)
    np.testing.assert_array_equal(x.to_numpy(), np.stack([i, 2 * i, pts[:, 0] + pts[:, 2]], 1))
    np.testing.assert_array_equal(m.to_numpy()[:, 0], np.stack([i, 2 * i], 1))
    np.testing.assert_array_equal(m.to_numpy()[:, 1], np.stack([0 * i, i], 1))


def test_vector_and_matrix_kernel_arguments_and_returns():
    @gr.kernel
    def affine(a: mat2, b: gr.types.vector(2, gr.f32), x: gr.types.ndarray(dtype=gr.types.vector(2, gr.f32),
                                                                             ndim=1)) -> vec3:
        for i in x:
            x[i] = a @ x[i] + b
        return gr.Vector([b.x, b.y, a.determinant()])

    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    xs = np.arange(8, dtype=np.float32).reshape(4, 2)
    x = gr.Vector.ndarray(2, gr.f32, 4)
    for args in [(a, [0.5, -1.0]), (gr.Matrix([[1, 2], [3, 4]]), gr.Vector([0.5, -1.0])), (a.tolist(), (0.5, -1))]:
        x.from_numpy(xs)
        r = affine(*args, x)   # numpy, gr.Matrix / gr.Vector, lists and tuples
        np.testing.assert_allclose(x.to_numpy(), xs @ a.T + [0.5, -1.0])
        np.testing.assert_allclose(r, [0.5, -1.0, -2.0], rtol=1e-6)
        assert r.n == 3 and isinstance(r, np.ndarray)
    with pytest.raises(TypeError, match=r"vector\(2, f32\)"):
        affine(a, [1.0, 2.0, 3.0], x)
    with pytest.raises(TypeError, match=r"matrix\(2, 2, f32\)"):
        affine(np.eye(3), [1.0, 2.0], x)

    @gr.kernel
    def ivec(v: gr.types.vector(2, gr.i32)) -> gr.i32:
        w = v
        w[0] += 5
        return w[0] * 10 + v[1]

    assert ivec([1, 2]) == 62 and ivec((3, 4)) == 84
    with pytest.raises(TypeError, match="expected i32"):
        ivec([1.5, 2])


def test_long_vectors():
    v10 = gr.types.vector(10, gr.f32)

    @gr.kernel
    def scale(a: v10, y: gr.types.ndarray(dtype=v10, ndim=1)) -> gr.f32:
        for i in y:
            y[i] = a * i
            y[i][9] += 1.0
        return a.sum() + a.norm_sqr()

    y = gr.ndarray(v10, (3,))
    a = np.arange(10, dtype=np.float32)
    assert scale(a, y) == a.sum() + (a ** 2).sum()
    want = np.arange(3)[:, None] * a
    want[:, 9] += 1
    np.testing.assert_array_equal(y.to_numpy(), want)
    big = gr.types.matrix(5, 6, gr.i32)
    assert gr.ndarray(big, (2,)).to_numpy().shape == (2, 5, 6)


G = gr.Vector([0.0, -9.8])   # a Python-scope vector used by a kernel: compile-time constants


def test_python_scope_values():
    assert vec3(1, 2, 3).tolist() == [1, 2, 3] and vec3(0).tolist() == [0, 0, 0]
    assert mat2([[1, 2], [3, 4]]).determinant() == pytest.approx(-2.0) and mat2(1, 2, 3, 4).m == 2
    v = gr.Vector([3.0, 4.0])
    assert v.norm() == 5.0 and v.dot(v) == 25.0 and v.normalized().tolist() == [0.6, 0.8]
    assert (v.n, v.m) == (2, 1) and gr.Matrix([[1, 2], [3, 4]]).T.tolist() == [[1, 3], [2, 4]]
    assert gr.Vector([1, 0, 0]).cross(gr.Vector([0, 1, 0])).tolist() == [0, 0, 1]
    assert gr.Matrix.identity(gr.f32, 2).tolist() == [[1, 0], [0, 1]]
    assert gr.Vector.unit(3, 1, gr.i32).tolist() == [0, 1, 0]

    p = gr.Vector.field(2, gr.f32, shape=(3,))

    @gr.kernel
    def fall(dt: gr.f32):
        for i in p:
            p[i] += G * dt + gr.Vector.zero(gr.f32, 2) + gr.Matrix.identity(gr.f32, 2) @ gr.Vector.unit(2, 0, gr.f32)

    fall(0.5)
    np.testing.assert_allclose(p.to_numpy(), np.broadcast_to([1.0, -4.9], (3, 2)), rtol=1e-6)


def test_vector_field_gradients():
    x = gr.Vector.field(3, gr.f32, shape=4, needs_grad=True)
    loss = gr.field(gr.f32, shape=(), needs_grad=True)

    @gr.kernel
    def compute(w: vec3):
        for i in x:
            loss[None] += (x[i] * w).sum() ** 2

    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    x.from_numpy(xs)
    w = np.array([1.0, 2.0, 3.0])
    with gr.Tape(loss):
        compute(gr.Vector(w))
    s = xs @ w
    assert loss[None] == pytest.approx((s ** 2).sum())
    assert x.grad.to_numpy().shape == (4, 3)
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * s[:, None] * w, rtol=1e-6)
    np.testing.assert_allclose(x.grad[1], 2 * s[1] * w, rtol=1e-6)


def test_vector_arguments_in_a_graph_and_deepcopy():
    y = gr.Vector.ndarray(3, gr.f32, 4)

    @gr.kernel
    def add(a: vec3, y: gr.types.ndarray(dtype=vec3, ndim=1)):
        for i in y:
            y[i] += a

    with gr.graph() as g:
        add((1, 2, 3), y)
    g.replay()
    g.replay()
    np.testing.assert_array_equal(y.to_numpy(), np.broadcast_to([2, 4, 6], (4, 3)))
    z = copy.deepcopy(y)   # Taichi's test_ndarray_deepcopy
    y[0][0] = 100.0
    assert z[0][0] == 2.0 and z.n == 3 and z.dtype == gr.f32


def test_vector_argument_ir_round_trip_and_interpreter():  # no device: the compiler's view
    from gfxrt.compiler import ArgSpec, lower
    from gfxrt.compiler.interp import execute
    from gfxrt.compiler.irparse import parse_ir
    from gfxrt.compiler.printer import print_ir

    def k(a: vec3, y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(y.shape[0]):
            y[i] = a.x + a.z * i

    ir = lower(k, [ArgSpec("a", "vector", elem=vec3), ArgSpec("y", "ndarray", elem=gr.f32, ndim=1)])
    text = print_ir(ir)
    assert 'param "a.2" f32 ["elem" 0 2 3]' in text and print_ir(parse_ir(text)) == text
    y = np.zeros(4, np.float32)
    execute(ir, [[1.0, 2.0, 3.0], y])
    np.testing.assert_array_equal(y, 1.0 + 3.0 * np.arange(4))


_gx = _gl = None


def _sum_sq():
    for i in _gx:
        _gl[None] += (_gx[i] ** 2).sum()


def test_tape_on_fields_from_the_offline_cache():
    global _gx, _gl
    for rep in range(2):  # the second kernel object loads the first one's entry, with new fields
        _gx = gr.Vector.field(2, gr.f32, shape=3, needs_grad=True)
        _gl = gr.field(gr.f32, shape=(), needs_grad=True)
        _gx.fill(float(rep + 1))
        k = gr.kernel(_sum_sq)
        with gr.Tape(_gl):
            k()
        assert _gl[None] == 6.0 * (rep + 1) ** 2
        np.testing.assert_array_equal(_gx.grad.to_numpy(), np.full((3, 2), 2.0 * (rep + 1)))


def test_container_sizes_inside_kernels():
    f = gr.Vector.field(3, gr.f32, shape=4)

    @gr.kernel
    def k(a: gr.types.ndarray(dtype=gr.types.matrix(2, 3, gr.f32), ndim=1)):
        for i in f:
            for j in gr.static(range(f.n)):
                f[i][j] = j + a.n * 10 + a.m * 100 + len(a.element_shape) * 1000

    k(np.zeros((2, 2, 3), np.float32))
    np.testing.assert_array_equal(f.to_numpy(), np.broadcast_to([2320, 2321, 2322], (4, 3)))


def test_run_time_component_index_into_arrays():
    v10 = gr.types.vector(10, gr.f32)

    def k(x: gr.types.ndarray(dtype=v10, ndim=1), m: gr.types.ndarray(dtype=mat2, ndim=1),
          y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(x.shape[0]):
            j = (i * 3) % 10
            y[i] = x[i][j] + m[i][i % 2, 1 - i % 2]
            x[i][j] = -1.0
            m[i][i % 2, i % 2] += 10.0

    from gfxrt.compiler import ArgSpec, lower
    from gfxrt.compiler.ir import Op, walk_task
    ir = lower(k, [ArgSpec("x", "ndarray", elem=v10, ndim=1), ArgSpec("m", "ndarray", elem=mat2, ndim=1),
                   ArgSpec("y", "ndarray", elem=gr.f32, ndim=1)])
    ops = [n.op for t in ir.tasks for n in walk_task(t)]
    assert ops.count(Op.LOAD) == 2 and Op.SELECT not in ops  # one load per component read, no select chain
    kernel = gr.kernel(k)
    xs = np.arange(50, dtype=np.float32).reshape(5, 10)
    ms = np.arange(20, dtype=np.float32).reshape(5, 2, 2)
    x, m, y = xs.copy(), ms.copy(), np.zeros(5, np.float32)
    kernel(x, m, y)
    i = np.arange(5)
    j = (i * 3) % 10
    np.testing.assert_array_equal(y, xs[i, j] + ms[i, i % 2, 1 - i % 2])
    want_x, want_m = xs.copy(), ms.copy()
    want_x[i, j] = -1.0
    want_m[i, i % 2, i % 2] += 10.0
    np.testing.assert_array_equal(x, want_x)
    np.testing.assert_array_equal(m, want_m)


def test_run_time_component_index_checked_in_debug_mode():
    @gr.kernel
    def pick(x: gr.types.ndarray(dtype=vec3, ndim=1), j: gr.i32, y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in x:
            y[i] = x[i][j]

    gr.init(debug=True)
    try:
        x, y = gr.Vector.ndarray(3, gr.f32, 4), gr.ndarray(gr.f32, 4)
        pick(x, 2, y)
        gr.sync()
        pick(x, 3, y)
        with pytest.raises(gr.OutOfBoundsError,
                           match=r"components of x\[\.\.\.\]: index 3 is out of bounds for axis 0 with size 3"):
            gr.sync()
    finally:
        gr.init()


def test_type_field_and_ndarray_constructors():  # Taichi's vec3.field(shape=n), as in its docs' examples
    pos = vec3.field(shape=(4,), needs_grad=True)
    assert pos.shape == (4,) and pos.n == 3 and pos.grad is not None
    m = mat2.ndarray(shape=(2, 3))
    assert m.shape == (2, 3) and m.to_numpy().shape == (2, 3, 2, 2)


def test_too_long_vector_argument_names_the_limit_and_the_workaround():
    v200 = gr.types.vector(200, gr.f32)

    @gr.kernel
    def total(a: v200) -> gr.f32:
        return a.sum()

    with pytest.raises(gr.CompileError, match="one slot per component"):
        total(np.ones(200))
