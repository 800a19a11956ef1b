"""Taichi's ti.tools image functions (gr.tools re-exports them): imwrite, imread, imshow.
Images are Taichi-ordered: img[x, y] (width first, y up), (w, h) gray or (w, h, 3|4) channels.
PNG is read and written with zlib and numpy (gfxrt/gui/png.py); other formats through Pillow
when it is installed."""
from __future__ import annotations

import os
import warnings

from gfxrt.compiler.npcompat import np

from ..data.ndarray import Ndarray
from .gui import GUI
from .notebook import InlineFrame, in_notebook
from .png import read_png, write_png


def cook_image_to_bytes(img) -> np.ndarray:
    """Taichi's cook_image_to_bytes: uint8 (h, w, 1|3|4), top row first, from img[x, y] of
    uint8, wider unsigned ints (scaled to [0, 255]) or floats in [0, 1] (clipped, floor(v * 255))."""
    if isinstance(img, Ndarray):
        img = img.to_numpy()
    img = np.asarray(img)
    if img.dtype in (np.uint16, np.uint32, np.uint64):  # [0, max] -> [0, 255], as Taichi's docs say (its
        img = (img.astype(np.float64) * (255 / np.iinfo(img.dtype).max)).astype(np.uint8)  # code wraps max to 1)
    elif img.dtype in (np.float16, np.float32, np.float64):
        img = (np.clip(img, 0, 1) * 255.0).astype(np.uint8)
    elif img.dtype != np.uint8:
        raise ValueError(f"Data type {img.dtype} not supported in gr.tools.imwrite")
    if img.ndim == 2:
        img = img[:, :, None]
    if img.ndim != 3 or img.shape[2] not in (1, 3, 4):
        raise ValueError(f"an image is (w, h) gray or (w, h, 3|4) RGB/RGBA, got shape {img.shape}")
    return np.ascontiguousarray(img.swapaxes(0, 1)[::-1, :])


def _pil():
    try:
        import PIL.Image
    except ImportError:
        raise ValueError("gfxrt reads and writes PNG files itself; other formats need Pillow "
                         "(pip install pillow)") from None
    return PIL.Image


def imwrite(img, filename) -> None:
    """Write img[x, y] (a gfxrt field or ndarray, or numpy) to `filename` (.png; other formats
    with Pillow)."""
    data = cook_image_to_bytes(img)
    if str(filename).lower().endswith(".png"):
        write_png(filename, data)
    else:
        _pil().fromarray(data[:, :, 0] if data.shape[2] == 1 else data).save(filename)


def imread(filename, channels=0) -> np.ndarray:
    """An image file as uint8 img[x, y, c] (y up); `channels` (1, 3, 4; 0: as stored) converts."""
    if not os.path.exists(filename):
        raise FileNotFoundError(filename)
    if str(filename).lower().endswith(".png"):
        img = read_png(filename)
    else:
        img = np.asarray(_pil().open(filename))
        img = img[:, :, None] if img.ndim == 2 else img
    img = _channels(img, channels)
    return np.ascontiguousarray(img.swapaxes(0, 1)[:, ::-1, :])


def _channels(img: np.ndarray, channels: int) -> np.ndarray:
    c = img.shape[2]
    if not channels or channels == c:
        return img
    if channels not in (1, 2, 3, 4):
        raise ValueError(f"channels must be 0, 1, 2, 3 or 4, got {channels}")
    rgb = np.repeat(img[:, :, :1], 3, axis=2) if c <= 2 else img[:, :, :3]
    alpha = img[:, :, -1:] if c in (2, 4) else np.full(img.shape[:2] + (1,), 255, np.uint8)
    if channels == 1:
        return np.round(rgb.astype(np.float32) @ np.float32([0.299, 0.587, 0.114]))[:, :, None].astype(np.uint8)
    if channels == 2:
        return np.concatenate([_channels(img, 1), alpha], axis=2)
    return rgb if channels == 3 else np.concatenate([rgb, alpha], axis=2)


def imshow(img, title="imshow") -> None:
    """Show img[x, y] in a window until it is closed or Escape is pressed (Taichi's ti.tools.imshow);
    in a notebook, inline. Without a display it warns and returns (it never waits for a window
    that cannot exist)."""
    if in_notebook():
        InlineFrame().show(cook_image_to_bytes(img))
        return
    if isinstance(img, Ndarray):
        img = img.to_numpy()
    img = np.asarray(img)
    if img.ndim not in (2, 3):
        raise ValueError(f"an image is (w, h) gray or (w, h, 3|4) RGB/RGBA, got shape {img.shape}")
    with GUI(title, res=img.shape[:2]) as gui:
        if gui.window is None:
            warnings.warn("gr.tools.imshow: no display (DISPLAY unset, or rendercanvas / glfw not installed): "
                          "nothing is shown; write the image with gr.tools.imwrite", stacklevel=2)
            return
        while gui.running:
            if gui.get_event(GUI.ESCAPE):
                gui.running = False
            gui.set_image(img)
            gui.show()
