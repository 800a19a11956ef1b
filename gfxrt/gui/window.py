"""A real window presenting a Frame: wgpu-py's rendercanvas with its glfw backend, on gfxrt's own
device. `open_window` returns None (the caller then stays off-screen) when there is no display
(Linux: neither DISPLAY nor WAYLAND_DISPLAY set) or rendercanvas / glfw are not installed
(`pip install gfxrt[gui]`). The window's input becomes GUI events (gfxrt/gui/events.py):
keys with Taichi's names, mouse buttons LMB / RMB / MMB, the wheel, motion, and closing (EXIT).
"""
from __future__ import annotations

import importlib.util
import os
import struct
import sys
import time
import warnings

from . import shaders
from .events import KEYS, EType
from .frame import submit

# rendercanvas key names -> Taichi's
_KEY_NAMES = {"Escape": "Escape", "Enter": "Return", "Tab": "Tab", "Backspace": "BackSpace", " ": " ",
              "ArrowUp": "Up", "ArrowDown": "Down", "ArrowLeft": "Left", "ArrowRight": "Right",
              "CapsLock": "Caps_Lock", "Shift": "Shift", "Control": "Control", "Alt": "Alt"}
_BUTTONS = {1: "LMB", 2: "RMB", 3: "MMB"}


def display_available() -> bool:
    """A display to open a window on, and the libraries to do it."""
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return False
    return all(importlib.util.find_spec(m) is not None for m in ("rendercanvas", "glfw"))


def open_window(title, res, frame, events, fullscreen=False, vsync=False):
    """A Window presenting `frame`, feeding `events`; None without a display. `vsync`: each
    present waits for the monitor's refresh (FIFO presentation), else it shows at once."""
    if not display_available():
        return None
    try:
        return Window(title, res, frame, events, vsync)
    except Exception as e:  # a display that cannot be reached, a driver without a surface: stay off-screen
        warnings.warn(f"gr.GUI: no window ({type(e).__name__}: {e}); drawing off-screen", stacklevel=3)
        return None


class Presenter:
    """Draws a Frame onto a target texture of `format` (a window's surface), scaled to the
    target's size: the frame's bytes as they are (an -srgb target gets them decoded first)."""

    def __init__(self, frame, format: str):  # noqa: A002 (WebGPU's name)
        import wgpu
        device = self.device = frame.device
        self.frame, self.format = frame, format
        module = device.create_shader_module(code=shaders.BLIT.format(
            decode="true" if format.endswith("-srgb") else "false"))
        stage = wgpu.ShaderStage.FRAGMENT
        layout = device.create_bind_group_layout(entries=[
            {"binding": 0, "visibility": stage, "texture": {"sample_type": wgpu.TextureSampleType.float,
                                                            "view_dimension": "2d"}},
            {"binding": 1, "visibility": stage, "buffer": {"type": wgpu.BufferBindingType.uniform}}])
        self.pipeline = device.create_render_pipeline(
            layout=device.create_pipeline_layout(bind_group_layouts=[layout]),
            vertex={"module": module, "entry_point": "vs", "buffers": []},
            primitive={"topology": "triangle-list"}, depth_stencil=None,
            multisample={"count": 1, "mask": 0xFFFFFFFF, "alpha_to_coverage_enabled": False},
            fragment={"module": module, "entry_point": "fs", "targets": [{"format": format}]})
        self.size = device.create_buffer(size=16, usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST)
        self.bind_group = device.create_bind_group(layout=layout, entries=[
            {"binding": 0, "resource": frame.view},
            {"binding": 1, "resource": {"buffer": self.size, "offset": 0, "size": 16}}])

    def draw(self, texture) -> None:
        """Draw the frame onto `texture` (its whole size) and submit."""
        w, h = texture.size[0], texture.size[1]
        self.device.queue.write_buffer(self.size, 0, struct.pack("<4f", w, h, 0, 0))
        encoder = self.device.create_command_encoder()
        rpass = encoder.begin_render_pass(color_attachments=[{
            "view": texture.create_view(), "resolve_target": None, "load_op": "clear", "store_op": "store",
            "clear_value": (0, 0, 0, 1)}])
        rpass.set_pipeline(self.pipeline)
        rpass.set_bind_group(0, self.bind_group)
        rpass.draw(3, 1)
        rpass.end()
        submit(self.device, [encoder.finish()])


class Window:
    """A glfw window (rendercanvas) whose surface shows a Frame, scaled to the window's size."""

    def __init__(self, title, res, frame, events, vsync=False):
        from rendercanvas.glfw import RenderCanvas
        self.frame, self.events, self.res = frame, events, res
        self._last_present = None
        self.canvas = RenderCanvas(size=res, title=str(title), update_mode="ondemand", vsync=bool(vsync))
        self.context = self.canvas.get_context("wgpu")
        device = frame.device
        preferred = self.context.get_preferred_format(device.adapter)
        fmt = preferred.removesuffix("-srgb")  # the frame's bytes as they are, when the surface can
        try:
            self.context.configure(device=device, format=fmt)
        except ValueError:
            fmt = preferred
            self.context.configure(device=device, format=fmt)
        self.presenter = Presenter(frame, fmt)
        self.canvas.request_draw(self._draw)
        self.canvas.add_event_handler(self._on_event, "pointer_down", "pointer_up", "pointer_move", "wheel",
                                      "key_down", "key_up", "close")
        self.closed = False

    def _draw(self) -> None:
        self.presenter.draw(self.context.get_current_texture())

    def present(self, fps_limit=None) -> None:
        """Show the frame and handle the window's input; with `fps_limit`, first wait until
        1 / fps_limit seconds have passed since the last present (Taichi's frame pacing)."""
        if self.closed:
            return
        if fps_limit:
            now = time.perf_counter()
            if self._last_present is not None and self._last_present + 1 / fps_limit > now:
                time.sleep(self._last_present + 1 / fps_limit - now)
            self._last_present = time.perf_counter()
        self.canvas.force_draw()
        self.poll()

    def poll(self) -> None:
        """Turn the window's pending input into events."""
        if self.closed:
            return
        if self.canvas.get_closed():
            self._closing()
            return
        self.canvas._process_events()  # glfw.poll_events + rendercanvas's event flush

    def _pos(self, ev) -> tuple[float, float]:
        w, h = self.canvas.get_logical_size()
        return ev.get("x", 0.0) / max(w, 1), 1.0 - ev.get("y", 0.0) / max(h, 1)

    def _on_event(self, ev: dict) -> None:
        kind = ev["event_type"]
        if kind == "close":
            self._closing()
        elif kind in ("pointer_down", "pointer_up"):
            key = _BUTTONS.get(ev.get("button", 0))
            if key:
                self.events.push(EType.Press if kind == "pointer_down" else EType.Release, key, self._pos(ev))
        elif kind == "pointer_move":
            self.events.push(EType.Move, KEYS["MOVE"], self._pos(ev))
        elif kind == "wheel":
            self.events.push(EType.Move, KEYS["WHEEL"], self._pos(ev), delta=(ev.get("dx", 0), -ev.get("dy", 0)))
        elif kind in ("key_down", "key_up"):
            key = ev.get("key", "")
            key = _KEY_NAMES.get(key, key.lower() if len(key) == 1 else key)
            self.events.push(EType.Press if kind == "key_down" else EType.Release, key)

    def _closing(self) -> None:
        if not self.closed:
            self.closed = True
            self.events.push(EType.Press, KEYS["EXIT"])

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.canvas.close()
