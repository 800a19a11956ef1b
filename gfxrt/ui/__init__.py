"""gr.ui: Taichi's GGUI (`ti.ui`) on wgpu's render pipelines: `Window`, its `Canvas` (images,
circles, lines, triangles) and `Scene` (particles, meshes, lines, lights, a `Camera`), the
widgets of `window.get_gui()`, input events. Draws read the buffers that kernels write, on
the device; docs/gui.md ("gr.ui") says how to use it.
"""
from .camera import Camera, ProjectionMode
from .canvas import Canvas
from .events import (
    ALT,
    BACKSPACE,
    CAPSLOCK,
    CTRL,
    DOWN,
    ESCAPE,
    LEFT,
    LMB,
    MMB,
    PRESS,
    RELEASE,
    RETURN,
    RIGHT,
    RMB,
    SHIFT,
    SPACE,
    TAB,
    UP,
    Event,
)
from .imgui import Gui
from .scene import Scene
from .window import Window


def make_camera() -> Camera:
    return Camera()


def check_ggui_availability() -> None:
    """Taichi's check: gr.ui works on every adapter (off-screen where no display is found)."""


__all__ = ["ALT", "BACKSPACE", "CAPSLOCK", "CTRL", "DOWN", "ESCAPE", "LEFT", "LMB", "MMB", "PRESS", "RELEASE",
           "RETURN", "RIGHT", "RMB", "SHIFT", "SPACE", "TAB", "UP", "Camera", "Canvas", "Event", "Gui",
           "ProjectionMode", "Scene", "Window", "check_ggui_availability", "make_camera"]
