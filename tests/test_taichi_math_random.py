"""`gr.math` (Taichi's ti.math) and `gr.random` (ti.random) against numpy, on the device."""
import numpy as np
import pytest

import gfxrt as gr

tm = gr.math
F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
F2 = gr.types.ndarray(dtype=gr.f32, ndim=2)


@gr.kernel
def math_kernel(x: F1, out: F2):
    for i in range(x.shape[0]):
        v = tm.vec3(x[i], 2.0 * x[i], -x[i])
        n = tm.normalize(tm.vec3(0.0, 1.0, 1.0))
        out[i, 0] = tm.fract(x[i])
        out[i, 1] = tm.smoothstep(-0.5, 1.0, x[i])
        out[i, 2] = tm.sign(x[i]) + 10 * tm.sign(0.0)
        s = tm.step(0.5, v)  # componentwise on a vector
        out[i, 3] = s[0] + 2 * s[1] + 4 * s[2]
        out[i, 4] = tm.length(v) + tm.distance(v, n) + tm.dot(v, n)
        out[i, 5] = tm.reflect(v, n)[1]
        out[i, 6] = tm.refract(tm.vec3(0.6, -0.8, 0.0), tm.vec3(0.0, 1.0, 0.0), x[i])[0]
        out[i, 7] = (tm.rotation2d(x[i]) @ tm.vec2(1.0, 0.0))[1]
        out[i, 8] = tm.mod(x[i], 0.5)
        out[i, 9] = tm.log2(x[i] * x[i] + 1.0) + tm.exp2(x[i])
        out[i, 10] = tm.determinant(tm.mat2([[x[i], 1.0], [2.0, 3.0]])) + tm.eye(3)[1, 1] + tm.pi
        out[i, 11] = tm.cmul(tm.vec2(1.0, x[i]), tm.vec2(x[i], 2.0))[1]
        out[i, 12] = tm.mix(1.0, 3.0, x[i]) + tm.clamp(x[i], 0.0, 0.5) + tm.round(x[i])
        out[i, 13] = tm.degrees(x[i]) + tm.radians(90.0) + tm.cross(v, n)[0] \
            + tm.inverse(tm.mat2(2.0, 0.0, 0.0, 4.0))[1, 1]
        out[i, 14] = tm.sin(x[i]) + tm.atan2(x[i], 1.0) + tm.e


def _expected(x):
    v = np.stack([x, 2 * x, -x], 1)
    n = np.array([0, 1, 1]) / np.sqrt(2)
    dot = v @ n
    k = 1 - x * x * (1 - 0.64)
    t = np.clip((x + 0.5) / 1.5, 0, 1)
    cols = [
        x - np.floor(x), t * t * (3 - 2 * t), np.sign(x), (v >= 0.5) @ np.array([1, 2, 4]),
        np.linalg.norm(v, axis=1) + np.linalg.norm(v - n, axis=1) + dot, v[:, 1] - 2 * dot * n[1],
        np.where(k < 0, 0, x * 0.6), np.sin(x), x - 0.5 * np.floor(x / 0.5), np.log2(x * x + 1) + np.exp2(x),
        3 * x - 2 + 1 + np.pi, 2 + x * x, 1 + 2 * x + np.clip(x, 0, 0.5) + np.sign(x) * np.floor(np.abs(x) + 0.5),
        np.degrees(x) + np.pi / 2 + np.cross(v, n)[:, 0] + 0.25, np.sin(x) + np.arctan2(x, 1) + np.e,
    ]
    return np.stack(cols, 1)


def test_math_functions_match_numpy():
    x = np.linspace(-1.3, 1.7, 64).astype(np.float32)
    out = np.zeros((64, 15), np.float32)
    math_kernel(x, out)
    np.testing.assert_allclose(out, _expected(x.astype(np.float64)), rtol=2e-5, atol=2e-5)


def test_math_types_and_host_use():
    assert tm.vec3 == gr.types.vector(3, gr.f32) and tm.ivec2 == gr.types.vector(2, gr.i32)
    assert tm.uvec4 == gr.types.vector(4, gr.u32) and tm.mat3 == gr.types.matrix(3, 3, gr.f32)
    assert tm.inf == float("inf") and np.isnan(tm.nan)
    assert tm.fract(2.25) == 0.25 and tm.sign(-3.0) == -1.0 and tm.smoothstep(0.0, 1.0, 0.5) == 0.5
    np.testing.assert_array_equal(tm.eye(2), np.eye(2))

    @gr.kernel
    def ints() -> tm.ivec3:
        return tm.ivec3(tm.sign(-4), tm.sign(0), tm.sign(7))

    np.testing.assert_array_equal(ints(), [-1, 0, 1])


@gr.kernel
def rand_kernel(x: F1, y: F1, z: gr.types.ndarray(dtype=gr.i32, ndim=1), u: gr.types.ndarray(dtype=gr.u32, ndim=1)):
    for i in range(x.shape[0]):
        x[i] = gr.random()
        y[i] = gr.random(float)
        z[i] = gr.random(gr.i32)
        u[i] = gr.random(dtype=gr.u32)


def test_random_uniform_independent_and_fresh_per_launch():
    n = 1 << 16
    x, y = np.zeros(n, np.float32), np.zeros(n, np.float32)
    z, u = np.zeros(n, np.int32), np.zeros(n, np.uint32)
    rand_kernel(x, y, z, u)
    assert 0.0 <= x.min() and x.max() < 1.0
    assert abs(x.mean() - 0.5) < 0.01 and abs(x.var() - 1 / 12) < 0.005
    assert abs(np.corrcoef(x, y)[0, 1]) < 0.02  # two calls in one thread
    assert abs(np.corrcoef(x[:-1], x[1:])[0, 1]) < 0.02  # neighbouring threads
    assert np.histogram(x, 16, (0, 1))[0].min() > n / 16 * 0.9
    assert z.min() < -2**30 and z.max() > 2**30 and abs(z.mean()) < 2**31 * 0.02
    assert u.max() > 3 * 2**30
    x2 = x.copy()
    rand_kernel(x, y, z, u)
    assert (x == x2).mean() < 0.01  # a new launch draws new numbers


def test_random_seed_reproduces_a_serial_sequence():
    @gr.kernel
    def three() -> (gr.f32, gr.f32, gr.f32):
        return gr.random(), gr.random(), gr.random()

    gr.init(random_seed=7)
    a = three()
    gr.init(random_seed=7)
    b = three()
    gr.init(random_seed=8)
    c = three()
    gr.init()
    assert a == b and a != c and len(set(a)) == 3


def test_random_on_host():
    assert 0.0 <= gr.random() < 1.0
    assert isinstance(gr.random(gr.i32), int)


def test_random_rejects_other_dtypes():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            x[i] = gr.random(gr.u1)

    with pytest.raises(gr.CompileError, match="gr.random"):
        k(np.zeros(4, np.float32))


def test_isnan_isinf_translate_scale():
    @gr.kernel
    def k(x: F1, out: gr.types.ndarray(dtype=gr.i32, ndim=1)) -> tm.vec4:
        for i in range(x.shape[0]):
            out[i] = int(tm.isnan(x[i])) + 2 * int(tm.isinf(x[i]))
        return tm.translate(1.0, 2.0, 3.0) @ (tm.scale(2.0, 2.0, 2.0) @ tm.vec4(1.0, 1.0, 1.0, 1.0))

    x = np.array([0.0, np.nan, np.inf, -np.inf, 1e38], np.float32)
    out = np.zeros(5, np.int32)
    np.testing.assert_allclose(k(x, out), [3.0, 4.0, 5.0, 1.0])
    np.testing.assert_array_equal(out, [0, 1, 2, 2, 0])


def test_random_differs_per_graph_replay_and_works_in_gradient_kernels():
    @gr.kernel
    def r(y: F1):
        for i in range(y.shape[0]):
            y[i] = gr.random()

    y = gr.ndarray(gr.f32, shape=64)
    with gr.graph() as g:
        r(y)
    g.replay()
    a = y.to_numpy().copy()
    g.replay()
    assert (a == y.to_numpy()).mean() < 0.1

    @gr.kernel
    def noisy(x: F1, out: F1, n: gr.i32):
        for i in range(x.shape[0]):
            s = 0.0
            for _ in range(n):  # a run-time loop: the adstack path
                s += x[i] * (1.0 + 0.0 * gr.random())
            out[i] = s

    x = gr.ndarray(gr.f32, shape=8, needs_grad=True)
    out = gr.ndarray(gr.f32, shape=8, needs_grad=True)
    x.from_numpy(np.arange(8, dtype=np.float32))
    noisy(x, out, 5)
    out.grad.fill(1.0)
    noisy.grad(x, out, 5)
    np.testing.assert_allclose(x.grad.to_numpy(), 5.0)


def test_math_vector_functions_on_the_host():
    np.testing.assert_allclose(tm.cross([1.0, 0, 0], [0, 1.0, 0]), [0, 0, 1])
    np.testing.assert_allclose(tm.normalize([3.0, 4.0]), [0.6, 0.8])
    np.testing.assert_allclose(tm.rotation2d(np.pi / 2) @ [1.0, 0.0], [0, 1], atol=1e-12)
    np.testing.assert_allclose(tm.cmul([1.0, 2.0], [3.0, 4.0]), [-5.0, 10.0])
    np.testing.assert_allclose(tm.translate(1, 2, 3) @ [0, 0, 0, 1.0], [1, 2, 3, 1])
    assert tm.length([3.0, 4.0]) == 5.0 and tm.dot([1, 2], [3, 4]) == 11


def test_rotations_match_the_host_versions():
    @gr.kernel
    def k(a: gr.f32) -> tm.mat3:
        axis = tm.normalize(tm.vec3(1.0, 1.0, 1.0))
        r = tm.rot3(axis, a)
        p = tm.rotate3d(tm.vec3(1.0, 0.0, 0.0), axis, a)
        q = tm.rotate2d(tm.vec2(1.0, 0.0), a) + tm.vdir(a)
        return tm.mat3([[r[0, 0], r[0, 1], r[0, 2]], [p[0], p[1], p[2]], [q[0], q[1], tm.round(-2.5)]])

    a = np.radians(30)
    axis = np.ones(3) / np.sqrt(3)
    out = k(a)
    np.testing.assert_allclose(out[0], tm.rot3(axis, a)[0], atol=1e-6)
    np.testing.assert_allclose(out[1], tm.rotate3d([1.0, 0, 0], axis, a), atol=1e-6)
    np.testing.assert_allclose(out[1], [0.910684, 0.333333, -0.244017], atol=1e-5)  # Taichi's docstring
    np.testing.assert_allclose(out[2, :2], 2 * np.array([np.cos(a), np.sin(a)]), atol=1e-6)
    assert out[2, 2] == -3.0 and tm.round(2.5) == 3.0 and tm.sign(0) == 0.0


# Taichi's tests/python/test_random.py, ti -> gr (n reduced for lavapipe)
def _moments_ok(X):
    for i in range(4):
        assert (X ** i).mean() == pytest.approx(1 / (i + 1), rel=1e-2)


def test_taichi_random_float_and_int_moments():
    n = 256
    x = gr.field(gr.f32, shape=(n, n))
    y = gr.field(gr.f32, shape=(n, n))

    @gr.kernel
    def fill():
        for i in range(n):
            for j in range(n):
                x[i, j] = gr.random(gr.f32)
                v = gr.random(gr.i32)
                y[i, j] = (float(v) + float(2**31)) / float(2**32)

    fill()
    _moments_ok(x.to_numpy().astype(np.float64))
    _moments_ok(y.to_numpy().astype(np.float64))


def test_taichi_random_independent_product_and_2d_dist():
    n = 256
    x = gr.field(gr.f32, shape=n * n)
    v = gr.field(gr.types.vector(2, gr.f32), shape=8192)

    @gr.kernel
    def fill():
        for i in range(n * n):
            a = gr.random()
            b = gr.random()
            x[i] = a * b
        for i in range(8192):
            v[i] = gr.Vector([gr.random(), gr.random()])

    fill()
    assert x.to_numpy().mean() == pytest.approx(1 / 4, rel=1e-2)
    X = v.to_numpy()
    counts = np.bincount((X[:, 0] < 0.5) * 2 + (X[:, 1] < 0.5), minlength=4)
    np.testing.assert_allclose(counts / 8192, 0.25, rtol=0.2)


def test_taichi_random_seed_per_launch():
    n = 10
    x = gr.field(gr.f32, shape=n)

    @gr.kernel
    def gen(i: gr.i32):
        x[i] = gr.random()

    count = 0
    gen(0)
    for i in range(1, n):
        gen(i)
        count += 1 if x[i] == x[i - 1] else 0
    assert count <= n * 0.15


def test_rotation3d_matches_taichi_docstring():
    want = [[0.05048351, -0.61339645, -0.78816002, 0.0], [0.65833154, 0.61388511, -0.4355969, 0.0],
            [0.75103329, -0.49688014, 0.4348093, 0.0], [0.0, 0.0, 0.0, 1.0]]

    @gr.kernel
    def k() -> tm.mat4:
        return tm.rotation3d(0.52, -0.785, 1.046) @ tm.rot_by_axis(tm.vec3(0.0, 0.0, 2.0), 0.0)

    np.testing.assert_allclose(k(), want, atol=1e-6)
    np.testing.assert_allclose(tm.rotation3d(0.52, -0.785, 1.046), want, atol=1e-7)
    np.testing.assert_allclose(tm.rot_by_axis([0, 0, 1.0], 0.3)[:2, :2], [[np.cos(0.3), np.sin(0.3)],
                                                                          [-np.sin(0.3), np.cos(0.3)]])
