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


def test_a_sizeless_vector_is_not_a_kernel_argument_type():
    @gr.kernel
    def k(v: gr.types.vector()) -> gr.f32:  # Taichi 1.7.4: a TaichiCompilationError too
        return v[0]

    with pytest.raises(gr.CompileError, match="without sizes only describes array elements"):
        k(gr.Vector([1.0, 2.0]))


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


def test_host_element_reads_return_what_taichi_returns():
    """Taichi 1.7.4: a scalar element is a Python float / int; a vector element a Vector whose
    components are Python numbers; `==` / `!=` compare element-wise."""
    x, a = gr.field(gr.f32, shape=()), gr.ndarray(gr.f32, shape=())
    for c in (x, a):
        c[None] = 1.0
        assert type(c[None]) is float and c[None] == 1.0
    i = gr.field(gr.i32, shape=(3,))
    i[1] = 7
    assert type(i[1]) is int and i[1] == 7
    y, b = gr.Vector.field(2, gr.f32, shape=()), gr.Vector.ndarray(2, gr.f32, shape=())
    for c in (y, b):
        c[None] = [1.0, 2.0]
        assert c[None] == [1.0, 2.0] and c[None] == gr.Vector([1.0, 2.0]) and not c[None] != [1.0, 2.0]
        assert not c[None] == [1.0, 3.0] and c[None] != [1.0, 3.0]
        assert (c[None] == [1.0, 3.0]).tolist() == [True, False]       # element-wise, as Taichi's
        assert type(c[None][0]) is float and c[None][1] == 2.0 and c[None].y == 2.0
        assert [type(v) for v in c[None]] == [float, float] and list(c[None]) == [1.0, 2.0]
    iv = gr.Vector.field(2, gr.i32, shape=3)
    iv[1] = [1, 2]
    assert type(iv[1][0]) is int and iv[1].tolist() == [1, 2]
    m = gr.Matrix.field(2, 2, gr.f32, shape=())
    m[None] = [[1, 2], [3, 4]]
    assert type(m[None][0, 1]) is float and m[None][1].tolist() == [3.0, 4.0]
    assert m[None] == [[1, 2], [3, 4]]
    e = m[None]
    e[0, 0] = 5.0                      # still writes through to the field
    assert m[None][0, 0] == 5.0
    with pytest.raises(ValueError, match="truth value"):  # other arrays keep numpy's rule
        bool(m[None] > 0)


@gr.kernel
def _clamp_read(a: gr.types.ndarray(dtype=gr.f32, ndim=2, boundary="clamp"),
                idx: gr.types.ndarray(dtype=gr.i32, ndim=2), out: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for k in range(idx.shape[0]):
        out[k] = a[idx[k, 0], idx[k, 1]]


@gr.kernel
def _clamp_write(a: gr.types.ndarray(dtype=gr.f32, ndim=1, boundary="clamp"), i: gr.i32, v: gr.f32):
    a[i] = v


@gr.kernel
def _clamp_add(a: gr.types.ndarray(dtype=gr.f32, ndim=1, boundary="clamp"), i: gr.i32, v: gr.f32):
    a[i] += v


@gr.kernel
def _clamp_vec(a: gr.types.ndarray(dtype=gr.math.vec2, ndim=1, boundary="clamp"), i: gr.i32) -> gr.f32:
    return a[i][1] + 10 * a[i].x


@gr.kernel
def _clamp_shift_sum(a: gr.types.ndarray(dtype=gr.f32, ndim=1, boundary="clamp"),
                     loss: gr.types.ndarray(dtype=gr.f32, ndim=0)):
    for i in a:
        loss[None] += a[i + 1] * a[i - 1]


def test_boundary_clamp_clamps_every_index_as_taichi_does():
    """The expected numbers are Taichi 1.7.4's (ti.vulkan on lavapipe) for the same kernels."""
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([[-1, 0], [5, 7], [1, -3], [2, 100], [-7, -7], [1, 2]], np.int32)
    out = np.zeros(6, np.float32)
    _clamp_read(a, idx, out)
    np.testing.assert_array_equal(out, [0, 11, 4, 11, 0, 6])
    b = np.zeros(4, np.float32)
    for i, v in ((-5, 10.0), (9, 20.0), (1, 3.0)):
        _clamp_write(b, i, v)
    np.testing.assert_array_equal(b, [10, 3, 0, 20])
    _clamp_add(b, 100, 1.0)
    _clamp_add(b, -2, 0.5)
    np.testing.assert_array_equal(b, [10.5, 3, 0, 21])
    v = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert [_clamp_vec(v, i) for i in (7, -1, 1)] == [45.0, 1.0, 23.0]
    with pytest.raises(ValueError, match="Invalid boundary argument"):
        gr.types.ndarray(boundary="wrap")


def test_boundary_clamp_gradients_go_to_the_clamped_elements():
    x = gr.ndarray(gr.f32, 4, needs_grad=True)
    x.from_numpy(np.array([1, 2, 3, 4], np.float32))
    loss = gr.ndarray(gr.f32, (), needs_grad=True)
    with gr.Tape(loss):
        _clamp_shift_sum(x, loss)
    xs = np.array([1, 2, 3, 4], np.float64)
    lo, hi = np.clip(np.arange(4) - 1, 0, 3), np.clip(np.arange(4) + 1, 0, 3)
    assert loss[None] == float(np.sum(xs[hi] * xs[lo]))
    grad = np.zeros(4)
    np.add.at(grad, hi, xs[lo])
    np.add.at(grad, lo, xs[hi])
    np.testing.assert_array_equal(x.grad.to_numpy(), grad)


@gr.kernel
def _big_fill(a: gr.types.ndarray(dtype=gr.f32, ndim=2)):
    for i, j in a:
        a[i, j] = i * 0.5 + j


def test_the_device_gets_the_adapters_own_limits_and_arrays_up_to_them_work():
    """Large arrays: gfxrt asks for the adapter's own limits, not WebGPU's defaults (128 MiB
    bindings). An array larger than one binding is bound in windows (tests/test_big_arrays.py):
    an 8192 x 8192 f32 array (256 MiB, what Taichi's Vulkan backend runs) works wherever the
    adapter's buffers hold it (GPUs bind it whole; lavapipe binds 128 MiB: two windows)."""
    from gfxrt.engine.device import WANTED_LIMITS
    dev = gr.device()
    for k in WANTED_LIMITS:
        if k in dev.adapter.limits:
            # the sizes arrays need are the adapter's own; a count the adapter reports as unbounded
            # (NVIDIA: 2**32 - 1 bindings per group) the device layer caps (wgpu: 1000), never below WebGPU's default
            if k in ("max-storage-buffer-binding-size", "max-buffer-size"):
                assert dev.limits[k] == dev.adapter.limits[k], k
            else:
                assert 0 < dev.limits[k] <= dev.adapter.limits[k], k
    if dev.limits["max-buffer-size"] < 8192 * 8192 * 4:
        pytest.skip(f"this adapter's buffers hold {dev.limits['max-buffer-size']} bytes: an 8192 x 8192 f32 array "
                    "does not fit")
    a = gr.ndarray(gr.f32, (8192, 8192))
    assert a.chunks == -(-8192 * 8192 * 4 // dev.limits["max-storage-buffer-binding-size"])
    _big_fill(a)
    for i, j in ((0, 0), (8191, 8191), (4096, 3), (5000, 8000)):
        assert a[i, j] == i * 0.5 + j
