"""Device copies of numpy arrays that kernels capture from Python (Taichi folds them as
compile-time constants): one read-only field per distinct content, dtype and device,
uploaded when a kernel using it first compiles. f64 data becomes f32 and i64 / bool data
i32, Taichi's default types. See compiler/frontend/callables.py.

The lowering that binds a copy holds it (the frontend's `fields`), and a kernel keeps its
lowerings (gfxrt/kernel.py `_lowered`); the table here only shares a copy among them, so it
goes with the last kernel using it."""
from __future__ import annotations

import hashlib
import weakref

import numpy as np

from . import context

_CACHE: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # (runtime id, digest) -> Field
_NARROW = {"f": np.float32, "i": np.int32, "u": np.uint32, "b": np.int32}


def const_field(a: np.ndarray):
    from .field import Field
    data = np.ascontiguousarray(a)
    if data.dtype.itemsize != 4 or data.dtype.kind == "b":
        data = data.astype(_NARROW[data.dtype.kind])
    rt = context.runtime()
    key = (id(rt), data.dtype.str, data.shape, hashlib.blake2b(data.tobytes(), digest_size=16).digest())
    f = _CACHE.get(key)
    if f is None or f._rt is not rt:
        f = Field(data.dtype.type, data.shape)
        f.from_numpy(data)
        f.const_data = data.copy()
        _CACHE[key] = f
    return f


def install() -> None:
    from compiler.frontend import callables
    callables.CONST_ARRAY_HOOK = const_field
