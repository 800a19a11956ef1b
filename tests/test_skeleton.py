"""The walking skeleton: kernels run end to end against numpy."""
import numpy as np
import pytest
from tolerances import assert_close_fma

import gfxrt as gr


@gr.kernel
def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


@gr.kernel
def blur_rows(src: gr.types.ndarray(dtype=gr.f32, ndim=2), dst: gr.types.ndarray(dtype=gr.f32, ndim=2),
              w: gr.f32):
    for i in range(src.shape[0]):
        for j in range(1, src.shape[1] - 1):
            dst[i, j] = w * src[i, j - 1] + (1.0 - 2.0 * w) * src[i, j] + w * src[i, j + 1]


@gr.kernel
def even_only(x: gr.types.ndarray(dtype=gr.i32, ndim=1), k: gr.i32):
    for i in range(0, x.shape[0], 2):
        x[i] = x[i] * k + i


def test_saxpy_device_arrays(rng):
    n = 10007
    xs, ys = rng.random(n, dtype=np.float32) + 0.5, rng.random(n, dtype=np.float32) + 0.5
    x, y = gr.ndarray(gr.f32, shape=(n,)), gr.ndarray(gr.f32, shape=n)
    x.from_numpy(xs)
    y.from_numpy(ys)
    saxpy(2.5, x, y)
    assert_close_fma(y.to_numpy(), 2.5 * xs.astype(np.float64) + ys, 2.5 * xs, ys)
    assert x.shape == (n,) and x.dtype == gr.f32


def test_saxpy_numpy_arguments(rng):
    n = 4099
    xs, ys = rng.random(n, dtype=np.float32) + 0.5, rng.random(n, dtype=np.float32) + 0.5
    out = ys.copy()
    saxpy(-1.5, xs, out)
    # -1.5 x + y cancels near x = 2y/3: with or without a fused multiply-add, only an absolute
    # tolerance on the terms' size holds there
    assert_close_fma(out, -1.5 * xs.astype(np.float64) + ys, 1.5 * xs, ys)


def test_2d_kernel(rng):
    src = rng.random((37, 53), dtype=np.float32) + 0.1
    dst = np.full_like(src, 7.0)
    blur_rows(src, dst, 0.25)
    want = dst.copy()
    want[:, 1:-1] = 0.25 * src[:, :-2] + 0.5 * src[:, 1:-1] + 0.25 * src[:, 2:]
    np.testing.assert_allclose(dst, want, rtol=1e-5)
    assert (dst[:, 0] == 7.0).all() and (dst[:, -1] == 7.0).all()  # untouched columns kept


def test_partial_write_keeps_other_elements(rng):
    xs = rng.integers(-1000, 1000, size=101, dtype=np.int32)
    out = xs.copy()
    even_only(out, 3)
    want = xs.copy()
    want[::2] = xs[::2] * 3 + np.arange(0, 101, 2)
    np.testing.assert_array_equal(out, want)


def test_ndarray_fill_and_roundtrip(rng):
    a = gr.ndarray(gr.i32, shape=(3, 4, 5))
    a.fill(-7)
    assert (a.to_numpy() == -7).all()
    data = rng.integers(-50, 50, size=(3, 4, 5), dtype=np.int32)
    a.from_numpy(data)
    np.testing.assert_array_equal(a.to_numpy(), data)
    with pytest.raises(ValueError):
        a.from_numpy(np.zeros((4, 3, 5), np.int32))


def test_unsupported_construct_names_the_line():
    @gr.kernel
    def bad(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(x.shape[0]):
            try:  # the offending line
                x[i] = 1.0
            except Exception:
                pass

    with pytest.raises(gr.CompileError) as e:
        bad(np.zeros(4, np.float32))
    msg = str(e.value)
    assert "test_skeleton.py" in msg and "try:  # the offending line" in msg
    assert "try/except is not supported" in msg
    assert e.value.loc.line == bad.func.__code__.co_firstlineno + 3


def test_wrong_arguments_raise_before_launch():
    with pytest.raises(TypeError):
        saxpy(1.0, np.zeros(4, np.float64), np.zeros(4, np.float32))
    with pytest.raises(ValueError):
        saxpy(1.0, np.zeros((2, 2), np.float32), np.zeros(4, np.float32))
    with pytest.raises(TypeError):
        saxpy(1.0, np.zeros(4, np.float32))
    with pytest.raises(TypeError):
        saxpy("a", np.zeros(4, np.float32), np.zeros(4, np.float32))
