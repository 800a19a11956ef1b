"""Graph capture and replay: `with gr.graph() as g: ...` records, `g.replay(n)` runs.
See docs/graph.md and docs/design.md.

While a graph captures, the runtime's recording primitives, called from the thread that
opened it, append records here instead of encoding commands (`rt.capture` is per thread,
gfxrt/engine/threadstate.py; other threads' launches run eagerly meanwhile): the launcher's
checked path (`Launcher.launch` -> `Graph.launch`; the generated fast path defers to it
while any thread captures), `rt.dispatch`, `rt.copy` and `rt.clear`. Host work — numpy
data in or out, readbacks, `gr.sync()` — calls `host_work`, which abandons the capture
and raises `GraphCaptureError`; the runtime itself is untouched (nothing was encoded), so
it stays usable.

Every buffer a record binds or copies is pinned in the memory pool for the graph's life:
dropped arrays are parked instead of handed out again, so a replay never reads memory that
another owner reused (the stale-binding bug of ../shared/reference/000). Bind groups,
pipelines and the graph's own buffers (fill patterns, copy temporaries, params on devices
without immediates) are kept alive by the graph.

When the capture ends, the records compile into straight-line Python of raw wgpu-native
calls (the recorder's `compile_replay`) with redundant pipeline / bind group / immediates
settings dropped; a replay calls it into the runtime's open compute pass, in order with
eager work.
"""
from __future__ import annotations

import weakref

from .ad.adstack import capture_suspended  # lives below, in the adstack that uses it; graph.__all__ keeps it
from .engine import context
from .engine.backend import calls
from .engine.context import locked
from .engine.recorder import Clear, Copy, Dispatch, compile_replay
from .engine.threadstate import THREAD
from .errors import GfxrtError, GraphCaptureError

ffi_handle = calls.handle

REPLAY_SUBMIT_DISPATCHES = 1 << 14  # replay(n): a submit between iterations once this many are recorded


def _release_resources(rt, pinned: dict, owned: list) -> None:
    """Unpin the graph's buffers and give its own back (at release() or garbage collection).
    Both go through `ctx_buffers`: a replay may still be in flight."""
    bufs, own = list(pinned.values()), list(owned)
    pinned.clear()
    owned.clear()
    if rt.closed:
        return
    for buf in bufs:
        if rt.pool.unpin(buf):  # dropped by its owner while pinned: free now
            rt.free_later(buf)
    for buf in own:
        rt.free_later(buf)


class Graph:
    """Launches, fills and device copies recorded by `with gr.graph() as g:`.

    `g.replay(n=1)` runs the recorded work n times (scalars as they were at capture; arrays
    by identity, so put new data into the captured arrays in place between replays);
    `g.release()` unpins its buffers. States: 'capturing', 'ready', 'abandoned' (host work
    inside the capture, or an exception left the block), 'released'.
    """

    def __init__(self, rt):
        self.rt = rt
        self.state = "new"
        self.reason = ""                          # why the capture was abandoned
        self.records: list = []                   # Dispatch / Copy / Clear, in program order
        self.launches = 0                         # kernel launches recorded (not dispatches)
        self._pinned: dict[int, object] = {}      # id(buffer) -> buffer, pinned once per graph
        self._owned: list = []                    # pool buffers that belong to the graph
        self._keep: list = []                     # wgpu objects and launchers the records use
        self._watch: dict[int, tuple] = {}        # status buffers checked at the sync after a replay
        self._uniform: list[bytes] = []           # params of dispatches of devices without immediates
        self._encoders: list = []
        self._ndispatch = 0
        self.pools: dict = {}                     # chunk pools its launches take from -> their growth count then
        self._finalizer = weakref.finalize(self, _release_resources, rt, self._pinned, self._owned)
        self._finalizer.atexit = False

    # -- context manager ---------------------------------------------------------------------
    @locked
    def __enter__(self) -> Graph:
        rt = self.rt
        if self.state != "new":
            raise GfxrtError("a gr.graph() object captures once; create a new one")
        if rt.capture is not None:
            raise GraphCaptureError("gr.graph() captures cannot nest (replay a finished graph inside "
                                    "a capture instead: its work is recorded into the outer graph)")
        rt.check_alive()
        self.state = "capturing"
        rt.capture = self  # this thread's (gfxrt/engine/threadstate.py): other threads' launches run eagerly
        return self

    @locked
    def __exit__(self, exc_type, exc, tb) -> bool:
        rt = self.rt
        if rt.capture is self:
            rt.capture = None
        if self.state == "capturing":
            if exc_type is not None:
                self.abandon(f"{exc_type.__name__} raised inside the capture")
            else:
                self._finish()
        return False

    # -- recording (called by the runtime while this graph captures) --------------------------
    def _check(self) -> None:
        if self.state == "abandoned":
            raise GraphCaptureError(f"this gr.graph() capture was abandoned ({self.reason}); "
                                    "leave the `with` block and capture again")

    def pin(self, buf) -> None:
        """Pin `buf` for this graph's life (once per graph)."""
        if id(buf) not in self._pinned:
            self.rt.pool.pin(buf)
            self._pinned[id(buf)] = buf

    def own(self, buf) -> None:
        """Take a pool buffer the records use and no one else holds (given back on release;
        at once if the capture was abandoned)."""
        if self.state in ("abandoned", "released"):
            self.rt.free_later(buf)
        else:
            self._owned.append(buf)

    def launch(self, L, values) -> None:
        """Record a kernel launch (`L`: its Launcher; `values`: checked argument values)."""
        self._check()
        spec = L.spec
        if spec.returns:
            self.host_work(f"kernel {L.name!r} returns a value, which is read back to the host")
        imm, pvals = L.pack(values)

        def numpy_buffer(b):
            self.host_work(f"{L.name}() argument {b.name!r} is a numpy array (copied to and from the "
                           "host at each launch); pass a gr.ndarray")
        buffers, entry, groups = L.prepare(values, imm, pvals, numpy_buffer)
        for buf, b in zip(buffers, L.spec.bindings):
            if b.texture is None:
                self.pin(buf)
            else:  # a texture view or sampler: not pool memory; kept alive (with its texture) by the graph
                self._keep.append(buf)
        self._keep += (L, entry[2])
        if L.status is not None:
            self._watch[id(L.status)] = (L.status, spec)
        first = len(self.records)
        for pipe, g in zip(entry[1], groups):
            if g:
                self._dispatch(pipe, entry[0], imm, g, L.name, spec.params_uniform)
        if len(self.records) > first:
            self.records[-1] = self.records[-1]._replace(end=True)
        self.launches += 1

    def dispatch(self, pipeline, bind_group, immediates: bytes, groups: int, label: str, buffers=()) -> None:
        """Record one dispatch of wgpu objects (`rt.dispatch` while capturing)."""
        self._check()
        for buf in buffers:
            self.pin(buf)
        self._keep += (pipeline, bind_group)
        self._dispatch(ffi_handle(pipeline), ffi_handle(bind_group), bytes(immediates), groups, label, False)
        self.records[-1] = self.records[-1]._replace(end=True)
        self.launches += 1

    def _dispatch(self, pipe, bg, imm: bytes, groups: int, label: str, uniform: bool) -> None:
        slot = -1
        if uniform:
            slot = len(self._uniform)
            self._uniform.append(imm)
        self.records.append(Dispatch(pipe, bg, imm, slot, groups, label, False))

    def copy(self, src, src_offset: int, dst, dst_offset: int, nbytes: int) -> None:
        """Record a validated buffer-to-buffer copy (`rt.copy` while capturing)."""
        self._check()
        self.pin(src)
        self.pin(dst)
        self.records.append(Copy(src, src_offset, dst, dst_offset, nbytes))

    def clear(self, buffer, offset: int, nbytes: int) -> None:
        """Record a validated zeroing (`rt.clear` while capturing)."""
        self._check()
        self.pin(buffer)
        self.records.append(Clear(buffer, offset, nbytes))

    def host_work(self, what: str):
        """Abandon the capture and raise GraphCaptureError: `what` needs the host."""
        self._check()
        self.abandon(what)
        raise GraphCaptureError(
            f"{what} inside gr.graph() capture: a graph records device work only, so the capture was "
            "abandoned. Do host work before the capture or between replays (new data goes into the "
            "captured arrays in place: x.from_numpy(a), x.copy_from(y))")

    def abandon(self, reason: str) -> None:
        """Drop the records and unpin everything; replay() then raises GraphCaptureError."""
        if self.state in ("abandoned", "released"):
            return
        self.state = "abandoned"
        self.reason = reason
        self._drop()

    def _drop(self) -> None:
        self.records, self._keep, self._encoders, self._uniform = [], [], [], []
        self._watch = {}
        self._finalizer()

    # -- end of capture ------------------------------------------------------------------------
    def _finish(self) -> None:
        rt = self.rt
        ubg, offsets = None, []
        if self._uniform:  # devices without immediates: the graph's own params buffer, written once
            buf, bg, ubg, offsets = rt.params_slots(self._uniform)
            self.own(buf)
            self._keep.append(bg)
        self._params = (ubg, offsets)
        self._encoders = compile_replay(rt, self.records, ubg, offsets, self._watch)
        self._ndispatch = sum(1 for r in self.records if type(r) is Dispatch)
        self.state = "ready"

    # -- replay ----------------------------------------------------------------------------------
    @locked
    def replay(self, n: int = 1) -> None:
        """Run the recorded work `n` times, in order with everything launched before and
        after. The n iterations go into one submit unless they exceed
        REPLAY_SUBMIT_DISPATCHES dispatches. Inside another graph's capture, the work is
        recorded into that graph instead."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"replay(n): n must be a non-negative int, got {n!r}")
        rt = self.rt
        if self.state != "ready":
            if self.state == "abandoned":
                raise GraphCaptureError(f"this graph's capture was abandoned ({self.reason}); capture again")
            raise GfxrtError(f"cannot replay a graph that is {self.state}")
        if rt is not context.runtime():
            raise GfxrtError("this graph was captured before gr.init() opened a new device; capture it again")
        rt.check_alive()
        if THREAD.tape is not None or THREAD.fwd is not None:
            raise GfxrtError("g.replay() inside a gr.Tape / gr.ad.FwdMode block: the replayed launches would "
                             "not be differentiated. Capture the Tape inside the graph instead "
                             "(with gr.graph() as g: with gr.Tape(loss): ...)")
        outer = rt.capture
        if outer is not None:
            for _ in range(n):
                outer._extend(self)
            return
        if not self.records or not n:
            return
        for p, grown in self.pools.items():  # a dynamic SNode's chunk pool (gfxrt/data/pool.py): checked as a launch
            p.check()                        # would check it; the graph binds the buffers it had at capture
            if p.grown != grown:
                raise GfxrtError("a dynamic SNode's chunk pool that this graph writes has grown since the capture (its "
                                 "buffers changed): capture the graph again")
            p.dirty = True
        if rt.profiler is not None:
            for _ in range(n):
                rt.replay_checked(self.records, self._params, self._watch)
        else:
            per = self._ndispatch
            encoders = self._encoders
            for _ in range(n):
                if rt.recorded and rt.recorded + per > REPLAY_SUBMIT_DISPATCHES:
                    rt.flush()
                for enc in encoders:
                    enc(rt)
        if rt.recorded >= rt.AUTO_FLUSH_DISPATCHES or len(rt.ctx_buffers) >= rt.AUTO_FLUSH_BUFFERS:
            rt.flush()

    def _extend(self, inner: Graph) -> None:
        """Append a finished graph's records (a replay inside this capture)."""
        self._check()
        for buf in (*inner._pinned.values(), *inner._owned):  # the inner graph may be released first
            self.pin(buf)
        self.pools.update(inner.pools)
        self._keep += inner._keep  # its bind groups, pipelines, launchers: alive even if it is released
        self._watch.update(inner._watch)
        for r in inner.records:
            if type(r) is Dispatch and r.slot >= 0:
                self._dispatch(r.pipe, r.bg, r.imm, r.groups, r.label, True)
                self.records[-1] = self.records[-1]._replace(end=r.end)
            else:
                self.records.append(r)
        self.launches += inner.launches

    @locked
    def release(self) -> None:
        """Unpin the graph's buffers and drop its records; it cannot be replayed afterwards."""
        if self.state == "capturing":
            raise GfxrtError("release() inside the graph's own capture")
        self.state = "released"
        self._drop()

    def stats(self) -> dict:
        """Counts: launches, dispatches, copies, clears, pinned buffers, owned buffers."""
        kinds = [type(r) for r in self.records]
        return {"launches": self.launches, "dispatches": kinds.count(Dispatch), "copies": kinds.count(Copy),
                "clears": kinds.count(Clear), "pinned": len(self._pinned), "owned": len(self._owned)}

    def __repr__(self) -> str:
        s = self.stats()
        return f"<gr.graph {self.state}: {s['launches']} launches, {s['dispatches']} dispatches>"


def graph() -> Graph:
    """`with gr.graph() as g:` records kernel launches (and their `.grad`s, a whole
    `gr.Tape`), `x.fill(v)` and device-to-device copies without running them;
    `g.replay(n=1)` runs them. Scalars are fixed at capture; arrays are bound by identity
    and pinned until `g.release()`. Host work inside the capture (numpy arguments,
    `to_numpy`, return values, `gr.sync()`) raises `gr.GraphCaptureError`."""
    return Graph(context.runtime())


__all__ = ["Graph", "graph", "capture_suspended", "REPLAY_SUBMIT_DISPATCHES"]
