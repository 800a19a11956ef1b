"""`gr.init` and `gr.reset`: the context opens (or keeps) the device and runtime; then kernels
forget their specializations if it kept them (a new target), and Taichi's kernel_profiler applies."""
from __future__ import annotations

import functools

from gfxrt.compiler.mathlib import use_default_types
from gfxrt.compiler.types import SCALARS

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
    _default_types()
    init_option(extra)


def _default_types() -> None:
    """gr.math's vec2 ... mat4 follow the default types, as Taichi's ti.math types do."""
    opts = context._state["options"]
    use_default_types(SCALARS[opts.default_fp], SCALARS[opts.default_ip])


@locked
@functools.wraps(context.reset)
def reset() -> None:
    context.reset()
    use_default_types(SCALARS["f32"], SCALARS["i32"])
    init_option({})  # a profile that kernel_profiler=True kept open goes with the runtime
