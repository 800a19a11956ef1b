"""HostDeviceContextBlitter: host <-> device copies in program order.

Uploads: `queue.write_buffer` lands before every command buffer of the next submit (the
ordering trap in WGPU-NOTES.md). A buffer that no recorded work uses (a fresh buffer from
the pool, or any buffer while nothing is recorded) is written directly; otherwise the data
goes into an idle staging buffer and a copy is recorded in the open encoder, in order with
the launches before and after it (a pass restart, ~5 us, instead of a submit).

Readbacks: copies into MAP_READ staging buffers recorded after everything else, one
submit, one wait on that submission, raw maps. The wait covers every earlier submission,
so afterwards the retirement FIFO and `ctx_buffers` are released: the queue is idle.

On GPUs the wait first polls without blocking until the maps' callbacks have fired (up to
GFXRT_SPIN_WAIT_US, see gfxrt/engine/device.py and ffi.wait): a blocking wait wakes up late, and a
readback such as `kernels.reduce.sum` is one round trip per call.
"""
from __future__ import annotations

from gfxrt.compiler import npcompat
from gfxrt.compiler.npcompat import np

from ..errors import GfxrtError
from .backend import calls as ffi
from .lock import locked
from .memory import READBACK


def _bytes_of(data):
    """`data` as contiguous bytes whose size is a multiple of 4 bytes (wgpu's copy granularity),
    padded with zeros where needed: a numpy array (as an array), or any other buffer-protocol
    object (bytes, array.array, a memoryview: as a byte memoryview; no numpy needed)."""
    if npcompat.is_array(data):
        a = data if npcompat.is_plain_array(data) and data.flags.c_contiguous else np.ascontiguousarray(data)
        if a.nbytes % 4:
            a = np.concatenate([a.reshape(-1).view(np.uint8), np.zeros(4 - a.nbytes % 4, np.uint8)])
        return a
    m = memoryview(data)
    m = m.cast("B") if m.c_contiguous else memoryview(m.tobytes())
    return m if m.nbytes % 4 == 0 else memoryview(m.tobytes() + bytes(4 - m.nbytes % 4))


class HostDeviceContextBlitter:
    """Moves kernel arguments and array contents between numpy and device buffers."""

    def __init__(self, rt):
        self.rt = rt
        self._reads: list = []  # (staging, nbytes, dest) recorded by record_read

    @locked
    def host_to_device(self, buffer, data, offset: int = 0, fresh: bool = False) -> None:
        """Write `data` (a numpy array or another buffer-protocol object) into `buffer` at byte `offset`,
        after all work recorded so far. `fresh=True` promises that no recorded work uses the
        buffer (it just came from the pool), which allows the direct write."""
        rt = self.rt
        if rt.capture is not None:
            rt.capture.host_work("copying host data to the device (from_numpy, a numpy argument)")
        raw = _bytes_of(data)
        n = raw.nbytes
        if not n:
            return
        if offset % 4 or offset + n > buffer.size:
            raise GfxrtError(f"internal: upload of {n} bytes at offset {offset} into a buffer of {buffer.size}")
        rt.check_alive()
        if rt.take_unzeroed(buffer, offset, n):
            fresh = True  # a new allocation this write covers: no zeroing, no recorded work uses it
        if fresh or not rt.has_pending_work:
            ffi.queue_write(rt.queue, buffer, offset, raw, n)
            return
        if getattr(buffer, "_gfxrt_destroyed", False):
            raise GfxrtError("upload into a buffer that was destroyed")
        staging = rt.pool.alloc(n, what="upload staging")
        ffi.queue_write(rt.queue, staging, 0, raw, n)
        rt.copy(staging, 0, buffer, offset, n)
        rt.ctx_buffers.append(staging)

    def clear(self, buffer, offset: int = 0, nbytes: int | None = None) -> None:
        """Zero a byte range of `buffer`, in order with recorded work."""
        nbytes = buffer.size - offset if nbytes is None else (nbytes + 3) // 4 * 4
        self.rt.clear(buffer, offset, nbytes)

    @locked
    def device_to_host(self, reads, check: bool = True) -> None:
        """Copy device bytes to host objects, after all work recorded so far.

        reads: list of (buffer, byte offset, nbytes, dest), dest a writable C-contiguous
        buffer-protocol object of at least nbytes (a numpy array, a bytearray). Waits; on
        return the retirement FIFO and `ctx_buffers` are empty. With `check` (user-facing
        readbacks), device-side errors of the launches so far raise here once the data has
        arrived, as at `gr.sync()`; runtime-internal reads pass False."""
        for buffer, offset, nbytes, dest in reads:
            self.record_read(buffer, offset, nbytes, dest)
        self.complete_reads(check)

    def record_read(self, buffer, offset: int, nbytes: int, dest) -> None:
        """Record the copy of a readback (in order with recorded work); the data reaches
        `dest` at the next `complete_reads()`, which must follow before control returns to
        the user."""
        rt = self.rt
        if rt.capture is not None:
            rt.capture.host_work("reading device data back to the host (to_numpy, a return value)")
        rt.check_alive()
        size = (nbytes + 3) // 4 * 4
        st = rt.pool.alloc(size, READBACK, what="readback staging")
        try:
            rt.copy(buffer, offset, st, 0, size)
        except BaseException:
            rt.pool.release(st)
            raise
        self._reads.append((st, nbytes, dest))

    @property
    def pending_reads(self) -> list:
        """The destinations of recorded, not yet completed readbacks."""
        return [d for _, _, d in self._reads]

    def complete_reads(self, check: bool = True) -> None:
        """Submit, wait for that submission, and copy every recorded readback to its
        destination. Afterwards the queue is idle: the FIFO and `ctx_buffers` are released.
        With `check`, the status words of watched kernels (debug bounds checks, adstack
        overflow) are read in the same submission and their first error is raised after the
        data has arrived; each error is reported once (a later `gr.sync()` is clean). Callers
        hold gfxrt.engine.lock.LOCK (record_read's callers do)."""
        rt = self.rt
        status = rt.take_status_reads() if check else ()
        try:
            for buf, _, words in status:
                self.record_read(buf, 0, words.nbytes, words)
        except BaseException:
            rt.unwatch_failed(status)
            raise
        try:
            self._complete()
        except BaseException:
            rt.unwatch_failed(status)
            raise
        if status:
            rt.raise_status(status)

    def _complete(self) -> None:
        rt = self.rt
        reads, self._reads = self._reads, []
        requests = []
        try:
            rt.flush()  # maps start after the submit that uses the buffers (else submit aborts)
            for st, nbytes, _ in reads:
                if nbytes:
                    req = _map_request(st)
                    requests.append(req)  # before start(): an interrupt after it cannot lose the map
                    req.start((nbytes + 3) // 4 * 4)
            rt.wait_for_maps(requests)
            rt.drained()
            for st, nbytes, dest in reads:
                if nbytes:
                    _map_request(st).read_into(dest, nbytes)
        except BaseException:
            # interrupted (Ctrl-C) or failed: unmap every staging buffer (a pending map is
            # aborted) and give them back once the work that may still copy into them is done
            for req in requests:
                req.cancel()
            for st, _, _ in reads:
                rt.free_later(st)
            ffi.raise_interrupted()  # a Ctrl-C inside an aborted map's callback: still a KeyboardInterrupt
            raise
        for st, _, _ in reads:
            rt.pool.release(st)  # the queue is idle

def _map_request(buf) -> ffi.MapRequest:
    req = getattr(buf, "_gfxrt_map", None)
    if req is None:
        req = buf._gfxrt_map = ffi.MapRequest(buf)
    return req
