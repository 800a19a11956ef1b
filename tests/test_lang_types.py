"""Types and arithmetic against numpy: i32/u32/f32/f16/bool, Python-style promotion, gr.cast,
floor division and modulo, powers, the math builtins, vectors and matrices."""
import numpy as np
import pytest

import gfxrt as gr

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)
U1 = gr.types.ndarray(dtype=gr.u32, ndim=1)
vec3 = gr.types.vector(3, gr.f32)
mat3 = gr.types.matrix(3, 3, gr.f32)
mat23 = gr.types.matrix(2, 3, gr.f32)


@gr.kernel
def int_ops(a: I1, b: I1, fd: I1, md: I1, pw: I1, bits: I1):
    for i in range(a.shape[0]):
        fd[i] = a[i] // b[i]
        md[i] = a[i] % b[i]
        pw[i] = a[i] ** (b[i] % 4)
        bits[i] = ((a[i] << 3) ^ (a[i] >> 1)) | (~b[i] & 12)


def test_integer_floor_division_modulo_power_bits(rng):
    a = rng.integers(-100, 100, 400).astype(np.int32)
    b = rng.integers(-9, 9, 400).astype(np.int32)
    b[b == 0] = 7
    outs = [np.zeros_like(a) for _ in range(4)]
    int_ops(a, b, *outs)
    np.testing.assert_array_equal(outs[0], a // b)
    np.testing.assert_array_equal(outs[1], a % b)
    np.testing.assert_array_equal(outs[2], a ** (b % 4))
    np.testing.assert_array_equal(outs[3], ((a << 3) ^ (a >> 1)) | (~b & 12))


@gr.kernel
def float_ops(a: F1, b: F1, fd: F1, md: F1, pw: F1, small: F1):
    for i in range(a.shape[0]):
        fd[i] = a[i] // b[i]
        md[i] = a[i] % b[i]
        pw[i] = a[i] ** b[i]
        small[i] = a[i] ** 2 + a[i] ** 3 + a[i] ** -1 + abs(a[i]) ** 0.5 + a[i] ** 0


def test_float_floor_division_modulo_powers(rng):
    a = (rng.standard_normal(400) * 5).astype(np.float32)
    b = (rng.standard_normal(400) * 3).astype(np.float32)
    b[::2] = np.round(b[::2])  # integer exponents of negative bases are defined
    b[b == 0] = 1.5
    a[a == 0] = 0.25
    outs = [np.zeros_like(a) for _ in range(4)]
    float_ops(a, b, *outs)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(outs[0], a // b)
        np.testing.assert_allclose(outs[1], np.mod(a, b), atol=2e-5 * np.abs(b).max())
        np.testing.assert_allclose(outs[2], np.power(a, b), rtol=2e-5, equal_nan=True)
        np.testing.assert_allclose(outs[3], a**2 + a**3 + 1 / a + np.sqrt(np.abs(a)) + 1, rtol=2e-5)


@gr.kernel
def promote(i: I1, f: F1, u: U1, out: F1, iout: I1, uout: U1, bout: I1):
    for k in range(i.shape[0]):
        out[k] = i[k] + f[k] * 2 + i[k] / 2       # int op float -> float; int / int -> float
        iout[k] = i[k] * 3 + int(f[k]) + gr.cast(f[k] * 10, gr.i32)   # truncation toward zero
        uout[k] = u[k] * 2 + gr.u32(7)
        bout[k] = gr.cast(f[k] > 0.0, gr.i32) + int(i[k] > 0) * 10 + gr.select(u[k] > 5, 100, 0)


def test_python_promotion_and_casts(rng):
    i = rng.integers(-50, 50, 100).astype(np.int32)
    f = rng.standard_normal(100).astype(np.float32)
    u = rng.integers(0, 10, 100).astype(np.uint32)
    out, iout, uout, bout = np.zeros(100, np.float32), np.zeros(100, np.int32), np.zeros(100, np.uint32), \
        np.zeros(100, np.int32)
    promote(i, f, u, out, iout, uout, bout)
    np.testing.assert_allclose(out, i + f * 2 + i / 2, rtol=1e-6)
    np.testing.assert_array_equal(iout, i * 3 + np.trunc(f).astype(np.int32) + np.trunc(f * 10).astype(np.int32))
    np.testing.assert_array_equal(uout, u * 2 + 7)
    np.testing.assert_array_equal(bout, (f > 0) + (i > 0) * 10 + np.where(u > 5, 100, 0))


MATH = [("sin", np.sin), ("cos", np.cos), ("tan", np.tan), ("tanh", np.tanh), ("exp", np.exp),
        ("abs", np.abs), ("floor", np.floor), ("ceil", np.ceil)]


@gr.kernel
def math_fns(x: F1, p: F1, out: gr.types.ndarray(dtype=gr.f32, ndim=2)):
    for i in range(x.shape[0]):
        v = x[i]
        out[i, 0] = gr.sin(v) + gr.cos(v) * 2
        out[i, 1] = gr.tan(v * 0.5) + gr.tanh(v)
        out[i, 2] = gr.asin(v * 0.3) + gr.acos(v * 0.3) * 3
        out[i, 3] = gr.atan2(v, p[i]) + gr.exp(v)
        out[i, 4] = gr.log(p[i]) + gr.sqrt(p[i]) + gr.rsqrt(p[i])
        out[i, 5] = gr.abs(v) + gr.floor(v * 3) + gr.ceil(v * 3)
        out[i, 6] = gr.min(v, p[i]) + gr.max(v, 0.5) + min(v, 1, p[i]) + max(-v, v)
        out[i, 7] = gr.pow(p[i], v) + gr.clamp(v * 4, -1.0, 1.0)


def test_math_builtins_match_numpy(rng):
    x = rng.uniform(-2, 2, 200).astype(np.float32)
    p = rng.uniform(0.1, 3, 200).astype(np.float32)
    out = np.zeros((200, 8), np.float32)
    math_fns(x, p, out)
    want = np.stack([np.sin(x) + np.cos(x) * 2, np.tan(x * 0.5) + np.tanh(x),
                     np.arcsin(x * 0.3) + np.arccos(x * 0.3) * 3, np.arctan2(x, p) + np.exp(x),
                     np.log(p) + np.sqrt(p) + 1 / np.sqrt(p), np.abs(x) + np.floor(x * 3) + np.ceil(x * 3),
                     np.minimum(x, p) + np.maximum(x, 0.5) + np.minimum(np.minimum(x, 1), p) + np.abs(x),
                     p ** x + np.clip(x * 4, -1, 1)], axis=1)
    rtol = np.full(8, 2e-5)
    rtol[2] = 5e-4  # WGSL allows asin/acos the error of atan2(x, sqrt(1 - x * x)); lavapipe is near that
    for c in range(8):
        np.testing.assert_allclose(out[:, c], want[:, c], rtol=rtol[c], atol=2e-5, err_msg=f"column {c}")


def test_builtins_work_on_the_host():
    assert gr.sin(0.5) == pytest.approx(np.sin(0.5))
    assert gr.clamp(5, 0, 3) == 3
    assert gr.cast(2.7, gr.i32) == 2


@gr.kernel
def halves(x: gr.types.ndarray(dtype=gr.f16, ndim=1), y: F1) -> gr.f16:
    for i in range(x.shape[0]):
        v = x[i] * gr.f16(2.0) + 1.0
        x[i] = v
        y[i] = gr.cast(v, gr.f32)
    return x[1]


def test_f16_arrays_and_locals(rng):
    if "shader-f16" not in gr.device().features:
        pytest.skip("adapter has no shader-f16")
    x = rng.random(64).astype(np.float16)
    x0 = x.copy()
    y = np.zeros(64, np.float32)
    r = halves(x, y)
    want = (x0 * np.float16(2) + np.float16(1)).astype(np.float16)
    np.testing.assert_allclose(x, want, rtol=1e-3)
    np.testing.assert_allclose(y, want.astype(np.float32), rtol=1e-3)
    assert r == pytest.approx(float(want[1]), rel=1e-3)


@gr.kernel
def vectors(p: gr.types.ndarray(dtype=vec3, ndim=1), m: gr.types.ndarray(dtype=mat3, ndim=1),
            s: F1, q: gr.types.ndarray(dtype=vec3, ndim=1), r: gr.types.ndarray(dtype=mat3, ndim=1)):
    for i in p:
        v = p[i]
        w = m[i] @ v
        s[i] = w.norm() + v.dot(w) + v.x * 2 - v[2] + w.norm_sqr() + v.sum() + v.max()
        u = v.cross(w) + gr.Vector([1.0, 2.0, 3.0])
        u.y += 10.0
        u[2] = u[2] * 2
        q[i] = u.normalized() * 3 + vec3(1.0) + vec3(0.0, 0.5, v.z).zyx
        r[i] = m[i] @ m[i].transpose() + m[i].determinant() * mat3(1.0) + v.outer_product(w)


def test_vectors_and_matrices(rng):
    p = rng.random((20, 3), dtype=np.float32)
    m = rng.random((20, 3, 3), dtype=np.float32)
    s, q, r = np.zeros(20, np.float32), np.zeros((20, 3), np.float32), np.zeros((20, 3, 3), np.float32)
    vectors(p, m, s, q, r)
    w = np.einsum("nij,nj->ni", m, p)
    np.testing.assert_allclose(s, np.linalg.norm(w, axis=1) + (p * w).sum(1) + p[:, 0] * 2 - p[:, 2]
                               + (w * w).sum(1) + p.sum(1) + p.max(1), rtol=2e-5)
    u = np.cross(p, w) + [1, 2, 3]
    u[:, 1] += 10
    u[:, 2] *= 2
    qw = u / np.linalg.norm(u, axis=1, keepdims=True) * 3 + 1 + np.stack([p[:, 2], np.full(20, 0.5), 0 * p[:, 0]], 1)
    np.testing.assert_allclose(q, qw, rtol=2e-5, atol=1e-6)
    rw = m @ m.transpose(0, 2, 1) + np.linalg.det(m)[:, None, None] * 1.0 + np.einsum("ni,nj->nij", p, w)
    np.testing.assert_allclose(r, rw, rtol=2e-5, atol=1e-5)


@gr.kernel
def mat_misc(m: gr.types.ndarray(dtype=mat3, ndim=1), a: gr.types.ndarray(dtype=mat23, ndim=1),
             inv: gr.types.ndarray(dtype=mat3, ndim=1), prod: gr.types.ndarray(dtype=mat23, ndim=1), tr: F1):
    for i in m:
        inv[i] = m[i].inverse()
        prod[i] = a[i] @ m[i]
        k = i % 3
        tr[i] = m[i].trace() + m[i][k, k] + a[i][1, 2] + m[i][1].sum()


def test_matrix_inverse_products_dynamic_components(rng):
    m = (rng.random((10, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
    a = rng.random((10, 2, 3), dtype=np.float32)
    inv, prod, tr = np.zeros_like(m), np.zeros_like(a), np.zeros(10, np.float32)
    mat_misc(m, a, inv, prod, tr)
    np.testing.assert_allclose(inv, np.linalg.inv(m), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(prod, a @ m, rtol=1e-5)
    k = np.arange(10) % 3
    np.testing.assert_allclose(tr, np.trace(m, axis1=1, axis2=2) + m[np.arange(10), k, k] + a[:, 1, 2]
                               + m[:, 1].sum(1), rtol=1e-5)


def test_vector_arrays_as_device_ndarrays(rng):
    p = gr.ndarray(vec3, shape=(16,))
    p.from_numpy(rng.random((16, 3), dtype=np.float32))
    m = gr.ndarray(mat3, shape=16)
    m.from_numpy(np.tile(np.eye(3, dtype=np.float32), (16, 1, 1)))
    s = np.zeros(16, np.float32)
    q, r = np.zeros((16, 3), np.float32), np.zeros((16, 3, 3), np.float32)
    vectors(p, m, s, q, r)
    pn = p.to_numpy()
    # m = identity, so w = p
    np.testing.assert_allclose(s, np.linalg.norm(pn, axis=1) + 2 * (pn * pn).sum(1) + pn[:, 0] * 2 - pn[:, 2]
                               + pn.sum(1) + pn.max(1), rtol=2e-5)
