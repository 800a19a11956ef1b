"""A real window presenting a Frame: wgpu-py's rendercanvas with its glfw backend, on gfxrt's own
device. `open_window` returns None (the caller then stays off-screen) when there is no display
(Linux: neither DISPLAY nor WAYLAND_DISPLAY set) or rendercanvas / glfw are not installed
(`pip install gfxrt[gui]`). The window's input becomes GUI events (gfxrt/gui/events.py):
keys with Taichi's names, mouse buttons LMB / RMB / MMB, the wheel, motion, and closing (EXIT).
"""
from __future__ import annotations

import importlib.util
import os
import sys
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


def open_window(title, res, frame, events, fullscreen=False):
    """A Window presenting `frame`, feeding `events`; None without a display."""
    if not display_available():
        return None
    try:
        return Window(title, res, frame, events)
    except Exception as e:  # a display that cannot be reached, a driver without a surface: stay off-screen
        warnings.warn(f"gr.GUI: no window ({type(e).__name__}: {e}); drawing off-screen", stacklevel=3)
        return None


class Window:
    """A glfw window (rendercanvas) whose surface shows a Frame, scaled to the window's size."""

    def __init__(self, title, res, frame, events):
        import wgpu
        from rendercanvas.glfw import RenderCanvas
        self.frame, self.events, self.res = frame, events, res
        self.canvas = RenderCanvas(size=res, title=str(title), update_mode="ondemand")
        self.context = self.canvas.get_context("wgpu")
        device = frame.device
        self.format = self.context.get_preferred_format(device.adapter)
        self.context.configure(device=device, format=self.format)
        module = device.create_shader_module(code=shaders.BLIT)
        self.layout = device.create_bind_group_layout(entries=[{
            "binding": 0, "visibility": wgpu.ShaderStage.FRAGMENT,
            "texture": {"sample_type": wgpu.TextureSampleType.float, "view_dimension": "2d"}}])
        self.pipeline = device.create_render_pipeline(
            layout=device.create_pipeline_layout(bind_group_layouts=[self.layout]),
            vertex={"module": module, "entry_point": "vs", "buffers": []},
            primitive={"topology": "triangle-list"}, depth_stencil=None,
            multisample={"count": 1, "mask": 0xFFFFFFFF, "alpha_to_coverage_enabled": False},
            fragment={"module": module, "entry_point": "fs", "targets": [{"format": self.format}]})
        self.bind_group = device.create_bind_group(layout=self.layout, entries=[
            {"binding": 0, "resource": frame.view}])
        self.canvas.request_draw(self._draw)
        self.canvas.add_event_handler(self._on_event, "pointer_down", "pointer_up", "pointer_move", "wheel",
                                      "key_down", "key_up", "close")
        self.closed = False
        self._buttons_down = set()

    def _draw(self) -> None:
        tex = self.context.get_current_texture()
        device = self.frame.device
        encoder = device.create_command_encoder()
        rpass = encoder.begin_render_pass(color_attachments=[{
            "view": tex.create_view(), "resolve_target": None, "load_op": "clear", "store_op": "store",
            "clear_value": (0, 0, 0, 1)}])
        rpass.set_pipeline(self.pipeline)
        rpass.set_bind_group(0, self.bind_group)
        rpass.draw(3, 1)
        rpass.end()
        submit(device, [encoder.finish()])

    def present(self) -> None:
        """Show the frame now and handle the window's input."""
        if self.closed:
            return
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
