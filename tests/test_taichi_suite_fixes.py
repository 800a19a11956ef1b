"""Regressions for the gaps the translated Taichi suite (tools/taichi_suite) found. Our own
tests, written from Taichi's documented behaviour."""
import warnings

import numpy as np
import pytest

import gfxrt as gr


# -- statements --------------------------------------------------------------------------
def test_chained_assignment_evaluates_once_left_to_right():
    out = gr.field(gr.i32, shape=4)

    @gr.kernel
    def k():
        a = 1
        b = 1
        a = b = a + b          # Python: the value once, then a, then b
        c, d = (e, f) = (3, 4)
        out[0] = a
        out[1] = b
        out[2] = c + e
        out[3] = d * f

    k()
    assert out.to_numpy().tolist() == [2, 2, 6, 16]


def test_chained_assignment_to_array_elements():
    x = gr.field(gr.f32, shape=3)

    @gr.kernel
    def k(v: gr.f32):
        x[0] = x[2] = v

    k(1.5)
    assert x.to_numpy().tolist() == [1.5, 0.0, 1.5]


def test_bare_return_ends_kernel():
    x = gr.field(gr.i32, shape=())

    @gr.kernel
    def k():
        x[None] = 7
        return

    @gr.kernel
    def k2():
        x[None] += 1
        return None

    k()
    k2()
    assert x[None] == 8


def test_return_in_static_if_makes_the_rest_dead():
    @gr.kernel
    def foo(a: gr.template()) -> gr.i32:
        if gr.static(a == 1):
            return 1
        elif gr.static(a == 2):
            return 2
        return 3

    assert (foo(1), foo(2), foo(5)) == (1, 2, 3)


def test_code_after_plain_return_is_still_an_error():
    @gr.kernel
    def k() -> gr.i32:
        return 1
        return 2  # noqa

    with pytest.raises(gr.CompileError, match="never runs"):
        k()


# -- atomics as methods --------------------------------------------------------------------
def test_atomic_methods_on_locals_and_elements():
    n = 64
    x = gr.field(gr.i32, shape=n)
    y = gr.field(gr.i32, shape=n)
    total = gr.field(gr.i32, shape=())

    @gr.kernel
    def k():
        for i in range(n):
            s = i
            x[i] = s.atomic_add(5)     # returns the old value; s becomes i + 5
            y[i] = s
            total[None].atomic_add(1)
            y[i].atomic_max(1000)

    k()
    assert x.to_numpy().tolist() == list(range(n))
    assert y.to_numpy().tolist() == [1000] * n
    assert total[None] == n


# -- Taichi names --------------------------------------------------------------------------
def test_var_and_layout_are_the_old_field_spellings():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        a = gr.var(gr.f32, shape=3)
        b = gr.var(gr.i32)

        @gr.layout
        def place():
            gr.root.dense(gr.i, 4).place(b)

    assert a.shape == (3,) and b.shape == (4,)
    b[2] = 5
    assert b.to_numpy().tolist() == [0, 0, 5, 0]


def test_taichi_exception_names():
    @gr.kernel
    def bad():
        undefined_name_xyz += 1  # noqa: F821, F841

    for exc in (gr.TaichiCompilationError, gr.TaichiSyntaxError, gr.TaichiNameError):
        with pytest.raises(exc):
            bad()
    assert issubclass(gr.TaichiRuntimeError, gr.GfxrtError)


def test_lang_impl_current_cfg():
    gr.init(default_fp=gr.f64)
    try:
        cfg = gr.lang.impl.current_cfg()
        assert cfg.default_fp == gr.f64 and cfg.default_ip == gr.i32
        assert gr.lang.impl.get_runtime().default_fp == gr.f64
    finally:
        gr.init()
    assert gr.lang.impl.current_cfg().default_fp == gr.f32


def test_types_predicates():
    assert gr.types.is_integral(gr.i8) and gr.types.is_integral(gr.u64)
    assert not gr.types.is_integral(gr.f32)
    assert gr.types.is_signed(gr.i16) and not gr.types.is_signed(gr.u32)
    assert gr.types.is_real(gr.f16) and not gr.types.is_real(gr.i32)
    assert np.dtype(gr.f32.np) == np.float32


# -- expressions ---------------------------------------------------------------------------
def test_func_decorating_inside_a_kernel():
    val = gr.field(gr.f32, shape=4)

    def f(i):
        return i * 0.1 + 0.4

    @gr.kernel
    def fill():
        for i in range(4):
            val[i] = gr.func(f)(gr.cast(i, gr.f32))

    fill()
    np.testing.assert_allclose(val.to_numpy(), np.arange(4) * 0.1 + 0.4, rtol=1e-6)


def test_python_int_float_annotations_are_the_defaults():
    @gr.func
    def half(a) -> float:
        return a / 2

    @gr.kernel
    def k(a: float, n: int) -> int:
        return int(half(a) * n)

    @gr.kernel
    def which() -> float:
        return 0.1

    assert k(3.0, 4) == 6
    gr.init(default_fp=gr.f64)
    try:
        assert which() == 0.1  # f64: exactly Python's 0.1
    finally:
        gr.init()
    assert which() != 0.1 and abs(which() - 0.1) < 1e-7


def test_vector_comparisons_are_componentwise():
    out = gr.Matrix.field(2, 2, gr.i32, shape=4)
    r = gr.field(gr.i32, shape=3)

    @gr.kernel
    def k(t: gr.f32):
        m = gr.Matrix([[1.0, 2.0], [3.0, 4.0]])
        out[0] = m == t
        out[1] = m < t
        out[2] = t <= m
        out[3] = 7 if m > t else -1       # a vector condition selects componentwise
        v = gr.Vector([1, 2, 3])
        r[0] = all(v == [1, 2, 3])
        r[1] = any(v > 2)
        r[2] = all(v > 1)

    k(2.0)
    o = out.to_numpy()
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert (o[0] == (m == 2)).all() and (o[1] == (m < 2)).all() and (o[2] == (2 <= m)).all()
    assert (o[3] == np.where(m > 2, 7, -1)).all()
    assert r.to_numpy().tolist() == [1, 1, 0]


def test_static_boolean_operators_keep_python_values():
    @gr.kernel
    def k() -> gr.i32:
        return gr.static(0 or 3 or 5) * 10 + gr.static(5 and 2 and 0)

    assert k() == 30


def test_return_annotation_from_a_closure_is_part_of_the_kernel():
    def make(ret):
        @gr.kernel
        def f(a: gr.f32) -> ret:
            return a * 2

        return f

    assert make(gr.f32)(0.2) == pytest.approx(0.4)
    assert make(gr.i32)(0.2) == 0   # same source, other annotation: not the cached f32 kernel


def test_field_copy_from_converts_dtypes():
    src = gr.field(gr.i32, shape=(2, 3))
    src.fill(3)
    dst = gr.field(gr.f32, shape=(2, 3))
    dst.copy_from(src)
    assert (dst.to_numpy() == 3.0).all() and dst.dtype == gr.f32
    with pytest.raises(ValueError):
        dst.copy_from(gr.field(gr.f16, shape=(3, 2)))
    with pytest.raises(TypeError):
        dst.copy_from(np.zeros((2, 3)))


def test_operator_functions_in_kernels():
    import operator
    r = gr.Vector.field(2, gr.i32, shape=3)
    a, b = gr.Vector([42, 42]), gr.Vector([24, 20])

    @gr.kernel
    def k(op: gr.template(), i: gr.template()):
        r[i] = op(a, b)

    for i, op in enumerate((operator.add, operator.sub, operator.mul)):
        k(op, i)
    assert r.to_numpy().tolist() == [[66, 62], [18, 22], [1008, 840]]


def test_missing_return_is_an_error():
    @gr.kernel
    def k() -> gr.i32:
        pass

    @gr.func
    def f() -> gr.i32:
        pass

    @gr.kernel
    def k2() -> gr.i32:
        return f()

    with pytest.raises(gr.CompileError, match="Kernel has a return type but does not have a return statement"):
        k()
    with pytest.raises(gr.CompileError, match="Function has a return type but does not have a return statement"):
        k2()


def test_redeclaring_a_variable_with_another_type_is_an_error():
    @gr.kernel
    def k():
        d: gr.i32 = 2
        d: gr.f32 = 2.0  # noqa: F841, F842

    with pytest.raises(gr.CompileError, match="keeps its type"):
        k()


def test_dtype_to_string_and_host_value():
    assert gr.f32.to_string() == str(gr.f32) == "f32"
    v = gr.Vector.field(2, gr.i32, shape=())
    v[None] = [1, 2]
    assert v[None].value.to_list() == [1, 2]


def test_logical_not_and_parallelize():
    x = gr.Matrix.field(2, 2, gr.i32, shape=())
    y = gr.field(gr.i32, shape=2)

    @gr.kernel
    def k(a: gr.i32):
        gr.parallelize(4)  # Taichi's old CPU-thread hint: accepted, no effect
        x[None] = gr.logical_not(gr.Matrix([[3, 0], [0, -1]]))
        y[0] = gr.logical_not(a)
        y[1] = gr.logical_not(a + 1)

    k(0)
    assert x[None].to_list() == [[0, 1], [1, 0]] and y.to_numpy().tolist() == [1, 0]
    assert gr.logical_not(np.array([0, 5])).tolist() == [1, 0]


def test_components_of_a_kernel_scope_vector_are_assignable():
    out = gr.field(gr.i32, shape=6)

    @gr.kernel
    def k(n: gr.i32):
        tmp = gr.Vector([1, 2, 3])      # bound at kernel scope, later written by component
        tmp[1] = 7
        tmp.z += n
        for i in range(3):
            v = gr.Vector([4, 5, 6])
            v[(i + n) % 3] = i          # a run-time component index
            out[3 + i] = v[0] * 100 + v[1] * 10 + v[2]
        out[0] = tmp[0]
        out[1] = tmp[1]
        out[2] = tmp[2]

    k(1)
    assert out.to_numpy().tolist() == [1, 7, 4, 406, 451, 256]


# -- autodiff and random -------------------------------------------------------------------
def test_gradients_through_f32_f64_casts():
    loss = gr.field(gr.f32, shape=(), needs_grad=True)
    x = gr.field(gr.f64, shape=(), needs_grad=True)

    @gr.kernel
    def narrow():
        loss[None] = x[None] * 2.0        # an f64 read stored into f32

    loss.grad[None] = 1
    narrow.grad()
    assert x.grad[None] == 2.0

    loss64 = gr.field(gr.f64, shape=(), needs_grad=True)
    y = gr.field(gr.f32, shape=(), needs_grad=True)

    @gr.kernel
    def widen():
        loss64[None] = y[None] * 3

    with gr.Tape(loss64):
        widen()
    assert y.grad[None] == 3.0


def test_random_64_bit_types():
    n = 128
    a = gr.field(gr.f64, shape=(n, n))
    b = gr.field(gr.f32, shape=(n, n))

    @gr.kernel
    def fill():
        for i, j in a:
            a[i, j] = gr.random(gr.f64)
            b[i, j] = (float(gr.random(gr.i64)) + float(2**63)) / float(2**64)

    fill()
    for arr in (a.to_numpy(), b.to_numpy()):
        assert 0.0 <= arr.min() and arr.max() < 1.0
        assert abs(arr.mean() - 0.5) < 0.01 and abs((arr ** 2).mean() - 1 / 3) < 0.01
    # more than f32's 24 bits of mantissa: the values are not all f32-representable
    assert (a.to_numpy() != a.to_numpy().astype(np.float32)).mean() > 0.9


def test_vector_element_literals_index_vectors_and_static_tuples():
    x = gr.Vector.field(2, dtype=gr.f32, shape=3, name="x")
    m = gr.Matrix.field(2, 3, dtype=gr.i32, shape=2)
    d = gr.field(gr.f32, shape=2, needs_dual=True)
    assert d.dual.shape == (2,)

    @gr.kernel
    def k():
        for i in range(3):
            x[i] = [i, 1.0]                                 # a list literal into a vector element
        for i in range(2):
            for J in gr.static(gr.grouped(gr.ndrange(2, 3))):
                m[i][J] = J[0] + J[1] * 10 + i              # an index vector into a matrix element
        a, b = gr.static(x, m)                              # gr.static of several values: a tuple
        a[0][1] = 5.0
        b[1][0, 0] += 100

    k()
    assert x.to_numpy().tolist() == [[0, 5], [1, 1], [2, 1]]
    assert m.to_numpy()[1].tolist() == [[101, 11, 21], [2, 12, 22]]


def test_one_iteration_top_level_loop_runs_serially():
    @gr.kernel
    def fib(n: gr.i32) -> gr.i32:
        a, b = 0, 1
        for _ in range(1):          # Taichi's idiom for a serial inner loop
            for _i in range(n):
                a, b = b, a + b
        return b

    assert [fib(n) for n in range(6)] == [1, 1, 2, 3, 5, 8]


def test_lazy_dual_gives_fields_tangents_for_fwdmode():
    n = 4
    loss = gr.field(gr.f32, shape=n)
    x = gr.field(gr.f32, shape=n)
    gr.root.lazy_dual()
    x.from_numpy(np.arange(n, dtype=np.float32))

    @gr.kernel
    def f():
        for i in range(n):
            loss[i] = x[i] * x[i]

    with gr.ad.FwdMode(loss=loss, param=x, seed=[1.0] * n):
        f()
    assert loss.dual.to_numpy().tolist() == [0.0, 2.0, 4.0, 6.0]


def test_fill_of_vector_values_in_kernels():
    x = gr.Matrix.field(2, 2, gr.f32, shape=2)
    z = gr.field(gr.f32, shape=())
    z[None] = 5

    @gr.kernel
    def f():
        x[0].fill(z[None])          # an array element
        v = gr.Vector([1.0, 2.0])
        v.fill(7.0)                 # a local vector
        x[1][0, 0] = v[1]

    f()
    assert x.to_numpy().tolist() == [[[5, 5], [5, 5]], [[7, 0], [0, 0]]]


def test_vector_values_as_template_arguments():
    d = gr.field(gr.i32, shape=3)

    @gr.kernel
    def foo(a: gr.template(), b: gr.template()):
        for i in gr.static(range(3)):
            d[i] = a[i] < b[i]

    for _ in range(2):  # the second call takes the launch path that caches by argument values
        foo(gr.Vector([1, 1, 2]), gr.Vector([2, 1, 1]))
    assert d.to_numpy().tolist() == [1, 0, 0]


def test_field_fill_inside_kernels():
    x = gr.field(gr.i32, shape=(3, 3))
    y = gr.Vector.field(3, gr.f32, shape=4)

    @gr.kernel
    def k(n: gr.i32):
        x.fill(n)                 # kernel scope: a parallel loop over the field
        y.fill([4, 5, 6])

    @gr.kernel
    def k2():
        for _ in range(1):
            x.fill(1)             # nested: a serial loop

    k(7)
    assert (x.to_numpy() == 7).all() and (y.to_numpy() == [4, 5, 6]).all()
    k2()
    assert (x.to_numpy() == 1).all()


def _reduce_through(ti_op, a, tot):
    @gr.kernel
    def reduce_field():
        for i in a:
            ti_op(tot[None], a[i])

    @gr.kernel
    def reduce_local() -> gr.i32:
        s = 0
        for i in a:
            ti_op(s, a[i])
        return s

    tot[None] = 0
    reduce_field()
    return tot[None], reduce_local()


def test_atomic_called_through_a_variable_updates_a_kernel_scope_reduction():
    """Taichi's tests pick the atomic from a table (`ti_op = ops[op]; ti_op(s, a[i])`)."""
    a = gr.field(gr.i32, shape=4096)
    tot = gr.field(gr.i32, shape=())
    a.from_numpy(np.arange(1, 4097, dtype=np.int32))
    for op, want in ((gr.atomic_add, 4096 * 4097 // 2), (gr.atomic_max, 4096), (gr.atomic_xor, 4096)):
        assert _reduce_through(op, a, tot) == (want, want)


def test_taichi_type_lists_core_predicates_and_legacy_constructors():
    pt = gr.types.primitive_types
    assert pt.all_types == pt.real_types + pt.integer_types and gr.i8 in pt.integer_types and float in pt.real_types
    assert gr.core.is_signed(gr.i16) and not gr.core.is_signed(gr.u16) and gr.core.is_real(gr.f64)
    v = gr.Vector(3, dt=gr.i32, shape=(2, 4))          # pre-1.0 ti.Vector(n, dt, shape): a field
    m = gr.Matrix(2, 3, gr.f32, shape=5)
    assert v.shape == (2, 4) and v.n == 3 and m.to_numpy().shape == (5, 2, 3)
    assert gr.Vector([1, 2]).tolist() == [1, 2]        # a list is still a value


def test_unpack_and_integer_gradient_errors_have_pythons_and_taichis_types():
    a = gr.field(gr.f32, shape=())
    b = gr.field(gr.f32, shape=())

    @gr.kernel
    def too_many():
        a[None], b[None] = 2, 3, 4

    @gr.kernel
    def not_a_sequence():
        a[None], b[None] = 2

    with pytest.raises(ValueError, match="cannot unpack 3 values into 2 names"):
        too_many()
    with pytest.raises(TypeError, match="cannot unpack"):
        not_a_sequence()
    for make in (lambda: gr.field(int, shape=1, needs_grad=True),
                 lambda: gr.Vector.field(3, int, shape=1, needs_grad=True),
                 lambda: gr.ndarray(gr.i32, shape=2, needs_grad=True)):
        with pytest.raises(RuntimeError, match="is not supported for field with `needs_grad=True`"):
            make()
        with pytest.raises(TypeError):  # gfxrt's own contract: a wrong argument is a TypeError
            make()
