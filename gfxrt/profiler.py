"""`with gr.profile() as p:` — device time of every dispatch, from timestamp queries.

Modes, best first, by what the adapter has:
- "inside-pass" (`timestamp-query-inside-passes`): a timestamp before and after each
  dispatch, in the one open pass.
- "pass" (`timestamp-query`): each dispatch in its own pass with begin/end timestamps.
- "host": no timestamps: each launch is synchronized and timed on the host.

While profiling, launches take the checked path (so the figures include no fast-path
effects) and every flush waits for its timestamps.
"""
from __future__ import annotations

import collections
import time

import numpy as np

from . import context, ffi
from .context import locked
from .memory import QUERY, READBACK

CAPACITY = 1024  # dispatches timed per submission (2 queries each)


class Profile:
    """Collected timings. `records` is a list of (kernel name, seconds), one per launch
    (the sum of its dispatches); `table()` prints a per-kernel summary."""

    def __init__(self, rt):
        self.rt = rt
        feats = rt.dev.features
        self.mode = ("inside-pass" if "timestamp-query-inside-passes" in feats else
                     "pass" if "timestamp-query" in feats else "host")
        self.records: list[tuple[str, float]] = []
        self._pending: list[tuple[str, int]] = []  # (kernel, first query) of this batch's dispatches
        self._launch: list[int] = []                # dispatch slots of the launch being recorded
        self._grouped: list[tuple[str, list[int], float]] = []
        self._carry = 0.0                           # time of a launch's dispatches before a flush split it
        self._used = 0
        self._resolved = None
        self._t0 = None
        if self.mode != "host":
            self.period_ns = ffi.timestamp_period(rt.queue)
            self.query_set = rt.device.create_query_set(type="timestamp", count=2 * CAPACITY)
            self.resolve_buf = rt.device.create_buffer(size=16 * CAPACITY, usage=QUERY)

    # -- context manager -----------------------------------------------------------------------
    @locked
    def __enter__(self) -> Profile:
        rt = self.rt
        if rt.profiler is not None:
            raise RuntimeError("gr.profile() is already active")
        rt.synchronize()
        rt.profiler = self
        rt._slow = True
        return self

    @locked
    def __exit__(self, *exc) -> None:
        rt = self.rt
        try:
            rt.synchronize()
        finally:
            rt.profiler = None
            rt.refresh_slow()

    # -- hooks called while recording ---------------------------------------------------------
    def before_dispatch(self, rt, label: str) -> None:
        if self.mode == "host":
            if self._t0 is None:
                self._t0 = time.perf_counter()
            return
        if self._used == CAPACITY:
            rt.flush()
        q = 2 * self._used
        if self.mode == "inside-pass":
            ffi.write_timestamp(rt.compute_pass(), self.query_set._internal, q)
        else:
            rt.open_pass(self.query_set, q, q + 1)
        self._launch.append(self._used)
        self._used += 1

    def after_dispatch(self, rt) -> None:
        if self.mode == "inside-pass":
            ffi.write_timestamp(rt.compute_pass(), self.query_set._internal, 2 * (self._used - 1) + 1)
        elif self.mode == "pass":
            rt.end_pass()

    def end_launch(self, label: str) -> None:
        if self.mode == "host":
            self.rt.synchronize()
            t1 = time.perf_counter()
            if self._t0 is not None:
                self.records.append((label, t1 - self._t0))
            self._t0 = None
            return
        self._grouped.append((label, self._launch, self._carry))
        self._launch, self._carry = [], 0.0

    def before_finish(self, rt, encoder) -> None:
        if self.mode == "host" or not self._used:
            return
        n = 2 * self._used
        ffi.resolve_queries(encoder, self.query_set._internal, 0, n, self.resolve_buf._internal, 0)
        st = rt.pool.alloc(8 * n, READBACK, what="profiler readback")
        rt.copy(self.resolve_buf, 0, st, 0, 8 * n)
        self._resolved = (st, n)

    def after_submit(self, rt, index) -> None:
        if self._resolved is None:
            return
        st, n = self._resolved
        self._resolved = None
        ticks = np.empty(n, np.uint64)
        req = getattr(st, "_gfxrt_map", None) or ffi.MapRequest(st)
        st._gfxrt_map = req
        req.start(8 * n)
        rt._wait(index)
        req.read_into(ticks, 8 * n)
        rt.pool.release(st)
        dt = (ticks[1::2].astype(np.int64) - ticks[0::2].astype(np.int64)).clip(min=0) * self.period_ns * 1e-9
        for label, slots, carry in self._grouped:
            self.records.append((label, carry + float(sum(dt[s] for s in slots))))
        if self._launch:  # a launch split by this flush: carry its time so far
            self._carry += float(sum(dt[s] for s in self._launch))
            self._launch = []
        self._grouped = []
        self._used = 0

    # -- results ------------------------------------------------------------------------------
    def summary(self) -> dict[str, dict[str, float]]:
        """Per kernel: count, total, mean, min, max (seconds)."""
        by = collections.defaultdict(list)
        for name, t in self.records:
            by[name].append(t)
        return {name: {"count": len(ts), "total": sum(ts), "mean": sum(ts) / len(ts), "min": min(ts),
                       "max": max(ts)} for name, ts in by.items()}

    def table(self, file=None) -> str:
        """Print (and return) the per-kernel table: count and total/mean/min/max in us."""
        rows = sorted(self.summary().items(), key=lambda kv: -kv[1]["total"])
        head = f"{'kernel':32s} {'count':>7s} {'total us':>12s} {'mean us':>10s} {'min us':>10s} {'max us':>10s}"
        lines = [f"gfxrt profile ({self.mode} timing)", head]
        for name, s in rows:
            lines.append(f"{name[:32]:32s} {s['count']:7d} {s['total'] * 1e6:12.1f} {s['mean'] * 1e6:10.2f} "
                         f"{s['min'] * 1e6:10.2f} {s['max'] * 1e6:10.2f}")
        text = "\n".join(lines)
        print(text, file=file)
        return text


def profile() -> Profile:
    """`with gr.profile() as p: ...` times every kernel launched inside on the device
    (timestamp queries where the adapter has them); then `p.table()` prints per-kernel
    count, total, mean, min and max."""
    return Profile(context.runtime())


# -- Taichi's kernel profiler: gr.init(kernel_profiler=True) and gr.profiler.* -------------------
_taichi: dict = {"profile": None}


def set_kernel_profiler(on: bool) -> None:
    """gr.init(kernel_profiler=...): keep one gr.profile() open on the runtime from now on."""
    old = _taichi["profile"]
    rt = context._state["runtime"]
    if old is not None and (not on or old.rt is not rt):
        _taichi["profile"] = None
        if old.rt.profiler is old and old.rt.alive:
            old.__exit__(None, None, None)
        elif old.rt.profiler is old:
            old.rt.profiler = None
    if on and _taichi["profile"] is None:
        _taichi["profile"] = Profile(context.runtime()).__enter__()


def _active() -> Profile:
    p = _taichi["profile"]
    if p is None:
        raise RuntimeError("the kernel profiler is off: call gr.init(kernel_profiler=True) first (or time a block "
                           "with `with gr.profile() as p:`)")
    p.rt.synchronize()
    return p


def print_kernel_profiler_info(mode: str = "count") -> None:
    """Taichi's `ti.profiler.print_kernel_profiler_info()`: the per-kernel table since the
    last clear ('trace' mode prints the same table: no per-launch hardware metrics here)."""
    _active().table()


def query_kernel_profiler_info(name: str):
    """Taichi's query: (counter, min, max, avg) of kernel `name`'s launches, in milliseconds."""
    from types import SimpleNamespace
    s = _active().summary().get(name)
    if s is None:
        return SimpleNamespace(counter=0, min=0.0, max=0.0, avg=0.0)
    return SimpleNamespace(counter=s["count"], min=s["min"] * 1e3, max=s["max"] * 1e3, avg=s["mean"] * 1e3)


def clear_kernel_profiler_info() -> None:
    """Forget the timings recorded so far."""
    _active().records.clear()


def get_kernel_profiler_total_time() -> float:
    """Seconds of device time of every kernel launched since the last clear."""
    return sum(t for _, t in _active().records)
