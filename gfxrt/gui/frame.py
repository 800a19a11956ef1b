"""The off-screen frame: an RGBA8 render target (and, on request, a depth buffer) on gfxrt's own
wgpu device, that every drawing of gr.GUI and gr.ui renders into with wgpu's render pipelines.
A window presents it (gfxrt/gui/window.py); headless, `read()` brings it to the host (one copy,
one map) for PNG files, videos and tests.

Draws read the arrays and fields kernels wrote, in their device buffers: `finish` first submits
the work the runtime recorded (`GfxRuntime.settle`), so a draw sees every launch before it, in
queue order, without a readback.

Pixel (0, 0) of the texture and of `read()` is the top-left corner (WebGPU's framebuffer
coordinates); drawings with Taichi's y-up coordinates flip y in their vertex shaders.
"""
from __future__ import annotations

from gfxrt.compiler.npcompat import np

from ..engine import context
from ..engine.backend import wgpu_py as wgpu
from ..engine.lock import LOCK
from ..errors import GfxrtError
from .png import read_png, write_png  # noqa: F401  (the frame's file format)

FORMAT = "rgba8unorm"
DEPTH_FORMAT = "depth32float"
ROW_ALIGN = 256  # WebGPU's bytes_per_row alignment of texture <-> buffer copies



def padded_row(width: int, pixel_bytes: int = 4) -> int:
    """Bytes per row of a texture copy: the row's bytes rounded up to 256."""
    return (width * pixel_bytes + ROW_ALIGN - 1) // ROW_ALIGN * ROW_ALIGN


def _usage() -> int:
    return (wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC | wgpu.TextureUsage.COPY_DST
            | wgpu.TextureUsage.TEXTURE_BINDING)


class Frame:
    """An off-screen render target of `width` x `height` pixels on gr.device().

    `.texture` / `.view` (format `.format`, rgba8unorm), with `depth=True` also `.depth_texture`
    / `.depth_view` (depth32float). Record with `encoder, rpass = frame.begin(clear)`, draw into
    `rpass`, then `frame.finish(encoder, rpass)`; `read()` returns the pixels."""

    format = FORMAT
    depth_format = DEPTH_FORMAT

    def __init__(self, width: int, height: int, depth: bool = False):
        width, height = int(width), int(height)
        if width <= 0 or height <= 0:
            raise ValueError(f"a frame needs a positive size, got {width} x {height}")
        if wgpu is None:
            raise GfxrtError("gr.GUI and gr.ui draw with wgpu-py's render pipelines, which a browser tab does not "
                             "have: there, read the image back (x.to_list()) and draw it with the page")
        self.width, self.height = width, height
        self.device = context.device().device
        limit = int(self.device.limits.get("max-texture-dimension-2d", 8192))
        if width > limit or height > limit:
            raise ValueError(f"a frame of {width} x {height} pixels exceeds this device's texture limit {limit}")
        self.texture = self.device.create_texture(size=(width, height, 1), format=FORMAT, usage=_usage(),
                                                  label="gfxrt frame")
        self.view = self.texture.create_view()
        self.depth_texture = self.depth_view = None
        if depth:
            self.depth_texture = self.device.create_texture(
                size=(width, height, 1), format=DEPTH_FORMAT,
                usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,  # gr.ui reads depth
                label="gfxrt frame depth")
            self.depth_view = self.depth_texture.create_view()
        self._readback = None  # the mapped-read buffer, made on the first read()

    @property
    def size(self) -> tuple[int, int]:
        return self.width, self.height

    def begin(self, clear_rgba=None, clear_depth: float | None = 1.0):
        """(encoder, render pass) drawing into this frame. `clear_rgba`: (r, g, b, a) floats in
        [0, 1] to clear to, None to keep the frame's pixels. With a depth buffer, `clear_depth`
        (None: keep it) clears it."""
        encoder = self.device.create_command_encoder(label="gfxrt frame")
        color = {"view": self.view, "resolve_target": None, "store_op": wgpu.StoreOp.store,
                 "load_op": wgpu.LoadOp.load if clear_rgba is None else wgpu.LoadOp.clear,
                 "clear_value": tuple(float(c) for c in (clear_rgba or (0, 0, 0, 0)))}
        depth = None
        if self.depth_view is not None:
            depth = {"view": self.depth_view, "depth_store_op": wgpu.StoreOp.store,
                     "depth_load_op": wgpu.LoadOp.load if clear_depth is None else wgpu.LoadOp.clear,
                     "depth_clear_value": 1.0 if clear_depth is None else float(clear_depth)}
        return encoder, encoder.begin_render_pass(color_attachments=[color], depth_stencil_attachment=depth)

    def finish(self, encoder, render_pass=None) -> None:
        """End `render_pass` (if given and open) and submit `encoder`, after the work gfxrt's
        runtime recorded (the kernels whose buffers the draws read)."""
        if render_pass is not None:
            render_pass.end()
        cmd = encoder.finish()  # a validation error raises here, never inside submit
        submit(self.device, [cmd])

    def clear(self, rgba) -> None:
        """Fill the frame with one colour (floats in [0, 1])."""
        self.finish(*self.begin(rgba))

    def read(self) -> np.ndarray:
        """The pixels as uint8 (height, width, 4), top row first: one texture copy, one map."""
        pitch = padded_row(self.width)
        nbytes = pitch * self.height
        if self._readback is None:
            self._readback = self.device.create_buffer(
                size=nbytes, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST, label="gfxrt frame read")
        encoder = self.device.create_command_encoder(label="gfxrt frame read")
        encoder.copy_texture_to_buffer(
            {"texture": self.texture, "mip_level": 0, "origin": (0, 0, 0)},
            {"buffer": self._readback, "offset": 0, "bytes_per_row": pitch, "rows_per_image": self.height},
            (self.width, self.height, 1))
        submit(self.device, [encoder.finish()])
        buf = self._readback
        with LOCK:
            buf.map_sync(wgpu.MapMode.READ)
            try:
                data = np.frombuffer(buf.read_mapped(0, nbytes, copy=True), np.uint8)
            finally:
                buf.unmap()
        return data.reshape(self.height, pitch)[:, :self.width * 4].reshape(self.height, self.width, 4).copy()

    def write(self, rgba) -> None:
        """Upload uint8 (height, width, 4) pixels, top row first, into the frame."""
        a = np.ascontiguousarray(rgba, dtype=np.uint8)
        if a.shape != (self.height, self.width, 4):
            raise ValueError(f"frame pixels are ({self.height}, {self.width}, 4) uint8, got shape {a.shape}")
        self.device.queue.write_texture({"texture": self.texture, "mip_level": 0, "origin": (0, 0, 0)}, a,
                                        {"offset": 0, "bytes_per_row": self.width * 4, "rows_per_image": self.height},
                                        (self.width, self.height, 1))

    def save(self, path) -> None:
        """Write the frame to a PNG file."""
        write_png(path, self.read())


def submit(device, commands: list) -> None:
    """Submit command buffers of one's own on gfxrt's device queue, after everything the runtime
    recorded (queue order makes the draws see those launches; nothing waits)."""
    with LOCK:
        rt = context.runtime()
        if rt.capture is not None:  # a draw runs now: a graph could not replay it
            rt.capture.host_work("drawing (gr.GUI, gr.ui)")
        rt.settle()
        device.queue.submit(commands)
        rt.submitted_outside()  # gr.sync() waits for the drawing too
