"""Copies and fills: `x.copy_from(...)`, `x.fill(v)` and `gr.copy_tensors([(dst, src), ...])`,
all in program order with launched kernels.

Device-side work (device-to-device copies, fills) goes through `rt.copy` / `rt.clear` /
`rt.dispatch`, so a graph being captured records it. Host data (numpy arrays) cannot be
captured: inside `gr.graph()` it raises GraphCaptureError.

`copy_tensors` batches: the numpy sources of small uploads are packed into one staging
buffer written with a single `queue.write_buffer`, one copy command per pair; downloads
are recorded and complete with one submit and one wait.
"""
from __future__ import annotations

import math

import numpy as np

from . import context, ffi
from .blit_kernels import copy_halfwords, fill_words
from .ndarray import Ndarray

DEVICE_FILL_BYTES = 1 << 18    # eager fills of at least this many bytes run a fill kernel, not an upload
STAGED_UPLOAD_BYTES = 1 << 16  # copy_tensors packs numpy sources up to this size into one staging write
STAGING_LIMIT = 1 << 24        # at most this many bytes in one copy_tensors staging buffer


def _elem_bytes(a: Ndarray) -> int:
    return a._scalar.size * math.prod(a._np_shape[len(a.shape):])


def _index(name: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
        raise ValueError(f"copy_from: {name} must be a non-negative int, got {v!r}")
    return int(v)


def copy_elements(dst: Ndarray, src: Ndarray, src_offset: int = 0, dst_offset: int = 0,
                  count: int | None = None) -> None:
    """Copy `count` elements of `src` from element `src_offset` into `dst` at `dst_offset`
    (both arrays flattened; default count: as many as fit). Device to device; the ranges
    may overlap when src is dst (the copy behaves as if through a temporary)."""
    if not isinstance(src, Ndarray):
        raise TypeError(f"copy_from needs a gr.ndarray source, not {type(src).__name__} "
                        "(use from_numpy for numpy data)")
    if src.dtype != dst.dtype:
        raise TypeError(f"copy_from: dtypes differ ({src.dtype} -> {dst.dtype})")
    n_src, n_dst = math.prod(src.shape), math.prod(dst.shape)
    src_offset, dst_offset = _index("src_offset", src_offset), _index("dst_offset", dst_offset)
    if count is None:
        count = min(n_src - src_offset, n_dst - dst_offset)
    else:
        count = _index("count", count)
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
    # 2-byte elements at odd offsets: a halfword copy kernel (copy commands need 4-byte alignment)
    sbuf, shalf = src._buffer, so // 2
    if sbuf is dst._buffer:  # the kernel reads and writes different buffers: stage the source words
        lo = so // 4 * 4
        size = (so + nb - lo + 3) // 4 * 4
        sbuf = rt.pool.alloc(size, what="copy staging")
        rt.copy(src._buffer, lo, sbuf, 0, size)
        shalf = (so - lo) // 2
        if rt.capture is not None:
            rt.capture.own(sbuf)
        else:
            rt.free_later(sbuf)
    copy_halfwords(rt, sbuf, shalf, dst._buffer, do // 2, nb // 2)


def fill(dst: Ndarray, value) -> None:
    """Set every element of `dst` to `value` (a scalar, or one element of a vector/matrix
    dtype; a whole array of dst's shape is uploaded instead), in order with launches."""
    rt = dst._runtime()
    one = np.asarray(value, dtype=dst._scalar.numpy)
    if not dst.nbytes:
        return
    try:
        element = np.ascontiguousarray(np.broadcast_to(one, dst._np_shape[len(dst.shape):])).tobytes()
    except ValueError:  # not one element: broadcast over the whole array
        dst.from_numpy(np.broadcast_to(one, dst._np_shape))
        return
    if not element.strip(b"\0"):  # all-zero bytes (not -0.0)
        rt.clear(dst._buffer, 0, (dst.nbytes + 3) // 4 * 4)
    elif rt.capture is not None or dst.nbytes >= DEVICE_FILL_BYTES:
        fill_words(rt, dst._buffer, dst.nbytes, element)
    else:
        dst.from_numpy(np.broadcast_to(one, dst._np_shape))


# -- gr.copy_tensors --------------------------------------------------------------------------
def copy_tensors(pairs) -> None:
    """Batched copies `[(dst, src), ...]`, any mix of numpy arrays and gr.ndarrays, done in
    list order: small numpy sources share one staging buffer and one write, every copy is
    recorded in one command list, and downloads complete with one submit and one wait.
    Shapes must match; numpy data is converted to the destination's dtype. Inside
    `gr.graph()` only device-to-device pairs can be captured."""
    pairs = list(pairs)
    rt = context.runtime()
    staged, host = _check_pairs(pairs)
    if host and rt.capture is not None:
        rt.capture.host_work("gr.copy_tensors with a numpy array")
    bl = rt.blitter
    up = _Uploads(rt, staged) if staged else None
    copybacks: list = []
    try:
        for dst, src in pairs:
            tdst, tsrc = isinstance(dst, Ndarray), isinstance(src, Ndarray)
            if not tsrc and (bl._reads or copybacks) and _overlaps_pending(src, bl, copybacks):
                _complete(bl, copybacks, up)  # src receives data earlier in the list: finish that first
            if tdst:
                if tsrc:
                    rt.copy(src._buffer, 0, dst._buffer, 0, (dst.nbytes + 3) // 4 * 4)
                elif dst.nbytes:
                    want = dst._scalar.numpy
                    data = src if src.dtype == want and src.flags.c_contiguous else np.ascontiguousarray(src, want)
                    if up is not None and up.fits(data.nbytes):
                        up.add(dst._buffer, data)
                    else:
                        bl.host_to_device(dst._buffer, data)
            elif tsrc:
                if (bl._reads or copybacks) and _overlaps_pending(dst, bl, copybacks):
                    _complete(bl, copybacks, up)
                direct = dst.flags.c_contiguous and dst.dtype == src._scalar.numpy
                tmp = dst if direct else np.empty(src._np_shape, src._scalar.numpy)
                if src.nbytes:
                    bl.record_read(src._buffer, 0, src.nbytes, tmp)
                if not direct:
                    copybacks.append((tmp, dst))
            else:
                if (bl._reads or copybacks) and _overlaps_pending(dst, bl, copybacks):
                    _complete(bl, copybacks, up)
                np.copyto(dst, src, casting="unsafe")
        if bl._reads or copybacks:
            _complete(bl, copybacks, up)
    finally:
        if up is not None:
            up.close()


def _check_pairs(pairs) -> tuple[int, bool]:
    """Check every pair before doing anything. Returns (bytes of small numpy uploads to
    stage, whether any numpy array is involved)."""
    staged, host = 0, False
    rt = None
    for k, pair in enumerate(pairs):
        try:
            dst, src = pair
        except (TypeError, ValueError):
            raise TypeError(f"copy_tensors item {k} must be a (dst, src) pair, not {pair!r}") from None
        tdst, tsrc = isinstance(dst, Ndarray), isinstance(src, Ndarray)
        for what, a, dev in (("dst", dst, tdst), ("src", src, tsrc)):
            if not dev and not isinstance(a, np.ndarray):
                raise TypeError(f"copy_tensors pair {k}: {what} must be a gr.ndarray or a numpy array, "
                                f"not {type(a).__name__}")
        ds = dst._np_shape if tdst else dst.shape
        ss = src._np_shape if tsrc else src.shape
        if ds != ss:
            raise ValueError(f"copy_tensors pair {k}: shapes differ ({ss} -> {ds})")
        if tdst and tsrc and dst.dtype != src.dtype:
            raise TypeError(f"copy_tensors pair {k}: dtypes differ ({src.dtype} -> {dst.dtype})")
        if not tdst and not dst.flags.writeable:
            raise ValueError(f"copy_tensors pair {k}: the destination numpy array is read-only")
        for a, dev in ((dst, tdst), (src, tsrc)):
            if dev and a._rt is not rt:
                rt = a._runtime()
        if not (tdst and tsrc):
            host = True
        if tdst and not tsrc and dst.nbytes <= STAGED_UPLOAD_BYTES:
            staged += (dst.nbytes + 3) // 4 * 4
    return min(staged, STAGING_LIMIT), host


class _Uploads:
    """One staging buffer for a copy_tensors call's small uploads: data packed on the host,
    written with one `write_buffer` before the next submit, one copy command per pair."""

    def __init__(self, rt, nbytes: int):
        self.rt = rt
        self.size = nbytes
        self.buf = rt.pool.alloc(nbytes, what="copy_tensors staging")  # idle: written directly
        self.host = ffi.ffi.new("uint8_t[]", nbytes)
        self.off = self.written = 0

    def fits(self, n: int) -> bool:
        return n <= STAGED_UPLOAD_BYTES and self.off + n <= self.size

    def add(self, dst_buf, data: np.ndarray) -> None:
        n = data.nbytes
        ffi.ffi.memmove(self.host + self.off, data, n)
        n4 = (n + 3) // 4 * 4
        ffi.copy_buffer(self.rt.encoder(), self.buf._internal, self.off, dst_buf._internal, 0, n4)
        self.off += n4

    def write(self) -> None:
        """Write what was packed since the last write (call before anything submits)."""
        if self.off > self.written:
            ffi.queue_write(self.rt.queue._internal, self.buf._internal, self.written, self.host + self.written,
                            self.off - self.written)
            self.written = self.off

    def close(self) -> None:
        self.write()
        self.rt.ctx_buffers.append(self.buf)  # recorded copies read it: released through the FIFO


def _overlaps_pending(a: np.ndarray, bl, copybacks: list) -> bool:
    """True when `a` may share memory with a destination of a recorded, uncompleted read."""
    return any(np.may_share_memory(a, d) for d in [*bl.pending_reads, *(d for _, d in copybacks)])


def _complete(bl, copybacks: list, up) -> None:
    if up is not None:
        up.write()  # the submit below runs copies from the staging buffer
    bl.complete_reads()
    for tmp, dst in copybacks:
        np.copyto(dst, tmp, casting="unsafe")
    copybacks.clear()
