"""Language and API forms real Taichi programs use (issue 24, item 1, second half): gradients of
Vector / Matrix fields placed through SNodes, plain Python functions on compile-time values,
`gr.floor(x, int)`, field offsets, `gr.ScalarField`, `gr.lang.ops`, `gr._lib.core`,
`gr.types.ndarray(element_shape=)`, `n = n` in a kernel, debug mode with needs_grad fields.
The expected numbers were printed by Taichi 1.7.4 (ti.cpu) running the same programs."""
import math

import numpy as np
import pytest

import gfxrt as gr

DT, DAMPING, N_GLOBAL = 0.01, 3.0, 4


def test_placed_vector_and_matrix_fields_get_gradients_of_their_element_type():
    v = gr.Vector.field(3, float)
    m = gr.Matrix.field(2, 2, float, needs_grad=True)
    loss = gr.field(float, shape=())
    gr.root.dense(gr.i, 4).place(v, m)
    gr.root.lazy_grad()
    assert v.grad.element_type == v.element_type and m.grad.element_type == m.element_type

    @gr.kernel
    def init():
        for i in v:
            v[i] = gr.Vector([i, i + 1, i + 2]) * 0.5  # was "expected a scalar here"
            m[i] = gr.Matrix([[i, 1.0], [2.0, i]])

    @gr.kernel
    def f():
        for i in v:
            loss[None] += (m[i] @ gr.Vector([v[i][0], v[i][1]])).dot(gr.Vector([v[i][2], 1.0]))

    init()
    with gr.Tape(loss=loss):
        f()
    assert loss[None] == 42.0  # Taichi's numbers
    np.testing.assert_array_equal(v.grad.to_numpy(), [[2, 1, .5], [3.5, 2.5, 1.5], [6, 4, 3.5], [9.5, 5.5, 6.5]])
    np.testing.assert_array_equal(m.grad.to_numpy(), [[[0, .5], [0, .5]], [[.75, 1.5], [.5, 1]],
                                                      [[2, 3], [1, 1.5]], [[3.75, 5], [1.5, 2]]])


def test_lazy_grad_keeps_a_shaped_vector_field_a_vector_field():
    x = gr.Vector.field(2, float, shape=3)
    gr.root.lazy_grad()

    @gr.kernel
    def k():
        for i in x:
            x[i] = gr.Vector([1.0, 2.0]) * i
            x.grad[i] = x[i] + 1

    k()
    np.testing.assert_array_equal(x.to_numpy(), [[0, 0], [1, 2], [2, 4]])
    np.testing.assert_array_equal(x.grad.to_numpy(), [[1, 1], [2, 3], [3, 5]])


def _helper(a, b):
    return a * b, a + b


def _rotation(theta):
    return gr.Matrix([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])


def test_plain_python_functions_run_on_compile_time_values():
    x = gr.field(gr.f32, shape=3)

    @gr.kernel
    def k():
        p, s = _helper(2, 3)
        r = _rotation(math.pi / 2)
        for i in x:
            x[i] = math.exp(-DT * DAMPING) + p * 10 + s * i + (r @ gr.Vector([1.0, 0.0]))[1] * 100

    k()
    np.testing.assert_allclose(x.to_numpy(), math.exp(-0.03) + 160 + 5 * np.arange(3), rtol=1e-6)


def test_plain_python_function_on_run_time_values_is_a_compile_error():
    x = gr.field(gr.f32, shape=3)

    @gr.kernel
    def k():
        for i in x:
            x[i] = math.exp(x[i])

    with pytest.raises(gr.CompileError, match="on run-time values.*@gr.func"):
        k()

    @gr.kernel
    def raises():
        x[0] = math.sqrt(-1.0)

    with pytest.raises(gr.CompileError, match="raised ValueError while the kernel compiled"):
        raises()


def test_floor_ceil_round_take_pythons_int_and_float_as_dtypes():
    @gr.kernel
    def k(v: gr.f32) -> gr.i32:
        return (gr.floor(v, int) << 1) + gr.ceil(1.2, int) * 10 + gr.round(2.6, int) * 100  # `<<`: ints only

    assert k(1.7) == 322 and k(-1.5) == 316  # Taichi: floor 1 / -2, ceil 2, round 3
    assert gr.floor(1.5, int) == 1 and np.asarray(gr.floor(1.5, int)).dtype == np.int32
    assert gr.ceil(1.5, float) == 2.0


def test_field_offsets_as_taichi():
    y = gr.field(float)
    gr.root.dense(gr.i, 8).place(y, offset=(-4,))
    z = gr.field(float, shape=(3, 4), offset=(-1, 2), needs_grad=True)
    v = gr.Vector.field(2, float, shape=5, offset=10)
    loss = gr.field(float, shape=(), needs_grad=True)

    @gr.kernel
    def fill():
        for i in y:
            y[i] = i
        for i, j in z:
            z[i, j] = i * 10 + j
        for p in gr.grouped(v):
            v[p] = gr.Vector([p[0], 2 * p[0]])

    @gr.kernel
    def f():
        for i, j in z:
            loss[None] += z[i, j] ** 2 * (i + 2)

    fill()
    assert y.shape == (8,) and z.shape == (3, 4) and z.grad.offset == (-1, 2)
    np.testing.assert_array_equal(y.to_numpy(), np.arange(-4, 4))
    np.testing.assert_array_equal(z.to_numpy(), [[-8, -7, -6, -5], [2, 3, 4, 5], [12, 13, 14, 15]])
    np.testing.assert_array_equal(v.to_numpy()[:, 0], np.arange(10, 15))
    assert y[-4] == -4 and z[-1, 2] == -8 and z[1, 5] == 15 and list(v[12]) == [12, 24]
    with gr.Tape(loss=loss):
        f()
    assert loss[None] == 2484.0  # Taichi's numbers
    np.testing.assert_array_equal(z.grad.to_numpy(), [[-16, -14, -12, -10], [8, 12, 16, 20], [72, 78, 84, 90]])
    y[-2] = 7.5
    assert y.to_numpy()[2] == 7.5
    with pytest.raises(IndexError, match="indices -4 to 3"):
        y[4]
    with pytest.raises(ValueError, match="one integer per axis"):
        gr.field(float, shape=(2, 2), offset=3)

    @gr.kernel
    def past_the_end():
        y[4] = 1.0

    with pytest.raises(gr.CompileError, match=r"index 4 is out of bounds .* offset \(-4,\)"):
        past_the_end()


def test_struct_field_offsets_apply_to_every_member():
    # (Taichi 1.7.4's Struct.field(..., offset=) stops at "shape cannot be None when offset is set")
    s = gr.types.struct(a=float, v=gr.types.vector(2, float)).field(shape=(3,), offset=(-1,))
    t = gr.Struct.field({"a": float, "b": int}, shape=4, offset=2)

    @gr.kernel
    def k():
        for i in s:
            s[i].a = i
            s[i].v = gr.Vector([i, 2 * i])
        for i in t:
            t[i].a = i * 0.5
            t[i].b = i

    k()
    np.testing.assert_array_equal(s.a.to_numpy(), [-1, 0, 1])
    np.testing.assert_array_equal(s.v.to_numpy(), [[-1, -2], [0, 0], [1, 2]])
    np.testing.assert_array_equal(t.b.to_numpy(), [2, 3, 4, 5])
    assert s[-1].a == -1 and t[5].b == 5 and t[2].a == 1.0
    t[3] = {"a": 7.0, "b": 9}
    assert t.b.to_numpy()[1] == 9 and t[3].a == 7.0


def test_scalar_and_matrix_field_kinds():
    s, v = gr.field(gr.f32, shape=2), gr.Vector.field(3, gr.f32, shape=2)
    u = gr.Matrix.field(2, 2, gr.f32)
    assert isinstance(s, gr.ScalarField) and not isinstance(s, gr.MatrixField)
    assert isinstance(v, gr.MatrixField) and isinstance(u, gr.MatrixField) and not isinstance(v, gr.ScalarField)
    assert isinstance(v, gr.Field) and issubclass(gr.ScalarField, gr.Field)
    assert not isinstance(gr.ndarray(gr.f32, 2), gr.ScalarField)


def test_lang_ops_module():
    from gfxrt.lang import ops

    @gr.kernel
    def k(a: int, b: int) -> gr.types.vector(6, int):
        return gr.Vector([ops.cmp_lt(a, b), ops.bit_not(a), ops.neg(a), ops.bit_sar(-8, 1), ops.floordiv(-7, b),
                          ops.mod(-7, b)])

    np.testing.assert_array_equal(k(6, 3), [0, -7, -6, -4, -3, 2])  # Taichi's numbers
    assert ops.cmp_lt(1, 2) is True and ops.mod(-7, 3) == 2 and ops.floordiv(-7, 2) == -4 and ops.truediv(1, 2) == .5
    assert ops.sqrt is gr.sqrt and ops.atomic_add is gr.atomic_add and gr.lang.ops is ops


def test_lib_core_answers_for_this_machine():
    from gfxrt._lib import core
    assert core is gr._lib.core
    assert core.with_vulkan() == gr.lang.misc.is_arch_supported(gr.vulkan)
    assert core.with_cuda() == gr.lang.misc.is_arch_supported(gr.cuda)
    assert core.GGUI_AVAILABLE is True  # gr.ui draws on every adapter (off-screen without a display)
    assert core.is_integral(gr.i32) and core.is_real(gr.f32)


def test_ndarray_annotation_element_shape():
    @gr.kernel
    def k(a: gr.types.ndarray(element_shape=(2,), ndim=1)):
        for i in a:
            a[i] = a[i] * 2 + gr.Vector([1.0, 2.0]) * i

    @gr.kernel
    def sq(a: gr.types.ndarray(dtype=gr.f32, element_shape=(2, 2), ndim=1)):
        for i in a:
            a[i] = a[i] @ a[i]

    a = gr.Vector.ndarray(2, gr.f32, shape=3)
    a.fill(1)
    k(a)
    b = np.ones((3, 2))
    k(b)
    np.testing.assert_array_equal(a.to_numpy(), [[2, 2], [3, 4], [4, 6]])
    np.testing.assert_array_equal(b, [[2, 2], [3, 4], [4, 6]])
    m = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    sq(m)
    np.testing.assert_array_equal(m[1], [[46, 55], [66, 79]])
    with pytest.raises(TypeError, match=r"expected dtype vector\(2\)"):
        k(np.ones((3, 3)))
    with pytest.raises(TypeError, match=r"expected dtype vector\(2\)"):
        k(gr.Vector.ndarray(3, gr.f32, shape=3))
    assert gr.types.ndarray(gr.f32, 1, element_shape=(3,)) == gr.types.ndarray(gr.types.vector(3, gr.f32), 1)


def test_local_assigned_from_a_global_of_the_same_name():
    x = gr.field(gr.f32, shape=4)

    @gr.kernel
    def k():
        N_GLOBAL = N_GLOBAL  # noqa: F823  Taichi reads the global, then the name is a local
        for i in range(N_GLOBAL):
            x[i] = N_GLOBAL + i

    k()
    np.testing.assert_array_equal(x.to_numpy(), [4, 5, 6, 7])


def test_debug_mode_with_needs_grad_fields():
    gr.init(debug=True)
    try:
        x = gr.field(float, shape=4, needs_grad=True)
        y = gr.Vector.field(2, float, shape=(3, 3), needs_grad=True, offset=(1, 0))
        loss = gr.field(float, shape=(), needs_grad=True)

        @gr.kernel
        def f():
            for i in x:
                x[i] = i  # was an IndexError at launch: the access check's shadow of a field
            for i, j in y:
                y[i, j] = gr.Vector([i, j])

        @gr.kernel
        def g():
            for i in x:
                loss[None] += x[i] ** 2
            for i, j in y:
                loss[None] += y[i, j].sum()

        @gr.kernel
        def in_place():
            for i in x:
                x[i] = x[i] * 2  # reads, then overwrites: breaks the access rule

        f()
        with gr.Tape(loss=loss):
            g()
        np.testing.assert_array_equal(x.grad.to_numpy(), [0, 2, 4, 6])
        np.testing.assert_array_equal(y.grad.to_numpy(), np.ones((3, 3, 2)))
        in_place()
        with pytest.raises(gr.GfxrtError, match="reads an element of 'x' and then overwrites it"):
            gr.sync()

        @gr.kernel
        def store(i: int, j: int):
            y[i, j] = gr.Vector([1.0, 1.0])

        store(3, 2)  # y's first index is 1: rows 1 to 3
        gr.sync()
        store(0, 2)
        with pytest.raises(gr.OutOfBoundsError, match=r"offset \(1, 0\)\): index 0 is out of bounds for axis 0"):
            gr.sync()
    finally:
        gr.init()


_OFFSET_MODULE = '''
import gfxrt as gr
acc = gr.field(gr.f32, shape=(4,), offset={offset})


def kern(x):
    for i in acc:
        acc[i] += x[0]
'''


def test_a_fields_offset_is_part_of_the_offline_cache_key(tmp_path):
    import importlib.util
    import linecache
    import sys

    from gfxrt.compiler import ArgSpec, Target, compile_kernel
    from gfxrt.compiler.types import f32

    def compiled(offset):
        path = tmp_path / "offset_mod.py"
        path.write_text(_OFFSET_MODULE.format(offset=offset))
        linecache.checkcache(str(path))
        spec = importlib.util.spec_from_file_location("offset_mod", path)
        mod = sys.modules["offset_mod"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return compile_kernel(mod.kern, [ArgSpec("x", "ndarray", elem=f32, ndim=1)], Target(),
                              directory=str(tmp_path / "cache")).wgsl

    assert compiled(None) != compiled(-2) != compiled(3)


def test_lazy_grad_after_a_data_oriented_ndarray_member_was_bound():
    @gr.data_oriented
    class Holder:
        def __init__(self):
            self.a = gr.ndarray(gr.f32, shape=4)

        @gr.kernel
        def fill(self):
            for i in self.a:
                self.a[i] = i

    h = Holder()
    h.fill()  # binds the ndarray like a field (gfxrt/data/ndarray.py member)
    gr.root.lazy_grad()  # was AttributeError: 'Ndarray' object has no attribute 'offset'
    np.testing.assert_array_equal(h.a.to_numpy(), [0, 1, 2, 3])
