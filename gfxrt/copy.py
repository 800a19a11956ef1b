"""Copies between device arrays and numpy arrays: `x.copy_from(...)` and
`gr.copy_tensors([(dst, src), ...])`, all in program order with launched kernels."""
from __future__ import annotations

import math

import numpy as np

from . import context
from .ndarray import Ndarray


def _elem_bytes(a: Ndarray) -> int:
    return a._scalar.size * math.prod(a._np_shape[len(a.shape):])


def copy_elements(dst: Ndarray, src: Ndarray, src_offset: int = 0, dst_offset: int = 0,
                  count: int | None = None) -> None:
    """Copy `count` elements of `src` from element `src_offset` into `dst` at `dst_offset`
    (both arrays flattened; default count: as many as fit). Device to device."""
    if not isinstance(src, Ndarray):
        raise TypeError(f"copy_from needs a gr.ndarray source, not {type(src).__name__} "
                        "(use from_numpy for numpy data)")
    if src.dtype != dst.dtype:
        raise TypeError(f"copy_from: dtypes differ ({src.dtype} -> {dst.dtype})")
    n_src, n_dst = math.prod(src.shape), math.prod(dst.shape)
    for name, v in (("src_offset", src_offset), ("dst_offset", dst_offset)):
        if not isinstance(v, (int, np.integer)) or v < 0:
            raise ValueError(f"copy_from: {name} must be a non-negative int, got {v!r}")
    if count is None:
        count = min(n_src - src_offset, n_dst - dst_offset)
    if count < 0 or src_offset + count > n_src or dst_offset + count > n_dst:
        raise ValueError(f"copy_from: {count} elements from {src_offset} of {n_src} into {dst_offset} of {n_dst} "
                         "is out of range")
    rt = dst._runtime()
    src._runtime()
    eb = _elem_bytes(dst)
    so, do, nb = src_offset * eb, dst_offset * eb, count * eb
    if not nb:
        return
    if so % 4 == 0 and do % 4 == 0 and (nb % 4 == 0 or do + nb == dst.nbytes):
        rt.copy(src._buffer, so, dst._buffer, do, (nb + 3) // 4 * 4)
        return
    # 2-byte elements at odd offsets: patch the covering words through the host (rare, slow)
    data = np.empty(nb, np.uint8)
    lo = so // 4 * 4
    tmp = np.empty((so + nb - lo + 3) // 4 * 4, np.uint8)
    rt.blitter.device_to_host([(src._buffer, lo, tmp.nbytes, tmp)])
    data[:] = tmp[so - lo:so - lo + nb]
    lo = do // 4 * 4
    cover = np.empty((do + nb - lo + 3) // 4 * 4, np.uint8)
    rt.blitter.device_to_host([(dst._buffer, lo, cover.nbytes, cover)])
    cover[do - lo:do - lo + nb] = data
    rt.blitter.host_to_device(dst._buffer, cover, lo)


def copy_tensors(pairs) -> None:
    """Batched copies `[(dst, src), ...]`, any mix of numpy arrays and gr.ndarrays, done in
    list order with one submit (and one wait, when a numpy array receives data). Shapes must
    match; numpy data is converted to the destination's dtype."""
    pairs = list(pairs)
    rt = context.runtime()
    for k, (dst, src) in enumerate(pairs):  # check everything before doing anything
        for what, a in (("dst", dst), ("src", src)):
            if not isinstance(a, (Ndarray, np.ndarray)):
                raise TypeError(f"copy_tensors pair {k}: {what} must be a gr.ndarray or a numpy array, "
                                f"not {type(a).__name__}")
        ds = dst._np_shape if isinstance(dst, Ndarray) else dst.shape
        ss = src._np_shape if isinstance(src, Ndarray) else src.shape
        if ds != ss:
            raise ValueError(f"copy_tensors pair {k}: shapes differ ({ss} -> {ds})")
        if isinstance(dst, Ndarray) and isinstance(src, Ndarray) and dst.dtype != src.dtype:
            raise TypeError(f"copy_tensors pair {k}: dtypes differ ({src.dtype} -> {dst.dtype})")
        if isinstance(dst, np.ndarray) and not dst.flags.writeable:
            raise ValueError(f"copy_tensors pair {k}: the destination numpy array is read-only")
        for a in (dst, src):
            if isinstance(a, Ndarray):
                a._runtime()
    bl = rt.blitter
    copybacks = []
    for dst, src in pairs:
        if isinstance(src, np.ndarray) and _overlaps_pending(src, bl, copybacks):
            _complete(bl, copybacks)  # src receives data earlier in the list: finish that first
        if isinstance(dst, Ndarray):
            if isinstance(src, Ndarray):
                rt.copy(src._buffer, 0, dst._buffer, 0, (dst.nbytes + 3) // 4 * 4)
            elif dst.nbytes:
                bl.host_to_device(dst._buffer, np.ascontiguousarray(src, dtype=dst._scalar.numpy))
        elif isinstance(src, Ndarray):
            if _overlaps_pending(dst, bl, copybacks):
                _complete(bl, copybacks)
            direct = dst.flags.c_contiguous and dst.dtype == src._scalar.numpy
            tmp = dst if direct else np.empty(src._np_shape, src._scalar.numpy)
            if src.nbytes:
                bl.record_read(src._buffer, 0, src.nbytes, tmp)
            if not direct:
                copybacks.append((tmp, dst))
        else:
            if _overlaps_pending(dst, bl, copybacks):
                _complete(bl, copybacks)
            np.copyto(dst, src, casting="unsafe")
    _complete(bl, copybacks)


def _overlaps_pending(a: np.ndarray, bl, copybacks: list) -> bool:
    """True when `a` shares memory with a destination of a recorded, uncompleted read."""
    return any(np.shares_memory(a, d) for d in [*bl.pending_reads, *(d for _, d in copybacks)])


def _complete(bl, copybacks: list) -> None:
    bl.complete_reads()
    for tmp, dst in copybacks:
        np.copyto(dst, tmp, casting="unsafe")
    copybacks.clear()
