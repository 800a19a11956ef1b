"""The device memory pool: size-bucketed reuse of released buffers.

Invariant: a buffer in the pool is idle. Buffers that recorded or in-flight work may still
use come back through `GfxRuntime.ctx_buffers` and the retirement FIFO, never directly; so
a buffer handed out by `alloc` can be written with `queue.write_buffer` at once, and
`trim` may destroy pooled buffers after one flush.

A buffer pinned by a live graph (`pin`) is never handed out again until unpinned: a
captured bind group would otherwise read another owner's data on replay.

Trimming (`tick`, called by the runtime after each submit and at sync): a pooled buffer
not reused within IDLE_FLUSHES flushes is destroyed, and idle bytes are capped at
`idle_limit()` = max(IDLE_BYTES, live bytes), oldest first. Hot loops reuse their buffers
within a flush or two and keep them; one-off sizes go back to the device. Pinned buffers are
never in the pool (they are parked), so trimming never touches them.
"""
from __future__ import annotations

import collections

from .backend import BufferUsage as U
from .backend import GPUError
from .device_errors import is_device_lost, translate

STORAGE = U.STORAGE | U.COPY_SRC | U.COPY_DST   # device arrays, numpy-argument buffers, upload staging
READBACK = U.MAP_READ | U.COPY_DST              # readback staging
QUERY = U.QUERY_RESOLVE | U.COPY_SRC            # timestamp resolve
UNIFORM = U.UNIFORM | U.COPY_DST                # the params ring of devices without immediates


def bucket_size(nbytes: int, cap: int) -> int:
    """The allocation size for a request of `nbytes`: a power of two up to 1 MiB, then a
    multiple of 1/8 of the enclosing power of two (at most 12.5% slack); never above `cap`
    when the request fits under it."""
    n = max(256, (nbytes + 3) // 4 * 4)
    p = 1 << (n - 1).bit_length()
    size = p if p <= 1 << 20 else -(-n // (p // 8)) * (p // 8)
    return min(size, cap) if nbytes <= cap else size


class MemoryPool:
    """Hands out wgpu buffers by (usage, bucket size); `release` returns them."""

    IDLE_FLUSHES = 64       # a pooled buffer not reused within this many flushes is destroyed
    IDLE_BYTES = 256 << 20  # idle pooled bytes are capped at max(IDLE_BYTES, live bytes)

    def __init__(self, device, limits: dict, on_trim=None, on_miss=None):
        self.device = device
        self.max_buffer = int(limits.get("max-buffer-size", 1 << 28)) // 256 * 256  # (lavapipe's is 2**31 - 1)
        self.max_binding = int(limits.get("max-storage-buffer-binding-size", 1 << 27))
        self.on_trim = on_trim       # called before pooled buffers are destroyed (flush, drop caches)
        self.on_miss = on_miss       # on_miss(size) on a miss; may release buffers into the pool (then looked up again)
        self.clock = 0               # flushes seen (tick)
        self._oldest = 0             # a lower bound of the pooled buffers' release clocks (tick skips the scan)
        self.trimmed_bytes = 0       # destroyed by trimming (idle too long, or over the cap)
        self.free: dict[tuple, list] = collections.defaultdict(list)
        self.pinned: dict[int, int] = {}        # id(buffer) -> pin count
        self.parked: dict[int, object] = {}     # released while pinned: back to `free` on unpin
        self.live_bytes = 0
        self.pooled_bytes = 0
        self.allocations = 0                    # device allocations made (pool misses)
        self.reuses = 0

    # -- hand out / take back --------------------------------------------------------------
    def check(self, nbytes: int, usage: int = STORAGE, what: str = "array") -> int:
        """The bucket size `alloc` would hand out for `nbytes`; MemoryError when the device
        cannot hold that much in one buffer. Callers check before preparing data of that size
        (a numpy argument's conversion, say). A storage buffer that fits one binding stays
        within it (kernels bind it whole); a larger one is bound in windows
        (compiler/codegen/wgsl_chunks.py)."""
        whole = usage & U.STORAGE and nbytes <= self.max_binding
        size = bucket_size(nbytes, self.max_binding if whole else self.max_buffer)
        if size > self.max_buffer:
            raise MemoryError(f"{what} of {nbytes} bytes exceeds this device's largest buffer "
                              f"({self.max_buffer} bytes = {self.max_buffer / 2**20:g} MiB, the adapter's own "
                              "max-buffer-size, requested in full); split the data over several arrays")
        return size

    def alloc(self, nbytes: int, usage: int = STORAGE, what: str = "array"):
        """An idle buffer of at least `nbytes` with `usage`. Raises MemoryError when the
        device cannot hold it."""
        size = self.check(nbytes, usage, what)
        key = (int(usage), size)
        stack = self.free.get(key)
        if not stack and self.on_miss is not None:
            self.on_miss(size)
            stack = self.free.get(key)
        if stack:
            buf = stack.pop()
            self.pooled_bytes -= size
            self.reuses += 1
        else:
            buf = self._create(size, usage, what)
            buf._gfxrt_pool_key = key
            self.allocations += 1
        self.live_bytes += size
        return buf

    def _create(self, size: int, usage: int, what: str):
        for attempt in (0, 1):
            try:
                return self.device.create_buffer(size=size, usage=usage)
            except GPUError as e:
                if is_device_lost(e) or attempt or not self.pooled_bytes:
                    raise translate(e, f"allocating {size} bytes for {what}") from None
            self.trim()  # out of memory: give the pool's idle buffers back and try once more
        raise AssertionError("unreachable")

    def release(self, buf) -> None:
        """Take back an idle buffer (one no recorded or in-flight work uses). Buffers the
        pool did not make are simply dropped."""
        key = getattr(buf, "_gfxrt_pool_key", None)
        if key is None:
            return
        self.live_bytes -= key[1]
        if getattr(buf, "_gfxrt_destroyed", False):  # never hand out a destroyed buffer
            buf._gfxrt_pool_key = None
            return
        if id(buf) in self.pinned:
            self.parked[id(buf)] = buf
            return
        buf._gfxrt_idle_since = self.clock
        if not self.pooled_bytes:
            self._oldest = self.clock
        self.free[key].append(buf)
        self.pooled_bytes += key[1]

    # -- graphs ----------------------------------------------------------------------------
    def pin(self, buf) -> None:
        """Keep `buf` from being handed out again (while a graph that binds it lives)."""
        self.pinned[id(buf)] = self.pinned.get(id(buf), 0) + 1

    def unpin(self, buf) -> bool:
        """Undo one `pin`. Returns True when the buffer was released while pinned and is now
        free to go back to the pool: the caller routes it through `ctx_buffers`, since a
        replay may still be in flight."""
        n = self.pinned.get(id(buf), 0) - 1
        if n > 0:
            self.pinned[id(buf)] = n
            return False
        self.pinned.pop(id(buf), None)
        parked = self.parked.pop(id(buf), None)
        if parked is not None:
            self.live_bytes += parked._gfxrt_pool_key[1]  # release() will count it out again
            return True
        return False

    # -- giving memory back ----------------------------------------------------------------
    def trim(self) -> int:
        """Destroy every pooled buffer; returns the bytes freed."""
        if self.on_trim is not None:
            self.on_trim()
        freed = 0
        stacks = list(self.free.items())
        self.free.clear()
        self.pooled_bytes = 0
        for (_, size), stack in stacks:
            for buf in stack:
                freed += size
                _free(buf)
        return freed

    def idle_limit(self) -> int:
        """The most idle bytes the pool keeps after a flush."""
        return max(self.IDLE_BYTES, self.live_bytes)

    def tick(self, flushed: bool = True) -> int:
        """After a submit (`flushed`) or at a sync: count a flush, then destroy pooled buffers
        idle for IDLE_FLUSHES flushes and, oldest first, what exceeds `idle_limit()`. Only
        called when no recorded, unsubmitted work exists. Returns the bytes destroyed."""
        if flushed:
            self.clock += 1
        freed = 0
        if not self.pooled_bytes:
            return 0
        old = self.clock - self.IDLE_FLUSHES
        if self._oldest <= old:
            oldest = self.clock
            for key, stack in self.free.items():  # each stack is oldest first: release appends, alloc pops
                while stack and stack[0]._gfxrt_idle_since <= old:
                    freed += self._destroy(stack.pop(0), key)
                if stack:
                    oldest = min(oldest, stack[0]._gfxrt_idle_since)
            self._oldest = oldest
        limit = self.idle_limit()
        while self.pooled_bytes > limit:
            key = min((k for k, s in self.free.items() if s), key=lambda k: self.free[k][0]._gfxrt_idle_since)
            freed += self._destroy(self.free[key].pop(0), key)
        self.trimmed_bytes += freed
        return freed

    def _destroy(self, buf, key) -> int:
        self.pooled_bytes -= key[1]  # the books first: a Ctrl-C may come as a native call returns
        _free(buf)
        return key[1]

    def stats(self) -> dict:
        return {"live_bytes": self.live_bytes, "pooled_bytes": self.pooled_bytes,
                "pooled_buffers": sum(len(s) for s in self.free.values()),
                "pool_allocations": self.allocations, "pool_reuses": self.reuses,
                "pool_trimmed_bytes": self.trimmed_bytes, "pinned": len(self.pinned)}


def _free(buf) -> None:
    """Destroy a buffer and release its handle now. Left to wgpu-py's `__del__`, the release
    would run wherever the last reference happens to drop, and a Ctrl-C arriving during it would
    be printed and lost (CPython reports exceptions raised in `__del__` and drops them); here a
    KeyboardInterrupt propagates like any other."""
    buf._gfxrt_pool_key = None
    buf._gfxrt_destroyed = True
    buf.destroy()
    release = getattr(buf, "_release", None)  # wgpu-py's own; the browser backend has no handle to release
    if release is not None:
        release()
