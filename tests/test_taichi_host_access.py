"""Host element access as in Taichi (`x[i]`, `x[i, j] = v`, `x[None]`), on ndarrays, fields and
their .grad / .dual: Taichi's own test programs (tests/python/test_ndarray.py, test_field.py)
with ti renamed to gr, checked against numpy."""
import numpy as np
import pytest

import gfxrt as gr


def test_ndarray_1d_and_2d_element_access():  # Taichi's test_ndarray_1d / _test_ndarray_2d
    n, m = 4, 7

    @gr.kernel
    def run(x: gr.types.ndarray(), y: gr.types.ndarray()):
        for i in range(n):
            x[i] += i + y[i]

    a = gr.ndarray(gr.i32, shape=(n,))
    for i in range(n):
        a[i] = i * i
    b = np.ones((n,), dtype=np.int32)
    run(a, b)
    for i in range(n):
        assert a[i] == i * i + i + 1
    run(b, a)
    for i in range(n):
        assert b[i] == i * i + (i + 1) * 2

    @gr.kernel
    def run2(x: gr.types.ndarray(), y: gr.types.ndarray()):
        for i in range(n):
            for j in range(m):
                x[i, j] += i + j + y[i, j]

    a2 = gr.ndarray(gr.i32, shape=(n, m))
    for i in range(n):
        for j in range(m):
            a2[i, j] = i * j
    run2(a2, np.ones((n, m), dtype=np.int32))
    ii, jj = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    np.testing.assert_array_equal(a2.to_numpy(), ii * jj + ii + jj + 1)
    assert a2[3, 6] == 18 + 3 + 6 + 1


def test_values_are_python_numbers_and_zero_d_uses_none():
    x = gr.field(gr.f32, shape=())
    x[None] = 3
    assert x[None] == 3.0 and type(x[None]) is float
    k = gr.ndarray(gr.i32, shape=(3,))
    k[2] = 7
    assert k[2] == 7 and type(k[2]) is int
    u = gr.ndarray(gr.u32, shape=(2, 2))
    u[1, 1] = 2**32 - 1
    assert u[1, 1] == 2**32 - 1
    k[np.int64(1)] = np.float32(2.9)  # converted as a store into an i32 element
    assert k[1] == 2


def test_f16_elements_sharing_a_word():
    h = gr.ndarray(gr.f16, shape=(5,))
    for i in range(5):
        h[i] = i + 0.5
    assert [h[i] for i in range(5)] == [0.5, 1.5, 2.5, 3.5, 4.5]
    np.testing.assert_array_equal(h.to_numpy(), np.arange(5, dtype=np.float16) + 0.5)


def test_index_errors():
    x = gr.ndarray(gr.f32, shape=(4, 3))
    for bad in [(4, 0), (0, 3), (-1, 0)]:
        with pytest.raises(IndexError):
            x[bad]
        with pytest.raises(IndexError):
            x[bad] = 1.0
    with pytest.raises(IndexError, match="2 dimension"):
        x[1]
    with pytest.raises(IndexError, match=r"x\[None\]"):
        gr.field(gr.f32, shape=())[0]
    with pytest.raises(TypeError, match="integer"):
        x[1.0, 2]
    with pytest.raises(TypeError, match="slices"):
        x[0:2, 0]
    with pytest.raises(ValueError, match="shape"):
        x[0, 0] = [1.0, 2.0]


def test_reads_and_writes_are_ordered_with_launches():
    @gr.kernel
    def double(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in x:
            x[i] *= 2.0

    x = gr.ndarray(gr.f32, shape=(64,))
    x.fill(1.0)
    double(x)
    x[3] = 10.0      # after the first launch, before the second
    double(x)
    assert x[3] == 20.0 and x[4] == 4.0
    x[5] = 7.0
    double(x)
    x[5] = x[5] + 1.0
    assert x[5] == 15.0


def test_one_element_moves_not_the_array(monkeypatch):
    x = gr.ndarray(gr.f32, shape=(1 << 18,))
    rt = gr.runtime()
    sizes = []
    orig_read, orig_write = rt.blitter.device_to_host, rt.blitter.host_to_device

    def read(reads):
        sizes.extend(nb for _, _, nb, _ in reads)
        return orig_read(reads)

    def write(buffer, data, offset=0, fresh=False):
        sizes.append(np.asarray(data).nbytes)
        return orig_write(buffer, data, offset, fresh)
    monkeypatch.setattr(rt.blitter, "device_to_host", read)
    monkeypatch.setattr(rt.blitter, "host_to_device", write)
    x[12345] = 2.5
    assert x[12345] == 2.5
    assert sizes == [4, 4]


def test_field_grad_and_dual_element_access():
    x = gr.field(gr.f32, shape=(3,), needs_grad=True)
    loss = gr.field(gr.f32, shape=(), needs_grad=True)

    @gr.kernel
    def compute():
        for i in x:
            loss[None] += x[i] ** 2

    for i in range(3):
        x[i] = i + 1.0
    with gr.Tape(loss):
        compute()
    assert loss[None] == 14.0
    assert [x.grad[i] for i in range(3)] == [2.0, 4.0, 6.0]
    x.grad[1] = 0.5
    assert x.grad.to_numpy()[1] == 0.5
    a = gr.ndarray(gr.f32, shape=(2,), needs_grad=True)
    a.dual[1] = 3.0
    assert a.dual[1] == 3.0 and a.dual[0] == 0.0


def test_vector_and_matrix_elements():
    v = gr.Vector.field(3, gr.f32, shape=(4,))
    v[2] = [1, 2, 3]
    e = v[2]
    assert isinstance(e, np.ndarray) and e.n == 3 and (e.x, e.y, e.z) == (1.0, 2.0, 3.0)
    np.testing.assert_array_equal(e.to_numpy(), [1, 2, 3])
    assert v[2][1] == 2.0
    v[1][2] = 9.0    # writes through, as in Taichi
    v[0].y = 4.0
    np.testing.assert_array_equal(v.to_numpy()[:3], [[0, 4, 0], [0, 0, 9], [1, 2, 3]])
    v[3] = 5.0       # a number fills the element
    np.testing.assert_array_equal(v[3], [5, 5, 5])
    m = gr.Matrix.ndarray(2, 2, gr.i32, 5)   # Taichi's test_matrix_ndarray_python_scope
    for i in range(5):
        for j, k in gr.ndrange(2, 2):
            m[i][j, k] = j * j + k * k
    assert m[0][0, 0] == 0 and m[1][0, 1] == 1 and m[2][1, 0] == 1 and m[3][1, 1] == 2
    np.testing.assert_array_equal(m[4], [[0, 1], [1, 2]])
    s = gr.Vector.field(2, gr.f32, shape=())
    s[None] = gr.Vector([1.5, -1.0])
    assert s[None].norm_sqr() == 3.25
    w = gr.Vector.ndarray(10, gr.i32, 5)     # Taichi's test_vector_ndarray_python_scope
    for i in range(5):
        for j in range(4):
            w[i][j * j] = j * j
    assert w[0][9] == 9 and w[1][0] == 0 and w[2][1] == 1 and w[3][4] == 4 and w[4][9] == 9


def test_host_access_inside_graph_capture_is_refused():
    x = gr.ndarray(gr.f32, shape=(4,))
    with pytest.raises(gr.GraphCaptureError):
        with gr.graph():
            x[0] = 1.0
    with pytest.raises(gr.GraphCaptureError):
        with gr.graph():
            x[0]


def test_containers_are_not_iterated_element_by_element():
    with pytest.raises(TypeError, match="to_numpy"):
        list(gr.ndarray(gr.f32, shape=(2, 2)))
