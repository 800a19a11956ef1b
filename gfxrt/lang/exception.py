"""`gr.lang.exception`: Taichi's `ti.lang.exception` module, the exception names that Taichi
programs and tests import from it (`from taichi.lang.exception import TaichiCompilationError`).
They are the aliases of gfxrt/taichi/errors.py: what gfxrt raises in the same situations."""
from __future__ import annotations

from ..taichi.errors import (
    TaichiAssertionError,
    TaichiCompilationError,
    TaichiIndexError,
    TaichiNameError,
    TaichiRuntimeError,
    TaichiRuntimeTypeError,
    TaichiSyntaxError,
    TaichiTypeError,
)

__all__ = ["TaichiSyntaxError", "TaichiTypeError", "TaichiCompilationError", "TaichiNameError", "TaichiIndexError",
           "TaichiRuntimeError", "TaichiRuntimeTypeError", "TaichiAssertionError"]
