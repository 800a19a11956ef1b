"""`gr.init` and `gr.reset`: the context opens (or keeps) the device and runtime; then kernels
forget their specializations if it kept them (a new target), and Taichi's kernel_profiler applies."""
from __future__ import annotations

import functools

from .engine import context
from .engine.context import locked
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
