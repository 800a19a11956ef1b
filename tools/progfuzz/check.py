"""Compares what the device computed with the oracle's Outcome: integers exactly, floats within
the oracle's error bound, tainted elements (unstable decisions, out-of-profile values) skipped."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .dtypes import is_float

SLACK = 1.0     # the bounds of numerics.py are worst cases already


@dataclass
class Mismatch:
    where: str              # "x[3]" or "return[0]"
    want: object            # int, or (v, e) for floats
    got: object
    array: str | None = None
    flat: int | None = None

    def __str__(self):
        if isinstance(self.want, tuple):
            v, e = self.want
            return f"{self.where}: expected {v!r} (+- {e:.3g}), got {self.got!r}"
        return f"{self.where}: expected {self.want!r}, got {self.got!r}"


@dataclass
class Comparison:
    mismatches: list = field(default_factory=list)   # the first few
    bad: int = 0
    compared: int = 0
    skipped: int = 0

    @property
    def ok(self) -> bool:
        return self.bad == 0

    def add(self, m: Mismatch, limit: int):
        self.bad += 1
        if len(self.mismatches) < limit:
            self.mismatches.append(m)


def close(want, got: float) -> bool:
    v, e = want
    got = float(got)
    if math.isnan(v) or math.isnan(got):
        return math.isnan(v) and math.isnan(got)
    if math.isinf(v) or math.isinf(got):
        return v == got
    return abs(got - v) <= e * SLACK


def same(want, got, t: str) -> bool:
    if is_float(t):
        return close(want, got)
    if t == "bool":
        return bool(want) == bool(got)
    return int(want) == int(got)


def _index(shape, flat) -> str:
    if not shape:
        return "[None]"
    return "[" + ", ".join(str(int(k)) for k in np.unravel_index(flat, shape)) + "]"


def compare(program, outcome, arrays: dict, returns, limit: int = 8) -> Comparison:
    """arrays: name -> numpy array read back from the device; returns: the kernel's return
    value (a number, a tuple, or None)."""
    c = Comparison()
    for a in program.kernel.arrays:
        if a.role == "in":
            continue
        got = np.asarray(arrays[a.name]).ravel()
        want, taint = outcome.arrays[a.name], outcome.taint[a.name]
        for k, w in enumerate(want):
            if k in taint:
                c.skipped += 1
                continue
            c.compared += 1
            g = got[k].item()
            if not same(w, g, a.dtype):
                c.add(Mismatch(f"{a.name}{_index(a.shape, k)}", w, g, a.name, k), limit)
    rt = program.kernel.ret
    if rt:
        got = returns if len(rt) > 1 else (returns,)
        if outcome.returns is None:
            c.skipped += len(rt)
        else:
            for k, (w, g, t) in enumerate(zip(outcome.returns, got, rt)):
                c.compared += 1
                if not same(w, g, t):
                    c.add(Mismatch(f"return[{k}]", w, g), limit)
    return c
