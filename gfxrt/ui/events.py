"""A window's input: the keys and buttons held, the cursor, and the queue of press and release
events that `window.get_event()` hands out, as Taichi's GGUI reports them (key names are
strings: "a", "Shift", "LMB", gr.ui.ESCAPE ...; the cursor is in [0, 1]^2 with y up).

A real window (gfxrt/gui/window.py, shared with gr.GUI) feeds it through `push`; a program or
a test feeds it synthetic events: `window.input.press("w")`, `.release("w")`, `.move(x, y)`.
Unlike gr.GUI's queue, a key counts as held from the moment it is pressed, whether or not its
event was taken (GGUI's `is_pressed` reads the keyboard, not the queue).
"""
from __future__ import annotations

from collections import deque

from ..gui.events import KEYS, EType

SHIFT, ALT, CTRL, ESCAPE, RETURN = "Shift", "Alt", "Control", "Escape", "Return"
TAB, BACKSPACE, SPACE = "Tab", "BackSpace", " "
UP, DOWN, LEFT, RIGHT, CAPSLOCK = "Up", "Down", "Left", "Right", "CapsLock"
LMB, MMB, RMB = "LMB", "MMB", "RMB"
PRESS, RELEASE = "Press", "Release"


class Event:
    """One input event: `key` and `type` (gr.ui.PRESS or gr.ui.RELEASE)."""

    __slots__ = ("key", "type", "modifier")

    def __init__(self, key=None, type=None, modifier=()):
        self.key, self.type, self.modifier = key, type, modifier

    def __repr__(self) -> str:
        return f"Event(key={self.key!r}, type={self.type!r})"


class Input:
    """The state of the keyboard and the mouse, and the pending events."""

    def __init__(self):
        self.held: set[str] = set()
        self.cursor = (0.5, 0.5)
        self.queue: deque[Event] = deque()
        self.clicks: list[tuple[str, tuple[float, float]]] = []  # presses of mouse buttons this frame (widgets)
        self.closed = False  # the real window was closed

    @staticmethod
    def _key(key) -> str:
        if not isinstance(key, str) or not key:
            raise TypeError(f"a key is a non-empty string (a letter, gr.ui.SHIFT, gr.ui.LMB, ...), got {key!r}")
        return key.lower() if len(key) == 1 else key

    def press(self, key) -> None:
        key = self._key(key)
        self.held.add(key)
        self.queue.append(Event(key, PRESS, tuple(m for m in (SHIFT, ALT, CTRL) if m in self.held)))
        if key in (LMB, MMB, RMB):
            self.clicks.append((key, self.cursor))

    def release(self, key) -> None:
        key = self._key(key)
        self.held.discard(key)
        self.queue.append(Event(key, RELEASE, tuple(m for m in (SHIFT, ALT, CTRL) if m in self.held)))

    def move(self, x, y) -> None:
        self.cursor = (float(x), float(y))

    def push(self, type, key, pos=None, delta=(0, 0), modifier=None) -> None:  # noqa: A002 (the window's call)
        """An event from a real window (gfxrt/gui/window.py): EType Press / Release / Move; the
        window's closing arrives as a press of gr.GUI's EXIT key."""
        if pos is not None:
            self.move(*pos)
        if key == KEYS["EXIT"]:
            self.closed = True
        elif type is EType.Press:
            self.press(key)
        elif type is EType.Release:
            self.release(key)

    def is_pressed(self, *keys) -> bool:
        return any(self._key(k) in self.held for k in keys)

    def _matching(self, tag):
        if tag not in (None, PRESS, RELEASE):
            raise ValueError(f"get_event(tag): tag is None, gr.ui.PRESS or gr.ui.RELEASE, got {tag!r}")
        return [e for e in self.queue if tag is None or e.type == tag]

    def next_event(self, tag=None):
        """The oldest pending event of type `tag` (any for None), taken off the queue; None if none."""
        for e in self._matching(tag):
            self.queue.remove(e)
            return e
        return None

    def take_events(self, tag=None) -> list[Event]:
        out = self._matching(tag)
        for e in out:
            self.queue.remove(e)
        return out
