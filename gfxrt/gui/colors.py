"""Taichi's colour conversions (ti.rgb_to_hex, ti.hex_to_rgb): colours as ints 0xRRGGBB, the
form every gr.GUI call takes, and as (r, g, b) floats in [0, 1]."""
from __future__ import annotations

import numpy as np


def hex_to_rgb(color):
    """0xRRGGBB -> (r, g, b) floats in [0, 1]."""
    r, g, b = (color >> 16) & 0xFF, (color >> 8) & 0xFF, color & 0xFF
    return r / 255, g / 255, b / 255


def rgb_to_hex(c):
    """(r, g, b) floats in [0, 1] (or arrays of them, elementwise) -> 0xRRGGBB; each channel
    truncated to [0, 255] as Taichi's."""
    def to255(x):
        return np.clip(np.int32(np.asarray(x) * 255), 0, 255)
    return (to255(c[0]) << 16) + (to255(c[1]) << 8) + to255(c[2])
