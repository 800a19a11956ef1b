"""Host-side helpers shared by the kernels/ modules: argument conversion, device features,
and scratch arrays reused between calls."""
from __future__ import annotations

import numpy as np
from gfxrt.compiler.types import element_shape, scalar_of

import gfxrt as gr
from gfxrt.data.ndarray import as_element_type

_SCRATCH: dict[tuple, gr.Ndarray] = {}
_SCRATCH_LIMIT = 64


def has_subgroups() -> bool:
    """Whether the current device has subgroup operations (`gr.simt.subgroup`)."""
    return "subgroup" in gr.device().features


def scratch(tag: str, dtype, shape) -> gr.Ndarray:
    """A device array kept for reuse by later calls with the same (tag, dtype, shape) on the
    same runtime. Its contents are whatever the last user left."""
    rt = gr.runtime()
    key = (id(rt), tag, dtype, tuple(shape) if isinstance(shape, tuple) else (shape,))
    a = _SCRATCH.get(key)
    if a is None or a._rt is not rt:
        if len(_SCRATCH) >= _SCRATCH_LIMIT:
            _SCRATCH.clear()
        a = _SCRATCH[key] = gr.ndarray(dtype, shape)
    return a


class Args:
    """Device views of a call's array arguments. numpy arrays are uploaded once (not once per
    kernel of a multi-kernel operation) and, for the ones the operation writes, copied back by
    `finish()`; gr.ndarrays are used as they are."""

    def __init__(self):
        self._back: list[tuple[gr.Ndarray, np.ndarray]] = []

    def dev(self, a, name: str, dtype=None, written: bool = False, ndim: int | None = None) -> gr.Ndarray:
        """`a` as a device array of `dtype` (default: its own); `ndim` checks the number of
        dimensions (not counting a vector element's own)."""
        if isinstance(a, gr.Ndarray):
            if dtype is not None and a.element_type != dtype:
                raise TypeError(f"{name}: expected dtype {dtype}, got {a.element_type}")
            d = a
        elif isinstance(a, np.ndarray):
            if written and not a.flags.writeable:
                raise ValueError(f"{name} is written, but the numpy array is read-only")
            elem = as_element_type(dtype if dtype is not None else a.dtype)
            if np.dtype(scalar_of(elem).numpy) != a.dtype:
                raise TypeError(f"{name}: expected dtype {np.dtype(scalar_of(elem).numpy)} ({elem}), "
                                f"got {a.dtype}")
            tail = len(element_shape(elem))
            if a.ndim < tail or a.shape[a.ndim - tail:] != element_shape(elem):
                raise ValueError(f"{name}: numpy shape {a.shape} does not end with the element shape "
                                 f"{element_shape(elem)}")
            if ndim is not None and a.ndim - tail != ndim:
                raise ValueError(f"{name}: expected {ndim} dimension(s), got shape {a.shape[:a.ndim - tail]}")
            d = gr.ndarray(elem, a.shape[:a.ndim - tail])
            d.from_numpy(a)
            if written:
                self._back.append((d, a))
        else:
            raise TypeError(f"{name} must be a gr.ndarray or a numpy array, not {type(a).__name__}")
        if ndim is not None and len(d.shape) != ndim:
            raise ValueError(f"{name}: expected {ndim} dimension(s), got shape {d.shape}")
        return d

    def finish(self) -> None:
        """Copy the written numpy arguments back (waits for the device)."""
        for d, a in self._back:
            a[...] = d.to_numpy()
        self._back.clear()

