"""Bad input: every rejected construct names the file, the line, shows the source line and
says what to do instead; wrong arguments raise before anything is launched."""
import dataclasses
import inspect

import numpy as np
import pytest
from gfxrt.compiler.spec import KernelSpec

import gfxrt as gr
from gfxrt.engine.program import Program

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
F2 = gr.types.ndarray(dtype=gr.f32, ndim=2)
GLOBAL_NP = np.array(["a", "b"])  # numeric arrays are compile-time constants (test_taichi_callables)


def plain_python(v):
    return v + 1


@gr.func
def recursive(v):
    return recursive(v - 1)  # <- here


@gr.func
def ping(v):
    return pong(v)


@gr.func
def pong(v):
    return ping(v)  # <- here


def _marker_line(fn, marker="# <- here"):
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, ln in enumerate(lines) if marker in ln)


def compile_error(kernel, *args, fn=None) -> gr.CompileError:
    with pytest.raises(gr.CompileError) as e:
        kernel(*args)
    err = e.value
    msg = str(err)
    assert "test_lang_errors.py" in msg
    line = _marker_line(fn or kernel.func)
    assert err.loc.line == line, msg
    src = inspect.getsourcelines(fn or kernel.func)[0][line - inspect.getsourcelines(fn or kernel.func)[1]]
    assert src.strip().split("#")[0].strip() in msg  # the source line is shown
    return err


X = np.zeros(4, np.float32)


def test_try_except():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            try:  # <- here
                x[i] = 1.0
            except ValueError:
                pass
    assert "try/except is not supported" in compile_error(k, X).message


def test_lambda():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            f = lambda *v: v  # <- here  # noqa: E731
            x[i] = f(1.0)
    assert "plain positional parameters" in compile_error(k, X).message  # plain lambdas work (test_taichi_callables)


def test_class_definition():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):  # noqa: B007
            class Local:  # <- here
                pass
    assert "class definitions are not supported" in compile_error(k, X).message


def test_recursion():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            x[i] = recursive(1.0)
    err = compile_error(k, X, fn=recursive)
    assert "recursion is not supported" in err.message and "recursive -> recursive" in err.message
    assert "rewrite it with a loop" in err.message and "called at" in err.message


def test_mutual_recursion():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            x[i] = ping(1.0)
    assert "ping -> pong -> ping" in compile_error(k, X, fn=pong).message


def test_undefined_name():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            x[i] = not_defined_anywhere * 2  # <- here  # noqa: F821
    assert "name 'not_defined_anywhere' is not defined" in compile_error(k, X).message


def test_read_before_assignment():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            x[i] = later  # <- here  # noqa: F821
            later = 1.0  # noqa: F841
    assert "'later' is read before it is assigned" in compile_error(k, X).message


def test_wrong_number_of_indices():
    @gr.kernel
    def k(x: F2):
        for i in range(x.shape[0]):
            x[i] = 1.0  # <- here
    err = compile_error(k, np.zeros((2, 2), np.float32))
    assert "x has 2 dimension(s) but is indexed with 1 index" in err.message


def test_zero_d_field_needs_none_index():
    f = gr.field(gr.f32, shape=())

    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            f[i] += x[i]  # <- here
    assert "use f[None] for a 0-d container" in compile_error(k, X).message


def test_plain_python_function_call():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            x[i] = plain_python(x[i])  # <- here
    err = compile_error(k, X)
    assert "cannot call the Python function 'plain_python'" in err.message
    assert "Decorate it with @gr.func" in err.message


def test_float_index():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            x[i * 0.5] = 1.0  # <- here
    assert "must be an integer, not f32" in compile_error(k, X).message


def test_break_out_of_parallel_loop():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            if x[i] > 0:
                break  # <- here
    assert "`break` cannot leave a parallel loop" in compile_error(k, X).message


def test_race_on_kernel_scope_variable():
    @gr.kernel
    def k(x: F1) -> gr.f32:
        s = 0.0
        for i in range(x.shape[0]):
            s = x[i]  # each thread's own s (assigned before it is read: thread-private in the loop)
        return s  # <- here
    assert "use `s += v` (a reduction)" in compile_error(k, X).message.lower()

    @gr.kernel
    def k2(x: F1) -> gr.f32:
        s = 0.0
        for i in range(x.shape[0]):
            x[i] = s
            s = x[i] + 1.0  # <- here
        return 0.0
    assert "use `s += v` (a reduction)" in compile_error(k2, X).message.lower()


def test_reading_a_variable_while_it_is_reduced():
    @gr.kernel
    def k(x: F1) -> gr.f32:
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i]
            x[i] = s  # <- here
        return s
    assert "only defined after the loop" in compile_error(k, X).message


def test_loop_local_used_after_the_loop():
    @gr.kernel
    def k(x: F1) -> gr.f32:
        for i in range(x.shape[0]):
            t = x[i]
        return t  # <- here
    assert "each thread has its own copy" in compile_error(k, X).message


def test_assigning_an_argument_inside_a_loop():
    @gr.kernel
    def k(x: F1, a: gr.f32):
        for i in range(x.shape[0]):
            a = a * 2  # <- here
            x[i] = a
    assert "copy it into a new variable first" in compile_error(k, X, 1.0).message


def test_static_over_run_time_bounds():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            for j in gr.static(range(x.shape[0])):  # <- here  # noqa: B007
                x[i] += 1.0
    assert "needs compile-time bounds" in compile_error(k, X).message


def test_captured_numpy_array():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            x[i] = GLOBAL_NP[0]  # <- here
    assert "kernels can capture numeric arrays only" in compile_error(k, X).message


def test_string_value():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            x[i] = "text"  # <- here
    assert "expected a scalar" in compile_error(k, X).message


def test_vector_shape_mismatch():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            v = gr.Vector([1.0, 2.0]) + gr.Vector([1.0, 2.0, 3.0])  # <- here
            x[i] = v[0]
    assert "shape mismatch: (2,) vs (3,)" in compile_error(k, X).message


def test_ndrange_with_too_few_loop_variables():
    @gr.kernel
    def k(x: F2):
        for i in gr.ndrange(x.shape[0], x.shape[1]):  # <- here
            x[i, 0] = 1.0
    assert "for i, j in" in compile_error(k, np.zeros((2, 2), np.float32)).message


def test_return_inside_parallel_loop():
    @gr.kernel
    def k(x: F1) -> gr.f32:
        for i in range(x.shape[0]):
            return x[i]  # <- here
    assert "`return` inside a parallel loop" in compile_error(k, X).message


def test_kernel_calling_a_kernel():
    @gr.kernel
    def inner(x: F1):
        for i in range(x.shape[0]):
            x[i] = 1.0

    @gr.kernel
    def k(x: F1):
        inner(x)  # <- here
    assert "kernels cannot call kernels" in compile_error(k, X).message


def test_missing_annotation_is_a_compile_error():
    @gr.kernel
    def k(x):
        for i in range(x.shape[0]):
            x[i] = 1.0
    with pytest.raises(gr.CompileError, match="needs a type annotation"):
        k(X)


def test_error_points_at_the_func_line_and_the_call():
    @gr.func
    def helper(v):
        return v + undefined_in_helper  # <- here  # noqa: F821

    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            x[i] = helper(x[i])
    err = compile_error(k, X, fn=helper)
    assert "in @gr.func 'helper', called at" in err.message and "x[i] = helper(x[i])" in err.message


# -- wrong arguments: TypeError / ValueError before anything is launched -----------------------

@gr.kernel
def two_args(a: gr.f32, x: F1):
    for i in range(x.shape[0]):
        x[i] = a


@pytest.mark.parametrize("args, kwargs, exc, text", [
    ((1.0,), {}, TypeError, "missing argument 'x'"),
    ((1.0, X, X), {}, TypeError, "takes 2 arguments but 3 were given"),
    ((1.0,), {"x": X, "y": X}, TypeError, "unexpected argument"),
    ((1.0, np.zeros(4, np.float64)), {}, TypeError, "float64"),
    ((1.0, np.zeros(4, np.int32)), {}, TypeError, "expected dtype f32, got i32"),
    ((1.0, np.zeros((2, 2), np.float32)), {}, ValueError, "expected ndim 1, got 2"),
    (("a", X), {}, TypeError, "expected f32, got str"),
    ((1.0, [1.0, 2.0]), {}, TypeError, "must be a gr.ndarray or a numpy array"),
])
def test_wrong_arguments_raise_before_launch(args, kwargs, exc, text):
    rt = gr.runtime()
    before = rt.stats()["launches"]
    with pytest.raises(exc, match=text):
        two_args(*args, **kwargs)
    assert rt.stats()["launches"] == before


def test_out_of_range_integer_argument():
    @gr.kernel
    def k(x: gr.types.ndarray(dtype=gr.i32, ndim=1), v: gr.i32):
        for i in range(x.shape[0]):
            x[i] = v
    with pytest.raises(ValueError, match="does not fit in i32"):
        k(np.zeros(2, np.int32), 2**40)


def test_invalid_wgsl_is_an_internal_error_with_the_code_attached():
    spec = KernelSpec("broken", "@compute @workgroup_size(1) fn main() { let x: i32 = 1.5f; }",
                      (), (), 0, ())
    spec = dataclasses.replace(spec, tasks=())
    with pytest.raises(gr.InternalCompilerError) as e:
        Program(gr.device().device, dataclasses.replace(spec, wgsl=spec.wgsl))
    assert "generated WGSL" in str(e.value) and "let x: i32 = 1.5f" in str(e.value)
    assert e.value.wgsl == spec.wgsl


def test_break_inside_an_unrolled_loop():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            for _j in range(3):
                for c in gr.static(range(2)):
                    if x[i] > c:
                        break  # <- here
    assert "cannot depend on a run-time condition" in compile_error(k, X).message  # compile-time ones work
