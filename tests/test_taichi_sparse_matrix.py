"""gr.linalg's sparse matrices and solvers (Taichi's ti.linalg): a builder filled by kernels on the
device, SparseMatrix arithmetic, SparseSolver (scipy), SparseCG and the matrix-free solvers on the
device. Expected numbers come from Taichi 1.7.4 (CPU backend) where stated, else from numpy/scipy."""
import numpy as np
import pytest

import gfxrt as gr

pytest.importorskip("scipy")
N = 4


@gr.kernel
def laplace(A: gr.types.sparse_matrix_builder(), s: gr.f32):
    for i in range(N):
        A[i, i] += 2.0 * s
        if i > 0:
            A[i, i - 1] -= 1.0
            A[i - 1, i] += -1.0 + 0.5 * i  # not symmetric: the solvers' triangle conventions show


@gr.kernel
def from_triplets(A: gr.types.sparse_matrix_builder(), t: gr.types.ndarray(dtype=gr.f32, ndim=2)):
    for k in range(t.shape[0]):
        A[int(t[k, 0]), int(t[k, 1])] += t[k, 2]


def dense4(s=1.0):
    a = np.diag([2.0 * s] * N)
    for i in range(1, N):
        a[i, i - 1] = -1.0
        a[i - 1, i] = -1.0 + 0.5 * i
    return a


def built(s=1.0, dtype=gr.f32):
    b = gr.linalg.SparseMatrixBuilder(N, N, max_num_triplets=64, dtype=dtype)
    laplace(b, s)
    return b.build()


def spd(n=64, seed=1):
    """A symmetric positive definite n x n matrix as triplets (duplicates included)."""
    rng = np.random.default_rng(seed)
    trip = []
    for i in range(n):
        trip += [(i, i, 2.0 + rng.random()), (i, i, 2.0)]
        j = (i * 7 + 3) % n
        if j != i:
            v = -rng.random()
            trip += [(i, j, v), (j, i, v)]
    return np.array(trip, np.float32)


def test_builder_fills_on_the_device_sums_duplicates_and_empties_on_build():
    b = gr.linalg.SparseMatrixBuilder(N, N, max_num_triplets=64)
    laplace(b, 1.0)
    laplace(b, 1.0)  # every triplet twice: they add up
    A = b.build()
    assert A.shape == (N, N) and A.dtype == gr.f32
    np.testing.assert_array_equal(A.to_numpy(), 2 * dense4())
    laplace(b, 2.0)  # the builder starts empty again (Taichi's build() clears it)
    np.testing.assert_array_equal(b.build().to_numpy(), dense4(2.0))


def test_builder_overflow_and_out_of_range_entries_are_errors():
    b = gr.linalg.SparseMatrixBuilder(N, N, max_num_triplets=3)
    laplace(b, 1.0)  # 10 triplets into 3 slots: the extra ones are dropped on the device, reported here
    with pytest.raises(RuntimeError, match="max_num_triplets=3"):
        b.build()
    small = gr.linalg.SparseMatrixBuilder(2, 2, max_num_triplets=16)
    t = gr.ndarray(gr.f32, shape=(1, 3))
    t.from_numpy(np.array([[2, 0, 1.0]], np.float32))
    from_triplets(small, t)
    with pytest.raises(IndexError, match=r"\(2, 0\)"):
        small.build()


def test_builder_accepts_only_updates_and_only_builders():
    @gr.kernel
    def read(A: gr.types.sparse_matrix_builder()) -> gr.f32:
        return A[0, 0]

    @gr.kernel
    def assign(A: gr.types.sparse_matrix_builder()):
        A[0, 0] = 1.0

    @gr.kernel
    def scale(A: gr.types.sparse_matrix_builder()):
        A[0, 0] *= 2.0

    b = gr.linalg.SparseMatrixBuilder(2, 2, max_num_triplets=4)
    for k, what in ((read, "read"), (assign, "not assigned"), (scale, "read")):
        with pytest.raises(gr.CompileError, match=what):
            k(b)
    with pytest.raises(TypeError, match="SparseMatrixBuilder"):
        laplace(gr.ndarray(gr.f32, shape=4), 1.0)


def test_sparse_matrix_arithmetic_matches_dense():
    A, B = built(1.0), built(2.0)
    a, b = dense4(1.0), dense4(2.0)
    for got, want in (((A + B), a + b), ((A - B), a - b), (2.0 * A, 2 * a), (A * 3, 3 * a), (A @ B, a @ b),
                      (A.transpose(), a.T), (A * B, a * b)):
        assert isinstance(got, gr.linalg.SparseMatrix)
        np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-6)
    x = np.arange(N, dtype=np.float32)
    y = A @ x
    assert isinstance(y, np.ndarray) and y.dtype == np.float32
    np.testing.assert_allclose(y, a @ x, rtol=1e-6)
    xd = gr.ndarray(gr.f32, shape=N)
    xd.from_numpy(x)
    yd = A @ xd  # on the device: a gr.ndarray back, as Taichi's
    assert isinstance(yd, gr.Ndarray) and yd.shape == (N,)
    np.testing.assert_allclose(yd.to_numpy(), a @ x, rtol=1e-6)
    assert A[0, 1] == -0.5 and A[3, 0] == 0.0
    A[0, 3] = 5.0
    assert A[0, 3] == 5.0
    np.testing.assert_allclose((A @ xd).to_numpy(), A.to_numpy() @ x, rtol=1e-6)  # the device copy follows
    A -= B
    np.testing.assert_allclose(A.to_numpy()[1], (a - b)[1])
    with pytest.raises(ValueError, match="Dimension mismatch"):
        A + gr.linalg.SparseMatrix(3, 3)
    with pytest.raises(ValueError, match="Dimension mismatch"):
        A @ np.ones(3, np.float32)


def test_print_is_taichis():
    assert str(built()) == ("[   2, -0.5,    0,    0]\n[  -1,    2,    0,    0]\n"
                            "[   0,   -1,    2,  0.5]\n[   0,    0,   -1,    2]")


def test_build_from_ndarray_sums_triplets():
    t = gr.Vector.ndarray(3, gr.f32, shape=3)
    t.from_numpy(np.array([[0, 1, 1.5], [2, 0, 2.0], [0, 1, 1.0]], np.float32))
    A = gr.linalg.SparseMatrix(n=3, m=3, dtype=gr.f32)
    A.build_from_ndarray(t)
    want = np.zeros((3, 3))
    want[0, 1], want[2, 0] = 2.5, 2.0
    np.testing.assert_array_equal(A.to_numpy(), want)


# Taichi 1.7.4 (CPU) on dense4() and b = [1, 2, 3, 4]: LLT and LDLT read the lower triangle
TAICHI_SOLVES = {"LLT": ([4, 7, 8, 6], True, False), "LDLT": ([4, 7, 8, 6], True, True),
                 "LU": ([0.85714287, 1.4285715, 1.5238096, 2.7619047], True, True)}


@pytest.mark.parametrize("kind", ["LLT", "LDLT", "LU"])
def test_sparse_solver_matches_taichi(kind):
    A = built()
    b = np.arange(1, N + 1, dtype=np.float32)
    want, ok, ok_negated = TAICHI_SOLVES[kind]
    s = gr.linalg.SparseSolver(solver_type=kind)
    s.analyze_pattern(A)
    s.factorize(A)
    x = s.solve(b)
    assert x.dtype == np.float32 and s.info() is ok
    np.testing.assert_allclose(x, want, rtol=1e-5)
    bd = gr.ndarray(gr.f32, shape=N)
    bd.from_numpy(b)
    xd = s.solve(bd)
    assert isinstance(xd, gr.Ndarray)
    np.testing.assert_allclose(xd.to_numpy(), want, rtol=1e-5)
    neg = gr.linalg.SparseSolver(solver_type=kind)
    neg.compute(-1.0 * A)  # negative definite: LLT fails (info False), LDLT and LU do not
    assert neg.info() is ok_negated
    if ok_negated:
        np.testing.assert_allclose(neg.solve(b), -np.array(want), rtol=1e-5)


def test_sparse_solver_checks_its_arguments():
    with pytest.raises(ValueError, match="not supported"):
        gr.linalg.SparseSolver(solver_type="QR")
    s = gr.linalg.SparseSolver(gr.f64)
    with pytest.raises(TypeError, match="dtype"):
        s.analyze_pattern(built())
    with pytest.raises(gr.GfxrtError, match="compute"):
        gr.linalg.SparseSolver().solve(np.ones(N, np.float32))


def spd_matrix(dtype=gr.f32):
    t = spd()
    nd = gr.ndarray(gr.f32, shape=t.shape)
    nd.from_numpy(t)
    b = gr.linalg.SparseMatrixBuilder(64, 64, max_num_triplets=len(t), dtype=dtype)
    from_triplets(b, nd)
    return b.build()


@pytest.mark.parametrize("dtype", [gr.f32, gr.f64])
def test_sparse_cg_on_the_device_matches_scipy(dtype):
    from scipy.sparse.linalg import spsolve
    A = spd_matrix(dtype)
    b = np.random.default_rng(2).random(64)
    want = spsolve(A.matrix.astype(np.float64).tocsc(), b)
    cg = gr.linalg.SparseCG(A, b, max_iter=100, atol=1e-5 if dtype == gr.f32 else 1e-12)
    x, ok = cg.solve()
    assert ok and x.dtype == dtype.numpy and 0 < cg.iterations < 100
    np.testing.assert_allclose(x, want, rtol=1e-4 if dtype == gr.f32 else 1e-10)
    x2, ok2 = gr.linalg.SparseCG(A, b, x0=x, max_iter=100, atol=1e-5).solve()  # from the solution: no steps
    assert ok2
    np.testing.assert_allclose(x2, x, rtol=1e-6)
    few, ok3 = gr.linalg.SparseCG(A, b, max_iter=1, atol=1e-9).solve()
    assert not ok3


def test_sparse_cg_matches_taichi():
    # Taichi 1.7.4 (CPU), the same 64 x 64 matrix without duplicates, b = default_rng(1) after the matrix
    rng = np.random.default_rng(1)
    t = []
    for i in range(64):
        t.append((i, i, 4.0 + rng.random()))
        j = (i * 7 + 3) % 64
        if j != i:
            v = -rng.random()
            t += [(i, j, v), (j, i, v)]
    nd = gr.ndarray(gr.f32, shape=(len(t), 3))
    nd.from_numpy(np.array(t, np.float32))
    bld = gr.linalg.SparseMatrixBuilder(64, 64, max_num_triplets=1000)
    from_triplets(bld, nd)
    A = bld.build()
    b = rng.random(64).astype(np.float32)
    x, ok = gr.linalg.SparseCG(A, b, max_iter=100, atol=1e-5).solve()
    assert ok
    np.testing.assert_allclose(x[:4], [0.09722737, 0.12999488, 0.11068225, 0.14742911], atol=2e-7)


@gr.kernel
def poisson(x: gr.template(), Ax: gr.template()):
    n, m = x.shape
    for i, j in gr.ndrange(n, m):
        s = 4.0 * x[i, j]
        if i > 0:
            s -= x[i - 1, j]
        if i < n - 1:
            s -= x[i + 1, j]
        if j > 0:
            s -= x[i, j - 1]
        if j < m - 1:
            s -= x[i, j + 1]
        Ax[i, j] = s + 0.5 * x[i, j] * (i % 2)  # symmetric positive definite


@gr.kernel
def drift(x: gr.template(), Ax: gr.template()):
    n, m = x.shape
    for i, j in gr.ndrange(n, m):
        s = 4.0 * x[i, j]
        if i > 0:
            s -= 1.5 * x[i - 1, j]  # not symmetric
        if j < m - 1:
            s -= x[i, j + 1]
        Ax[i, j] = s


def dense_operator(k, shape):
    n = shape[0] * shape[1]
    x, y, cols = gr.field(gr.f32, shape=shape), gr.field(gr.f32, shape=shape), []
    for c in range(n):
        e = np.zeros(n, np.float32)
        e[c] = 1
        x.from_numpy(e.reshape(shape))
        k(x, y)
        cols.append(y.to_numpy().reshape(-1))
    return np.stack(cols, 1)


@pytest.mark.parametrize("solver,op,dt", [("MatrixFreeCG", poisson, gr.f32), ("MatrixFreeCG", poisson, gr.f64),
                                          ("MatrixFreeBICGSTAB", poisson, gr.f32),
                                          ("MatrixFreeBICGSTAB", drift, gr.f32)])
def test_matrix_free_solvers(solver, op, dt):
    shape = (6, 5)
    rhs = np.random.default_rng(3).random(shape).astype(np.float32)
    b, x = gr.field(dt, shape=shape), gr.field(dt, shape=shape)
    b.from_numpy(rhs)
    x.fill(0)
    ok = getattr(gr.linalg, solver)(gr.linalg.LinearOperator(op), b, x, tol=1e-5, maxiter=200)
    assert ok
    want = np.linalg.solve(dense_operator(op, shape).astype(np.float64), rhs.reshape(-1))
    np.testing.assert_allclose(x.to_numpy().reshape(-1), want, atol=1e-5)


def test_matrix_free_cg_checks_its_fields():
    b = gr.field(gr.f32, shape=4)
    with pytest.raises(TypeError, match="Dtype mismatch"):
        gr.linalg.MatrixFreeCG(gr.linalg.LinearOperator(poisson), b, gr.field(gr.f64, shape=4))
    with pytest.raises(ValueError, match="Dimension mismatch"):
        gr.linalg.MatrixFreeCG(gr.linalg.LinearOperator(poisson), b, gr.field(gr.f32, shape=5))


def test_solvers_survive_a_new_device(tmp_path):
    """The solvers keep work arrays and the matrix's device copy: after gr.reset() they make new ones."""
    prog = tmp_path / "reinit.py"
    prog.write_text('''
import numpy as np, gfxrt as gr
gr.init()
A = gr.linalg.SparseMatrix(3, 3, dtype=gr.f64)
for i in range(3):
    A[i, i] = 2.0

@gr.kernel
def twice(x: gr.template(), y: gr.template()):
    for i in x:
        y[i] = 2.0 * x[i]

def run():
    b, x = gr.field(gr.f64, shape=3), gr.field(gr.f64, shape=3)
    b.fill(1.0)
    x.fill(0.0)
    ok = gr.linalg.MatrixFreeCG(gr.linalg.LinearOperator(twice), b, x)
    y, ok2 = gr.linalg.SparseCG(A, np.ones(3), atol=1e-12).solve()
    v = gr.ndarray(gr.f64, shape=3)
    v.fill(1.0)
    return ok and ok2 and np.allclose(x.to_numpy(), 0.5) and np.allclose(y, 0.5) and np.allclose((A @ v).to_numpy(), 2)

first = run()
gr.reset()  # a new device: the kept arrays belong to the old one
gr.init()
print(first, run())
''')
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root] + os.environ.get("PYTHONPATH", "").split(os.pathsep))}
    out = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.strip().splitlines()[-1:] == ["True True"], out.stderr[-2000:]


def test_offline_cache_keys_template_aliasing(tmp_path):
    """An entry compiled for dot(x, x) binds one field for both arguments: dot(x, y) must miss it."""
    from gfxrt.compiler import ArgSpec, Target, compile_kernel

    def dot(p, q, out):
        for i in range(p.shape[0]):
            out[0] += p[i] * q[i]

    x, y, out = (gr.field(gr.f32, shape=4) for _ in range(3))
    d, target = str(tmp_path / "cache"), Target(frozenset({"immediates", "shader-float32-atomic"}), 128)

    def fields(p, q):
        args = [ArgSpec("p", "template", value=p), ArgSpec("q", "template", value=q),
                ArgSpec("out", "template", value=out)]
        return sum(b.kind == "field" for b in compile_kernel(dot, args, target, directory=d).bindings)

    assert fields(x, x) == 2  # x and out
    assert fields(x, y) == 3  # p, q and out: not the (x, x) entry


def test_without_scipy_the_error_says_how_to_install_it(monkeypatch):
    import sys
    for name in ("scipy", "scipy.sparse"):
        monkeypatch.setitem(sys.modules, name, None)  # `import scipy.sparse` now raises ImportError
    with pytest.raises(ImportError, match=r"gfxrt\[sparse\]"):
        gr.linalg.SparseMatrix(2, 2)
    with pytest.raises(ImportError, match=r"gfxrt\[sparse\]"):
        gr.linalg.SparseMatrixBuilder(2, 2, max_num_triplets=4)
