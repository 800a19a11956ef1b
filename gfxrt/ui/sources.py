"""What a draw reads: a gfxrt array or field, or a numpy array, as a storage buffer of 32-bit
words that the drawing shaders index (gfxrt/ui/shaders.py).

A float32 (or, for indices, int32/uint32) `gr.ndarray` / `gr.field` is bound as it is: its own
device buffer, which the kernels wrote, with nothing copied. Anything else (numpy arrays,
other dtypes) is converted on the host and uploaded into a scratch buffer that the draw owns
until the frame's work is submitted.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from gfxrt.compiler.npcompat import np

from ..data.ndarray import Ndarray


@dataclass
class Source:
    """A buffer of 32-bit words holding `n` elements of `comps` words each."""

    buffer: object
    n: int
    comps: int
    scratch: bool = False  # uploaded for this draw: given back after the frame


def _shape(x) -> tuple[tuple, tuple]:
    """(shape, element shape) of a gfxrt container or numpy array."""
    if isinstance(x, Ndarray):
        return tuple(x.shape), tuple(getattr(x, "element_shape", ()))
    a = np.asarray(x)
    return a.shape, ()


def elements(x, what: str, comps: tuple[int, ...], ndim: int = 1) -> tuple[int, int]:
    """(number of elements, components each) of `x` read as `ndim`-d elements of one of
    `comps` components (a vector or matrix field, or an array whose last axis is the vector);
    ValueError naming `what` otherwise."""
    shape, elem = _shape(x)
    if not elem and len(shape) == ndim + 1 and 1 not in comps:
        shape, elem = shape[:-1], shape[-1:]
    c = math.prod(elem) if elem else 1
    if len(elem) > 2 or c not in comps or len(shape) != ndim:
        raise ValueError(f"{what}: expected {ndim}-d elements of {' or '.join(map(str, comps))} components "
                         f"(a gr.Vector.field, a gr.ndarray of vectors or a numpy array), got shape "
                         f"{shape + elem}")
    return math.prod(shape), c


def source(rt, x, what: str, comps: tuple[int, ...], kind: str = "f32", ndim: int = 1) -> Source:
    """`x` as a Source whose words are float32 (`kind="f32"`) or uint32 indices (`kind="u32"`)."""
    n, c = elements(x, what, comps, ndim)
    if isinstance(x, Ndarray):
        name = x._scalar.name
        direct = name == "f32" if kind == "f32" else name in ("i32", "u32")
        if direct:  # under sparse SNodes too: an inactive element reads 0
            return Source(x._buffer, n, c)
        data = x.to_numpy()
    else:
        data = np.asarray(x)
    if kind == "f32":
        if data.dtype == np.uint8:
            data = data.astype(np.float32) / 255
        host = np.ascontiguousarray(data, dtype=np.float32)
    else:
        host = np.ascontiguousarray(data).astype(np.uint32)
    return upload(rt, host, n, c)


def upload(rt, host: np.ndarray, n: int, comps: int) -> Source:
    """A scratch buffer holding `host` (32-bit words)."""
    host = np.ascontiguousarray(host)
    buf = rt.alloc(max(host.nbytes, 16), what="a gr.ui draw's data")
    if host.nbytes:
        rt.blitter.host_to_device(buf, host, fresh=True)
    return Source(buf, n, comps, scratch=True)
