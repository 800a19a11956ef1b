"""Taichi's colour conversions (ti.rgb_to_hex, ti.hex_to_rgb): colours as ints 0xRRGGBB, the
form every gr.GUI call takes, and as (r, g, b) floats in [0, 1]."""
from __future__ import annotations

from gfxrt.compiler.npcompat import np


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
