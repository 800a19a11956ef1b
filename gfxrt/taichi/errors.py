"""Taichi's exception names, as aliases of what gfxrt raises in the same situations, so that
`except ti.TaichiCompilationError` / `pytest.raises(ti.TaichiTypeError)` keep working after
the rename:

    TaichiCompilationError, TaichiSyntaxError, TaichiTypeError,
    TaichiNameError, TaichiIndexError          gr.CompileError (Taichi's are its subclasses)
    TaichiRuntimeError                         gr.GfxrtError
    TaichiRuntimeTypeError                     TypeError (a wrong kernel argument)
    TaichiAssertionError                       gr.KernelAssertionError (a failed `assert` in debug
                                               mode, raised at the next sync; an AssertionError)
"""
from __future__ import annotations

from ..errors import CompileError, GfxrtError, KernelAssertionError

TaichiCompilationError = TaichiSyntaxError = TaichiTypeError = TaichiNameError = TaichiIndexError = CompileError
TaichiRuntimeError = GfxrtError
TaichiRuntimeTypeError = TypeError
TaichiAssertionError = KernelAssertionError

__all__ = ["TaichiCompilationError", "TaichiSyntaxError", "TaichiTypeError", "TaichiNameError", "TaichiIndexError",
           "TaichiRuntimeError", "TaichiRuntimeTypeError", "TaichiAssertionError"]
