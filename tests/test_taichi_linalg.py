"""gr.svd, gr.polar_decompose, gr.sym_eig, gr.eig as in Taichi (tests/python/test_svd.py,
test_polar_decompose.py, test_eig.py with ti renamed to gr), checked against numpy.linalg on
random matrices, degenerate ones included, in f32 and f64."""
import numpy as np
import pytest

import gfxrt as gr

B = 64
DTS = [(gr.f32, np.float32, 2e-5), (gr.f64, np.float64, 1e-12)]


def _batch(n, npdt, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((B, n, n))
    a[0] = 0.0
    a[1] = np.eye(n)
    a[2] = np.outer(rng.standard_normal(n), rng.standard_normal(n))      # rank 1
    a[3] = np.diag([3.0, -2.0, 1e-7][:n])                                # reflection, tiny value
    a[4] = np.diag([2.0, 2.0, 2.0][:n]) @ np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1]])[:n, :n]
    a[5, :, -1] = a[5, :, 0]                                             # rank n-1
    a[6] *= 1e-3
    a[7] *= 1e3
    a[9] = np.diag([2.0, 1.0, 0.5][:n])
    a[9, 0, 1] = 1e-7                                                    # nearly diagonal: f64 keeps it
    a[10] = np.eye(n)                               # mpm3d_ggui's deformation gradient: equal diagonal entries
    a[10, 1, 0], a[10, 1, 1] = 9.7206791e-13, 0.99999917      # and off-diagonal ones whose products are
    a[10, 1, -1] = -1.117587e-12                               # subnormal in f32 (once NaN rotations)
    return a.astype(npdt)


def _t(x):
    return np.swapaxes(x, -1, -2)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("dt,npdt,tol", DTS)
def test_svd(n, dt, npdt, tol):
    A = gr.Matrix.field(n, n, dt, shape=B)
    U, S, V = (gr.Matrix.field(n, n, dt, shape=B) for _ in range(3))

    @gr.kernel
    def run():
        for i in A:
            U[i], S[i], V[i] = gr.svd(A[i], dt)

    a = _batch(n, npdt, n)
    A.from_numpy(a)
    run()
    u, s, v = U.to_numpy(), S.to_numpy(), V.to_numpy()
    scale = np.abs(a).max(axis=(1, 2), keepdims=True) + 1e-30
    assert np.all(np.abs(u @ s @ _t(v) - a) <= 8 * tol * scale)
    eye = np.eye(n)
    assert np.abs(u @ _t(u) - eye).max() < 8 * tol and np.abs(v @ _t(v) - eye).max() < 8 * tol
    assert np.all(np.abs(s - np.eye(n) * s) == 0)                     # diagonal
    sv = np.diagonal(s, axis1=1, axis2=2)
    ref = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    assert np.allclose(np.abs(sv), ref, atol=8 * tol * scale[:, 0])
    if n == 3:  # McAdams / Taichi: rotations, decreasing magnitudes, sign of det(A) on the last
        assert np.allclose(np.linalg.det(v), 1.0, atol=1e-4) and np.allclose(np.linalg.det(u), 1.0, atol=1e-4)
        assert np.all(sv[:, 0] >= sv[:, 1]) and np.all(sv[:, 1] >= np.abs(sv[:, 2]) - 8 * tol * scale[:, 0, 0])
        assert sv[3, 2] < 0


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("dt", [gr.f32, gr.f64])
def test_taichi_svd_program(n, dt):  # Taichi's _test_svd: serial kernel code, UtU, VtV, reconstruction
    A, A_rec, U, UtU, sigma, V, VtV = (gr.Matrix.field(n, n, dt, shape=()) for _ in range(7))

    @gr.kernel
    def run():
        U[None], sigma[None], V[None] = gr.svd(A[None], dt)
        UtU[None] = U[None].transpose() @ U[None]
        VtV[None] = V[None].transpose() @ V[None]
        A_rec[None] = U[None] @ sigma[None] @ V[None].transpose()

    A[None] = [[1, 1, 3], [9, -3, 2], [-3, 4, 2]] if n == 3 else [[1, 1], [2, 3]]
    run()
    tol = 1e-5 if dt == gr.f32 else 1e-12
    assert np.abs(UtU.to_numpy() - np.eye(n)).max() < tol
    assert np.abs(VtV.to_numpy() - np.eye(n)).max() < tol
    assert np.abs(A_rec.to_numpy() - A.to_numpy()).max() < tol * 10
    s = sigma[None]
    assert all(s[i, j] == 0 for i in range(n) for j in range(n) if i != j)


def test_svd2_nearly_diagonal_f32_as_taichi():
    """Taichi's svd2d does not rotate where |S[0, 1]| < 1e-5 (f32): an MPM deformation gradient
    near the identity keeps V = I and the singular values S's diagonal exactly. A 45-degree
    rotation of the nearly degenerate S moved them by an ulp each step (mpm99 / mpm128 drifted:
    grid velocities 1e-3 off, C 60-190x Taichi's)."""
    a = np.array([[[1.0, 0.0], [8.41915565e-11, 1.0]], [[1.0, -2.8684738e-10], [4.0605666e-10, 1.0]],
                  [[1.0, 3e-6], [0.0, 1.0]], [[2.0, 0.0], [4e-6, 0.5]], [[1.0, 2e-5], [0.0, 1.0]]], np.float32)
    A, U, S, V = (gr.Matrix.field(2, 2, gr.f32, shape=len(a)) for _ in range(4))

    @gr.kernel
    def run():
        for i in A:
            U[i], S[i], V[i] = gr.svd(A[i])

    A.from_numpy(a)
    run()
    u, s, v = U.to_numpy(), S.to_numpy(), V.to_numpy()
    for k in range(4):  # below the cut-off: V = I, U = the polar rotation (nearly I), S = diag(A^T A-ish) exact
        assert np.array_equal(v[k], np.eye(2, dtype=np.float32)), (k, v[k])
        assert np.abs(u[k] - np.eye(2)).max() < 1e-5 and s[k, 0, 1] == 0 and s[k, 1, 0] == 0
    assert np.array_equal(s[0], np.eye(2)) and np.array_equal(s[1], np.eye(2))
    assert not np.array_equal(v[4], np.eye(2))  # above it: rotated, as Taichi
    assert np.abs(u @ s @ _t(v) - a).max() < 1e-5


def test_svd3_nearly_identity_f32_as_taichi():
    """Taichi's 3x3 svd (McAdams) skips a Jacobi rotation where (S[p, q] / 2)^2 < 1e-20: for
    A = I + 1e-11 noise it returns V = I and singular values 1 exactly; rotating every nonzero
    off-diagonal gave a random V and singular values 2.5 ulp below 1."""
    rng = np.random.default_rng(1)
    a = (np.eye(3) + 1e-11 * rng.standard_normal((16, 3, 3))).astype(np.float32)
    A, U, S, V = (gr.Matrix.field(3, 3, gr.f32, shape=len(a)) for _ in range(4))

    @gr.kernel
    def run():
        for i in A:
            U[i], S[i], V[i] = gr.svd(A[i])

    A.from_numpy(a)
    run()
    eye = np.broadcast_to(np.eye(3, dtype=np.float32), a.shape)
    np.testing.assert_array_equal(V.to_numpy(), eye)
    np.testing.assert_array_equal(S.to_numpy(), eye)
    assert np.abs(U.to_numpy() - eye).max() < 1e-9


def test_svd_of_a_near_identity_matrix_is_finite():
    """implicit_fem's deformation gradients: off-diagonals near 1e-9 made the Jacobi rotation's
    d^2 + h^2 underflow to 0 where subnormals flush (lavapipe, GPUs), and the svd NaN."""
    bits = np.array([[1065353216, 811229798, 813069986], [0, 1065353218, 0], [0, 0, 1065353216]], np.uint32)
    a = bits.view(np.float32)
    out = gr.Matrix.field(3, 3, gr.f32, shape=3)

    @gr.kernel
    def k(m: gr.types.matrix(3, 3, gr.f32)):
        U, S, V = gr.svd(m)
        out[0], out[1], out[2] = U, S, V

    k(gr.Matrix(a.tolist()))
    U, S, V = out.to_numpy()
    assert np.isfinite(out.to_numpy()).all()
    np.testing.assert_allclose(U @ S @ V.T, a, atol=1e-6)
    np.testing.assert_allclose(np.diag(S), [1, 1, 1], atol=1e-6)


def test_transpose_no_loop():  # Taichi's: a zero matrix, default dt, no loop
    A, U, sigma, V = (gr.Matrix.field(3, 3, gr.f32, shape=()) for _ in range(4))

    @gr.kernel
    def run():
        U[None], sigma[None], V[None] = gr.svd(A[None])

    run()
    assert np.allclose(U.to_numpy(), np.eye(3)) and np.all(sigma.to_numpy() == 0)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("dt,npdt,tol", DTS)
def test_polar_decompose(n, dt, npdt, tol):
    A = gr.Matrix.field(n, n, dt, shape=B)
    R, S = (gr.Matrix.field(n, n, dt, shape=B) for _ in range(2))

    @gr.kernel
    def run():
        for i in A:
            r, s = gr.polar_decompose(A[i], dt)
            R[i] = r
            S[i] = s

    a = _batch(n, npdt, 10 + n)
    A.from_numpy(a)
    run()
    r, s = R.to_numpy(), S.to_numpy()
    scale = np.abs(a).max(axis=(1, 2), keepdims=True) + 1e-30
    assert np.all(np.abs(r @ s - a) <= 16 * tol * scale)
    assert np.abs(r @ _t(r) - np.eye(n)).max() < 16 * tol
    assert np.all(np.abs(s - _t(s)) <= 16 * tol * scale)
    pos = np.linalg.det(a.astype(np.float64)) > 1e-6 * scale[:, 0, 0] ** n
    assert np.allclose(np.linalg.det(r[pos].astype(np.float64)), 1.0, atol=1e-4)


def _eigvec_equal(v1, v2, tol):
    v1 = v1 / np.linalg.norm(v1)
    v2 = v2 / np.linalg.norm(v2)
    assert any(np.allclose(v1, k * v2, atol=tol, rtol=tol) for k in (1, -1, 1j, -1j))


@pytest.mark.parametrize("dt,npdt,tol", [(gr.f32, np.float32, 1e-5), (gr.f64, np.float64, 1e-12)])
def test_sym_eig_taichi_cases(dt, npdt, tol):  # Taichi's test_sym_eig2x2 / test_sym_eig3x3 (a00 in 0..9)
    A2 = gr.Matrix.field(2, 2, dt, shape=())
    v2 = gr.Vector.field(2, dt, shape=())
    w2 = gr.Matrix.field(2, 2, dt, shape=())
    A3 = gr.Matrix.field(3, 3, dt, shape=10)
    v3 = gr.Vector.field(3, dt, shape=10)
    w3 = gr.Matrix.field(3, 3, dt, shape=10)

    @gr.kernel
    def solve():
        v2[None], w2[None] = gr.sym_eig(A2[None], dt)   # serial code: the Jacobi loop runs on one thread
        for i in A3:
            v3[i], w3[i] = gr.sym_eig(A3[i], dt)

    A2[None] = [[5, 3], [3, 2]]
    a3 = np.array([[[a00, 1.0, 1.0], [1.0, 2.0, 2.0], [1.0, 2.0, 2.0]] for a00 in range(10)], npdt)
    A3.from_numpy(a3)
    solve()
    for a, v, w in [(A2.to_numpy(), v2.to_numpy(), w2.to_numpy())] + \
            [(a3[k], v3.to_numpy()[k], w3.to_numpy()[k]) for k in range(10)]:
        v_np, w_np = np.linalg.eig(a.astype(npdt))
        i_np, i_gr = np.argsort(v_np), np.argsort(v)
        np.testing.assert_allclose(v[i_gr], v_np[i_np], atol=tol, rtol=tol)
        for j in range(len(v)):
            _eigvec_equal(w[:, i_gr[j]], w_np[:, i_np[j]], tol * 10)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("dt,npdt,tol", DTS)
def test_sym_eig_random(n, dt, npdt, tol):
    A = gr.Matrix.field(n, n, dt, shape=B)
    W = gr.Vector.field(n, dt, shape=B)
    Q = gr.Matrix.field(n, n, dt, shape=B)

    @gr.kernel
    def run():
        for i in A:
            W[i], Q[i] = gr.sym_eig(A[i], dt)

    a = _batch(n, npdt, 20 + n)
    a = (a + _t(a)) / 2
    a[8] = np.diag([1.0, 1.0, 2.0][:n])          # repeated eigenvalue
    A.from_numpy(a)
    run()
    w, q = W.to_numpy(), Q.to_numpy()
    scale = np.abs(a).max(axis=(1, 2), keepdims=True) + 1e-30
    assert np.all(np.abs(a @ q - q * w[:, None, :]) <= 16 * tol * scale)
    assert np.abs(_t(q) @ q - np.eye(n)).max() < 16 * tol
    ref = np.linalg.eigvalsh(a.astype(np.float64))[:, ::-1]
    assert np.allclose(w, ref, atol=16 * tol * scale[:, :, 0])  # decreasing, as Taichi's


@pytest.mark.parametrize("dt,npdt,tol", [(gr.f32, np.float32, 1e-5), (gr.f64, np.float64, 1e-12)])
@pytest.mark.parametrize("a", [[[1, 1], [2, 3]], [[1, -1], [1, 1]], [[2, 0], [0, 5]], [[0, 1], [-2, 0]]])
def test_eig2x2(dt, npdt, tol, a):  # Taichi's _test_eig2x2_real / _complex
    A = gr.Matrix.field(2, 2, dt, shape=())
    v = gr.Matrix.field(2, 2, dt, shape=())
    w = gr.Matrix.field(4, 2, dt, shape=())

    @gr.kernel
    def solve():
        v[None], w[None] = gr.eig(A[None], dt)

    A[None] = a
    solve()
    v_np, w_np = np.linalg.eig(np.array(a, npdt))
    vg = v.to_numpy()
    vc = vg[:, 0] + 1j * vg[:, 1]
    wg = w.to_numpy()
    wc = wg[0::2] + 1j * wg[1::2]
    i_np, i_gr = np.argsort(v_np), np.argsort(vc)
    np.testing.assert_allclose(vc[i_gr], v_np[i_np], atol=tol, rtol=tol)
    for j in range(2):
        _eigvec_equal(wc[:, i_gr[j]], w_np[:, i_np[j]], tol * 10)


def test_default_dtype_and_host_versions():
    A = gr.Matrix.field(3, 3, gr.f32, shape=())
    U = gr.Matrix.field(3, 3, gr.f32, shape=())

    @gr.kernel
    def run():
        u, s, v = gr.svd(A[None])       # dt: the default float type
        U[None] = u @ s @ v.transpose()

    m = np.array([[1, 2, 0], [0, 1, 3], [4, 0, 1]], np.float32)
    A[None] = m
    run()
    assert np.allclose(U[None], m, atol=1e-5)
    u, s, v = gr.svd(m)
    assert np.allclose(u @ s @ v.T, m, atol=1e-5) and np.linalg.det(u) > 0 and np.linalg.det(v) > 0
    r, p = gr.polar_decompose(m)
    assert np.allclose(r @ p, m, atol=1e-5)
    w, q = gr.sym_eig(m + m.T)
    assert np.allclose((m + m.T) @ q, q * w, atol=1e-4)


def test_errors():
    A4 = gr.Matrix.field(4, 4, gr.f32, shape=())

    @gr.kernel
    def bad():
        u, s, v = gr.svd(A4[None])

    with pytest.raises(gr.CompileError, match="2x2 and 3x3"):
        bad()

    @gr.kernel
    def bad_dt():
        u, s, v = gr.svd(gr.Matrix([[1.0, 0.0], [0.0, 1.0]]), gr.i32)

    with pytest.raises(gr.CompileError, match="float dtype"):
        bad_dt()


@pytest.mark.parametrize("n", [2, 3])
def test_gradients_through_decompositions(n):  # diffmpm differentiates through polar_decompose
    F = gr.Matrix.field(n, n, gr.f32, shape=4, needs_grad=True)
    loss = gr.field(gr.f32, shape=(), needs_grad=True)

    @gr.kernel
    def run():
        for i in F:
            r, s = gr.polar_decompose(F[i])
            loss[None] += (((F[i] - r) @ F[i].transpose()) ** 2).sum() + gr.svd(F[i])[1][0, 0]

    rng = np.random.default_rng(1)
    a = (np.eye(n) + 0.3 * rng.standard_normal((4, n, n))).astype(np.float32)
    F.from_numpy(a)
    with gr.Tape(loss):
        run()

    def L(m):
        u, s, vt = np.linalg.svd(m)
        r = u @ vt
        return np.sum(((m - r) @ m.T) ** 2) + s[0]

    num = np.zeros(a.shape)
    eps = 1e-4
    for idx in np.ndindex(a.shape):
        ap, am = a.astype(np.float64), a.astype(np.float64)
        ap[idx] += eps
        am[idx] -= eps
        num[idx] = (L(ap[idx[0]]) - L(am[idx[0]])) / (2 * eps)
    assert np.allclose(F.grad.to_numpy(), num, atol=1e-4)


def test_matrix_diag_rows_cols():  # Taichi's ti.Matrix.diag / rows / cols, as mpm codes use them
    out = gr.Matrix.field(2, 2, gr.f32, shape=3)
    out3 = gr.Matrix.field(3, 2, gr.f32, shape=())

    @gr.kernel
    def run(x: gr.f32):
        out[0] = gr.Matrix.diag(dim=2, val=1) + x * gr.Matrix.diag(2, x)
        a = gr.Vector([1.0, 2.0])
        b = gr.Vector([x, 4.0])
        out[1] = gr.Matrix.rows([a, b])
        out[2] = gr.Matrix.cols([a, [x, 4.0]])
        out3[None] = gr.Matrix.cols([gr.Vector([1.0, 2.0, 3.0]), gr.Vector([4.0, 5.0, 6.0])])

    run(3.0)
    o = out.to_numpy()
    assert np.array_equal(o[0], [[10, 0], [0, 10]])
    assert np.array_equal(o[1], [[1, 2], [3, 4]]) and np.array_equal(o[2], [[1, 3], [2, 4]])
    assert np.array_equal(out3[None], [[1, 4], [2, 5], [3, 6]])
    assert np.array_equal(gr.Matrix.diag(2, 1.5), [[1.5, 0], [0, 1.5]])
    assert np.array_equal(gr.Matrix.rows([[1, 2], [3, 4]]), [[1, 2], [3, 4]])
    assert np.array_equal(gr.Matrix.cols([[1, 2], [3, 4]]), [[1, 3], [2, 4]])


@pytest.mark.parametrize("n", [2, 3])
def test_host_and_kernel_conventions_agree(n):
    A = gr.Matrix.field(n, n, gr.f64, shape=2)
    S = gr.Matrix.field(n, n, gr.f64, shape=2)

    @gr.kernel
    def run():
        for i in A:
            u, s, v = gr.svd(A[i], gr.f64)
            S[i] = s

    a = np.array([np.diag([3.0, -2.0, 1.0][:n]), np.eye(n) * 2.0])
    A.from_numpy(a)
    run()
    for k in range(2):
        assert np.allclose(S.to_numpy()[k], np.asarray(gr.svd(a[k])[1]), atol=1e-12)
