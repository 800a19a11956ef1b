"""gr.tools (Taichi's ti.tools image utilities) and gr.rgb_to_hex / gr.hex_to_rgb: against
values Taichi 1.7.4 printed and against Taichi's own formulas written in numpy."""
import numpy as np
import pytest

import gfxrt as gr


def taichi_imresize(img, w, h):
    """ti.tools.imresize's body (taichi/tools/image.py, 1.7.4)."""
    u, v = img.shape[0] / w, img.shape[1] / h
    x = np.clip(np.arange(w) * u, 0, img.shape[0] - 1).astype(np.int32)
    y = np.clip(np.arange(h) * v, 0, img.shape[1] - 1).astype(np.int32)
    return img[tuple(np.meshgrid(x, y))].swapaxes(0, 1)


def test_imresize_matches_taichi(rng):
    img = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    # printed by Taichi 1.7.4: ti.tools.imresize(img, 6, 2)[:, :, 0]
    np.testing.assert_array_equal(gr.tools.imresize(img, 6, 2)[:, :, 0],
                                  [[0, 2], [0, 2], [6, 8], [12, 14], [12, 14], [18, 20]])
    img = rng.random((7, 5, 3)).astype(np.float32)
    for w, h in [(14, 10), (3, 2), (8, 8), (100, 3), (2, 31)]:
        out = gr.tools.imresize(img, w, h)
        assert out.shape == (w, h, 3) and out.dtype == img.dtype
        np.testing.assert_array_equal(out, taichi_imresize(img, w, h))
    assert gr.tools.imresize(img, 7, 5) is img  # already that size: the image itself
    np.testing.assert_array_equal(gr.tools.imresize(img[:, :, 0], 9), taichi_imresize(img[:, :, 0], 9, 9))


def test_imresize_takes_fields_and_ndarrays():
    f = gr.field(gr.i32, shape=(4, 6))
    f.from_numpy(np.arange(24, dtype=np.int32).reshape(4, 6))
    np.testing.assert_array_equal(gr.tools.imresize(f, 8, 3), taichi_imresize(f.to_numpy(), 8, 3))
    a = gr.ndarray(gr.types.vector(3, gr.f32), (5, 5))
    a.fill(0.5)
    assert gr.tools.imresize(a, 10).shape == (10, 10, 3)


def test_imresize_refuses_bad_sizes():
    img = np.zeros((4, 4), np.float32)
    for w, h in [(1, 4), (4, 0), (2.5, 4), (True, 4)]:
        with pytest.raises(ValueError, match="at least 2"):
            gr.tools.imresize(img, w, h)
    with pytest.raises(ValueError, match="width, height"):
        gr.tools.imresize(np.zeros(4), 4)


def test_rgb_to_hex_matches_taichi(rng):
    # printed by Taichi 1.7.4
    assert gr.rgb_to_hex((0.5, 0.25, 1.0)) == 8339455 and gr.rgb_to_hex([1, 0, 0]) == 0xFF0000
    assert isinstance(gr.rgb_to_hex((0.5, 0.25, 1.0)), np.int32)
    c = np.array([[0.1, 0.2, 0.3], [1.2, -0.5, 0.999]]).T  # out of [0, 1]: clamped
    np.testing.assert_array_equal(gr.rgb_to_hex(c), [1651532, 16711934])
    c = rng.random((3, 50)) * 1.4 - 0.2
    ref = sum(np.clip(np.int32(c[k] * 255), 0, 255) << s for k, s in enumerate((16, 8, 0)))
    got = gr.rgb_to_hex(c)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(gr.rgb_to_hex([c[0], c[1], c[2]]), ref)  # a list of channel arrays (fem128)
    with pytest.raises(ValueError, match="3 channels"):
        gr.rgb_to_hex((0.5, 0.5))


def test_hex_to_rgb_inverts_rgb_to_hex():
    assert gr.hex_to_rgb(0xFF8000) == (1.0, 128 / 255, 0.0)
    for color in (0, 0x123456, 0xFFFFFF, 0x00FF7F):
        assert gr.rgb_to_hex(gr.hex_to_rgb(color)) == color
