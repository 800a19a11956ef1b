"""Compile errors show the user's frames only.

A `gr.CompileError` is raised deep inside the compiler (40-odd frames of gfxrt/ and compiler/)
but is about the user's code: its message already names the kernel's file, line and column.
At each public entry point that can compile (a kernel call, `.grad`, `.specialize`, a Tape's
exit) `user_frames(e)` drops gfxrt's and the compiler's frames from its traceback and hides
the exception it was raised while handling; the entry point then re-raises it with a bare
`raise`, which (Python 3.11+) adds no frame of its own. What is left is the user's call
chain and the caret message, as Taichi shows.

Kept whole: `GFXRT_FULL_TRACEBACK=1` (for gfxrt's developers), an InternalCompilerError
(a gfxrt bug; it is not a CompileError), and a CompileError raised `from` another exception
(the compiler's "internal compiler error: ..." for an unexpected exception at a user's line:
its cause is the bug to report).
"""
from __future__ import annotations

import os
import types

from gfxrt import compiler
from gfxrt.compiler.errors import CompileError

# compiler/ and gfxrt/ (this file is in gfxrt/engine/)
_OURS = tuple(os.path.dirname(os.path.abspath(f)) + os.sep for f in (compiler.__file__, os.path.dirname(__file__)))


def ours(filename: str) -> bool:
    """Whether a frame's file is part of gfxrt's runtime or compiler packages."""
    return os.path.abspath(filename).startswith(_OURS)


def user_frames(e: BaseException, full: bool = False) -> None:
    """Trim `e` (in the entry point's `except`, before a bare `raise`) to the user's frames,
    unless `full` (GFXRT_FULL_TRACEBACK: context.full_traceback()) keeps them all."""
    if not isinstance(e, CompileError) or e.__cause__ is not None or full:
        return
    e.__suppress_context__ = True  # no "During handling of the above exception" block
    kept = []
    tb = e.__traceback__
    while tb is not None:
        if not ours(tb.tb_frame.f_code.co_filename):
            kept.append(tb)
        tb = tb.tb_next
    trimmed = None
    for t in reversed(kept):
        trimmed = types.TracebackType(trimmed, t.tb_frame, t.tb_lasti, t.tb_lineno)
    e.__traceback__ = trimmed
