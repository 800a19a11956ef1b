"""gr.GUI's events, as Taichi's ti.GUI: keys are strings ("a", "Shift", "LMB", "Wheel", ...), an
event has `.type` (PRESS, RELEASE, MOTION), `.key`, `.pos` ((x, y) in [0, 1], y up), `.modifier`
and `.delta` (the wheel's). A window (gfxrt/gui/window.py) feeds the queue; tests and programs
without a display feed it with `GUI.push_event` (synthetic events, same path)."""
from __future__ import annotations

import collections
import enum


class EType(enum.Enum):
    """Taichi's ti.GUI.PRESS / RELEASE / MOTION."""

    Move = "Move"
    Press = "Press"
    Release = "Release"


# Taichi's key names (ti.GUI.SHIFT & co.)
KEYS = dict(SHIFT="Shift", ALT="Alt", CTRL="Control", ESCAPE="Escape", RETURN="Return", TAB="Tab",
            BACKSPACE="BackSpace", SPACE=" ", UP="Up", DOWN="Down", LEFT="Left", RIGHT="Right",
            CAPSLOCK="Caps_Lock", LMB="LMB", MMB="MMB", RMB="RMB", EXIT="WMClose", WHEEL="Wheel", MOVE="Motion")
MODIFIERS = ("Shift", "Alt", "Control")


class Event:
    """One GUI event (Taichi's ti.GUI.Event)."""

    def __init__(self, type=None, key=None, pos=None, modifier=None, delta=None):  # noqa: A002 (Taichi's name)
        self.type, self.key, self.pos, self.modifier, self.delta = type, key, pos, modifier, delta

    def __repr__(self) -> str:
        return f"Event(type={self.type}, key={self.key!r}, pos={self.pos}, modifier={self.modifier})"


class EventFilter:
    """Taichi's filter of get_event / get_events: types, keys, or (type, key) pairs."""

    def __init__(self, *e_filter):
        self.filter = {tuple(e) if isinstance(e, list) else e for e in e_filter}

    def match(self, e: Event) -> bool:
        return (e.type, e.key) in self.filter or e.type in self.filter or e.key in self.filter


class EventQueue:
    """Pending events, the keys held down and the cursor position."""

    def __init__(self):
        self.pending: collections.deque[Event] = collections.deque()
        self.pressed: set[str] = set()
        self.cursor = (0.0, 0.0)

    def push(self, type, key, pos=None, delta=(0, 0), modifier=None) -> Event:  # noqa: A002
        """Queue an event (from a window, or synthetic). `type`: EType or its name
        ("Press", "Release", "Move"); `pos` defaults to the cursor position."""
        if not isinstance(type, EType):
            try:
                type = EType(str(type).capitalize() if str(type).lower() != "motion" else "Move")  # noqa: A001
            except ValueError:
                raise ValueError(f"event type must be GUI.PRESS, GUI.RELEASE or GUI.MOTION, got {type!r}") from None
        if not isinstance(key, str):
            raise TypeError(f"an event key is a string (e.g. 'a', GUI.LMB), got {key!r}")
        if pos is None:
            pos = self.cursor
        pos = (float(pos[0]), float(pos[1]))
        self.cursor = pos
        mods = list(modifier) if modifier is not None else [m for m in MODIFIERS if self.is_pressed(m)]
        e = Event(type, key, pos, mods, tuple(delta) if key == KEYS["WHEEL"] else (0, 0))
        self.pending.append(e)
        return e

    def pop(self) -> Event:
        """The oldest pending event; pressed keys follow it (as Taichi's get_key_event)."""
        e = self.pending.popleft()
        if e.type is EType.Press:
            self.pressed.add(e.key)
        elif e.type is EType.Release:
            self.pressed.discard(e.key)
        return e

    def is_pressed(self, *keys) -> bool:
        for key in keys:
            if key in MODIFIERS and (key + "_L" in self.pressed or key + "_R" in self.pressed):
                return True
            if key in self.pressed:
                return True
        return False
