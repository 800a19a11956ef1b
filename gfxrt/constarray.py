"""Device copies of numpy arrays that kernels capture from Python (Taichi folds them as
compile-time constants): one read-only field per distinct content, dtype and device,
uploaded when a kernel using it first compiles. f64 data becomes f32 and i64 / bool data
i32, Taichi's default types. See compiler/frontend/callables.py.

The compiled specializations that bind a copy hold it (`held()` collects what a compile
made); the table here only shares it among them, so it goes with the last kernel using it."""
from __future__ import annotations

import contextlib
import hashlib
import threading
import weakref

import numpy as np

from . import context

_CACHE: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # (runtime id, digest) -> Field
_HELD = threading.local()  # .fields: the list `held()` collects into on this thread
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
    fields = getattr(_HELD, "fields", None)
    if fields is not None:
        fields.append(f)
    return f


@contextlib.contextmanager
def held():
    """Collect the copies made or reused while compiling, for the compiled kernel to hold."""
    outer = getattr(_HELD, "fields", None)
    _HELD.fields = fields = []
    try:
        yield fields
    finally:
        _HELD.fields = outer
        if outer is not None:
            outer.extend(fields)


def install() -> None:
    from compiler.frontend import callables
    callables.CONST_ARRAY_HOOK = const_field
