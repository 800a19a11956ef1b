"""The dispatch recorder: the one place that appends commands to the open command encoder
and compute pass (docs/design.md, "Dispatch").

`Recorder` is the part of `GfxRuntime` that owns the open encoder and pass and what the pass
has bound (`_cur_pipe`, `_cur_bg`, `_cur_imm`). `dispatch_source` writes the rule of a
dispatch down once, as Python source: set the pipeline when it changed (which unsets the
immediates), the bind group when it changed, the immediates when they changed, dispatch.
Every path executes that source: the generic step `Recorder.record` (checked launches,
`rt.dispatch`, profiling), each launcher's generated fast path (`launch_source`: a warm
launch stays two Python frames deep) and each graph's generated replay (`compile_replay`,
handles as constants, settings already made left out). Device calls go through `ffi`.
"""
from __future__ import annotations

from typing import NamedTuple

from gfxrt.compiler.spec import grid

from ..errors import GfxrtError
from .backend import calls as ffi

MAXG = ffi.MAX_WORKGROUPS
CHUNK = 4096  # graph records per generated replay function (keeps each compile small)


# -- what a graph records (gfxrt/graph.py) ------------------------------------------------------
class Dispatch(NamedTuple):
    """Raw handles, packed scalars, params slot (no immediates; else -1), workgroups, the
    kernel's name, and whether it ends its launch."""

    pipe: object
    bg: object
    imm: bytes
    slot: int
    groups: int
    label: str
    end: bool


class Copy(NamedTuple):
    """A validated buffer-to-buffer copy (wgpu buffers, byte offsets)."""

    src: object
    src_offset: int
    dst: object
    dst_offset: int
    nbytes: int


class Clear(NamedTuple):
    """A validated zeroing of `nbytes` at byte `offset`."""

    buffer: object
    offset: int
    nbytes: int


# -- the one definition of a dispatch -------------------------------------------------------------
def dispatch_source(pipe: str, bg: str, groups, imm: str | None = None, nimm=None, uniform=None,
                    two_d: bool = False, known: dict | None = None, count: bool = True, lib: str = "") -> list[str]:
    """Python lines recording one dispatch into pass `p` of recorder `R`. Arguments are
    expressions: raw handles, workgroups (an int: a constant; `two_d`: may pass 65535, see
    compiler.spec.grid), immediates and their size, or a params slot (bind group, offsets).
    `known`: None (what the pass holds is tested, and kept in R, at run time: each state is
    written before its call, so a KeyboardInterrupt, raised as a call returns, never leaves
    it denying what is bound), or what straight-line code has bound so far ({"pipe", "bg",
    "imm"}: an expression or None; updated), R's state being its caller's business."""
    out: list[str] = []

    def setting(key: str, value: str, call: str, unsets: str | None = None) -> None:
        if known is None:
            out.append(f"if R._cur_{key} {'!=' if key == 'imm' else 'is not'} {value}:")
            out.extend(f"    {s}" for s in (f"R._cur_{key} = {value}", *([f"R._cur_{unsets} = None"] if unsets
                                                                           else []), lib + call))
        elif known[key] != value:
            out.append(lib + call)
            known[key] = value
            if unsets:
                known[unsets] = None

    setting("pipe", pipe, f"set_pipeline(p, {pipe})", unsets="imm")
    setting("bg", bg, f"set_bind_group(p, 0, {bg}, 0, NULL)")
    if uniform is not None:
        out.append(f"{lib}set_bind_group(p, 1, {uniform[0]}, 1, {uniform[1]})")
    elif imm is not None:
        setting("imm", imm, f"set_immediates(p, 0, {imm}, {nimm})")
    if isinstance(groups, int):
        gx, gy = grid(groups, MAXG)
        out.append(f"{lib}dispatch(p, {gx}, {gy}, 1)")
    elif two_d:
        out += [f"if {groups} > {MAXG}:",
                f"    {lib}dispatch(p, {MAXG}, ({groups} + {MAXG - 1}) // {MAXG}, 1)",
                "else:",
                f"    {lib}dispatch(p, {groups}, 1, 1)"]
    else:
        out.append(f"{lib}dispatch(p, {groups}, 1, 1)")
    if count:
        out.append("R._recorded += 1")
    return out


def names(R) -> dict:
    """The names generated code records with."""
    return {"R": R, "NULL": ffi.NULL, "set_pipeline": ffi.set_pipeline, "set_bind_group": ffi.set_bind_group,
            "set_immediates": ffi.set_immediates, "dispatch": ffi.dispatch, "copy_buffer": ffi.copy_buffer,
            "clear_buffer": ffi.clear_buffer, "watched": R._watched}


def _step(name: str, args: str, **kw):
    src = "\n".join([f"def {name}(R, p, pipe, bg, groups{args}):",
                     *("    " + s for s in dispatch_source("pipe", "bg", "groups", two_d=True, lib="F.", **kw))]) + "\n"
    ns = {"F": ffi, "NULL": ffi.NULL}
    exec(compile(src, f"<gfxrt recorder {name}>", "exec"), ns)  # noqa: S102 (the generic step)
    return ns[name]


_STEP = _step("step", "")
_STEP_IMM = _step("step_imm", ", imm", imm="imm", nimm="len(imm)")
_STEP_UNIFORM = _step("step_uniform", ", ubg, off", uniform=("ubg", "off"))


def launch_source(signature: str, head: list[str], tasks: list[tuple[bool, bool]], nimm: int,
                  watch: bool, ring: bool) -> str:
    """Source of a launcher's fast path: `head` (launch.py) handles the arguments and leaves
    `imm`, `e` (bind cache entry) and `g` (workgroups per task); `tasks`: (serial, two_d).
    Namespace: `names(rt)`, `MISS`, `name`, and `status`, `spec` when `watch`."""
    lines = [signature, "    if R._slow:", "        return MISS", *head]
    if watch:
        lines.append("    watched[id(status)] = (status, spec)")
    if ring:  # devices without immediates: the params ring (the generic step)
        lines.append("    R.record_launch(e[1], e[0], imm, g, name, True)")
    else:
        lines += ["    p = R._pass_h", "    if p is None:", "        p = R.compute_pass()",
                  "    bg = e[0]", "    pipes = e[1]"]
        for k, (serial, two_d) in enumerate(tasks):
            ind = "    " if serial else "        "
            if not serial:
                lines.append(f"    if g[{k}]:")
            lines += [ind + s for s in dispatch_source(f"pipes[{k}]", "bg", f"g[{k}]", "imm" if nimm else None,
                                                       nimm, two_d=two_d)]
    lines += ["    R._launches += 1",
              "    if R._recorded >= R.AUTO_FLUSH_DISPATCHES or len(R.ctx_buffers) >= R.AUTO_FLUSH_BUFFERS:",
              "        R.flush()",
              "    return None"]
    return "\n".join(lines) + "\n"


def compile_replay(R, records: list, ubg, offsets: list, watch: dict) -> list:
    """Generated functions `f(R)` appending a graph's records to R's open pass (one per CHUNK
    records); `ubg`, `offsets`: the graph's params (no immediates); `watch`: its status buffers."""
    return [_compile_chunk(R, records[k:k + CHUNK], ubg, offsets, watch if k == 0 else {})
            for k in range(0, len(records), CHUNK)]


def _compile_chunk(R, records: list, ubg, offsets: list, watch: dict):
    ns = {**names(R), "W": dict(watch), "UBG": ubg}
    consts: dict = {}

    def const(obj, prefix: str, key=None) -> str:
        key = (prefix, id(obj) if key is None else key)
        if key not in consts:
            consts[key] = f"{prefix}{len(consts)}"
            ns[consts[key]] = obj
        return consts[key]

    lines = ["def encode(R):"]
    if watch:
        lines.append("    watched.update(W)")
    if any(type(r) is Dispatch for r in records):
        # what the pass holds is unknown here and while the settings below are made (also if
        # a KeyboardInterrupt stops them halfway); the last pass's settings are kept at the end
        lines.append("    R._cur_pipe = R._cur_bg = R._cur_imm = None")
    known = None  # what the pass is known to hold (None: no pass taken since the last copy)
    count = 0
    for r in records:
        if type(r) is Dispatch:
            if known is None:
                lines.append("    p = R.compute_pass()")
                known = {"pipe": None, "bg": None, "imm": None}
            uniform = ("UBG", const(offsets[r.slot], "O")) if r.slot >= 0 else None
            imm = const(r.imm, "I", key=r.imm) if r.imm and uniform is None else None
            lines += ["    " + s for s in dispatch_source(const(r.pipe, "P"), const(r.bg, "B"), r.groups, imm,
                                                         len(r.imm), uniform, known=known, count=False)]
            count += 1
        else:
            known = None  # a copy ends the pass
            if type(r) is Copy:
                lines.append(f"    copy_buffer(R.encoder(), {const(ffi.handle(r.src), 'S')}, {r.src_offset}, "
                             f"{const(ffi.handle(r.dst), 'D')}, {r.dst_offset}, {r.nbytes})")
            else:
                lines.append(f"    clear_buffer(R.encoder(), {const(ffi.handle(r.buffer), 'C')}, {r.offset}, "
                             f"{r.nbytes})")
    if known is not None:
        lines.append(f"    R._cur_pipe, R._cur_bg, R._cur_imm = {known['pipe']}, {known['bg']}, {known['imm']}")
    if count:
        lines.append(f"    R._recorded += {count}")
    if len(lines) == 1:
        lines.append("    pass")
    src = "\n".join(lines) + "\n"
    exec(compile(src, "<gfxrt graph replay>", "exec"), ns)  # noqa: S102 (generated replay)
    fn = ns["encode"]
    fn.source = src
    return fn


class Recorder:
    """The recording part of GfxRuntime: open encoder and pass, what the pass has bound."""

    def __init__(self) -> None:
        self._encoder = None
        self._pass = None
        self._pass_h = None           # raw handle of the open pass (None: the fast path calls compute_pass)
        self._pass_unsure = False     # a pass may have begun whose handle was lost (see open_pass)
        self._cur_pipe = self._cur_bg = self._cur_imm = None  # what the open pass has bound
        self._recorded = 0            # dispatches recorded since the last flush

    # -- the encoder and the pass ------------------------------------------------------------
    def compute_pass(self):
        """The raw handle of the open compute pass, opening an encoder and a pass if needed
        (and recording the zeroing of new allocations first: see `alloc_zeroed`)."""
        if self._pass is None or self._unzeroed:
            self.open_pass()
        self._pass_h = self._pass
        return self._pass

    def open_pass(self, query_set=None, begin_index: int = 0, end_index: int = 0):
        """Open a compute pass (after ending the open one), optionally writing timestamps
        `begin_index`/`end_index` of `query_set` at its start and end (the profiler)."""
        self.end_pass()
        enc = self.encoder()
        if query_set is None and self.span_profiler is not None:
            ts = self.span_profiler.pass_timestamps()
            if ts is not None:
                query_set, begin_index, end_index = ts
        self._cur_pipe = self._cur_bg = self._cur_imm = None
        # A KeyboardInterrupt raised as begin_pass returns would lose the handle of a pass that
        # locks the encoder: until the handle is stored, the encoder counts as unusable
        self._pass_unsure = True
        self._pass = self._pass_h = ffi.begin_pass(enc, query_set, begin_index, end_index)
        self._pass_unsure = False
        return self._pass

    def end_pass(self) -> None:
        """End the open compute pass, if any."""
        if self._pass is not None:
            p, self._pass, self._pass_h = self._pass, None, None
            ffi.end_pass_raw(p)  # raw calls, no Python frame between (see ffi.end_pass_raw)
            ffi.release_pass(p)

    def encoder(self):
        """The raw handle of the open command encoder, with no pass open (for copies)."""
        if self._pass_unsure:
            self._abandon_encoder()
        self.end_pass()
        if self._encoder is None:
            self.check_alive()
            self._encoder = ffi.create_encoder(self.device)
            if self.span_profiler is not None:
                self.span_profiler.begin_encoder(self._encoder)
        if self._unzeroed:
            self._record_zeroing()
        return self._encoder

    def _record_zeroing(self) -> None:
        """Record the clears of new allocations, before anything else recorded can use them."""
        pending, self._unzeroed = self._unzeroed, {}
        for buf, nbytes in pending.values():
            if not getattr(buf, "_gfxrt_destroyed", False):
                self._zeroing.append((buf, nbytes))  # until submitted: see _abandon_encoder
                ffi.clear(self._encoder, buf, 0, nbytes)

    def _abandon_encoder(self) -> None:
        """Discard the open encoder unsubmitted (a KeyboardInterrupt may have left it locked
        by a lost pass, or taken its finished commands): its launches are lost, but the
        clears of new allocations it held are recorded again, and its transient buffers
        stay in `ctx_buffers` (retired with the next submission)."""
        encoder, self._encoder = self._encoder, None
        self._pass = self._pass_h = None
        self._pass_unsure = False
        self._cur_pipe = self._cur_bg = self._cur_imm = None
        self._recorded = 0
        self._requeue_zeroing()
        if encoder is not None:
            ffi.drop_encoder(encoder)

    def _requeue_zeroing(self) -> None:
        lost, self._zeroing = self._zeroing, []
        for buf, nbytes in lost:
            self._unzeroed.setdefault(id(buf), (buf, nbytes))
        if lost:
            self._pass_h = None  # launchers' fast path then records them first (see alloc_zeroed)

    @property
    def recorded(self) -> int:
        """Dispatches recorded since the last flush."""
        return self._recorded

    # -- copies and clears ---------------------------------------------------------------------
    def copy(self, src, src_offset: int, dst, dst_offset: int, nbytes: int) -> None:
        """Record a buffer-to-buffer copy, in order with recorded launches (validated here:
        the raw call skips wgpu's checks). Overlapping ranges of one buffer are copied as if
        through a temporary (WebGPU forbids a copy within one buffer). While a graph
        captures, the copy is recorded into the graph."""
        if nbytes % 4 or src_offset % 4 or dst_offset % 4 or src_offset + nbytes > src.size \
                or dst_offset + nbytes > dst.size or nbytes < 0:
            raise GfxrtError(f"internal: copy of {nbytes} bytes from {src_offset}/{src.size} "
                             f"to {dst_offset}/{dst.size}")
        _check_buffers(src, dst)
        if not nbytes:
            return
        if src is dst:
            if src_offset == dst_offset:
                return
            tmp = self.pool.alloc(nbytes, what="copy staging")
            try:
                self._copy(src, src_offset, tmp, 0, nbytes)
                self._copy(tmp, 0, dst, dst_offset, nbytes)
            finally:  # after the copies are recorded: a flush in between must not retire it early
                if self.capture is not None:
                    self.capture.own(tmp)
                else:
                    self.ctx_buffers.append(tmp)
            return
        self._copy(src, src_offset, dst, dst_offset, nbytes)

    def _copy(self, src, src_offset: int, dst, dst_offset: int, nbytes: int) -> None:
        if self.capture is not None:
            self.capture.copy(src, src_offset, dst, dst_offset, nbytes)
        else:
            ffi.copy(self.encoder(), src, src_offset, dst, dst_offset, nbytes)

    def clear(self, buffer, offset: int, nbytes: int, capture: bool = True) -> None:
        """Record zeroing of `nbytes` (a multiple of 4) at `offset`, in order with launches.
        While a graph captures, the clear is recorded into the graph (unless `capture` is
        False: the zeroing of a new allocation happens once, now)."""
        if nbytes % 4 or offset % 4 or offset + nbytes > buffer.size:
            raise GfxrtError(f"internal: clear of {nbytes} bytes at {offset} in a buffer of {buffer.size}")
        _check_buffers(buffer)
        if not nbytes:
            return
        if capture and self.capture is not None:
            self.capture.clear(buffer, offset, nbytes)
        else:
            ffi.clear(self.encoder(), buffer, offset, nbytes)

    # -- dispatches ----------------------------------------------------------------------------
    def dispatch(self, pipeline, bind_group, immediates: bytes, groups: int, label: str = "",
                 buffers=()) -> None:
        """Record one dispatch of wgpu objects. `groups` must be 1..65535. While a graph
        captures, the dispatch is recorded into the graph, which pins `buffers` (those the
        bind group binds)."""
        if not 0 < groups <= MAXG:
            raise GfxrtError(f"internal: {groups} workgroups is outside 1..{MAXG}")
        if self.capture is not None:
            self.capture.dispatch(pipeline, bind_group, immediates, groups, label, buffers)
            return
        self.record_launch((ffi.handle(pipeline),), ffi.handle(bind_group), bytes(immediates), (groups,), label)

    def record_launch(self, pipes, bg, imm: bytes, groups, label: str, ring: bool = False) -> None:
        """Record a launch's dispatches (groups per pipeline, 0 = none); `ring`: the scalars go
        into the params ring (devices without immediates)."""
        for pipe, g in zip(pipes, groups):
            if g:
                self.record(pipe, bg, imm, g, label, True if ring else None)
        if self.profiler is not None:
            self.profiler.end_launch(label)

    def record(self, pipe, bg, imm: bytes, groups: int, label: str = "", uniform=None) -> None:
        """One dispatch through the profiler's hooks. `uniform`: None (`imm` are immediates),
        True (a fresh params ring slot holds `imm`), or a params slot (bind group, offsets)."""
        prof = self.profiler
        if prof is not None:
            prof.before_dispatch(self, label)  # may flush: take the slot and the pass after it
        if uniform is True:
            uniform = self.uniform_slot(imm)   # (a full ring flushes too)
        p = self.compute_pass()
        if uniform is not None:
            _STEP_UNIFORM(self, p, pipe, bg, groups, uniform[0], uniform[1])
        elif imm:
            _STEP_IMM(self, p, pipe, bg, groups, imm)
        else:
            _STEP(self, p, pipe, bg, groups)
        if prof is not None:
            prof.after_dispatch(self)

    def replay_checked(self, records: list, params: tuple, watch: dict) -> None:
        """A graph's replay through the generic step and the profiler's hooks (profiling)."""
        ubg, offsets = params
        self._watched.update(watch)
        prof = self.profiler
        for r in records:
            if type(r) is Dispatch:
                self.record(r.pipe, r.bg, r.imm, r.groups, r.label, (ubg, offsets[r.slot]) if r.slot >= 0 else None)
                if prof is not None and r.end:
                    prof.end_launch(r.label)
            elif type(r) is Copy:
                ffi.copy(self.encoder(), r.src, r.src_offset, r.dst, r.dst_offset, r.nbytes)
            else:
                ffi.clear(self.encoder(), r.buffer, r.offset, r.nbytes)


def _check_buffers(*buffers) -> None:
    for b in buffers:
        if getattr(b, "_gfxrt_destroyed", False):
            raise GfxrtError("a copy uses a buffer that was destroyed")


__all__ = ["Recorder", "names", "Dispatch", "Copy", "Clear", "dispatch_source", "launch_source", "compile_replay",
           "CHUNK"]
