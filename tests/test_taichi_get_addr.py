"""gr.get_addr(f, I) (Taichi's ti.get_addr): the byte offset of an element in its field's storage.
Where gfxrt's layout is Taichi's (one field under one dense level per axis, `shape=` fields, vector
and matrix elements with their components together, `offset=`), the distances are the ones Taichi
1.7.4 printed on its CPU backend (its Vulkan backend has no get_addr); nested dense levels of one
axis and fields placed together differ, and are pinned here as gfxrt's row-major layout."""
import numpy as np
import pytest

import gfxrt as gr

# an address is a u64 (Taichi's type): kernels that compute one need the adapter feature shader-int64
pytestmark = pytest.mark.skipif("shader-int64" not in gr.device().features, reason="no shader-int64 here")

x = gr.field(gr.f32, shape=(4, 3), offset=(-2, 5))
h = gr.field(gr.f16, shape=8)
m = gr.Matrix.field(2, 3, gr.f64, shape=(2, 2)) if "shader-f64" in gr.device().features else None
v = gr.Vector.field(3, gr.f32, shape=4)
s = gr.field(gr.f32)
gr.root.dense(gr.i, 3).dense(gr.j, 4).place(s)
blocked = gr.field(gr.i32)
gr.root.dense(gr.ij, (1, 2)).dense(gr.ij, 2).dense(gr.ij, 2).place(blocked)
c, d = gr.field(gr.i32), gr.field(gr.f32)
gr.root.dense(gr.i, 4).place(c, d)


@gr.kernel
def distances() -> gr.types.vector(6, gr.i32):
    return gr.Vector([gr.get_addr(x, [1, 6]) - gr.get_addr(x, [-2, 5]),   # offset= fields: x[-2, 5] first
                      gr.get_addr(h, 5) - gr.get_addr(h, 0),                # f16: 2 bytes
                      gr.get_addr(v, [3]) - gr.get_addr(v, [0]),            # a vector's components together
                      gr.get_addr(s.snode, [1, 0]) - gr.get_addr(s.snode, [0, 0]),
                      gr.get_addr(s.snode, [0, 1]) - gr.get_addr(s.snode, [0, 0]),
                      gr.get_addr(c.snode, [1]) - gr.get_addr(c.snode, [0])], dt=gr.i32)


def test_distances_are_taichis_where_the_layouts_agree():
    # Taichi 1.7.4 (arch=cpu): 40, 10, 36, 16, 4; c placed with d: 16 there (one cell holds both), 4 here
    assert list(distances()) == [40, 10, 36, 16, 4, 4]


@pytest.mark.skipif(m is None, reason="no shader-f64 on this adapter")
def test_matrix_elements_of_f64():
    @gr.kernel
    def k() -> gr.types.vector(2, gr.i32):
        return gr.Vector([gr.get_addr(m, [1, 1]) - gr.get_addr(m, [0, 0]),
                          gr.get_addr(m, [0, 1]) - gr.get_addr(m, [0, 0])], dt=gr.i32)
    assert list(k()) == [144, 48]  # Taichi 1.7.4 (arch=cpu)


@gr.kernel
def fill_offsets():
    for i, j in blocked:  # Taichi's algorithm/print_offset.py
        base = gr.get_addr(blocked.snode, [0, 0])
        blocked[i, j] = int(gr.get_addr(blocked.snode, [i, j]) - base) // 4


def test_print_offset_shows_gfxrts_row_major_layout():
    """Nested dense levels of one axis: Taichi stores blocks ([[0 1 4 5 16 ...]]); gfxrt keeps one
    row-major array per field, and get_addr says so."""
    fill_offsets()
    np.testing.assert_array_equal(blocked.to_numpy(), np.arange(32).reshape(4, 8))


def test_an_address_is_a_u64_and_ndarrays_have_them_too():
    @gr.kernel
    def k(a: gr.types.ndarray(dtype=gr.i32, ndim=2)) -> gr.u64:
        return gr.get_addr(a, [2, 1])
    assert k(np.zeros((3, 5), np.int32)) == (2 * 5 + 1) * 4


def test_misuse_is_a_compile_error():
    @gr.kernel
    def wrong_count() -> gr.u64:
        return gr.get_addr(x, [1])

    @gr.kernel
    def not_a_field() -> gr.u64:
        return gr.get_addr(3, [1])

    @gr.kernel
    def float_index() -> gr.u64:
        return gr.get_addr(h, [1.5])
    with pytest.raises(gr.CompileError, match="has 2 indices, got 1"):
        wrong_count()
    with pytest.raises(gr.CompileError, match="takes a field"):
        not_a_field()
    with pytest.raises(gr.CompileError, match="integers"):
        float_index()
