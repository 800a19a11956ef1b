"""The picture a `gr.ui.Window` draws into: an off-screen colour texture (rgba8unorm) with a
depth texture for its scenes, on gfxrt's own wgpu device, so that draws read the buffers
kernels write with no copy to the host. `read()` is the one readback (a saved image, a
numpy picture); a shown window copies the same texture to its surface.

Depth is reversed, as Taichi's GGUI: near is 1, far is 0, cleared to 0, a nearer fragment
passes `greater` (docs/gui.md "gr.ui").
"""
from __future__ import annotations

import struct
import zlib

import numpy as np
import wgpu

COLOR_FORMAT = "rgba8unorm"
DEPTH_FORMAT = "depth32float"


class Target:
    """A colour texture and a depth texture of `width` x `height` pixels on `device`."""

    def __init__(self, device, width: int, height: int):
        self.device, self.width, self.height = device, int(width), int(height)
        usage = wgpu.TextureUsage
        self.color = device.create_texture(size=(self.width, self.height, 1), format=COLOR_FORMAT,
                                           usage=usage.RENDER_ATTACHMENT | usage.COPY_SRC | usage.TEXTURE_BINDING)
        self.depth = device.create_texture(size=(self.width, self.height, 1), format=DEPTH_FORMAT,
                                           usage=usage.RENDER_ATTACHMENT | usage.COPY_SRC)
        self.color_view = self.color.create_view()
        self.depth_view = self.depth.create_view()

    def color_attachment(self, clear):
        """The colour attachment of a pass: cleared to `clear` (r, g, b, a), or loaded (None)."""
        a = {"view": self.color_view, "store_op": "store"}
        if clear is None:
            a["load_op"] = "load"
        else:
            a["load_op"], a["clear_value"] = "clear", tuple(float(c) for c in clear)
        return a

    def depth_attachment(self):
        """The depth attachment of a scene's pass: cleared to far (0: reversed depth)."""
        return {"view": self.depth_view, "depth_load_op": "clear", "depth_store_op": "store",
                "depth_clear_value": 0.0}

    def read(self) -> np.ndarray:
        """The picture as uint8 (height, width, 4), its first row the top of the picture."""
        data = self.device.queue.read_texture({"texture": self.color, "origin": (0, 0, 0), "mip_level": 0},
                                              {"offset": 0, "bytes_per_row": self.width * 4,
                                               "rows_per_image": self.height},
                                              (self.width, self.height, 1))
        return np.frombuffer(data, np.uint8).reshape(self.height, self.width, 4).copy()

    def read_depth(self) -> np.ndarray:
        """The depth texture as float32 (height, width), top row first."""
        data = self.device.queue.read_texture({"texture": self.depth, "origin": (0, 0, 0), "mip_level": 0,
                                               "aspect": "depth-only"},
                                              {"offset": 0, "bytes_per_row": self.width * 4,
                                               "rows_per_image": self.height},
                                              (self.width, self.height, 1))
        return np.frombuffer(data, np.float32).reshape(self.height, self.width).copy()


def write_png(path, rgba: np.ndarray) -> None:
    """Write a uint8 (height, width, 4) picture as an RGBA PNG (zlib only: no imaging library)."""
    rgba = np.ascontiguousarray(rgba, dtype=np.uint8)
    h, w = rgba.shape[:2]
    raw = b"".join(b"\x00" + rgba[y].tobytes() for y in range(h))

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))
