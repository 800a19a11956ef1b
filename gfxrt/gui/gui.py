"""gr.GUI: Taichi 1.7.4's ti.GUI (taichi/ui/gui.py) on wgpu's render pipelines.

Each call (set_image, circles, lines, triangles, text, ...) records a draw (gfxrt/gui/painter.py);
`show()` renders the frame's draws in one render pass into the off-screen Frame, presents it in
the window when there is one (gfxrt/gui/window.py), writes it to `show(filename)`, and starts the
next frame (cleared to `background_color`). Without a display, or with show_gui=False, everything
is the same but nothing is presented. Positions are Taichi's: (x, y) in [0, 1], y up; radii and
widths are in pixels; colours are ints 0xRRGGBB. docs/gui.md.
"""
from __future__ import annotations

import math
import numbers
import os

from gfxrt.compiler import npcompat
from gfxrt.compiler.npcompat import np

from ..data.ndarray import Ndarray
from . import font
from .colors import hex_to_rgb
from .events import KEYS, EType, Event, EventFilter, EventQueue
from .frame import Frame, write_png
from .notebook import InlineFrame, in_notebook
from .painter import PER_ITEM_COLOR, PER_ITEM_RADIUS, Painter, device_buffer, host_f32
from .window import open_window


def _env_flag(key: str, default: bool) -> bool:
    return bool(int(os.environ[key])) if key in os.environ else default


def _color(c, what="color") -> int:
    if isinstance(c, (numbers.Integral, np.integer)):
        return int(c) & 0xFFFFFF
    raise ValueError(f"{what} must be an int such as 0x956333 (or an array of them), got {c!r}")


class GUI:
    """Taichi's ti.GUI: a 2D canvas of `res` pixels (an int: square), shown in a window when a
    display is found and show_gui is True (env TI_GUI_SHOW=0 turns it off), else off-screen."""

    Event = Event
    EventFilter = EventFilter
    locals().update(KEYS)  # GUI.SHIFT, GUI.ESCAPE, GUI.LMB, GUI.EXIT, GUI.WHEEL, ...
    MOTION, PRESS, RELEASE = EType.Move, EType.Press, EType.Release

    class WidgetValue:
        """A slider's or label's value (Taichi's GUI.WidgetValue)."""

        def __init__(self, gui, wid):
            self.gui, self.wid = gui, wid

        @property
        def value(self):
            return self.gui._widgets[self.wid]["value"]

        @value.setter
        def value(self, value):
            w = self.gui._widgets[self.wid]
            w["value"] = float(value) if w["kind"] == "slider" else value

    def __init__(self, name="Taichi", res=512, background_color=0x0, show_gui=True, fullscreen=False,
                 fast_gui=False):
        show_gui = _env_flag("TI_GUI_SHOW", show_gui)
        if isinstance(res, numbers.Number):
            res = (res, res)
        res = tuple(int(r) for r in res)
        if len(res) != 2 or min(res) <= 0:
            raise ValueError(f"res must be a positive int or (width, height), got {res!r}")
        self.name, self.res, self.fast_gui = name, res, fast_gui
        self.background_color = _color(background_color, "background_color")
        self.frame = 0
        self.events = EventQueue()
        self.event = None
        self._widgets: list[dict] = []
        self._running = True
        self._fps_limit = 60.0
        self._frame = Frame(*res)
        self.painter = Painter(self._frame)
        self._clear_to = self.background_color
        self._fresh = True  # the frame holds nothing of the current frame yet (the next render clears)
        self.window = open_window(name, res, self._frame, self.events, fullscreen) if show_gui else None
        self._inline = InlineFrame() if show_gui and self.window is None and in_notebook() else None

    # -- lifetime ------------------------------------------------------------------------------
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        """Close the window (if any); the GUI stops running."""
        if self.window is not None:
            self.window.close()
            self.window = None
        self._running = False

    @property
    def running(self) -> bool:
        """False once the window was closed (or `gui.running = False`)."""
        if self.window is not None and self.window.closed:
            self._running = False
        return self._running

    @running.setter
    def running(self, value) -> None:
        self._running = bool(value)

    @property
    def fps_limit(self):
        """The most frames per second show() presents in a window (None: no limit). Default 60;
        off-screen frames are never throttled (as Taichi's with show_gui=False)."""
        return self._fps_limit

    @fps_limit.setter
    def fps_limit(self, value) -> None:
        self._fps_limit = None if value is None else float(value)

    # -- widgets -------------------------------------------------------------------------------
    def _widget(self, kind, text, value, **extra) -> int:
        self._widgets.append(dict(kind=kind, text=str(text), value=value, **extra))
        return len(self._widgets) - 1

    def slider(self, text, minimum, maximum, step=1):
        """A slider (its .value starts at `minimum`); drawn at the top right of the frame."""
        return GUI.WidgetValue(self, self._widget("slider", text, float(minimum), lo=minimum, hi=maximum, step=step))

    def label(self, text):
        """A label showing its .value."""
        return GUI.WidgetValue(self, self._widget("label", text, 0))

    def button(self, text, event_name=None):
        """A button; clicking it queues a PRESS event whose key is the returned name."""
        event_name = event_name or f"WidgetButton_{text}"
        self._widget("button", text, None, event=event_name)
        return event_name

    # -- drawing -------------------------------------------------------------------------------
    def clear(self, color=None) -> None:
        """Clear the canvas to `color` (default: background_color): drops what this frame drew so far."""
        self._clear_to = self.background_color if color is None else _color(color)
        self.painter.draws.clear()
        self._fresh = True

    def set_image(self, img) -> None:
        """Draw an image covering the canvas: img[x, y] (x to the right, y up) of shape res,
        res + (1|2|3|4,), or a Vector field of 2-4 channels; floats in [0, 1] or unsigned ints
        (scaled by their maximum). A gfxrt f32 field or ndarray is read in place on the device."""
        w, h = self.res
        self.painter.draws.clear()  # covers everything drawn before in this frame
        dev = device_buffer(img, 0)
        if dev is not None and img.shape == self.res and len(img.element_shape) <= 1 and \
                (not img.element_shape or img.element_shape[0] in (1, 2, 3, 4)):
            buf, _ = dev
            c = img.element_shape[0] if img.element_shape else 1
            self.painter.add("image", 3, 1, [buf], {"channels": c}, keep=(img,))
            return
        a = _cook_image(img)
        if a.shape[:2] != self.res:
            raise ValueError(f"set_image: the image is {a.shape[0]} x {a.shape[1]} pixels, the GUI {w} x {h} "
                             "(img[x, y]: x first)")
        self.painter.add("image", 3, 1, [self.painter.upload(a)], {"channels": a.shape[2]})

    def circle(self, pos, color=0xFFFFFF, radius=1) -> None:
        """One circle at `pos` of `radius` pixels."""
        self.circles(np.asarray([pos], np.float32).reshape(1, 2), radius=radius, color=color)

    def circles(self, pos, radius=1, color=0xFFFFFF, palette=None, palette_indices=None) -> None:
        """Circles at `pos` ((n, 2): numpy, or a gfxrt Vector field / ndarray, read on the device),
        `radius` pixels (a number or n of them), `color` an int or n ints, or
        `palette[palette_indices[i]]`."""
        buf, n, keep = self.painter.source(pos, 2, "circles: pos")
        params, bufs = {"radius": 1.0}, [buf, None, None]
        if palette is not None:
            if palette_indices is None:
                raise ValueError("palette must be used together with palette_indices")
            idx = palette_indices.to_numpy() if isinstance(palette_indices, Ndarray) else np.asarray(palette_indices)
            if not np.issubdtype(idx.dtype, np.integer) or idx.shape != (n,):
                raise ValueError(f"palette_indices must be {n} integers, got {idx.dtype} {idx.shape}")
            if n and (idx.min() < 0 or idx.max() >= len(palette)):
                raise ValueError(f"palette_indices must lie in [0, {len(palette)})")
            color = np.asarray(palette, np.uint32)[idx]
        self._items(params, bufs, n, color, radius, "circles")
        self.painter.add("circles", 3 * n, 1, bufs, params, keep=(keep,))

    def _items(self, params, bufs, n, color, radius, what) -> None:
        """Colour and radius: one for all items (params) or one per item (buffers 2, 3)."""
        if isinstance(color, (np.ndarray, list, tuple, Ndarray)):
            c = color.to_numpy() if isinstance(color, Ndarray) else np.asarray(color)
            if c.shape != (n,):
                raise ValueError(f"{what}: color must be an int or {n} ints, got shape {c.shape}")
            bufs[1] = self.painter.upload(c.astype(np.uint32))
            params["flags"] = params.get("flags", 0) | PER_ITEM_COLOR
        else:
            params["color"] = _color(color)
        if isinstance(radius, (np.ndarray, list, tuple, Ndarray)):
            r = host_f32(radius, f"{what}: radius")
            if r.shape != (n,):
                raise ValueError(f"{what}: radius must be a number or {n} numbers, got shape {r.shape}")
            bufs[2] = self.painter.upload(r)
            params["flags"] = params.get("flags", 0) | PER_ITEM_RADIUS
        elif isinstance(radius, numbers.Number):
            params["radius"] = float(radius)
        else:
            raise ValueError(f"{what}: radius must be a number or an array, got {radius!r}")

    def lines(self, begin, end, radius=1, color=0xFFFFFF) -> None:
        """Segments from begin[i] to end[i] ((n, 2) each), `radius` pixels on each side."""
        b, e = _pairs(begin, "lines: begin"), _pairs(end, "lines: end")
        if b.shape != e.shape:
            raise ValueError(f"lines: begin and end differ in shape: {b.shape} and {e.shape}")
        n = b.shape[0]
        params, bufs = {}, [self.painter.upload(np.concatenate([b, e], axis=1)), None, None]
        self._items(params, bufs, n, color, radius, "lines")
        self.painter.add("lines", 6 * n, 1, bufs, params)

    def line(self, begin, end, radius=1, color=0xFFFFFF) -> None:
        self.lines(np.asarray([begin], np.float32), np.asarray([end], np.float32), radius, color)

    def triangles(self, a, b, c, color=0xFFFFFF) -> None:
        """Filled triangles with corners a[i], b[i], c[i] ((n, 2) each)."""
        a, b, c = _pairs(a, "triangles: a"), _pairs(b, "triangles: b"), _pairs(c, "triangles: c")
        if not a.shape == b.shape == c.shape:
            raise ValueError(f"triangles: a, b, c differ in shape: {a.shape}, {b.shape}, {c.shape}")
        n = a.shape[0]
        params, bufs = {}, [self.painter.upload(np.concatenate([a, b, c], axis=1)), None, None]
        self._items(params, bufs, n, color, 1, "triangles")
        self.painter.add("triangles", 3 * n, 1, bufs, params)

    def triangle(self, a, b, c, color=0xFFFFFF) -> None:
        self.triangles(*(np.asarray([p], np.float32) for p in (a, b, c)), color=color)

    @staticmethod
    def _arrow_to_lines(orig, major, tip_scale=0.2, angle=45):
        angle = math.radians(180 - angle)
        c, s = math.cos(angle), math.sin(angle)
        minor1 = np.array([major[:, 0] * c - major[:, 1] * s, major[:, 0] * s + major[:, 1] * c]).swapaxes(0, 1)
        minor2 = np.array([major[:, 0] * c + major[:, 1] * s, -major[:, 0] * s + major[:, 1] * c]).swapaxes(0, 1)
        end = orig + major
        return [(orig, end), (end, end + minor1 * tip_scale), (end, end + minor2 * tip_scale)]

    def arrows(self, orig, direction, radius=1, color=0xFFFFFF, **kwargs) -> None:
        """Arrows from orig[i] along direction[i] (a shaft and two tip strokes, as Taichi's)."""
        orig, direction = _pairs(orig, "arrows: orig"), _pairs(direction, "arrows: direction")
        for begin, end in self._arrow_to_lines(orig, direction, **kwargs):
            self.lines(begin, end, radius, color)

    def arrow(self, orig, direction, radius=1, color=0xFFFFFF, **kwargs) -> None:
        self.arrows(np.asarray([orig], np.float32), np.asarray([direction], np.float32), radius, color, **kwargs)

    def rect(self, topleft, bottomright, radius=1, color=0xFFFFFF) -> None:
        """A rectangle's outline."""
        a = topleft[0], topleft[1]
        b = bottomright[0], topleft[1]
        c = bottomright[0], bottomright[1]
        d = topleft[0], bottomright[1]
        self.lines(np.asarray([a, b, c, d], np.float32), np.asarray([b, c, d, a], np.float32), radius, color)

    def text(self, content, pos, font_size=15, color=0xFFFFFF) -> None:
        """`content` with its top-left corner at `pos`, `font_size` pixels high (gfxrt's built-in
        bitmap font: ASCII)."""
        tris = font.text_triangles(str(content), (float(pos[0]), float(pos[1])), float(font_size), self.res)
        if len(tris):
            self.triangles(tris[:, 0:2], tris[:, 2:4], tris[:, 4:6], color=_color(color))

    @staticmethod
    def _make_field_base(w, h, bound):
        x = np.linspace(bound / w, 1 - bound / w, w)
        y = np.linspace(bound / h, 1 - bound / h, h)
        base = np.array(np.meshgrid(x, y))
        base = base.swapaxes(0, 1).swapaxes(1, 2).swapaxes(0, 1)
        return base.reshape(w * h, 2)

    def point_field(self, radius, color=0xFFFFFF, bound=0.5) -> None:
        radius = np.asarray(radius)
        base = self._make_field_base(radius.shape[0], radius.shape[1], bound)
        self.circles(base, radius=radius.reshape(-1), color=color)

    def arrow_field(self, direction, radius=1, color=0xFFFFFF, bound=0.5, **kwargs) -> None:
        direction = np.asarray(direction)
        base = self._make_field_base(direction.shape[0], direction.shape[1], bound)
        self.arrows(base, direction.reshape(-1, 2), radius=radius, color=color, **kwargs)

    def vector_field(self, vector_field, arrow_spacing=5, color=0xFFFFFF) -> None:
        """Arrows for a 2-vector field (Taichi's): one every `arrow_spacing` cells, the largest
        a tenth of the canvas long."""
        v_np = vector_field.to_numpy() if isinstance(vector_field, Ndarray) else np.asarray(vector_field)
        nx, ny = v_np.shape[:2]
        scale = 0.1 / (np.max(np.linalg.norm(v_np, axis=-1)) + 1e-16)
        xs, ys = np.meshgrid(np.arange(0, 1, arrow_spacing / nx), np.arange(0, 1, arrow_spacing / ny))
        begin = np.dstack((xs, ys)).reshape(-1, 2, order="F")
        incre = (v_np[::arrow_spacing, ::arrow_spacing] * scale).reshape(-1, 2, order="C")
        self.arrows(orig=begin, direction=incre, radius=1, color=color)

    def contour(self, scalar_field, normalize=False) -> None:
        """A scalar field as an image in matplotlib's 'plasma' colour map (Taichi's; needs
        matplotlib), bilinearly resampled to `res`; `normalize` maps its range to [0, 1]."""
        try:
            from matplotlib import cm
        except ImportError:
            raise RuntimeError("GUI.contour needs matplotlib: pip install matplotlib") from None
        f = scalar_field.to_numpy() if isinstance(scalar_field, Ndarray) else np.asarray(scalar_field)
        if self.res != f.shape:
            x, y = np.meshgrid(np.linspace(0, 1, self.res[1]), np.linspace(0, 1, self.res[0]))
            xi, yi = x * (f.shape[1] - 1), y * (f.shape[0] - 1)
            x1, y1 = xi.astype(int), yi.astype(int)
            x2, y2 = np.minimum(x1 + 1, f.shape[1] - 1), np.minimum(y1 + 1, f.shape[0] - 1)
            fx, fy = xi - x1, yi - y1
            f = (f[y1, x1] * (1 - fx) * (1 - fy) + f[y1, x2] * fx * (1 - fy)
                 + f[y2, x1] * (1 - fx) * fy + f[y2, x2] * fx * fy)
        if normalize:
            lo, hi = np.min(f), np.max(f)
            f = (f - lo) / (hi - lo)
        self.set_image(cm.plasma(f))

    # -- the frame -----------------------------------------------------------------------------
    def _render(self) -> None:
        """Render this frame's pending draws into the off-screen frame."""
        self._draw_widgets()
        clear = hex_to_rgb(self._clear_to) + (1.0,) if self._fresh else None
        self.painter.render(clear)
        self._fresh = False

    def get_image(self) -> np.ndarray:
        """The canvas so far as float32 (width, height, 4), img[x, y] with y up (Taichi's)."""
        self._render()
        rgba = self._frame.read()
        return np.ascontiguousarray(rgba[::-1].transpose(1, 0, 2)).astype(np.float32) / 255

    def show(self, file=None) -> None:
        """End the frame: render it, present it in the window (if any; waiting for fps_limit) or,
        in a notebook without one, inline; write it to `file` (PNG) if given; and start the next
        frame cleared to background_color."""
        self._render()
        if file or self._inline is not None:
            rgb = self._frame.read()[:, :, :3]
            if file:
                write_png(file, rgb)
            if self._inline is not None:  # a notebook without a window: the frame inline, updated in place
                self._inline.show(rgb)
        if self.window is not None:
            self.window.present(self._fps_limit)
        self.frame += 1
        self.clear()

    # -- events --------------------------------------------------------------------------------
    def push_event(self, type, key, pos=None, delta=(0, 0), modifier=None) -> Event:  # noqa: A002
        """Queue an event as a window would (tests; programs driven without a display):
        type GUI.PRESS / RELEASE / MOTION, key e.g. 'a', GUI.LMB; pos (x, y) in [0, 1]."""
        e = self.events.push(type, key, pos, delta, modifier)
        if e.key == KEYS["EXIT"]:
            self._running = False
        if e.type is EType.Press and e.key == KEYS["LMB"]:
            self._click_widgets(e.pos)
        return e

    def _poll(self) -> None:
        if self.window is not None:
            self.window.poll()
            if self.window.closed:
                self._running = False

    def has_key_event(self) -> bool:
        self._poll()
        return bool(self.events.pending)

    def get_key_event(self) -> Event:
        """The oldest pending event (the keys held down follow it)."""
        self._poll()
        return self.events.pop()

    def get_event(self, *e_filter) -> bool:
        """Pop events up to the first that matches the filter (types, keys, or (type, key)
        pairs); True and `gui.event` is it, or False when none is pending."""
        for e in self.get_events(*e_filter):
            self.event = e
            return True
        return False

    def get_events(self, *e_filter):
        """The pending events matching the filter (all of them with no filter)."""
        flt = EventFilter(*e_filter) if e_filter else None
        while self.has_key_event():
            e = self.get_key_event()
            if flt is None or flt.match(e):
                yield e

    def is_pressed(self, *keys) -> bool:
        return self.events.is_pressed(*keys)

    def get_cursor_pos(self):
        """The mouse position (x, y) in [0, 1], y up."""
        self._poll()
        return self.events.cursor

    # -- widgets on the canvas -----------------------------------------------------------------
    _ROW = 22  # pixels per widget row, at the top right

    def _widget_box(self, k):
        w, h = self.res
        x0 = max(0, w - 160)
        return x0 / w, 1 - (k + 1) * self._ROW / h, 1.0, 1 - k * self._ROW / h

    def _draw_widgets(self) -> None:
        for k, wd in enumerate(self._widgets):
            x0, y0, x1, y1 = self._widget_box(k)
            if wd["kind"] == "button":
                self.triangles(np.float32([[x0, y0], [x0, y0]]), np.float32([[x1, y0], [x1, y1]]),
                               np.float32([[x1, y1], [x0, y1]]), color=0x404040)
                txt = wd["text"]
            elif wd["kind"] == "slider":
                lo, hi = float(wd["lo"]), float(wd["hi"])
                t = 0.0 if hi == lo else min(max((wd["value"] - lo) / (hi - lo), 0.0), 1.0)
                self.line((x0, y0 + 1 / self.res[1]), (x0 + (x1 - x0) * t, y0 + 1 / self.res[1]),
                          radius=1, color=0x40A0FF)
                txt = f"{wd['text']}: {wd['value']:.3g}"
            else:
                txt = f"{wd['text']}: {wd['value']}"
            self.text(txt, (x0 + 3 / self.res[0], y1 - 4 / self.res[1]), font_size=12, color=0xFFFFFF)

    def _click_widgets(self, pos) -> None:
        for k, wd in enumerate(self._widgets):
            x0, y0, x1, y1 = self._widget_box(k)
            if x0 <= pos[0] <= x1 and y0 <= pos[1] <= y1:
                if wd["kind"] == "button":
                    self.events.push(EType.Press, wd["event"], pos)
                elif wd["kind"] == "slider":
                    lo, hi, step = float(wd["lo"]), float(wd["hi"]), float(wd["step"] or 0)
                    v = lo + (hi - lo) * (pos[0] - x0) / max(x1 - x0, 1e-9)
                    wd["value"] = round((v - lo) / step) * step + lo if step else v


def _pairs(a, what) -> np.ndarray:
    a = host_f32(a, what)
    if a.ndim == 3 and a.shape[2] == 1:
        a = a[:, :, 0]
    if a.ndim == 1 and a.size == 2:
        a = a.reshape(1, 2)
    if a.ndim != 2 or a.shape[1] != 2:
        raise ValueError(f"{what} must have shape (n, 2), got {a.shape}")
    return a


def _cook_image(img) -> np.ndarray:
    """Taichi's cook_image: float32 (w, h, channels) in [0, 1] from floats or unsigned ints."""
    if isinstance(img, Ndarray):
        img = img.to_numpy()
    if not npcompat.is_array(img):
        raise ValueError(f"GUI.set_image only takes a gfxrt field or ndarray or a NumPy array, not {type(img)}")
    if img.dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
        img = img.astype(np.float32) * (1 / np.iinfo(img.dtype).max)
    elif img.dtype in (np.float16, np.float32, np.float64):
        img = img.astype(np.float32)
    else:
        raise ValueError(f"Data type {img.dtype} not supported in GUI.set_image")
    if img.ndim == 2:
        img = img[..., None]
    if img.ndim != 3 or img.shape[2] not in (1, 2, 3, 4):
        raise ValueError(f"set_image: the image must be (w, h), or (w, h, 1|2|3|4) channels, got {img.shape}")
    return np.ascontiguousarray(img)
