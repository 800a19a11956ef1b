"""Issue 24 item 7, the smaller API a Taichi user meets, against Taichi 1.7.4's behaviour (each
expectation below was read off Taichi 1.7.4 on lavapipe): `gr.types.vector()` /
`gr.types.matrix()` without sizes, `gr.lang.exception`."""
import numpy as np
import pytest

import gfxrt as gr


@gr.kernel
def _first_of_vectors(a: gr.types.ndarray(dtype=gr.types.vector(), ndim=1)) -> gr.f32:
    s = 0.0
    for i in a:
        s += a[i][0]
    return s


@gr.kernel
def _matrix_entry(a: gr.types.ndarray(dtype=gr.types.matrix(), ndim=1)) -> gr.f32:
    return a[0][0, 1]


@gr.kernel
def _f32_vectors(a: gr.types.ndarray(dtype=gr.types.vector(dtype=gr.f32), ndim=1)) -> gr.f32:
    return a[0][a[0].n - 1]


def test_sizeless_vector_and_matrix_annotations_take_any_size_and_dtype():
    for n, dt in ((2, gr.f32), (3, gr.i32), (4, gr.f32)):
        x = gr.Vector.ndarray(n, dt, 3)
        x.fill(1)
        assert _first_of_vectors(x) == 3.0          # Taichi: 3.0 for vec2 f32 and vec3 i32
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)  # numpy: the last axis is the vector
    assert _first_of_vectors(xs) == 0 + 3 + 6 + 9
    m = gr.Matrix.ndarray(2, 2, gr.f32, 3)
    m.fill(2)
    assert _matrix_entry(m) == 2.0
    with pytest.raises(TypeError, match="expected dtype matrix"):  # Taichi: a vector array is refused too
        _matrix_entry(gr.Vector.ndarray(2, gr.f32, 3))
    with pytest.raises(TypeError, match="expected dtype vector"):
        _first_of_vectors(gr.ndarray(gr.f32, 3))
    v = gr.Vector.ndarray(3, gr.f32, 1)
    v[0] = [1, 2, 5]
    assert _f32_vectors(v) == 5.0
    with pytest.raises(TypeError, match="expected dtype vector"):
        _f32_vectors(gr.Vector.ndarray(3, gr.i32, 1))


def test_sizeless_types_are_patterns_and_sized_ones_keep_their_defaults():
    assert gr.types.vector().matches(gr.types.vector(5, gr.i8))
    assert not gr.types.vector().matches(gr.types.matrix(2, 2))
    assert gr.types.matrix(2).matches(gr.types.matrix(2, 3, gr.f64))
    assert not gr.types.matrix(2).matches(gr.types.matrix(3, 2))
    assert gr.types.vector(3) == gr.types.vector(3, gr.f32)   # gfxrt's default dtype for a sized type
    with pytest.raises(ValueError):
        gr.types.vector(0)
    with pytest.raises(ValueError):
        gr.types.matrix(2, -1)


def test_lang_exception_is_taichis_module_of_exception_names():
    from gfxrt.lang.exception import TaichiCompilationError, TaichiRuntimeError
    assert gr.lang.exception.TaichiCompilationError is gr.CompileError is TaichiCompilationError
    assert TaichiRuntimeError is gr.GfxrtError
    assert set(gr.lang.exception.__all__) >= {"TaichiSyntaxError", "TaichiTypeError", "TaichiCompilationError",
                                              "TaichiNameError", "TaichiRuntimeError", "TaichiRuntimeTypeError",
                                              "TaichiAssertionError"}

    @gr.kernel
    def bad():
        undefined_name_here += 1  # noqa: F821, F841

    with pytest.raises(gr.lang.exception.TaichiCompilationError):
        bad()
