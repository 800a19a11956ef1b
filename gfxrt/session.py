"""`gr.init` and `gr.reset`: the context opens (or keeps) the device and the runtime
(gfxrt/context.py), then the layers above it hear of it here, through plain calls: kernels
forget their specializations when the compile target changed (gfxrt/kernel.py), and
Taichi's `kernel_profiler` option keeps a profile open (gfxrt/profiler.py)."""
from __future__ import annotations

import functools

from . import context
from .context import locked
from .kernel import invalidate_all
from .profiler import init_option


@locked
@functools.wraps(context.init)
def init(*args, **kwargs) -> None:
    extra, kept = context.init(*args, **kwargs)
    if kept:
        invalidate_all()
    init_option(extra)


@locked
@functools.wraps(context.reset)
def reset() -> None:
    context.reset()
    init_option({})  # a profile that kernel_profiler=True kept open goes with the runtime
