"""`gr.tools`: Taichi's `ti.tools` image utilities on the host, and the colour conversions
`gr.rgb_to_hex` / `gr.hex_to_rgb` (Taichi's `ti.rgb_to_hex` / `ti.hex_to_rgb`).

Images follow Taichi's convention: `img[x, y]` (width first, y up), as a numpy array, or a
field / ndarray (read with `to_numpy()`). Everything here is numpy on the host.
"""
from __future__ import annotations

import numpy as np

__all__ = ["rgb_to_hex", "hex_to_rgb", "imresize"]


def rgb_to_hex(c):
    """`(r, g, b)` in [0, 1] to the integer 0xRRGGBB, as Taichi's `ti.rgb_to_hex`: each channel is
    `int32(x * 255)` (truncated) clamped to [0, 255]. `c` may be a tuple or list of numbers (one
    np.int32 back) or of arrays, or an array whose first axis is the channel (`c[0]` red): an
    int32 array of colours back, one per element."""
    def to255(x):
        return np.clip(np.int32(x * 255), 0, 255)

    if isinstance(c, (list, tuple)):
        c = [np.asarray(x) if isinstance(x, (list, tuple)) else x for x in c]
    if len(c) != 3:
        raise ValueError(f"rgb_to_hex takes 3 channels (r, g, b), got {len(c)}")
    return (to255(c[0]) << 16) + (to255(c[1]) << 8) + to255(c[2])


def hex_to_rgb(color):
    """The integer 0xRRGGBB to `(r, g, b)` floats in [0, 1], as Taichi's `ti.hex_to_rgb`."""
    r, g, b = (color >> 16) & 0xFF, (color >> 8) & 0xFF, color & 0xFF
    return r / 255, g / 255, b / 255


def imresize(img, w: int, h: int | None = None) -> np.ndarray:
    """Resize an image of shape `(width, height, ...)` to `(w, h, ...)` (h = w if left out) by
    nearest-neighbour sampling, as Taichi's `ti.tools.imresize`: output pixel `(i, j)` is input
    pixel `(int(i * width / w), int(j * height / h))`. `img` is a numpy array or a field /
    ndarray; a numpy array of the same dtype comes back (`img` itself when the size is already
    `(w, h)`)."""
    if not isinstance(img, np.ndarray):
        img = img.to_numpy()
    if h is None:
        h = w
    if img.ndim < 2:
        raise ValueError(f"imresize takes an image of shape (width, height, ...), got shape {img.shape}")
    if (w, h) == img.shape[:2]:
        return img
    for name, n in (("w", w), ("h", h)):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
            raise ValueError(f"imresize: {name} must be an int of at least 2, got {n!r}")
    x = np.clip(np.arange(w) * (img.shape[0] / w), 0, img.shape[0] - 1).astype(np.int32)
    y = np.clip(np.arange(h) * (img.shape[1] / h), 0, img.shape[1] - 1).astype(np.int32)
    return img[x[:, None], y[None, :]]
