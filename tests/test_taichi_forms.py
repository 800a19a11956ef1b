"""Language forms Taichi's own example programs use (issue 24, item 1), with Taichi 1.7.4's
meaning: the expected numbers are Taichi's (run under ti.init(arch=ti.cpu)) or its documented
formulas evaluated with numpy."""
import typing

import numpy as np
import pytest

import gfxrt as gr

param = {"shape": (3, 4), "dt": 0.5, "inner": {"k": 2}}
shape = (3, 4)


def test_norm_and_normalized_take_taichis_eps():
    out = gr.field(gr.f32, shape=9)

    @gr.kernel
    def k():
        v = gr.Vector([3.0, 4.0])
        out[0] = v.norm(1e-3)               # sqrt(|v|^2 + eps)
        out[1] = v.normalized(1e-3)[0]      # v / (|v| + eps)
        out[2] = v.norm_inv(eps=1e-3)       # 1 / sqrt(|v|^2 + eps)
        z = gr.Vector([0.0, 0.0])
        out[3] = z.normalized(1e-6)[1]      # 0, not NaN
        out[4] = z.norm(1e-6)
        m = gr.Matrix([[1.0, 2.0], [2.0, 4.0]])
        out[5] = m.norm()                   # a matrix's: Frobenius, as Taichi's
        out[6] = m.norm_sqr()
        out[7] = v.norm()
        out[8] = v.normalized()[1]

    k()
    sq = 25.0
    want = [np.sqrt(sq + 1e-3), 3 / (5 + 1e-3), 1 / np.sqrt(sq + 1e-3), 0.0, 1e-3, 5.0, 25.0, 5.0, 0.8]
    np.testing.assert_allclose(out.to_numpy(), want, rtol=2e-6)
    h = gr.Vector([3.0, 4.0])  # Python scope: the same formulas
    np.testing.assert_allclose(h.normalized(1e-3).to_numpy(), [3 / 5.001, 4 / 5.001], rtol=1e-12)
    assert h.norm(1e-3) == pytest.approx(np.sqrt(25.001)) and h.norm_inv(1e-3) == pytest.approx(1 / np.sqrt(25.001))


def test_python_float_and_int_are_the_default_dtypes():
    out = gr.field(gr.f32, shape=6)

    @gr.kernel
    def k():
        v = gr.Vector.zero(float, 2)
        m = gr.Matrix.zero(float, 2, 2)
        out[0] = v[0] + m[1, 1] + 1.5
        w = gr.Vector([1.7, -2.6]).cast(int)   # truncates toward zero
        out[1] = w[0]
        out[2] = w[1]
        out[3] = gr.cast(3, float) / 2
        out[4] = gr.cast(2.7, int)
        out[5] = gr.Vector([1, 2], dt=float)[0] / 4

    k()
    np.testing.assert_array_equal(out.to_numpy(), [1.5, 1.0, -2.0, 1.5, 2.0, 0.25])  # Taichi's numbers

    gr.init(default_fp=gr.f64)
    try:
        o = gr.field(float, shape=3)

        @gr.kernel
        def k64():
            o[0] = gr.cast(1, float) / 3                # an f64 division under default_fp=f64
            o[1] = gr.Vector([1.2, 2.7]).cast(int)[1]
            o[2] = gr.Vector.zero(float, 2)[0] + 1 / 3

        k64()
        np.testing.assert_allclose(o.to_numpy(), [1 / 3, 2.0, 1 / 3], rtol=1e-12)  # Taichi's f64, not f32's
    finally:
        gr.init()


def test_the_python_builtins_taichi_maps():
    out = gr.field(gr.f32, shape=9)

    @gr.kernel
    def k(a: gr.i32, b: gr.f32):
        x = 1.5
        out[0] = pow(x, 3)
        out[1] = pow(2, 10)
        out[2] = pow(x, -1)
        out[3] = abs(-3)
        out[4] = min(3.0, x, 2)
        out[5] = max(1, 7, 2)
        out[6] = int(-2.7)
        out[7] = float(7) / 2
        out[8] = a * 10 + b

    k(True, True)  # a Python bool passed to a number parameter is 0 or 1, as in Taichi
    np.testing.assert_allclose(out.to_numpy(), [3.375, 1024.0, 0.6666666865348816, 3.0, 1.5, 7.0, -2.0, 3.5, 11.0],
                               rtol=1e-7)  # Taichi's numbers
    k(False, 0.5)
    assert out[8] == 0.5

    @gr.kernel
    def modular() -> gr.i32:
        return pow(2, 3, 5)

    with pytest.raises(gr.CompileError, match=r"pow\(\) takes two arguments"):
        modular()


def test_comprehensions_unroll_at_compile_time():
    out = gr.field(gr.f32, shape=8)
    rnd = gr.Vector.field(4, gr.f32, shape=2)
    dim = 4

    @gr.kernel
    def k():
        v = gr.Vector([i * 2.0 for i in range(3)])
        out[0] = v[2]
        m = gr.Matrix([[i + 10 * j for j in range(2)] for i in range(2)])
        out[1] = m[1, 0] + m[0, 1]
        evens = gr.Vector([i for i in range(7) if i % 2 == 0])        # a compile-time filter
        out[2] = evens.n + evens[3]
        sq = gr.Vector([x * x for x in v])                            # over a vector's components
        out[3] = sq[2]
        i = 5
        pairs = [a * b for a, b in [(1, 2), (3, 4)]]
        out[4] = pairs[1] + i                                         # `i` of the comprehension did not leak
        d = {k: k * 0.5 for k in range(3)}
        out[5] = d[2]
        for p in range(2):
            rnd[p] = gr.Vector([gr.random() for _ in range(dim)])     # one draw per component

    k()
    np.testing.assert_array_equal(out.to_numpy()[:6], [4.0, 11.0, 10.0, 16.0, 17.0, 1.0])
    r = rnd.to_numpy()
    assert ((r >= 0) & (r < 1)).all() and len(np.unique(r)) == r.size

    @gr.kernel
    def run_time(n: gr.i32):
        out[0] = gr.Vector([i for i in range(n)])[0]

    with pytest.raises(gr.CompileError, match="comprehension in a kernel iterates a sequence known at compile time"):
        run_time(3)


def test_star_args_and_dicts_read_by_compile_time_keys():
    out = gr.field(gr.f32, shape=12)

    @gr.func
    def f(a, b, c=0.0):
        return a * 100 + b * 10 + c

    @gr.kernel
    def k():
        for i, j in gr.ndrange(*shape):
            out[i * 4 + j] += 1
        for i in range(*(1, 3)):
            out[i] += 10
        v = gr.Vector([1.0, 2.0])
        out[0] += f(*v) + f(**{"a": 3.0, "b": 4.0, "c": 5.0})
        out[11] = param["shape"][0] * param["dt"] + param["inner"]["k"]
        d = {"x": 7.0, 1: 3.0}
        out[10] = d["x"] + d[1]

    k()
    want = np.ones(12, np.float32)
    want[1:3] += 10
    want[0] += 120 + 345
    want[11], want[10] = 3 * 0.5 + 2, 10.0
    np.testing.assert_array_equal(out.to_numpy(), want)

    @gr.kernel
    def missing() -> gr.f32:
        return param["shap"][0]

    with pytest.raises(gr.CompileError, match="the dict 'param' has no key 'shap'"):
        missing()


def test_the_walrus_operator_assigns_and_is_the_value():
    out = gr.field(gr.f32, shape=3)
    mouse = gr.Vector.field(2, gr.f32, shape=())
    samples = gr.Vector.field(2, gr.f32, shape=2)

    @gr.kernel
    def k():
        x = 1.0
        if (y := x * 3) > 2:
            out[0] = y
        i = 0
        while (j := i + 1) < 4:
            i = j
        out[1] = i
        samples[0] = (p0 := mouse[None])   # poisson_disk_sampling's
        samples[1] = p0 * 2

    mouse[None] = [0.25, 0.5]
    k()
    assert out.to_numpy()[:2].tolist() == [3.0, 3.0]  # Taichi's numbers
    assert samples.to_numpy().tolist() == [[0.25, 0.5], [0.5, 1.0]]


def test_fill_inside_kernels_and_funcs_of_a_data_oriented_class():
    @gr.data_oriented
    class Solver:  # karman_vortex_street's init
        def __init__(self):
            self.rho = gr.field(float, shape=(3, 2))
            self.vel = gr.Vector.field(2, float, shape=(3, 2))

        @gr.func
        def reset(self):
            self.rho.fill(3)

        @gr.kernel
        def init(self):
            self.vel.fill(0)
            self.rho.fill(1)
            for i, j in self.rho:
                self.vel[i, j] = i, self.rho[i, j] * j

        @gr.kernel
        def init2(self):
            self.reset()
            self.vel.fill(gr.Vector([1.0, 2.0]))

    s = Solver()
    s.vel.fill(9)
    s.init()
    assert (s.rho.to_numpy() == 1).all()
    np.testing.assert_array_equal(s.vel.to_numpy(), np.stack(np.meshgrid(range(3), range(2), indexing="ij"), -1))
    s.init2()
    assert (s.rho.to_numpy() == 3).all() and (s.vel.to_numpy() == [1.0, 2.0]).all()


def test_vectors_built_from_vectors_and_scalars():
    out = gr.field(gr.f32, shape=6)

    @gr.kernel
    def k():
        v2 = gr.Vector([1.0, 2.0])
        v3 = gr.math.vec3(v2, 3.0)
        v4 = gr.math.vec4(v3, 4.0)
        out[0] = v4[2] + v4[3] * 10
        out[1] = gr.math.vec4(1.0, v2, 5.0)[3]
        out[2] = gr.math.vec3(2.0)[2]
        out[3] = gr.math.ivec3(v2 * 1.7, 7)[1]       # converted to the type's i32
        m = gr.math.mat2(v2, v2 * 3)                 # rows from two vectors
        out[4] = m[1, 0]
        out[5] = gr.math.mat2([[1, 2], [3, 4]])[1, 1]

    k()
    np.testing.assert_array_equal(out.to_numpy(), [43.0, 5.0, 2.0, 3.0, 3.0, 4.0])  # Taichi's numbers
    h2 = gr.math.vec2(1, 2)  # Python scope: the same rule
    assert gr.math.vec4(h2, 3, 4).to_list() == [1.0, 2.0, 3.0, 4.0]
    assert gr.math.mat2(h2, h2).to_list() == [[1.0, 2.0], [1.0, 2.0]]
    assert gr.math.ivec3(h2, 7).to_list() == [1, 2, 7]

    @gr.kernel
    def short():
        out[0] = gr.math.vec4(gr.Vector([1.0, 2.0]), 3.0)[0]

    with pytest.raises(gr.CompileError, match="needs 4 values"):
        short()


def test_constant_slices_of_vectors_matrices_tuples_and_shapes():
    out = gr.field(gr.f32, shape=8)
    sh = (3, 4, 5)

    @gr.kernel
    def k():
        v = gr.Vector([1.0, 2.0, 3.0, 4.0])
        out[0] = v[:2].n
        out[1] = v[1:][2] + v[::2][1] * 10
        m = gr.Matrix([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        out[2] = m[:, 1][1]                    # a column
        out[3] = m[1, 1:][1]                   # part of a row
        out[4] = m[0:2, 0:2][1, 1]             # a block
        out[5] = sh[1:][1]
        out[6] = v[2:][0]
        out[7] = out.shape[:1][0]

    k()
    np.testing.assert_array_equal(out.to_numpy(), [2, 34, 5, 6, 5, 5, 3, 8])  # Taichi's numbers (out[7]: 8)

    @gr.kernel
    def assign():
        v = gr.Vector([1.0, 2.0, 3.0])
        v[:2] = gr.Vector([0.0, 0.0])
        out[0] = v[0]

    assign()  # slices are assignable, as in Taichi 1.7.4 (its test_matrix_slice_write)
    assert out[0] == 0.0


def test_func_return_annotations_as_taichi_reads_them():
    out = gr.field(gr.f32, shape=4)
    vf = gr.Vector.field(2, gr.f32, shape=2)

    @gr.func
    def at(i: int) -> gr.f32:      # eulerfluid2d's: a vector returned under a scalar annotation
        return vf[i]

    @gr.func
    def trunc(x) -> gr.i32:        # cast component by component
        return x * 1.7

    @gr.func
    def pair(p: gr.math.vec2) -> typing.Tuple[float, gr.math.vec2]:  # noqa: UP006 (poisson_disk_sampling's)
        return p.norm(), p * 2

    @gr.kernel
    def k():
        vf[1] = [1.5, 2.5]
        out[0] = at(1)[1]
        out[1] = trunc(2.0)
        out[2] = trunc(gr.Vector([1.0, 2.0]))[1]
        d, q = pair(gr.Vector([3.0, 4.0]))
        out[3] = d + q[1]

    k()
    np.testing.assert_array_equal(out.to_numpy(), [2.5, 3.0, 3.0, 13.0])  # Taichi's (out[3]: Python's)
