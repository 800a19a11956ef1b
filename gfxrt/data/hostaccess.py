"""Element access from the host: `x[i, j]`, `x[i] = v`, `loss[None]` on ndarrays, fields
and their `.grad` / `.dual`.

One element moves, not the array: a read copies the element's bytes (widened to whole
4-byte words, wgpu's copy granularity) into a readback buffer after every launch recorded
so far, and waits, as `to_numpy()` does; a write uploads the element's bytes in order with
the launches before and after it (gfxrt/engine/blitter.py). An f16 element that shares a word with
its neighbour is written by reading that word first.
"""
from __future__ import annotations

import math
import numbers

from gfxrt.compiler import hostmatrix, npcompat
from gfxrt.compiler.npcompat import np

from ..engine.context import locked
from . import hostdata


def element_index(a, idx) -> tuple[int, ...]:
    """The index tuple `x[idx]` names, checked against the shape (IndexError, TypeError)."""
    if idx is None:
        idx = ()
    elif npcompat.is_array(idx) and idx.ndim == 1:
        idx = tuple(idx.tolist())
    elif not isinstance(idx, (tuple, list)):
        idx = (idx,)
    if len(idx) != a.ndim:
        hint = " (use x[None] for a 0-d container)" if a.ndim == 0 else ""
        raise IndexError(f"{a!r} has {a.ndim} dimension(s) but is indexed with {len(idx)} index(es){hint}")
    out = []
    for d, (k, n, o) in enumerate(zip(idx, a.shape, _offset(a))):
        if isinstance(k, slice):
            raise TypeError("slices are not supported in element access; use x.to_numpy()[...] to read a "
                            "range, or x.from_numpy(...) / a kernel to write one")
        if not isinstance(k, numbers.Integral):
            raise TypeError(f"index {d} of {a!r} must be an integer, not {type(k).__name__}")
        k = int(k)
        if not o <= k < o + n:
            where = f"size {n}" if not o else f"indices {o} to {o + n - 1}"
            raise IndexError(f"index {k} is out of range for dimension {d} of {a!r} ({where}; negative "
                             "indices do not wrap around)")
        out.append(k)
    return tuple(out)


def _offset(a) -> tuple[int, ...]:
    """A field's first index per axis (Taichi's offset=); zeros for arrays."""
    return a.offset or (0,) * a.ndim


def _byte_range(a, idx: tuple, write: bool = False) -> tuple[int, int]:
    nb = math.prod(a.element_shape) * a._scalar.size
    pool = getattr(a, "_pool", None)
    if pool is not None:  # a field in a dynamic SNode's chunk pool (gfxrt/data/pool.py)
        return pool.address(tuple(k - o for k, o in zip(idx, _offset(a))), write) * nb, nb
    flat = 0
    for k, n, o in zip(idx, a.shape, _offset(a)):
        flat = flat * n + k - o
    return flat * nb, nb


def _read_words(a, lo: int, hi: int) -> bytearray:
    raw = bytearray(hi - lo)
    a._runtime().blitter.device_to_host([(a._buffer, lo, hi - lo, raw)])
    return raw


@locked  # a readback, in order with other threads' launches
def read_element(a, idx):
    """`a[idx]` on the host: a Python number, or a HostMatrix that writes back into `a`."""
    idx = element_index(a, idx)
    off, nb = _byte_range(a, idx)
    if not nb:
        return np.empty(a.element_shape, a._scalar.numpy)
    lo, hi = off // 4 * 4, -(-(off + nb) // 4) * 4
    raw = bytes(_read_words(a, lo, hi)[off - lo:off - lo + nb])
    vals = hostdata.to_list(raw, a._scalar, a.element_shape)  # Python numbers (gfxrt/data/hostdata.py)
    if not a.element_shape:
        return vals
    return hostmatrix.value(vals, a._scalar, owner=(a, idx))


@locked
def write_element(a, idx, value) -> None:
    """`a[idx] = value` on the host: a number, or a sequence of the element's shape (a number
    is broadcast to every component)."""
    idx = element_index(a, idx)
    off, nb = _byte_range(a, idx, write=True)
    if not npcompat.is_value(value):  # a number, a sequence, a gr.Vector / gr.Matrix value: no numpy
        _write_bytes(a, off, nb, _element_bytes(a, value))
        return
    src = np.asarray(value)
    if src.dtype == object or src.dtype.kind not in "biuf":
        raise TypeError(f"cannot store {type(value).__name__} into an element of {a!r}: a number or a "
                        f"sequence of shape {a.element_shape} is needed")
    try:
        data = np.ascontiguousarray(np.broadcast_to(src, a.element_shape), dtype=a._scalar.numpy)
    except ValueError:
        raise ValueError(f"cannot store a value of shape {src.shape} into an element of {a!r}, whose elements "
                         f"have shape {a.element_shape}") from None
    _write_bytes(a, off, nb, data)


def _element_bytes(a, value) -> bytes:
    """The bytes of one element of `a` holding `value`: a number (broadcast to every component) or
    a sequence / value of the element's shape."""
    try:
        flat, shape = hostmatrix.components(value)
    except ValueError:
        flat, shape = None, None
    if flat is None or not all(map(hostmatrix.is_number, flat)):
        raise TypeError(f"cannot store {type(value).__name__} into an element of {a!r}: a number or a "
                        f"sequence of shape {a.element_shape} is needed")
    if shape == () and a.element_shape:
        flat = flat * math.prod(a.element_shape)
    elif shape != a.element_shape:
        raise ValueError(f"cannot store a value of shape {shape} into an element of {a!r}, whose elements "
                         f"have shape {a.element_shape}")
    return hostdata.pack(flat, a._scalar, (len(flat),))


def _write_bytes(a, off: int, nb: int, data) -> None:
    """Store `data` (nb bytes: a buffer-protocol object) at byte `off` of `a`'s buffer."""
    if not nb:
        return
    blit = a._runtime().blitter
    if off % 4 == 0 and nb % 4 == 0:
        blit.host_to_device(a._buffer, data, offset=off)
        return
    lo, hi = off // 4 * 4, -(-(off + nb) // 4) * 4  # f16: keep the neighbour sharing the word
    raw = _read_words(a, lo, hi)
    raw[off - lo:off - lo + nb] = bytes(data)
    blit.host_to_device(a._buffer, raw, offset=lo)
