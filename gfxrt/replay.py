"""A graph's records and the code that replays them (gfxrt/graph.py captures them).

`compile_records` turns the records into straight-line Python of raw wgpu-native calls,
one generated function per chunk of CHUNK records: the pipeline, bind group and immediates
of each dispatch are constants, and a setting equal to the one the pass already holds is
left out (the same rule the launcher's fast path follows: a bind group persists across
pipeline changes; immediates are set again after a pipeline change). A replay then costs
about one cffi call per dispatch when consecutive launches share a kernel and arguments.

`encode_checked` is the same replay through the profiler's hooks (used while profiling).
"""
from __future__ import annotations

from typing import NamedTuple

from . import ffi

CHUNK = 4096  # records per generated function (keeps each compile small)


class Dispatch(NamedTuple):
    """One dispatch: raw pipeline and bind group handles, the packed scalars, the slot in
    the graph's params buffer (devices without immediates; else -1), workgroups, the
    kernel's name, and whether it is the last dispatch of its launch."""

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


def compile_records(records: list, ubg, offsets: list, watch: dict, watched: dict) -> list:
    """The generated encoder functions `f(rt)` that append `records` to rt's command list.
    `ubg`, `offsets`: the params bind group handle and per-slot dynamic offsets (devices
    without immediates); `watch` is merged into `watched` (the runtime's status watch)."""
    return [_compile_chunk(records[k:k + CHUNK], ubg, offsets, watch if k == 0 else {}, watched)
            for k in range(0, len(records), CHUNK)]


def _compile_chunk(records: list, ubg, offsets: list, watch: dict, watched: dict):
    ns = {"set_pipeline": ffi.set_pipeline, "set_bind_group": ffi.set_bind_group,
          "set_immediates": ffi.set_immediates, "dispatch": ffi.dispatch, "copy_buffer": ffi.copy_buffer,
          "clear_buffer": ffi.clear_buffer, "NULL": ffi.NULL, "watched": watched, "W": dict(watch),
          "UBG": ubg}
    names: dict = {}

    def const(obj, prefix: str) -> str:
        key = (prefix, id(obj))
        if key not in names:
            names[key] = f"{prefix}{len(names)}"
            ns[names[key]] = obj
        return names[key]

    imms: dict[bytes, str] = {}
    lines = ["def encode(rt):"]
    if any(type(r) is Dispatch for r in records):
        # what the pass has bound is unknown from here on (also if a KeyboardInterrupt stops
        # the replay halfway): launchers set their pipeline, bind group and immediates again
        lines.append("    rt._cur_pipe = rt._cur_bg = rt._cur_imm = None")
    if watch:
        lines.append("    watched.update(W)")
    in_pass = False
    pipe = bg = imm = None
    count = 0
    for r in records:
        if type(r) is Dispatch:
            if not in_pass:
                lines.append("    p = rt.compute_pass()")
                in_pass, pipe, bg, imm = True, None, None, None
            if pipe is None or r.pipe != pipe:
                lines.append(f"    set_pipeline(p, {const(r.pipe, 'P')})")
                pipe, imm = r.pipe, None
            if bg is None or r.bg != bg:
                lines.append(f"    set_bind_group(p, 0, {const(r.bg, 'B')}, 0, NULL)")
                bg = r.bg
            if r.slot >= 0:
                lines.append(f"    set_bind_group(p, 1, UBG, 1, {const(offsets[r.slot], 'O')})")
            elif r.imm and r.imm != imm:
                if r.imm not in imms:
                    imms[r.imm] = const(ffi.ffi.new("char[]", r.imm), "I")
                lines.append(f"    set_immediates(p, 0, {imms[r.imm]}, {len(r.imm)})")
                imm = r.imm
            lines.append(f"    dispatch(p, {r.groups}, 1, 1)")
            count += 1
        else:
            in_pass = False
            if type(r) is Copy:
                lines.append(f"    copy_buffer(rt.encoder(), {const(r.src._internal, 'S')}, {r.src_offset}, "
                             f"{const(r.dst._internal, 'D')}, {r.dst_offset}, {r.nbytes})")
            else:
                lines.append(f"    clear_buffer(rt.encoder(), {const(r.buffer._internal, 'C')}, {r.offset}, "
                             f"{r.nbytes})")
    if count:
        lines.append(f"    rt._recorded += {count}")
    if len(lines) == 1:
        lines.append("    pass")
    src = "\n".join(lines) + "\n"
    exec(compile(src, "<gfxrt graph replay>", "exec"), ns)  # noqa: S102 (generated replay)
    fn = ns["encode"]
    fn.source = src
    return fn


def encode_checked(rt, records: list, params: tuple, watch: dict) -> None:
    """Replay `records` one call at a time through the profiler's hooks (no settings left
    out): what a replay runs while `gr.profile()` is active."""
    ubg, offsets = params
    rt._watched.update(watch)
    rt._cur_pipe = rt._cur_bg = rt._cur_imm = None  # (before anything is bound: see compile_records)
    prof = rt.profiler
    for r in records:
        if type(r) is Dispatch:
            if prof is not None:
                prof.before_dispatch(rt, r.label)  # may flush or open a pass: take the pass after it
            p = rt.compute_pass()
            ffi.set_pipeline(p, r.pipe)
            ffi.set_bind_group(p, 0, r.bg, 0, ffi.NULL)
            if r.slot >= 0:
                ffi.set_bind_group(p, 1, ubg, 1, offsets[r.slot])
            elif r.imm:
                ffi.set_immediates(p, 0, r.imm, len(r.imm))
            ffi.dispatch(p, r.groups, 1, 1)
            rt._recorded += 1
            if prof is not None:
                prof.after_dispatch(rt)
                if r.end:
                    prof.end_launch(r.label)
        elif type(r) is Copy:
            ffi.copy_buffer(rt.encoder(), r.src._internal, r.src_offset, r.dst._internal, r.dst_offset, r.nbytes)
        else:
            ffi.clear_buffer(rt.encoder(), r.buffer._internal, r.offset, r.nbytes)


__all__ = ["Dispatch", "Copy", "Clear", "compile_records", "encode_checked", "CHUNK"]
