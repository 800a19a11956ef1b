"""`gr.field(dtype, shape)`: a global container kernels use by name.

A field is a device array with a fixed shape that kernels reach as a Python global (or a
template argument) instead of a parameter: `loss = gr.field(gr.f32, shape=())` then
`loss[None] += ...` inside any kernel. It has the methods of `gr.ndarray`, plus element
access from the host (`loss[None]`, `f[i, j] = v`).
"""
from __future__ import annotations

import weakref

import numpy as np

from compiler.spec import FieldInfo

from . import context
from .context import locked
from .ndarray import Ndarray

_FIELDS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # FieldInfo.key -> Field


class Field(Ndarray):
    """A global device container; see `gr.field`."""

    def __init__(self, dtype, shape=(), needs_grad: bool = False):
        super().__init__(dtype, shape, needs_grad=False)
        if needs_grad and not self._scalar.is_float:
            raise TypeError(f"needs_grad=True needs a float dtype, not {self.dtype}")
        self.needs_grad = bool(needs_grad)
        self.grad = Field(self.dtype, self.shape) if needs_grad else None
        self._info = FieldInfo(id(self), self.dtype, self.shape, self.needs_grad)
        _FIELDS[id(self)] = self

    @property
    def __gfxrt_field__(self) -> FieldInfo:
        """What the compiler needs to know about this field (see compiler.spec.FieldInfo)."""
        return self._info

    def _index(self, idx) -> tuple:
        if idx is None:
            idx = ()
        if not isinstance(idx, tuple):
            idx = (idx,)
        if len(idx) != self.ndim:
            raise IndexError(f"field of shape {self.shape} indexed with {len(idx)} indices"
                             + (" (use f[None] for a 0-d field)" if self.ndim == 0 else ""))
        out = []
        for k, n in zip(idx, self.shape):
            k = int(k)
            if not -n <= k < n:
                raise IndexError(f"index {k} out of range for a dimension of {n}")
            out.append(k % n)
        return tuple(out)

    def __getitem__(self, idx):
        """Host read of one element (waits for pending work)."""
        value = self.to_numpy()[self._index(idx)]
        return value.item() if np.ndim(value) == 0 else value

    @locked  # read-modify-write of the whole array: one thread at a time
    def __setitem__(self, idx, value) -> None:
        """Host write of one element."""
        i = self._index(idx)
        data = self.to_numpy()
        data[i] = value
        self.from_numpy(data)

    def __repr__(self) -> str:
        return f"gr.field({self.dtype}, shape={self.shape})"


def field(dtype, shape=(), needs_grad: bool = False) -> Field:
    """Allocate a global container: `gr.field(gr.f32, shape=(n,))`; kernels use it by name."""
    context.runtime()
    return Field(dtype, shape, needs_grad)


def resolve(key: int, rt=None) -> Field:
    """The live field with this FieldInfo.key (on runtime `rt`, if given)."""
    f = _FIELDS.get(key)
    if f is None:
        raise ValueError("a kernel uses a gr.field that no longer exists; re-create the kernel's globals "
                         "before launching it")
    if rt is not None and f._rt is not rt:
        from .errors import GfxrtError
        raise GfxrtError(f"{f!r} was created before the last gr.init(); fields live on one device: create them "
                         "again after gr.init()")
    return f
