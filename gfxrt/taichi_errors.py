"""Taichi's exception names, as aliases of what gfxrt raises in the same situations, so that
`except ti.TaichiCompilationError` / `pytest.raises(ti.TaichiTypeError)` keep working after
the rename:

    TaichiCompilationError, TaichiSyntaxError, TaichiTypeError,
    TaichiNameError, TaichiIndexError          gr.CompileError (Taichi's are its subclasses)
    TaichiRuntimeError                         gr.GfxrtError
    TaichiRuntimeTypeError                     TypeError (a wrong kernel argument)
    TaichiAssertionError                       gr.DeviceError (a failed `assert` in debug mode,
                                               raised at the next sync)
"""
from __future__ import annotations

from .errors import CompileError, DeviceError, GfxrtError

TaichiCompilationError = TaichiSyntaxError = TaichiTypeError = TaichiNameError = TaichiIndexError = CompileError
TaichiRuntimeError = GfxrtError
TaichiRuntimeTypeError = TypeError
TaichiAssertionError = DeviceError

__all__ = ["TaichiCompilationError", "TaichiSyntaxError", "TaichiTypeError", "TaichiNameError", "TaichiIndexError",
           "TaichiRuntimeError", "TaichiRuntimeTypeError", "TaichiAssertionError"]
