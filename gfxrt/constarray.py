"""Device copies of numpy arrays that kernels capture from Python (Taichi folds them as
compile-time constants): one read-only field per distinct content, dtype and device. The
compiler keeps the data in the binding (compiler.spec.CapturedArray); the first launch of
a specialization that binds it uploads it here (gfxrt/kernel.py `_bind_field`).

The specialization that binds a copy holds it (`Compiled._internals`); the table here only
shares a copy among specializations, so it goes with the last one using it."""
from __future__ import annotations

import weakref

from compiler.spec import CapturedArray

from .field import Field

_CACHE: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # (runtime id, CapturedArray.key) -> Field


def const_field(rt, captured: CapturedArray) -> Field:
    """The device copy of `captured` on runtime `rt`, uploaded on first use."""
    key = (id(rt), captured.key)
    f = _CACHE.get(key)
    if f is None or f._rt is not rt:
        f = Field(captured.data.dtype.type, captured.data.shape)
        f.from_numpy(captured.data)
        f.const_data = captured.data  # not a differentiable field (gfxrt/snode.py gives it no gradient)
        _CACHE[key] = f
    return f
