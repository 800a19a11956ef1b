"""Forms Taichi 1.7.4's own test suite uses that gfxrt refused or computed differently
(tools/taichi_suite): the expected numbers are Taichi 1.7.4's, run on its CPU backend."""
import numpy as np
import pytest

import gfxrt as gr


def test_vector_matrix_dtype_positional():
    """Taichi's Vector(arr, dt) / Matrix(arr, dt): the dtype may be the second positional argument."""
    @gr.kernel
    def k() -> gr.f32:
        a = gr.Vector([1, 2, 3], gr.f32)
        m = gr.Matrix([[1, 2], [3, 4]], gr.f32)
        return a[0] / 2 + m[0, 1] / 4  # integer items would divide as floats anyway; the dtype is f32

    @gr.kernel
    def kd() -> gr.i32:
        a = gr.Vector([1.7, 2.2], gr.i32)  # converted to the given dtype
        return a[0] + a[1]

    assert k() == pytest.approx(1.0)
    assert kd() == 3


def test_static_list_index():
    """`gr.static(offsets)[k]` indexes the compile-time list (Taichi's test_cross_scope_matrix_*)."""
    x = gr.Vector.field(3, dtype=int, shape=(16, 16))
    offsets = [gr.Vector([1, 2]), gr.Vector([2, 3])]

    @gr.kernel
    def k():
        vec = gr.Vector([4, 5])
        x[vec + gr.static(offsets)[0]] = [100, 10, 1]
        w = vec
        w += gr.static(offsets)[1]
        x[w] = [1, 10, 100]

    k()
    assert x[5, 7].to_list() == [100, 10, 1] and x[6, 8].to_list() == [1, 10, 100]


def test_not_vector_componentwise():
    """`not v` of an integer vector: Taichi gives [0 1 0] for [3, 0, -1]."""
    @gr.kernel
    def k() -> gr.types.vector(3, gr.i32):
        v = gr.Vector([3, 0, -1])
        return not v

    assert k().to_list() == [0, 1, 0]


def test_vector_at_matrix():
    """`w @ m` with a vector on the left is the row-vector product: Taichi gives [10 13]."""
    @gr.kernel
    def k() -> gr.types.vector(3, gr.i32):
        w = gr.Vector([1, 2])
        m = gr.Matrix([[2, 3, 1], [4, 5, 0]])
        return w @ m

    assert k().to_list() == [10, 13, 1]
    np.testing.assert_array_equal(gr.Vector([1, 2]) @ gr.Matrix([[2, 3], [4, 5]]), [10, 13])


def test_solve_matches_taichi():
    """gr.solve: Taichi's Gauss elimination (same pivots, same operation order); Taichi 1.7.4's
    f32 results on its CPU backend (fast_math=False). Ties and near-singular pivots included."""
    x3 = gr.Vector.field(3, dtype=gr.f32, shape=())
    x2 = gr.Vector.field(2, dtype=gr.f32, shape=())

    @gr.kernel
    def k(a00: gr.f32):
        x3[None] = gr.solve(gr.Matrix([[a00, 2.0, -4.0], [2.0, 3.0, 3.0], [5.0, -3, 1.0]]),
                            gr.Vector([3.0, 15.0, 14.0]))
        x2[None] = gr.solve(gr.Matrix([[a00, 1.0], [1.0, 1.001]]), gr.Vector([3.0, 15.0]))

    taichi = {0: ([3.9818179607391357, 2.063636302947998, 0.2818182110786438], [11.996999740600586, 3.0]),
              1: ([3.5901641845703125, 1.6393442153930664, 0.9672130942344666], [-11996.439453125, 11999.439453125]),
              7: ([2.2577319145202637, 0.19587616622447968, 3.298969030380249],
                  [-1.9971697330474854, 16.980188369750977])}
    for a, (e3, e2) in taichi.items():
        k(a)
        # real GPUs contract a * b - c into fused multiply-adds: the H100's elimination lands 28 ulps from
        # Taichi's CPU result at a00 = 7 (2.1e-6), both within 3e-6 of the exact solution
        np.testing.assert_allclose(x3[None].to_numpy(), e3, rtol=1e-5)
        np.testing.assert_allclose(x2[None].to_numpy(), e2, rtol=1e-4)  # 1.001 - 1: cancellation
    np.testing.assert_allclose(gr.solve(np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([3.0, 5.0])), [0.8, 1.4])
    with pytest.raises(gr.CompileError, match="2x2 or 3x3"):
        @gr.kernel
        def bad() -> gr.f32:
            return gr.solve(gr.Matrix([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), gr.Vector([1.0, 2.0]))[0]
        bad()


@pytest.mark.parametrize("n", [1, 7, 300])
def test_parallel_sort(n):
    """gr.algorithms.parallel_sort: keys ascending, values moved with them (offset fields too)."""
    keys = gr.field(gr.i32, n, offset=-3)
    values = gr.field(gr.f32, n)
    k = np.random.default_rng(n).integers(-n, n, n).astype(np.int32)
    keys.from_numpy(k)
    values.from_numpy(k.astype(np.float32) * 2)
    gr.algorithms.parallel_sort(keys, values)
    np.testing.assert_array_equal(keys.to_numpy(), np.sort(k))
    np.testing.assert_array_equal(values.to_numpy(), np.sort(k) * 2)
    gr.algorithms.parallel_sort(values)
    np.testing.assert_array_equal(values.to_numpy(), np.sort(k) * 2)


@pytest.mark.parametrize("n", [1, 64, 65, 1000])
def test_prefix_sum_executor(n):
    """gr.algorithms.PrefixSumExecutor(n).run(a): inclusive prefix sums of an i32 field, in place."""
    a = gr.field(gr.i32, n, offset=5)
    v = np.random.default_rng(n).integers(-100, 100, n).astype(np.int32)
    a.from_numpy(v)
    gr.algorithms.PrefixSumExecutor(n).run(a)
    np.testing.assert_array_equal(a.to_numpy(), np.cumsum(v))
    with pytest.raises(RuntimeError, match="Only gr.i32"):
        gr.algorithms.PrefixSumExecutor(n).run(gr.field(gr.f32, n))


def test_rescale_index_both_ways():
    """gr.rescale_index to a coarser node divides, to a finer one multiplies (Taichi's
    test_rescale: the finer field was indexed at the coarse index itself)."""
    a = gr.field(gr.f32)
    b = gr.field(gr.f32)
    gr.root.dense(gr.ij, 4).dense(gr.ij, 4).place(a)
    gr.root.dense(gr.ij, 4).place(b)

    @gr.kernel
    def set_a():
        for idx in gr.grouped(b):
            a[gr.rescale_index(b, a, idx)] = 1.0

    @gr.kernel
    def set_b():
        for idx in gr.grouped(a):
            b[gr.rescale_index(a, b, idx)] += 1.0

    set_a()
    set_b()
    expect = np.zeros((16, 16), np.float32)
    expect[::4, ::4] = 1
    np.testing.assert_array_equal(a.to_numpy(), expect)
    np.testing.assert_array_equal(b.to_numpy(), np.full((4, 4), 16, np.float32))


def test_kernel_scope_stores_all_threads_agree_on():
    """A flag every thread stores alike, and components chosen by the loop index, may be
    assigned in a parallel loop (Taichi's test_matrixfree_cg check_solution, test_ret_4k,
    test_delay_modify); a per-thread value stays an error."""
    x = gr.field(gr.f32, shape=(8, 8))

    @gr.kernel
    def all_small(tol: gr.f32) -> bool:
        ok = True
        for i, j in gr.ndrange(8, 8):
            if abs(x[i, j]) >= tol:
                ok = False
        return ok

    vec64 = gr.types.vector(64, gr.i32)

    @gr.kernel
    def iota() -> vec64:
        ret = vec64(0)
        for i in range(64):
            ret[i] = i
        return ret

    @gr.kernel
    def permute() -> gr.types.vector(3, gr.i32):  # Taichi 1.7.4: [24, 30, 19]
        tmp = gr.Vector([1, 2, 3])
        for i in range(3):
            vec = gr.Vector([4, 5, 6])
            for j in range(3):
                vec[tmp[i] % 3] += vec[j]
            tmp[i] = vec[tmp[i] % 3]
        return tmp

    @gr.kernel
    def per_thread() -> gr.f32:
        m = 0.0
        for i in range(8):
            x[i, 1] = m  # read first: m is the one shared variable
            m = x[i, 0] * 2
        return 0.0

    assert all_small(1.0)
    x[3, 4] = 5.0
    assert not all_small(1.0)
    np.testing.assert_array_equal(iota().to_numpy(), np.arange(64))
    assert permute().to_list() == [24, 30, 19]
    with pytest.raises(gr.CompileError, match="differs between the threads"):
        per_thread()


def test_matrix_field_to_numpy_keep_dims():
    """Taichi's MatrixField.to_numpy(keep_dims=False): an n x 1 matrix field reads as n numbers,
    keep_dims keeps (n, 1) and gives a vector field (n, 1); from_numpy takes every form back
    (shapes from Taichi 1.7.4)."""
    cases = {(3, 1): ((5, 3), (5, 3, 1)), (1, 3): ((5, 1, 3), (5, 1, 3)), (1, 1): ((5, 1), (5, 1, 1)),
             (2, 2): ((5, 2, 2), (5, 2, 2))}
    for (n, m), (plain, kept) in cases.items():
        f = gr.Matrix.field(n, m, gr.f32, shape=(5,))
        f.from_numpy(np.arange(5 * n * m, dtype=np.float32).reshape(kept))
        assert f.to_numpy().shape == plain and f.to_numpy(keep_dims=True).shape == kept
        np.testing.assert_array_equal(f.to_numpy(True).ravel(), np.arange(5 * n * m))  # Taichi's positional order
        f.from_numpy(np.zeros(plain))
        assert not f.to_numpy().any()
    v = gr.Vector.field(3, gr.f32, shape=(5,))
    assert v.to_numpy().shape == (5, 3) and v.to_numpy(keep_dims=True).shape == (5, 3, 1)
    assert v.to_numpy(dtype=np.float64).dtype == np.float64


def test_matrix_slice_assign_and_runtime_index():
    """Taichi's test_matrix_slice: slices are assignable (`m[:, 0] = col`, `m[:2, :] += rows`), and
    a slice combined with a run-time index reads and writes (`m[:, j]`, `m[i, :] = v`)."""
    mat34 = gr.types.matrix(3, 4, gr.i32)

    @gr.kernel
    def writes(i: gr.i32) -> mat34:
        mat = gr.Matrix([[1, 1, 1, 1] for _ in range(3)])
        mat[:, 0] = gr.Vector([5, 6, 7])
        mat[1, 1:3] = gr.Vector([8, 9])
        mat[:2, :] += gr.Matrix([[1, 2, 3, 4] for _ in range(2)])
        mat[i, 1:] = gr.Vector([0, 0, 0])
        return mat

    @gr.kernel
    def reads(j: gr.i32) -> gr.types.vector(5, gr.i32):
        m = gr.Matrix([[1, 2, 3], [4, 5, 6]])
        col, row = m[:, j], m[j - 1, :]
        return gr.Vector([col[0], col[1], row[0], row[1], row[2]])

    f = gr.Matrix.field(2, 3, gr.i32, shape=2)

    @gr.kernel
    def field_rows(i: gr.i32):
        f[1][i, :] = gr.Vector([7, 8, 9])

    assert writes(2).to_list() == [[6, 3, 4, 5], [7, 10, 12, 5], [7, 0, 0, 0]]
    assert reads(1).to_list() == [2, 5, 1, 2, 3]
    field_rows(1)
    assert f[1].to_list() == [[0, 0, 0], [7, 8, 9]]


def test_and_or_of_vectors_componentwise():
    """`a or b` / `a and b` with a vector operand: 1 / 0 per component (Taichi 1.7.4's
    test_logical_vec_i32, and [1 0 1 0] / [0 0 0 0] for `s and b` with s = 3 / 0)."""
    vec4i = gr.types.vector(4, gr.i32)

    @gr.kernel
    def ops(s: gr.i32) -> gr.types.matrix(3, 4, gr.i32):
        a = gr.Vector([2, 2, 0, 0])
        b = gr.Vector([1, 0, 1, 0])
        return gr.Matrix.rows([a or b, a and b, vec4i(s and b)])

    assert ops(3).to_list() == [[1, 1, 1, 0], [1, 0, 0, 0], [1, 0, 1, 0]]
    assert ops(0).to_list()[2] == [0, 0, 0, 0]


def test_python_sum_of_run_time_values():
    """Python's sum() of a list comprehension of run-time values, of vectors, with a start
    (Taichi's test_listcomp_multiple_ifs: Python's sum works on Taichi's expressions)."""
    x = gr.field(gr.i32, shape=(4,))

    @gr.kernel
    def total() -> gr.i32:
        a = [x[0] for j in range(100) if j > 2 if j < 5]
        return sum(a) + sum([x[1], x[2]], 10)

    @gr.kernel
    def vsum() -> gr.types.vector(2, gr.f32):
        return sum([gr.Vector([1.0, 2.0]), gr.Vector([x[0] * 1.0, 0.5])])

    x.from_numpy(np.array([3, 4, 5, 0], np.int32))
    assert total() == 3 * 2 + 4 + 5 + 10
    assert vsum().to_list() == [4.0, 2.5]


def test_ndrange_0d_and_from_python_function():
    """gr.ndrange() is the 0-d space (one iteration, Taichi's test_grouped_ndrange_0d), and a
    plain Python function may build the space a kernel iterates (test_static_grouped_func);
    in Python scope gr.ndrange iterates index tuples."""
    val = gr.field(gr.i32, shape=())
    v = gr.Vector.field(3, dtype=gr.i32, shape=(3, 3))

    def stencil_range():
        return gr.ndrange(3, 3, 3)

    @gr.kernel
    def run():
        for idx in gr.grouped(gr.ndrange()):
            val[idx] += 40
        for idx in gr.static(gr.grouped(gr.ndrange())):
            val[idx] += 2
        for idx in gr.static(gr.grouped(stencil_range())):
            v[idx[0], idx[1]][idx[2]] = idx[0] + idx[1] * 3 + idx[2] * 10

    run()
    assert val[None] == 42
    i, j, k = np.meshgrid(range(3), range(3), range(3), indexing="ij")
    np.testing.assert_array_equal(v.to_numpy(), i + j * 3 + k * 10)
    assert list(gr.ndrange(2, (1, 3))) == [(0, 1), (0, 2), (1, 1), (1, 2)]


def test_math_types_follow_default_types():
    """gr.math.vec3 / ivec2 / uvec2 / mat2 are built from gr.init's default types, as Taichi's
    ti.math types are (Taichi 1.7.4 after ti.init(default_fp=f64, default_ip=i64): vec3 f64,
    uvec2 u64, ivec2 i64; f32 again after a plain ti.init())."""
    try:
        gr.init(default_fp=gr.f64, default_ip=gr.i64)
        assert gr.math.vec3.dtype == gr.f64 and gr.math.ivec2.dtype == gr.i64 and gr.math.uvec2.dtype == gr.u64
        assert gr.math.mat2.dtype == gr.f64 and gr.field(gr.math.ivec2, ()).dtype == gr.i64

        @gr.kernel
        def k() -> gr.f64:
            pi = 3.14159265358
            big = gr.u64(2**63 - 1)
            v, u = gr.math.vec3(pi), gr.math.uvec2(big)
            return abs(v.x - pi) + (u.y == big)

        assert k() == 1.0  # f32 would lose pi's digits, u32 the big number
    finally:
        gr.init()
    assert gr.math.vec3.dtype == gr.f32 and gr.math.uvec2.dtype == gr.u32


def test_swizzles_stpq_and_host():
    """Taichi's three swizzle letter sets (xyzw, rgba, stpq) in kernels and on gr.Vector values
    in Python scope, read and assigned (test_vector_swizzle_*); host gr.floor / gr.round /
    gr.cast of a vector stay vectors."""
    v = gr.math.vec3(0, 0, 0)
    v.rgb += 1
    v.zyx += gr.math.vec3(1)
    v.p = 5
    assert v.stp.to_list() == [2.0, 2.0, 5.0] and v.xxzz.to_list() == [2.0, 2.0, 5.0, 5.0]
    w = gr.floor(gr.Vector([1.5, -2.5]))
    assert w.yx.to_list() == [-3.0, 1.0] and gr.cast(w, gr.i32).xy.to_list() == [1, -3]
    with pytest.raises(AttributeError):
        v.xxy = gr.math.vec3(1)  # repeats a component

    @gr.kernel
    def k() -> gr.types.vector(4, gr.f32):
        u = gr.math.vec3(0, 0, 0)
        u.brg += 1
        u.p = 3
        u.t = 2
        return gr.math.vec4(u.tps, u.s)

    assert k().to_list() == [2.0, 3.0, 1.0, 1.0]


def test_bit_not_of_float_is_a_compile_error():
    """`~x` of a float: Taichi's "takes integral inputs only" (it was an internal compiler error)."""
    @gr.kernel
    def k(x: gr.f32) -> gr.i32:
        return ~x

    with pytest.raises(gr.CompileError, match="integral inputs only"):
        k(1.0)
