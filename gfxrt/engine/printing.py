"""`print` inside kernels: the host side (the device side: compiler/frontend/prints.py).

One print buffer per runtime, bound to every kernel that prints: records append in launch
order (dispatches of a pass are ordered), each thread's records whole. At the first sync
after a printing launch the records are read back, decoded from their sites' formats,
written to sys.stdout, and the buffer is reset (a sync with no printing launch since the
last one reads nothing, unless a live graph holds a printing kernel: its replays are not
seen by the host, so then every sync looks). A launch that finds the buffer full drops
its records; the sync then prints how many were dropped.

A program that ends with records not yet printed prints them at exit.

Graph capture: a captured kernel that prints binds the same buffer, so each replay appends
its records, printed at the next sync like any launch's.
"""
from __future__ import annotations

import atexit
import math
import sys
import weakref

from gfxrt.compiler import opsem
from gfxrt.compiler.frontend.prints import PRINT_CAPACITY_WORDS, PRINT_HEADER_WORDS
from gfxrt.compiler.types import SCALARS

from .returns import scalar_at


class Printer:
    """The runtime's print buffer and the formats of the print sites that write it."""

    def __init__(self, rt):
        self.rt = rt
        self.buffer = rt.alloc_zeroed(4 * (PRINT_HEADER_WORDS + PRINT_CAPACITY_WORDS), what="the print buffer")
        self.formats: dict[int, tuple] = {}
        self.pending = False   # a printing kernel was launched since the last drain
        self.in_graph = False  # a graph captured one: its replays print without a launch here
        atexit.register(_drain_at_exit, weakref.ref(self))  # a script that ends without gr.sync() still prints

    def register(self, binding) -> None:
        # every time (a bind, not a launch): keyed by id(binding), a new kernel's binding could
        # reuse a collected one's id and its sites stayed unknown (decode stopped at them)
        self.formats.update(dict(binding.source))

    def drain(self) -> None:
        """Print the records written since the last drain and reset the buffer."""
        rt = self.rt
        if rt.capture is not None or not (self.pending or self.in_graph):
            return
        self.pending = False
        head = memoryview(bytearray(4 * PRINT_HEADER_WORDS)).cast("I")
        rt.blitter.device_to_host([(self.buffer, 0, head.nbytes, head)])
        used, dropped = min(int(head[0]), PRINT_CAPACITY_WORDS), int(head[1])
        if not used and not dropped:
            return
        data = memoryview(bytearray(4 * used)).cast("I")
        if used:
            rt.blitter.device_to_host([(self.buffer, 4 * PRINT_HEADER_WORDS, data.nbytes, data)])
        rt.blitter.clear(self.buffer, 0, 4 * (PRINT_HEADER_WORDS + used))
        text = decode(data, self.formats)
        if dropped:
            text += (f"[gfxrt] {dropped} print record(s) dropped: kernels printed more than the print buffer holds "
                     f"between syncs ({PRINT_CAPACITY_WORDS} words); call gr.sync() more often or print less\n")
        sys.stdout.write(text)
        sys.stdout.flush()


def _drain_at_exit(ref) -> None:
    p = ref()
    if p is None or not p.pending or p.rt.closed:
        return
    try:
        p.drain()
    except Exception:  # noqa: BLE001  the device may be gone at exit: nothing left to print
        pass


def buffer(rt, binding):
    """The print buffer of `rt` (created by the first launch of a kernel that prints)."""
    p = rt.printer
    if p is None:
        p = rt.printer = Printer(rt)
    p.register(binding)
    p.pending = True
    if rt.capture is not None:
        p.in_graph = True
    return p.buffer


def _value(words: memoryview, k: int, dtype: str):
    """The value of `dtype` at word k (as a kernel's return value travels: returns.scalar_at) and
    the next word; an f32 as its shortest decimal that reads back to it (what Taichi prints)."""
    t = SCALARS[dtype]
    v = scalar_at(words, k, t)
    if t.is_float and t.size == 4 and math.isfinite(v):
        v = next(d for d in (float(f"{v:.{n}g}") for n in range(1, 10)) if opsem.round_to(d, t) == v)
    return v, k + (2 if t.size == 8 else 1)


def decode(words: memoryview, formats: dict) -> str:
    """The text of the records in `words` (stops at an unknown site: a record cut short)."""
    out, k = [], 0
    while k < len(words):
        pieces = formats.get(int(words[k]))
        if pieces is None:
            break
        k += 1
        for p in pieces:
            if p[0] == "s":
                out.append(p[1])
                continue
            _, dtype, spec, conv = p
            v, k = _value(words, k, dtype)
            if conv:
                v = {"r": repr, "s": str, "a": ascii}[conv](v)
            out.append(format(v, spec) if spec else str(v))
    return "".join(out)
