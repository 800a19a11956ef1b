"""Headless stand-ins for Taichi's `ti.GUI`, `ti.ui` (GGUI), `ti.tools.imshow` and (where absent) matplotlib.

They draw nothing and record nothing. Every window reports one frame per `show()`; after
`frames` of them `running` turns False, and the next `show()` raises `FramesDone`, so a
program's `while gui.running:` or `for frame in range(10**6): ... gui.show()` ends after N
frames either way. Queries answer "nothing happened": no events, no keys pressed, the
cursor in the middle; widgets return the value they were given. The same stand-ins serve
the Taichi run and the gfxrt run, so both programs see identical inputs.

With `draw_dir` (`--draw`), `GUI` is instead the library's own ti.GUI / gr.GUI, off-screen
(show_gui=False): every frame a program shows is written to draw_dir/gui<K>-<FRAME>.png, with the
same frame budget and the same absent input (no events, no keys, the cursor in the middle).
GGUI likewise: `ui` is the library's own ti.ui / gr.ui with its Window off-screen
(show_window=False), each frame saved as draw_dir/ui<K>-<FRAME>.png before it is shown.

This module imports neither taichi nor gfxrt: `install(lib, frames)` patches the module given.
"""
import importlib.util
import os
import sys
import types


class FramesDone(BaseException):
    """Raised by the N+1-th `show()`: a BaseException, so a program's `except Exception` lets it through."""


class _Budget:
    frames = 3
    shown = 0
    in_window = 0  # frames presented in a real window (--window)

    @classmethod
    def show(cls):
        cls.shown += 1
        if cls.shown > cls.frames:
            raise FramesDone()

    @classmethod
    def running(cls):
        return cls.shown < cls.frames


class Null:
    """Answers every attribute, call, `with`, index and iteration with nothing."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Null()

    def __call__(self, *args, **kwargs):
        return Null()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __iter__(self):
        return iter(())

    def __getitem__(self, key):
        return Null()

    def __setitem__(self, key, value):
        pass

    def __bool__(self):
        return False


class _Keys(type):
    """`GUI.ESCAPE`, `GUI.LMB`, ... : key and event names are strings, as in Taichi."""

    def __getattr__(cls, name):
        if name.isupper():
            return name
        raise AttributeError(name)


class _Slider:
    def __init__(self, name, minimum, maximum, step=1):
        self.value = minimum


class _Event:
    key = type = None
    pos = (0.5, 0.5)
    modifier = ()


class _NoInput:
    """No events, no keys pressed, the cursor at the centre: the input of every stand-in."""

    def get_event(self, *args):
        return False

    def get_events(self, *args):
        return []

    def is_pressed(self, *keys):
        return False

    def get_cursor_pos(self):
        return (0.5, 0.5)


class GUI(_NoInput, metaclass=_Keys):
    """`ti.GUI` stand-in."""

    ESCAPE, SPACE, LMB, RMB, MMB = "Escape", " ", "LMB", "RMB", "MMB"
    PRESS, RELEASE, MOTION = "Press", "Release", "Motion"
    UP, DOWN, LEFT, RIGHT = "Up", "Down", "Left", "Right"
    SHIFT, CTRL, ALT, TAB, BACKSPACE, RETURN, EXIT = "Shift", "Control", "Alt", "Tab", "BackSpace", "Return", "WMClose"
    WHEEL = "Wheel"

    def __init__(self, name="Taichi", res=512, background_color=0x0, show_gui=True, fullscreen=False, fast_gui=False):
        self.res = (res, res) if isinstance(res, int) else tuple(res)
        self.frame = 0
        self.event = _Event()
        self.fps_limit = 60
        self._running = True

    @property
    def running(self):
        return self._running and _Budget.running()

    @running.setter
    def running(self, value):
        self._running = bool(value)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def show(self, file=None):
        self.frame += 1
        _Budget.show()

    def slider(self, name, minimum, maximum, step=1):
        return _Slider(name, minimum, maximum, step)

    def button(self, *args, **kwargs):
        return "button"

    def get_key_event_head(self):
        return _Event()

    def __getattr__(self, name):  # drawing: set_image, circles, lines, text, clear, ...
        if name.startswith("__"):
            raise AttributeError(name)
        return Null()


def _budgeted_running(real) -> property:
    """`real`'s `running`, False too once the frame budget is spent; setting it sets real's."""
    return property(lambda self: real.running.fget(self) and _Budget.running(),
                    lambda self, value: real.running.fset(self, value))


def drawing_gui(real, out_dir, window=False):
    """`real` (ti.GUI or gr.GUI) drawing off-screen (with `window`: in a real window when the library
    opens one), each shown frame written to `out_dir`."""
    os.makedirs(out_dir, exist_ok=True)

    class DrawingGUI(_NoInput, real):
        windows = 0

        def __init__(self, name="Taichi", res=512, background_color=0x0, show_gui=True, fullscreen=False,
                     fast_gui=False):
            super().__init__(name, res, background_color, show_gui=window)
            self._k = DrawingGUI.windows
            DrawingGUI.windows += 1

        running = _budgeted_running(real)

        def show(self, file=None):
            _Budget.show()
            if getattr(self, "window", None) is not None:
                _Budget.in_window += 1
            super().show(os.path.join(out_dir, f"gui{self._k}-{self.frame:04d}.png"))

    return DrawingGUI


def drawing_ui(real_ui, out_dir, window=False):
    """`real_ui` (ti.ui or gr.ui) with its Window off-screen (with `window`: shown in a real window
    when the library opens one), each shown frame written to `out_dir`."""
    os.makedirs(out_dir, exist_ok=True)
    real = real_ui.Window
    taichi = real_ui.__name__.startswith("taichi")

    class DrawingWindow(_NoInput, real):
        windows = 0

        def __init__(self, name="Taichi", res=(512, 512), vsync=False, show_window=True, fps_limit=1000,
                     pos=(100, 100)):
            super().__init__(name, res, vsync=vsync, show_window=window, fps_limit=fps_limit, pos=pos)
            self._k, self._frame_no = DrawingWindow.windows, 0
            DrawingWindow.windows += 1

        running = _budgeted_running(real)

        event = None  # no input (Taichi's off-screen window raises on reading its event)

        def show(self):
            _Budget.show()
            # the picture is saved before show(), as Taichi asks
            self.save_image(os.path.join(out_dir, f"ui{self._k}-{self._frame_no:04d}.png"))
            self._frame_no += 1
            if getattr(self, "_shown", None) is not None:  # gr.ui's real window
                _Budget.in_window += 1
            if not taichi:  # Taichi 1.7.4's off-screen window crashes in show(); its next frame starts anew anyway
                super().show()

    ui = types.ModuleType(real_ui.__name__)
    ui.__dict__.update({k: v for k, v in vars(real_ui).items() if not k.startswith("__")})
    ui.Window = DrawingWindow
    return ui


class _Widgets(Null):
    """GGUI's immediate-mode widgets: each returns the value it was given."""

    def slider_float(self, text, old_value, *args, **kwargs):
        return old_value

    slider_int = color_edit_3 = slider_float

    def sub_window(self, *args, **kwargs):
        return self

    def checkbox(self, text, old_value):
        return old_value

    def button(self, *args, **kwargs):
        return False


class Window(GUI):
    """`ti.ui.Window` stand-in."""

    def __init__(self, name="Taichi", res=(512, 512), vsync=False, show_window=True, fps_limit=1000, pos=(100, 100)):
        super().__init__(name, res)

    def show(self):
        super().show()

    def get_window_shape(self):
        return self.res

    def get_gui(self):
        return _Widgets()

    def get_canvas(self):
        return Null()

    def get_scene(self):
        return Null()

    def get_image_buffer_as_numpy(self):
        import numpy as np
        return np.zeros((*self.res, 4), np.float32)


def _camera_class(lib):
    """`ti.ui.Camera`: keeps the position, look-at point and up vector a program reads back (as `lib.Vector`)."""

    class Camera(Null):
        def __init__(self):
            self.curr_position = lib.Vector([0.0, 0.0, 0.0])
            self.curr_lookat = lib.Vector([0.0, 0.0, 1.0])
            self.curr_up = lib.Vector([0.0, 1.0, 0.0])

        def position(self, x, y, z):
            self.curr_position = lib.Vector([x, y, z])

        def lookat(self, x, y, z):
            self.curr_lookat = lib.Vector([x, y, z])

        def up(self, x, y, z):
            self.curr_up = lib.Vector([x, y, z])

    return Camera


def _ui_module(real_ui, lib):
    ui = types.ModuleType("ui")
    for k in dir(GUI):
        if k.isupper():
            setattr(ui, k, getattr(GUI, k))
    ui.Window = Window
    ui.GUI = GUI
    for name in ("Scene", "Canvas"):
        setattr(ui, name, Null)
    ui.Camera = ui.make_camera = _camera_class(lib)
    ui.ProjectionMode = Null()
    if real_ui is not None:  # keep the non-window parts (ui.Gui constants etc.) reachable
        for k in dir(real_ui):
            if not k.startswith("_") and not hasattr(ui, k):
                setattr(ui, k, Null())
    return ui


def _module_getattr(attr):
    if attr.startswith("__"):  # inspect walks sys.modules asking for __file__: a stub has none
        raise AttributeError(attr)
    return Null()


def _plotting_modules():
    mods = {}
    for name in ("matplotlib", "matplotlib.pyplot", "matplotlib.cm", "mpl_toolkits", "mpl_toolkits.mplot3d"):
        m = types.ModuleType(name)
        m.__getattr__ = _module_getattr
        mods[name] = m
    mods["matplotlib"].pyplot = mods["matplotlib.pyplot"]
    mods["matplotlib"].cm = mods["matplotlib.cm"]
    mods["mpl_toolkits"].mplot3d = mods["mpl_toolkits.mplot3d"]
    return mods


def install(lib, frames: int, draw_dir=None, window=False):
    """Put the stand-ins on `lib` (the taichi or gfxrt module) and plotting into sys.modules;
    with `draw_dir`, lib.GUI and lib.ui draw (drawing_gui, drawing_ui), in real windows with `window`."""
    _Budget.frames, _Budget.shown, _Budget.in_window = frames, 0, 0
    getattr(lib, "__all__", None)  # gfxrt loads its API on first use: load it now, or it would overwrite these
    lib.GUI = drawing_gui(lib.GUI, draw_dir, window) if draw_dir else GUI
    lib.ui = drawing_ui(lib.ui, draw_dir, window) if draw_dir else _ui_module(getattr(lib, "ui", None), lib)
    sys.modules[lib.__name__ + ".ui"] = lib.ui
    if importlib.util.find_spec("matplotlib") is None:  # else the real one, on the Agg backend (run.py sets it)
        sys.modules.update(_plotting_modules())
    else:
        import matplotlib
        import matplotlib.cm
        if not hasattr(matplotlib.cm, "get_cmap"):  # gone in matplotlib 3.9; the examples predate that
            matplotlib.cm.get_cmap = lambda name=None, lut=None: (
                matplotlib.colormaps[name] if lut is None else matplotlib.colormaps[name].resampled(lut))
    # `ti.tools.imshow` opens a window: a display call like the GUI's (gfxrt has no `tools` yet)
    tools = getattr(lib, "tools", None) or types.ModuleType(lib.__name__ + ".tools")
    tools.imshow = tools.imdisplay = Null()
    lib.tools = tools


def frames_shown() -> int:
    return _Budget.shown


def frames_in_window() -> int:
    """How many of the shown frames a real window presented (--window)."""
    return _Budget.in_window
