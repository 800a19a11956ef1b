"""Python callables and captured values inside kernels, as in Taichi: lambdas (written in the
kernel or captured), kernels defined in closures, captured numbers / tuples / numpy arrays
(compile-time constants)."""
import numpy as np
import pytest

import gfxrt as gr

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
TABLE = np.array([1.5, 2.5, 3.5, 4.5])          # f64 in numpy: f32 in kernels (Taichi's default)
GRID = np.arange(12, dtype=np.int32).reshape(3, 4)
COEFFS = (2.0, -1.0)
square = lambda v: v * v  # noqa: E731


def test_lambda_in_kernel_with_default_and_keyword():
    @gr.kernel
    def k(x: F1):
        f = lambda a, b=1.0: a * 3.0 + b  # noqa: E731
        for i in range(x.shape[0]):
            g = lambda t: f(t, b=0.5) * 2.0  # noqa: E731 - a lambda calling a lambda
            x[i] = f(x[i]) + g(1.0)

    x = np.arange(6, dtype=np.float32)
    k(x)
    np.testing.assert_allclose(x, np.arange(6) * 3 + 1 + 7)


def test_lambda_arguments_are_evaluated_once():
    counter = gr.field(gr.i32, shape=())

    @gr.func
    def tick() -> gr.i32:
        return gr.atomic_add(counter[None], 1)

    @gr.kernel
    def k() -> gr.i32:
        twice = lambda v: v + v  # noqa: E731
        return twice(tick())

    assert k() == 0 and counter[None] == 1


def test_captured_lambda_and_closure_kernel():
    def make(scale):
        offset = np.array([10.0, 20.0])

        @gr.kernel
        def k(x: F1):
            for i in range(x.shape[0]):
                x[i] = square(x[i]) * scale + offset[1] + COEFFS[0]
        return k

    x = np.arange(5, dtype=np.float32)
    make(3.0)(x)
    np.testing.assert_allclose(x, np.arange(5) ** 2 * 3 + 22)
    y = np.arange(5, dtype=np.float32)
    make(-1.0)(y)  # another closure: another kernel, its own constants
    np.testing.assert_allclose(y, -np.arange(5) ** 2 + 22)


def test_lambda_as_template_argument():
    @gr.kernel
    def apply(f: gr.template(), x: F1):
        for i in range(x.shape[0]):
            x[i] = f(x[i])

    x = np.arange(4, dtype=np.float32)
    apply(lambda v: v + 100.0, x)
    np.testing.assert_allclose(x, np.arange(4) + 100)
    apply(square, x)
    np.testing.assert_allclose(x, (np.arange(4) + 100) ** 2)


def test_captured_numpy_arrays_constant_and_runtime_indices():
    @gr.kernel
    def k(x: F1, idx: gr.types.ndarray(dtype=gr.i32, ndim=1)):
        for i in range(x.shape[0]):
            x[i] = TABLE[idx[i]] + GRID[idx[i] % 3, 1] * 100 + TABLE[2] * 1000 + GRID[2, 3] * 10000

    idx = np.array([0, 3, 1, 2, 2], np.int32)
    x = np.zeros(5, np.float32)
    k(x, idx)
    np.testing.assert_allclose(x, TABLE[idx] + GRID[idx % 3, 1] * 100 + 3500 + 110000)


def test_captured_numpy_array_constant_index_folds():

    @gr.kernel
    def k() -> gr.f32:
        return TABLE[3] * 2.0

    assert k() == 9.0


def test_captured_numpy_array_is_read_only():
    @gr.kernel
    def k():
        TABLE[0] = 1.0

    with pytest.raises(gr.CompileError, match="compile-time constant, read-only"):
        k()


def test_lambda_in_an_unrolled_loop():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            for j in gr.static(range(3)):
                f = lambda v: v + j  # noqa: E731, B023 - j read when called, as in Python
                x[i] = f(x[i])

    x = np.zeros(4, np.float32)
    k(x)
    np.testing.assert_array_equal(x, 3.0)


BIG = np.linspace(0.0, 1.0, 300)  # over CONST_ARRAY_MAX elements: a read-only device copy


def test_captured_large_numpy_array_and_graph_capture():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            x[i] = BIG[i * 7 % 300] + TABLE[i % 4]

    x = np.zeros(50, np.float32)
    k(x)
    i = np.arange(50)
    np.testing.assert_allclose(x, BIG[i * 7 % 300] + TABLE[i % 4], rtol=1e-6)

    @gr.kernel
    def small(x: F1):
        for i in range(x.shape[0]):
            x[i] = TABLE[i % 4] * 2.0

    y = gr.ndarray(gr.f32, shape=8)
    with gr.graph() as g:  # first compiled inside a capture: the small array lives in the shader
        small(y)
    g.replay()
    np.testing.assert_allclose(y.to_numpy(), TABLE[np.arange(8) % 4] * 2)


def test_small_captured_array_is_in_the_wgsl():
    from gfxrt.compiler import compile_kernel
    from gfxrt.compiler.spec import ArgSpec
    from gfxrt.compiler.target import Target

    def k(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(x.shape[0]):
            x[i] = TABLE[i % 4]

    src = compile_kernel(k, [ArgSpec("x", "ndarray", elem=gr.f32, ndim=1)], Target(frozenset(), 64)).wgsl
    assert "var<private>" in src and "array<f32, 4>(1.5f, 2.5f, 3.5f, 4.5f)" in src


def test_small_captured_array_in_the_ir_interpreter():
    from gfxrt.compiler import lower
    from gfxrt.compiler.interp import execute
    from gfxrt.compiler.spec import ArgSpec

    def k(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(x.shape[0]):
            x[i] = TABLE[(i + 1) % 4]

    x = np.zeros(6, np.float32)
    execute(lower(k, [ArgSpec("x", "ndarray", elem=gr.f32, ndim=1)]), [x])
    np.testing.assert_allclose(x, TABLE[(np.arange(6) + 1) % 4])


def test_template_parameter_is_the_callers_variable():
    """A variable passed to a gr.template() parameter is passed by reference, as in Taichi
    (oit_renderer's `blend(color, base_color)`); expected values: Taichi 1.7.4 on the CPU."""
    out = gr.Vector.field(4, gr.f32, shape=5)
    bg = gr.math.vec4(0.2, 0.2, 0.2, 1)

    @gr.func
    def blend(color: gr.template(), base: gr.template()):
        color.rgb += (1 - color.a) * base.rgb * base.a
        color.a += (1 - color.a) * base.a

    @gr.func
    def bump(c: gr.template()):
        c += 1.0

    @gr.func
    def last(c: gr.template()):
        c[3] += 1.0

    @gr.kernel
    def run():
        c0 = gr.math.vec4(0)
        bump(c0)                     # a name assigned once at kernel scope
        out[0] = c0
        c1 = gr.math.vec4(0)
        last(c1)
        out[1] = c1
        for i in range(2, 5):
            c = gr.math.vec4(0)      # a variable in a parallel loop
            blend(c, bg)
            if i == 3:
                blend(c, bg)
            out[i] = c
    run()
    got = out.to_numpy()
    assert (got[0] == 1).all() and (got[1] == [0, 0, 0, 1]).all()
    assert np.allclose(got[2], [0.2, 0.2, 0.2, 1]) and np.allclose(got[3], [0.2, 0.2, 0.2, 1])
