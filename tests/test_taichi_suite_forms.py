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
