"""`window.get_gui()` (Taichi's `window.GUI`): immediate-mode widgets in sub-windows. Each call
returns the widget's value for this frame: the value given, changed by the mouse presses the
window received since the last `show()` (a press on a button clicks it; on a slider, sets it
where it was pressed; on a checkbox, toggles it). The sub-windows are drawn over the frame as
panels with their widgets' boxes, bars and labels (gr.GUI's bitmap font, gfxrt/gui/font.py).
"""
from __future__ import annotations

from contextlib import contextmanager

from gfxrt.compiler.npcompat import np

from ..gui import font

# Dear ImGui's default look (Taichi's GGUI widgets): sizes in pixels, its dark style's colours
TITLE, FRAME, ROW, PAD, INDENT = 19, 19, 23, 4, 8  # title bar, a widget's box, a row, gaps
FONT = 12  # the labels' glyph height
WIDTH = 0.65  # a slider's or a colour's box: this share of the row, its label to the right
LABEL = (1.0, 1.0, 1.0, 1.0)
WINDOW_BG, TITLE_BG = (0.06, 0.06, 0.06, 0.94), (0.16, 0.29, 0.48, 1.0)
FRAME_BG, GRAB, BUTTON, CHECK = (0.16, 0.29, 0.48, 0.54), (0.24, 0.52, 0.88, 1.0), (0.26, 0.59, 0.98, 0.4), \
    (0.26, 0.59, 0.98, 1.0)


class Gui:
    def __init__(self, window):
        self._window = window
        self._panel = None  # (x0, y0, x1, y1) in pixels, y down, and the next row's y
        self._rects: list[tuple] = []  # (x0, y0, x1, y1, rgba): the overlay of this frame
        self._text: list[tuple] = []  # (triangles (n, 6) in [0, 1]^2 y up, rgba): its labels

    # -- layout ---------------------------------------------------------------------------
    @contextmanager
    def sub_window(self, name, x, y, width, height):
        self.begin(name, x, y, width, height)
        try:
            yield self
        finally:
            self.end()

    def begin(self, name, x, y, width, height) -> None:
        """A sub-window at (x, y) (its top-left corner, fractions of the window from the top-left)
        of `width` x `height` (fractions)."""
        if self._panel is not None:
            raise RuntimeError("gui.begin: the previous sub-window was not ended (gui.end())")
        W, H = self._window.res
        x0, y0 = float(x) * W, float(y) * H
        self._open(str(name), x0, y0, x0 + float(width) * W, y0 + float(height) * H)

    def _open(self, name, x0, y0, x1, y1) -> None:
        self._panel = [x0, y0, x1, y1, y0 + TITLE + PAD]
        self._rect((x0, y0, x1, y1, WINDOW_BG))
        self._rect((x0, y0, x1, y0 + TITLE, TITLE_BG))
        self._label(name, x0 + INDENT, (x0, y0, x1, y0 + TITLE))

    def end(self) -> None:
        if self._panel is None:
            raise RuntimeError("gui.end without gui.begin")
        self._panel = None

    def _row(self):
        """The pixel box (x0, y0, x1, y1) of the next widget row (a panel of the whole window
        outside begin/end)."""
        if self._panel is None:  # widgets outside begin/end: ImGui's default window
            W, H = self._window.res
            self._open("Debug", 0.0, 0.0, 0.4 * W, 0.4 * H)
        x0, _, x1, _, y = self._panel
        self._panel[4] = y + ROW
        return x0 + INDENT, y, x1 - INDENT, y + FRAME

    def _rect(self, r) -> None:
        """A box (x0, y0, x1, y1, rgba) of the overlay, clipped to the open sub-window (ImGui clips
        what overflows it)."""
        x0, y0, x1, y1, rgba = r
        if self._panel is not None:
            px0, py0, px1, py1 = self._panel[:4]
            x0, y0, x1, y1 = max(x0, px0), max(y0, py0), min(x1, px1), min(y1, py1)
        if x1 > x0 and y1 > y0:
            self._rects.append((x0, y0, x1, y1, rgba))

    def _label(self, text, x, box, rgba=LABEL) -> None:
        """`text` left-aligned at pixel x, centred in the row `box`."""
        W, H = self._window.res
        top = (box[1] + box[3]) / 2 - FONT * 7 / 18  # glyphs are 7 of 9 cells high
        tris = font.text_triangles(str(text), (x / W, 1 - top / H), FONT, (W, H))
        if len(tris) and self._panel is not None:  # the glyph cells inside the sub-window
            px0, py0, px1, py1 = self._panel[:4]
            xs, ys = tris[:, 0::2], tris[:, 1::2]
            tris = tris[((xs >= px0 / W - 1e-6) & (xs <= px1 / W + 1e-6) & (ys >= 1 - py1 / H - 1e-6)
                         & (ys <= 1 - py0 / H + 1e-6)).all(1)]
        if len(tris):
            self._text.append((tris, rgba))

    def _pressed_in(self, box):
        """Where (x fraction of the box) the left button was pressed inside `box` this frame, or None."""
        W, H = self._window.res
        for key, (cx, cy) in self._window.input.clicks:
            px, py = cx * W, (1.0 - cy) * H
            if key == "LMB" and box[0] <= px <= box[2] and box[1] <= py <= box[3]:
                return (px - box[0]) / max(box[2] - box[0], 1e-9)
        return None

    # -- widgets --------------------------------------------------------------------------
    def text(self, text, color=None) -> None:
        box = self._row()
        self._label(text, box[0], box, LABEL if color is None else (*(float(c) for c in tuple(color)[:3]), 1.0))

    def button(self, text) -> bool:
        x0, y0, x1, y1 = self._row()
        box = (x0, y0, min(x1, x0 + len(str(text)) * FONT * 6 / 9 + 2 * PAD), y1)
        hit = self._pressed_in(box) is not None
        self._rect((*box, BUTTON if not hit else CHECK))
        self._label(text, box[0] + PAD, box)
        return hit

    def checkbox(self, text, old_value) -> bool:
        x0, y0, x1, y1 = self._row()
        box = (x0, y0, x0 + (y1 - y0), y1)
        value = bool(old_value) != (self._pressed_in(box) is not None)
        self._rect((*box, FRAME_BG))
        if value:
            self._rect((box[0] + 4, box[1] + 4, box[2] - 4, box[3] - 4, CHECK))
        self._label(text, box[2] + PAD, box)
        return value

    def _slider(self, text, old_value, minimum, maximum, fmt):
        x0, y0, x1, y1 = self._row()
        box = (x0, y0, x0 + WIDTH * (x1 - x0), y1)
        at = self._pressed_in(box)
        value = old_value if at is None else minimum + at * (maximum - minimum)
        frac = 0.0 if maximum == minimum else min(max((value - minimum) / (maximum - minimum), 0.0), 1.0)
        grab = box[0] + 2 + frac * (box[2] - box[0] - 14)
        self._rect((*box, FRAME_BG))
        self._rect((grab, y0 + 2, grab + 10, y1 - 2, GRAB))
        self._label(fmt(value), (box[0] + box[2]) / 2 - len(fmt(value)) * FONT / 3, box)
        self._label(text, box[2] + PAD, (x0, y0, x1, y1))
        return value

    def slider_float(self, text, old_value, minimum, maximum) -> float:
        return float(self._slider(text, float(old_value), float(minimum), float(maximum), lambda v: f"{v:.3f}"))

    def slider_int(self, text, old_value, minimum, maximum) -> int:
        return int(round(self._slider(text, int(old_value), int(minimum), int(maximum), lambda v: f"{round(v)}")))

    def color_edit_3(self, text, old_value):
        x0, y0, x1, y1 = self._row()
        rgb = tuple(float(c) for c in tuple(old_value)[:3])
        box = (x0, y0, x0 + WIDTH * (x1 - x0), y1)
        self._rect((*box, FRAME_BG))
        self._label(" ".join(f"{round(c * 255)}" for c in rgb), box[0] + PAD, box)
        self._rect((box[2] - (y1 - y0), y0, box[2], y1, (*rgb, 1.0)))
        self._label(text, box[2] + PAD, (x0, y0, x1, y1))
        return tuple(old_value)

    # -- the frame ------------------------------------------------------------------------
    def _take(self):
        """The overlay of this frame as canvas triangles: positions (n, 2) in [0, 1]^2 (y up) and
        colours (n, 4); a fresh frame after."""
        W, H = self._window.res
        pos, col = [], []
        for x0, y0, x1, y1, rgba in self._rects:
            a, b = (x0 / W, 1 - y0 / H), (x1 / W, 1 - y1 / H)
            pos += [a, (b[0], a[1]), b, a, b, (a[0], b[1])]
            col += [rgba] * 6
        for tris, rgba in self._text:
            pos += [tuple(p) for p in np.asarray(tris).reshape(-1, 2)]
            col += [rgba] * (len(tris) * 3)
        self._rects, self._text, self._panel = [], [], None
        return pos, col
