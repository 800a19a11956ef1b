"""`with gr.profile() as p:` — device time of every dispatch, from timestamp queries.

Per kernel (`gr.profile()`), modes best first, by what the adapter has:
- "inside-pass" (`timestamp-query-inside-passes`): a timestamp before and after each
  dispatch, in the one open pass.
- "pass" (`timestamp-query`): each dispatch in its own pass with begin/end timestamps.
- "host": no timestamps: each launch is synchronized and timed on the host.
While profiling per kernel, launches take the checked path and every flush waits for its
timestamps. A timestamp between two dispatches is not free: on an H100 (Vulkan) each
timed dispatch reads about 6 us longer than the same dispatch in an untimed stream
(experiments/dispatch_time.py: 200 dependent tiny launches span 2.36 us each untimed, 10.4 us
with a timestamp before and after each), so per-kernel figures of tiny kernels mostly show
that drain.

Whole batches (`gr.profile(per_kernel=False)`), for the device time of a stretch of work as
it runs unprofiled: one timestamp where each submitted command buffer starts and one where it
ends ("encoder": `timestamp-query-inside-encoders`; else "span-pass": at the start and end of
every compute pass, so copies between passes are not counted). Launches keep the fast path,
nothing waits until the block ends, and `p.total_s` is the sum over the submissions (the
device's idle time between submissions is not counted).
"""
from __future__ import annotations

import collections
import time

from gfxrt.compiler.npcompat import np

from .engine import context
from .engine.backend import calls as ffi
from .engine.context import locked
from .engine.memory import QUERY, READBACK

CAPACITY = 1024  # dispatches timed per submission (2 queries each)
RESOLVE_ALIGN = 256  # WebGPU: a query resolve's destination offset is a multiple of 256


def _start(rt):
    """Refuse a second profiler (one per runtime, of either kind), then synchronize."""
    if rt.profiler is not None or rt.span_profiler is not None:
        raise RuntimeError("gr.profile() is already active")
    rt.synchronize()
    return rt


def _stats(ts: list[float]) -> dict[str, float]:
    """count, total, mean, min, max of a non-empty list of seconds."""
    return {"count": len(ts), "total": sum(ts), "mean": sum(ts) / len(ts), "min": min(ts), "max": max(ts)}


class Profile:
    """Collected timings. `records` is a list of (kernel name, seconds), one per launch
    (the sum of its dispatches); `table()` prints a per-kernel summary; `total_s` is the
    device time of everything timed."""

    per_kernel = True

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
        rt = _start(self.rt)
        rt.profiler = self
        rt.refresh_slow()
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
            ffi.write_timestamp(rt.compute_pass(), self.query_set, q)
        else:
            rt.open_pass(self.query_set, q, q + 1)
        self._launch.append(self._used)
        self._used += 1

    def after_dispatch(self, rt) -> None:
        if self.mode == "inside-pass":
            ffi.write_timestamp(rt.compute_pass(), self.query_set, 2 * (self._used - 1) + 1)
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
        ffi.resolve_queries(encoder, self.query_set, 0, n, self.resolve_buf, 0)
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
        rt.wait(index)
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
    @property
    def total_s(self) -> float:
        """Seconds of device time of every launch timed so far."""
        return sum(t for _, t in self.records)

    def summary(self) -> dict[str, dict[str, float]]:
        """Per kernel: count, total, mean, min, max (seconds)."""
        by = collections.defaultdict(list)
        for name, t in self.records:
            by[name].append(t)
        return {name: _stats(ts) for name, ts in by.items()}

    def table(self, file=None) -> str:
        """Print (and return) the per-kernel table: count and total/mean/min/max in us."""
        rows = sorted(self.summary().items(), key=lambda kv: -kv[1]["total"])
        head = f"{'kernel':32s} {'count':>7s} {'total us':>12s} {'mean us':>10s} {'min us':>10s} {'max us':>10s}"
        lines = [f"gfxrt profile ({self.mode} timing{PER_KERNEL_NOTE if self.mode != 'host' else ''})", head]
        for name, s in rows:
            lines.append(f"{name[:32]:32s} {s['count']:7d} {s['total'] * 1e6:12.1f} {s['mean'] * 1e6:10.2f} "
                         f"{s['min'] * 1e6:10.2f} {s['max'] * 1e6:10.2f}")
        text = "\n".join(lines)
        print(text, file=file)
        return text


PER_KERNEL_NOTE = ("; a timestamp around each dispatch adds its own drain to tiny kernels: "
                   "gr.profile(per_kernel=False) gives the total without it")


class SpanProfile:
    """`gr.profile(per_kernel=False)`: device time per submitted command buffer, from one
    timestamp at its start and one at its end (see the module's docstring). `batches` holds
    the seconds of each submission; `total_s` their sum; `records` is [("(all kernels)",
    total)] once the block has ended."""

    per_kernel = False
    CAPACITY = 2048  # timed spans (submissions, or passes in "span-pass" mode) before a mid-block readout

    def __init__(self, rt):
        self.rt = rt
        feats = rt.dev.features
        self.mode = ("encoder" if "timestamp-query-inside-encoders" in feats else
                     "span-pass" if "timestamp-query" in feats else "host")
        self.batches: list[float] = []
        self.records: list[tuple[str, float]] = []
        self.untimed = 0            # passes opened when every query slot was taken ("span-pass")
        self._used = 0              # query pairs written (resolved at each flush)
        self._resolved = 0          # query pairs resolved into resolve_buf
        self._chunks: list[tuple[int, int]] = []  # (byte offset in resolve_buf, query pairs) per resolve
        self._cursor = 0            # next free byte of resolve_buf (resolves start 256-aligned)
        self._t0 = None
        if self.mode != "host":
            self.period_ns = ffi.timestamp_period(rt.queue)
            self.query_set = rt.device.create_query_set(type="timestamp", count=2 * self.CAPACITY)
            self.resolve_buf = rt.device.create_buffer(size=RESOLVE_ALIGN * self.CAPACITY, usage=QUERY)

    @locked
    def __enter__(self) -> SpanProfile:
        rt = _start(self.rt)
        rt.span_profiler = self  # (its hooks do nothing in "host" mode)
        self._t0 = time.perf_counter()
        return self

    @locked
    def __exit__(self, *exc) -> None:
        rt = self.rt
        try:
            rt.synchronize()
        finally:
            rt.span_profiler = None
        if self.mode == "host":
            self.batches.append(time.perf_counter() - self._t0)
        elif rt.alive:
            self._read()
        self.records = [("(all kernels)", self.total_s)]

    # -- hooks called by the runtime ------------------------------------------------------------
    def pass_timestamps(self):
        """(query set, begin index, end index) for a pass being opened in "span-pass" mode;
        None in other modes, and when every slot is taken until the next readout."""
        if self.mode != "span-pass":
            return None
        if self._used == self.CAPACITY:
            self.untimed += 1
            return None
        q = 2 * self._used
        self._used += 1
        return self.query_set, q, q + 1

    def begin_encoder(self, encoder) -> None:
        """A new command encoder: its first command is the start timestamp ("encoder")."""
        if self.mode == "encoder":
            ffi.encoder_timestamp(encoder, self.query_set, 2 * self._used)

    def before_finish(self, encoder) -> None:
        """The last commands of a batch: its end timestamp, and the resolve of its queries."""
        if self.mode == "encoder":
            ffi.encoder_timestamp(encoder, self.query_set, 2 * self._used + 1)
            self._used += 1
        first, n = self._resolved, self._used - self._resolved
        if n:  # (a resolve's destination offset must be a multiple of 256)
            ffi.resolve_queries(encoder, self.query_set, 2 * first, 2 * n, self.resolve_buf,
                                self._cursor)
            self._chunks.append((self._cursor, n))
            self._cursor += -(-16 * n // RESOLVE_ALIGN) * RESOLVE_ALIGN
            self._resolved = self._used

    def after_submit(self, rt) -> None:
        """Read the spans out once the slots are used up (waits for the device)."""
        if self._used >= self.CAPACITY - 1:
            rt.wait(None)
            self._read()

    def _read(self) -> None:
        if self._chunks:
            raw = self.rt.device.queue.read_buffer(self.resolve_buf, 0, self._cursor)
            for off, n in self._chunks:
                ticks = np.frombuffer(raw, np.uint64, 2 * n, off).astype(np.int64)
                dt = (ticks[1::2] - ticks[0::2]).clip(min=0) * self.period_ns * 1e-9
                self.batches.append(float(dt.sum()))  # one submission (the sum of its passes in "span-pass")
        self._used = self._resolved = self._cursor = 0
        self._chunks = []

    # -- results ------------------------------------------------------------------------------
    @property
    def total_s(self) -> float:
        """Seconds of device time of the whole block (the sum over its submissions)."""
        return sum(self.batches)

    def summary(self) -> dict[str, dict[str, float]]:
        """{"(all kernels)": count (submissions), total, mean, min, max (seconds)}."""
        return {"(all kernels)": _stats(self.batches)} if self.batches else {}

    def table(self, file=None) -> str:
        """Print (and return) the device time of the block, per submission."""
        s = self.summary().get("(all kernels)")
        lines = [f"gfxrt profile ({self.mode} timing, whole submissions)"]
        if s:
            lines.append(f"{s['count']} submission(s): total {s['total'] * 1e6:.1f} us, mean {s['mean'] * 1e6:.2f}, "
                         f"min {s['min'] * 1e6:.2f}, max {s['max'] * 1e6:.2f} us")
        if self.untimed:
            lines.append(f"{self.untimed} pass(es) not timed (more than {self.CAPACITY} in one stretch)")
        text = "\n".join(lines)
        print(text, file=file)
        return text


def profile(per_kernel: bool = True) -> Profile | SpanProfile:
    """`with gr.profile() as p: ...` times every kernel launched inside on the device
    (timestamp queries where the adapter has them); then `p.table()` prints per-kernel
    count, total, mean, min and max, and `p.total_s` is the device time in all.

    `per_kernel=False` times whole submissions instead (one timestamp at the start and one
    at the end of each command buffer), with launches recorded exactly as without profiling:
    `p.total_s` is then the device time the work really takes. Per-kernel timestamps make
    each timed dispatch wait for the ones before it to drain (about 6 us on an H100), which
    dominates the figures of tiny kernels."""
    rt = context.runtime()
    return Profile(rt) if per_kernel else SpanProfile(rt)


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


def init_option(extra: dict) -> None:
    """Taichi's gr.init(kernel_profiler=True): keep a gr.profile() open (gfxrt/session.py)."""
    if extra.get("kernel_profiler") or _taichi["profile"] is not None:
        set_kernel_profiler(bool(extra.get("kernel_profiler")))
