"""`gr.tools`: Taichi's `ti.tools` image utilities on the host, and the colour conversions
`gr.rgb_to_hex` / `gr.hex_to_rgb` (Taichi's `ti.rgb_to_hex` / `ti.hex_to_rgb`).

Images follow Taichi's convention: `img[x, y]` (width first, y up), as a numpy array, or a
field / ndarray (read with `to_numpy()`). Image files and video live in gfxrt/gui/ (images.py,
video.py; docs/gui.md), the colours in gfxrt/gui/colors.py: this module gathers them.
"""
from __future__ import annotations

from gfxrt.compiler import npcompat
from gfxrt.compiler.npcompat import np

from .gui.colors import hex_to_rgb, rgb_to_hex
from .gui.images import imread, imshow, imwrite
from .gui.video import VideoManager

__all__ = ["rgb_to_hex", "hex_to_rgb", "imresize", "imwrite", "imread", "imshow", "VideoManager"]


def imresize(img, w: int, h: int | None = None) -> np.ndarray:
    """Resize an image of shape `(width, height, ...)` to `(w, h, ...)` (h = w if left out) by
    nearest-neighbour sampling, as Taichi's `ti.tools.imresize`: output pixel `(i, j)` is input
    pixel `(int(i * width / w), int(j * height / h))`. `img` is a numpy array or a field /
    ndarray; a numpy array of the same dtype comes back (`img` itself when the size is already
    `(w, h)`)."""
    if not npcompat.is_array(img):
        img = img.to_numpy()
    if h is None:
        h = w
    if img.ndim < 2:
        raise ValueError(f"imresize takes an image of shape (width, height, ...), got shape {img.shape}")
    if (w, h) == img.shape[:2]:
        return img
    for name, n in (("w", w), ("h", h)):
        if isinstance(n, bool) or not (isinstance(n, int) or npcompat.scalar_kind(n) in ("i", "u")) or n < 2:
            raise ValueError(f"imresize: {name} must be an int of at least 2, got {n!r}")
    x = np.clip(np.arange(w) * (img.shape[0] / w), 0, img.shape[0] - 1).astype(np.int32)
    y = np.clip(np.arange(h) * (img.shape[1] / h), 0, img.shape[1] - 1).astype(np.int32)
    return img[x[:, None], y[None, :]]
