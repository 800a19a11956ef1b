"""`gr.ui.Window`: Taichi's GGUI window. Its picture is an off-screen frame on gfxrt's device
(gfxrt/gui/frame.py): canvases and scenes draw into it with wgpu render pipelines that
read the kernels' buffers in place; `show()` ends a frame, `get_image_buffer_as_numpy()`,
`save_image()` read it back. With a display (and rendercanvas + glfw: `pip install gfxrt[gui]`)
and `show_window=True`, a real window shows each frame at `show()` and feeds its input (gr.GUI's
window, gfxrt/gui/window.py); without one (or with `show_window=False`) the window is that
picture alone, which is how tests and CI run, and input comes from `window.input` (synthetic
presses, releases and cursor moves).
"""
from __future__ import annotations

import numbers
import weakref

import wgpu

from gfxrt.compiler.npcompat import np

from ..engine import context
from ..gui.frame import Frame
from ..gui.png import write_png
from ..gui.window import open_window
from .canvas import Canvas
from .events import Input
from .imgui import Gui
from .painter import Painter, scene_uniform
from .scene import Item, Scene, host_item

_painters: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _painter(device) -> Painter:
    p = _painters.get(device)
    if p is None:
        p = _painters[device] = Painter(device)
    return p


def _res(res) -> tuple[int, int]:
    r = (res, res) if isinstance(res, numbers.Integral) else tuple(res)
    if len(r) != 2 or not all(isinstance(v, numbers.Integral) and v > 0 for v in r):
        raise ValueError(f"Window res: (width, height) in pixels, got {res!r}")
    return int(r[0]), int(r[1])


class Window:
    """`gr.ui.Window(name, res, vsync=False, show_window=True, fps_limit=1000, pos=(100, 100))`."""

    def __init__(self, name, res, vsync=False, show_window=True, fps_limit=1000, pos=(100, 100)):
        self.name, self.res = str(name), _res(res)
        self.vsync, self.fps_limit, self.pos = bool(vsync), fps_limit, tuple(pos)
        self.show_window = bool(show_window)
        self.input = Input()
        self.frame = 0
        self._running = True
        self._event = None
        self._background = (0.0, 0.0, 0.0)
        self._fresh = True  # the next draw starts a frame: it clears to the background
        self._overlaid = False  # the widgets of this frame are drawn
        self._showing = False  # the picture is the frame last shown, nothing drawn since
        self._frame = Frame(*self.res, depth=True)
        self._painter = _painter(self._frame.device)
        eye = np.eye(4, dtype=np.float32)  # a canvas's draws read the window's size from the Scene uniform
        self._canvas_scene = (self._painter.uniform(scene_uniform(eye, eye, (0, 0, 0), (0, 0, 0), *self.res, 1.0, 0)),
                              None)
        self._canvas, self._gui, self._scene = Canvas(self), Gui(self), None
        self._shown = open_window(self.name, self.res, self._frame, self.input, vsync=self.vsync) \
            if self.show_window else None

    # -- Taichi's API -----------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True until set False, or the real window is closed."""
        return self._running and not self.input.closed

    @running.setter
    def running(self, value) -> None:
        self._running = bool(value)

    @property
    def event(self):
        return self._event

    @event.setter
    def event(self, value) -> None:
        self._event = value

    def get_events(self, tag=None):
        return self.input.take_events(tag)

    def get_event(self, tag=None) -> bool:
        e = self.input.next_event(tag)
        if e is not None:
            self._event = e
        return e is not None

    def is_pressed(self, *keys) -> bool:
        return self.input.is_pressed(*keys)

    def get_cursor_pos(self):
        return self.input.cursor

    def get_canvas(self) -> Canvas:
        return self._canvas

    def get_scene(self) -> Scene:
        if self._scene is None:
            self._scene = Scene(_window=self)
        return self._scene

    @property
    def GUI(self) -> Gui:
        return self._gui

    def get_gui(self) -> Gui:
        return self._gui

    def get_window_shape(self) -> tuple[int, int]:
        return self.res

    def show(self) -> None:
        """End the frame (a real window shows it and takes its input): the next draw starts a
        new one (and clears it); until then the picture read back is the frame shown."""
        self._showing = False  # a frame with no draw shows the background
        self._finish()
        if self._shown is not None:
            self._shown.present(self.fps_limit)
        self.frame += 1
        self._fresh, self._overlaid, self._showing = True, False, True
        self.input.clicks.clear()

    def get_image_buffer_as_numpy(self) -> np.ndarray:
        """The picture as float32 (width, height, 4) in [0, 1], indexed [x, y] with y up (Taichi's layout)."""
        rgba = self._read()
        return np.ascontiguousarray(rgba[::-1].transpose(1, 0, 2)).astype(np.float32) / 255.0

    def get_depth_buffer_as_numpy(self) -> np.ndarray:
        """The depth of the last scene drawn, float32 (width, height) indexed [x, y] (y up): 1 at
        the near plane, 0 at the far one (reversed, as Taichi's)."""
        self._finish()
        f = self._frame
        with context.LOCK:
            data = f.device.queue.read_texture(
                {"texture": f.depth_texture, "origin": (0, 0, 0), "mip_level": 0, "aspect": "depth-only"},
                {"offset": 0, "bytes_per_row": f.width * 4, "rows_per_image": f.height}, (f.width, f.height, 1))
        d = np.frombuffer(data, np.float32).reshape(f.height, f.width)
        return np.ascontiguousarray(d[::-1].T)

    def get_depth_buffer(self, depth) -> None:
        """Write the depth picture into `depth`, a 2-d f32 field or ndarray of shape (width, height)."""
        if len(depth.shape) != 2 or str(depth.dtype) != "f32" or tuple(depth.shape) != self.res:
            raise ValueError(f"get_depth_buffer: a 2-d f32 field or ndarray of shape {self.res}, "
                             f"got {depth.dtype} {tuple(depth.shape)}")
        depth.from_numpy(self.get_depth_buffer_as_numpy())

    def save_image(self, filename) -> None:
        """Write the picture to `filename` as PNG."""
        write_png(filename, self._read())

    # Taichi's name for the same picture as get_image_buffer_as_numpy, written to a file
    write_image = save_image

    def destroy(self) -> None:
        self._running = False
        if self._shown is not None:
            self._shown.close()

    # -- drawing ----------------------------------------------------------------------------
    def _read(self) -> np.ndarray:
        self._finish()
        return self._frame.read()

    def _finish(self) -> None:
        """Draw what the frame still lacks: the widgets, the clear of a frame with no draw."""
        pos, col = ([], []) if self._overlaid else self._gui._take()
        self._overlaid = True
        if pos or (self._fresh and not self._showing):
            self._paint([host_item(context.runtime(), "triangles", pos, col)] if pos else [])

    def _paint_canvas(self, item: Item) -> None:
        self._paint([item])

    def _paint_scene(self, scene: Scene) -> None:
        items, lights = scene._take()
        cam = scene.camera
        W, H = self.res
        lit = np.zeros((max(len(lights), 1), 8), np.float32)
        for k, (p, c) in enumerate(lights):
            lit[k, :3], lit[k, 4:7] = p, c
        su = scene_uniform(cam.get_view_matrix(), cam.get_projection_matrix(W / H), cam.curr_position,
                           scene.ambient, W, H, cam.tan_half_fov, len(lights))
        p = self._painter
        self._paint(items, scene=(p.uniform(su), p.device.create_buffer_with_data(
            data=lit.tobytes(), usage=wgpu.BufferUsage.STORAGE)))

    def _paint(self, items, scene=None) -> None:
        """Draw `items` in one render pass (a scene's, given its uniform and lights), after the
        kernels recorded so far."""
        p = self._painter
        with context.LOCK:
            rt = context.runtime()
            draws = [(it.kind, p.bind_group(it.uniform, *(scene or self._canvas_scene),
                                            {b: s.buffer for b, s in it.sources.items()}), it.count, it.instances)
                     for it in items]
            p.encode(self._frame, draws, clear=(*self._background, 1.0) if self._fresh else None,
                     scene=scene is not None)
            self._fresh = self._showing = False
            for it in items:
                for s in it.sources.values():
                    if s.scratch:
                        rt.free_later(s.buffer)
