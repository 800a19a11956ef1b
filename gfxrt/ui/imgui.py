"""`window.get_gui()` (Taichi's `window.GUI`): immediate-mode widgets in sub-windows. Each call
returns the widget's value for this frame: the value given, changed by the mouse presses the
window received since the last `show()` (a press on a button clicks it; on a slider, sets it
where it was pressed; on a checkbox, toggles it). The sub-windows are drawn over the frame as
panels with their widgets' boxes and bars (text is not rendered: gfxrt ships no font).
"""
from __future__ import annotations

from contextlib import contextmanager

ROW = 22  # pixels per widget row
PAD = 4


class Gui:
    def __init__(self, window):
        self._window = window
        self._panel = None  # (x0, y0, x1, y1) in pixels, y down, and the next row's y
        self._rects: list[tuple] = []  # (x0, y0, x1, y1, rgba): the overlay of this frame

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
        self._panel = [x0, y0, x0 + float(width) * W, y0 + float(height) * H, y0 + PAD]
        self._rects.append((x0, y0, self._panel[2], self._panel[3], (0.15, 0.15, 0.15, 0.75)))

    def end(self) -> None:
        if self._panel is None:
            raise RuntimeError("gui.end without gui.begin")
        self._panel = None

    def _row(self):
        """The pixel box (x0, y0, x1, y1) of the next widget row (a panel of the whole window
        outside begin/end)."""
        if self._panel is None:
            W, H = self._window.res
            self._panel = [0.0, 0.0, float(W), float(H), PAD]
            self._rects.append((0.0, 0.0, W * 0.3, H * 0.3, (0.15, 0.15, 0.15, 0.75)))
        x0, _, x1, _, y = self._panel
        self._panel[4] = y + ROW
        return x0 + PAD, y, x1 - PAD, y + ROW - PAD

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
        x0, y0, x1, y1 = self._row()
        rgb = tuple(color)[:3] if color is not None else (0.9, 0.9, 0.9)
        self._rects.append((x0, (y0 + y1) / 2, x0 + min(x1 - x0, 7 * len(str(text))), (y0 + y1) / 2 + 1, (*rgb, 0.6)))

    def button(self, text) -> bool:
        box = self._row()
        hit = self._pressed_in(box) is not None
        self._rects.append((*box, (0.3, 0.45, 0.7, 1.0) if not hit else (0.5, 0.65, 0.9, 1.0)))
        return hit

    def checkbox(self, text, old_value) -> bool:
        x0, y0, x1, y1 = self._row()
        box = (x0, y0, x0 + (y1 - y0), y1)
        value = bool(old_value) != (self._pressed_in(box) is not None)
        self._rects.append((*box, (0.3, 0.3, 0.3, 1.0)))
        if value:
            self._rects.append((box[0] + 3, box[1] + 3, box[2] - 3, box[3] - 3, (0.5, 0.8, 0.5, 1.0)))
        return value

    def _slider(self, old_value, minimum, maximum):
        box = self._row()
        at = self._pressed_in(box)
        value = old_value if at is None else minimum + at * (maximum - minimum)
        frac = 0.0 if maximum == minimum else min(max((value - minimum) / (maximum - minimum), 0.0), 1.0)
        self._rects.append((*box, (0.3, 0.3, 0.3, 1.0)))
        self._rects.append((box[0], box[1], box[0] + frac * (box[2] - box[0]), box[3], (0.4, 0.6, 0.9, 1.0)))
        return value

    def slider_float(self, text, old_value, minimum, maximum) -> float:
        return float(self._slider(float(old_value), float(minimum), float(maximum)))

    def slider_int(self, text, old_value, minimum, maximum) -> int:
        return int(round(self._slider(int(old_value), int(minimum), int(maximum))))

    def color_edit_3(self, text, old_value):
        x0, y0, x1, y1 = self._row()
        self._rects.append((x0, y0, x1, y1, (*(float(c) for c in tuple(old_value)[:3]), 1.0)))
        return tuple(old_value)

    # -- the frame ------------------------------------------------------------------------
    def _take(self):
        """The overlay's rectangles of this frame (and a fresh frame)."""
        rects, self._rects, self._panel = self._rects, [], None
        return rects
