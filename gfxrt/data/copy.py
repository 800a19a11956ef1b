"""`gr.copy_tensors([(dst, src), ...])`, in program order with launched kernels (`x.copy_from(...)`
and `x.fill(v)` are Ndarray's methods, gfxrt/data/ndarray.py).

Device-side work (device-to-device copies, fills) goes through `rt.copy` / `rt.clear` /
`rt.dispatch`, so a graph being captured records it. Host data (numpy arrays) cannot be
captured: inside `gr.graph()` it raises GraphCaptureError.

`copy_tensors` batches: the numpy sources of small uploads are packed into one staging
buffer written with a single `queue.write_buffer`, one copy command per pair; downloads
are recorded and complete with one submit and one wait.
"""
from __future__ import annotations

from gfxrt.compiler import npcompat
from gfxrt.compiler.npcompat import np

from ..engine import context
from ..engine.backend import calls as ffi
from ..engine.context import locked
from .ndarray import Ndarray

STAGED_UPLOAD_BYTES = 1 << 16  # copy_tensors packs numpy sources up to this size into one staging write
STAGING_LIMIT = 1 << 24        # at most this many bytes in one copy_tensors staging buffer
STAGE, UPLOAD, DEVICE, PACK, DOWNLOAD, HOST = range(6)  # what a pair does (see _plan)
_RECEIVES = (PACK, DOWNLOAD, HOST)                      # kinds whose dst is a numpy array


@locked
def copy_tensors(pairs) -> None:
    """Batched copies `[(dst, src), ...]`, any mix of numpy arrays and gr.ndarrays, done in
    list order: small numpy sources share one staging buffer and one write, small downloads
    share one readback, every copy is recorded in one command list, and downloads complete
    with one submit and one wait. Shapes must match; numpy data is converted to the
    destination's dtype. Inside `gr.graph()` only device-to-device pairs can be captured."""
    rt = context.runtime()
    plan, up_bytes, down_bytes, host = _plan(list(pairs))
    if host and rt.capture is not None:
        rt.capture.host_work("gr.copy_tensors with a numpy array")
    b = _Batch(rt, up_bytes, down_bytes, _may_overlap(plan))
    try:
        b.run(plan)
        b.complete()
    finally:
        b.close()


def _plan(pairs) -> tuple[list, int, int, bool]:
    """Check every pair before anything is done and turn it into (kind, dst, src, nbytes,
    numpy dtype): STAGE / UPLOAD (dst buffer, numpy src: packed into the shared staging
    buffer / written on its own), DEVICE (dst buffer, src buffer), PACK / DOWNLOAD (numpy
    dst, src buffer: through the shared readback / its own), HOST (numpy dst, numpy src).
    Returns the plan, the staging bytes up and down, and whether numpy takes part."""
    plan, up, down, host = [], 0, 0, False
    rt = None
    npdtype: dict = {}
    for k, pair in enumerate(pairs):
        try:
            dst, src = pair
        except (TypeError, ValueError):
            raise TypeError(f"copy_tensors item {k} must be a (dst, src) pair, not {pair!r}") from None
        if type(dst) is Ndarray and npcompat.is_plain_array(src) and dst._rt is rt and dst._np_shape == src.shape:
            # the common upload, checked with the fewest steps (the general path below raises the errors)
            want = npdtype.get(dst._scalar) or npdtype.setdefault(dst._scalar, dst._scalar.numpy)
            n = dst.nbytes
            host = True
            if n and n <= STAGED_UPLOAD_BYTES and up + n <= STAGING_LIMIT:
                up += (n + 3) & ~3
                plan.append((STAGE, dst._buffer, src, n, want))
            elif n:
                plan.append((UPLOAD, dst._buffer, src, n, want))
            continue
        if type(src) is Ndarray and npcompat.is_plain_array(dst) and src._rt is rt and src._np_shape == dst.shape \
                and dst.flags.writeable:  # the common download
            n = src.nbytes
            host = True
            kind = PACK if n <= STAGED_UPLOAD_BYTES and down + n <= STAGING_LIMIT else DOWNLOAD
            if kind == PACK:
                down += (n + 3) & ~3
            if n:
                plan.append((kind, dst, src._buffer, n,
                             npdtype.get(src._scalar) or npdtype.setdefault(src._scalar, src._scalar.numpy)))
            continue
        tdst, tsrc = isinstance(dst, Ndarray), isinstance(src, Ndarray)
        for what, a, dev in (("dst", dst, tdst), ("src", src, tsrc)):
            if not dev and not npcompat.is_array(a):
                raise TypeError(f"copy_tensors pair {k}: {what} must be a gr.ndarray or a numpy array, "
                                f"not {type(a).__name__}")
        ds = dst._np_shape if tdst else dst.shape
        ss = src._np_shape if tsrc else src.shape
        if ds != ss:
            raise ValueError(f"copy_tensors pair {k}: shapes differ ({ss} -> {ds})")
        for a, dev in ((dst, tdst), (src, tsrc)):
            if dev and a._rt is not rt:
                rt = a._runtime()
        if tdst and tsrc:
            if dst.dtype != src.dtype:
                raise TypeError(f"copy_tensors pair {k}: dtypes differ ({src.dtype} -> {dst.dtype})")
            plan.append((DEVICE, dst._buffer, src._buffer, (dst.nbytes + 3) // 4 * 4, None))
            continue
        host = True
        if not tdst and not dst.flags.writeable:
            raise ValueError(f"copy_tensors pair {k}: the destination numpy array is read-only")
        if tdst:
            n = dst.nbytes
            kind = STAGE if n <= STAGED_UPLOAD_BYTES and up + n <= STAGING_LIMIT else UPLOAD
            if kind == STAGE:
                up += (n + 3) & ~3
            if n:
                plan.append((kind, dst._buffer, src, n, dst._scalar.numpy))
        elif tsrc:
            n = src.nbytes
            kind = PACK if n <= STAGED_UPLOAD_BYTES and down + n <= STAGING_LIMIT else DOWNLOAD
            if kind == PACK:
                down += (n + 3) & ~3
            if n:
                plan.append((kind, dst, src._buffer, n, src._scalar.numpy))
        else:
            plan.append((HOST, dst, src, 0, None))
    return plan, up, down, host


def _owner(a: np.ndarray):
    """The ndarray that owns `a`'s memory, or None when the memory belongs to another object
    (a buffer numpy wraps: arrays over it may overlap without sharing an owner)."""
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a if a.base is None else None


def _may_overlap(plan) -> bool:
    """False when no numpy array that receives data can share memory with a numpy array of
    another pair: then no pair needs to wait for an earlier download (checked once, by the
    arrays' memory owners, instead of at every pair)."""
    receivers: dict[int, int] = {}  # id(owner) -> position
    others: list = []
    for pos, (kind, dst, src, _, _) in enumerate(plan):
        if kind in _RECEIVES:
            o = _owner(dst)
            if o is None or receivers.setdefault(id(o), pos) != pos:
                return True
        if kind in (STAGE, UPLOAD, HOST):
            others.append((src, pos))
    if not receivers:
        return False
    for a, pos in others:
        o = _owner(a)
        if o is None or receivers.get(id(o), pos) != pos:
            return True
    return False


class _Batch:
    """The state of one copy_tensors call: the shared upload staging buffer (packed on the
    host, written with one write_buffer before anything submits), the shared readback
    (small downloads are copied into one device buffer, read back once, then split), and
    the numpy destinations still waiting for data."""

    def __init__(self, rt, up_bytes: int, down_bytes: int, check: bool):
        self.rt, self.bl, self.check = rt, rt.blitter, check
        self.up = rt.pool.alloc(up_bytes, what="copy_tensors staging") if up_bytes else None  # idle
        self.up_host = ffi.host_memory(up_bytes) if up_bytes else None
        self.up_off = self.up_written = 0
        self.down = rt.pool.alloc(down_bytes, what="copy_tensors readback") if down_bytes else None
        self.down_host = np.empty(down_bytes, np.uint8)
        self.down_ptr = ffi.host_pointer(self.down_host) if down_bytes else None
        self.down_off = self.down_read = 0
        self.copybacks: list = []  # (source: array or byte offset, numpy dst, nbytes, dtype), delivered at complete()

    def run(self, plan) -> None:
        rt, bl, check, copybacks = self.rt, self.bl, self.check, self.copybacks
        memmove, copy = ffi.memmove, ffi.copy
        enc = None
        for kind, dst, src, n, dtype in plan:
            if check and (bl._reads or copybacks) and self._waits_for_reads(kind, dst, src):
                self.complete()
                enc = None
            if kind == STAGE:  # the hot case: pack the data, record one copy from the staging buffer
                data = src if src.dtype == dtype and src.flags.c_contiguous else np.ascontiguousarray(src, dtype)
                if enc is None:
                    enc = rt.encoder()
                off = self.up_off
                memmove(self.up_host + off, data, n)
                n4 = (n + 3) & ~3
                copy(enc, self.up, off, dst, 0, n4)
                self.up_off = off + n4
            elif kind == PACK:
                if enc is None:
                    enc = rt.encoder()
                off = self.down_off
                n4 = (n + 3) & ~3
                if n:
                    copy(enc, src, 0, self.down, off, n4)
                copybacks.append((off, dst, n, dtype))
                self.down_off = off + n4
            else:
                enc = None  # anything else may flush or end the encoder
                if kind == DEVICE:
                    rt.copy(src, 0, dst, 0, n)
                elif kind == UPLOAD:
                    self.write()
                    bl.host_to_device(dst, np.ascontiguousarray(src, dtype))
                elif kind == DOWNLOAD:
                    direct = dst.flags.c_contiguous and dst.dtype == dtype
                    tmp = dst if direct else np.empty(dst.shape, dtype)
                    bl.record_read(src, 0, n, tmp)
                    if not direct:
                        copybacks.append((tmp, dst, 0, None))
                else:
                    np.copyto(dst, src, casting="unsafe")

    def _waits_for_reads(self, kind, dst, src) -> bool:
        """True when this pair touches a numpy array an earlier, uncompleted download fills."""
        pending = [*self.bl.pending_reads, *(c[1] for c in self.copybacks)]
        arrays = (dst,) if kind in (PACK, DOWNLOAD) else (src,) if kind in (STAGE, UPLOAD) else \
            (dst, src) if kind == HOST else ()
        return any(np.may_share_memory(a, d) for a in arrays for d in pending)

    def write(self) -> None:
        """Write what was packed for upload since the last write (before anything submits)."""
        if self.up_off > self.up_written:
            ffi.queue_write(self.rt.queue, self.up, self.up_written,
                            self.up_host + self.up_written, self.up_off - self.up_written)
            self.up_written = self.up_off

    def complete(self) -> None:
        """Submit, wait once, and deliver every download recorded so far."""
        self.write()
        if self.down_off > self.down_read:
            lo = self.down_read
            self.bl.record_read(self.down, lo, self.down_off - lo, self.down_host[lo:self.down_off])
            self.down_read = self.down_off
        if self.bl._reads:
            self.bl.complete_reads()
        memmove, host, ptr = ffi.memmove, self.down_host, self.down_ptr
        for src, dst, n, dtype in self.copybacks:
            if dtype is None:  # a whole temporary array
                np.copyto(dst, src, casting="unsafe")
            elif dst.dtype == dtype and dst.flags.c_contiguous:
                memmove(dst, ptr + src, n)
            else:
                np.copyto(dst, host[src:src + n].view(dtype).reshape(dst.shape), casting="unsafe")
        self.copybacks.clear()

    def close(self) -> None:
        self.write()
        for buf in (self.up, self.down):
            if buf is not None:
                self.rt.ctx_buffers.append(buf)  # recorded copies use them: released through the FIFO
