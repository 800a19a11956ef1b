"""GfxRuntime: one open command encoder and compute pass, the bounded retirement FIFO of
transient buffers, synchronization and device-side errors. See docs/design.md (the life of a
launch) and docs/runtime.md.

Life of a launch: the launcher (gfxrt/engine/launch.py) appends its dispatches to the open pass
through the recorder (gfxrt/engine/recorder.py, the part of GfxRuntime that owns the pass);
`flush()` ends the pass, submits and pairs the transient
buffers of that batch (`ctx_buffers`) with the submission index on `pending_retirements`;
the batch goes back to the memory pool once that submission is known to have finished.
"""
from __future__ import annotations

import collections
import logging
import weakref

from ..errors import DeviceLostError, ForkedProcessError, GfxrtError
from .backend import GPUBuffer, GPUError
from .backend import calls as ffi
from .blitter import HostDeviceContextBlitter
from .device import Device
from .lock import locked
from .memory import UNIFORM, MemoryPool
from .program import params_layout
from .recorder import Recorder
from .status import DeviceStatus
from .threadstate import THREAD


def _resource(b, window):
    """One bind-group resource: a texture view or a sampler binds as itself
    (compiler/codegen/wgsl_textures.py), a buffer whole or, for a window of an array larger than one
    binding (compiler/codegen/wgsl_chunks.py), its byte range cut at the buffer's end."""
    if not isinstance(b, GPUBuffer):
        return b
    if window is None:
        return {"buffer": b}
    return {"buffer": b, "offset": window[0], "size": min(window[1], b.size - window[0])}


class GfxRuntime(Recorder, DeviceStatus):
    """Records launches into one open compute pass and submits them on flush.

    Attributes the rest of gfxrt uses: `ctx_buffers` (transient buffers of the work recorded
    since the last flush; put a buffer here when recorded work may still use it and it
    should go back to the pool afterwards), `pending_retirements` (deque of
    `(submission_index, buffers)`, at most PENDING_RETIREMENTS_DEPTH long), `pool` (the
    MemoryPool), `blitter` (host <-> device copies).
    """

    PENDING_RETIREMENTS_DEPTH = 3
    AUTO_FLUSH_DISPATCHES = 256   # flush after this many recorded dispatches ...
    AUTO_FLUSH_BUFFERS = 64       # ... or this many transient buffers, so a loop without sync stays bounded
    AUTO_FLUSH_BYTES = 64 << 20   # ... or transient buffers of this many bytes (freed large arrays)
    # ... or after this many specializations' first launches: a dropped kernel's pipelines are
    # released only once the work that used them is submitted and done (lavapipe keeps ~83 KB
    # per pipeline), and new kernels keep coming in a loop that makes closure kernels
    AUTO_FLUSH_LAUNCHERS = 16
    EARLY_SUBMIT_BYTES = 64 << 20  # kernels.reduce: a reduction reading this much submits before its readback
    POLL_ON_MISS_BYTES = 1 << 20  # a pool miss this large first checks (without waiting) whether the queue is idle
    UNIFORM_RING_BYTES = 1 << 16  # params ring per batch on devices without immediates

    def __init__(self, device: Device):
        self.dev = device
        self.device = device.device
        self.queue = self.device.queue
        self.limits = device.limits
        self.ctx_buffers: list = []
        self._queue_h = ffi.handle(self.queue)
        self._unzeroed: dict[int, tuple] = {}  # id -> (buffer, nbytes): new allocations whose clear is not recorded yet
        self._zeroing: list = []      # (buffer, nbytes) whose clear the open encoder holds (unsubmitted)
        Recorder.__init__(self)
        self.pending_retirements: collections.deque = collections.deque()
        self.pool = MemoryPool(self.device, self.limits, on_trim=self._before_trim, on_miss=self._on_pool_miss)
        self._flushing = False
        self.blitter = HostDeviceContextBlitter(self)
        self.profiler = None          # set by gr.profile() while it is active
        self.span_profiler = None     # set by gr.profile(per_kernel=False) while it is active
        self._captures: set = set()   # the graphs capturing on this runtime, in any thread (see `capture`)
        self._new_launchers = 0       # launchers (specializations on this runtime) made since the last flush
        self._last_index = None       # submission index of the last submit
        self._launches = 0
        self._submissions = 0
        self._waits = 0
        self._outside = False  # work submitted outside the recorder since the last wait for all
        self._watched: dict[int, tuple] = {}  # id(status buffer) -> (buffer, KernelSpec)
        self._lost: str | None = None
        self._closed = False
        self._forked: str | None = None  # this is the parent's runtime, in a forked child: why it is unusable
        self._slow = False            # launchers' fast path defers to the checked path (profiling, lost, closed)
        self.launchers = weakref.WeakSet()
        self._uring = None            # this batch's params ring (devices without immediates)
        self._uring_host = bytearray()
        self._uring_used = 0
        self._uring_bg = None
        self._uslot = max(256, int(self.limits.get("min-uniform-buffer-offset-alignment", 256)))
        self._suspect: str | None = None  # a "device lost" log line not yet confirmed for this device
        self._watcher = ffi.LostWatcher(self._on_lost_log)
        logging.getLogger("wgpu").addHandler(self._watcher)
        # parts of the runtime created on first use; synchronize() drains them once the device is idle
        self.printer = None   # gfxrt.engine.printing.Printer, by the first launch of a kernel that prints
        self.adstack = None   # gfxrt.ad.adstack.AdstackHeap, by the first adstack launch
        self.blit_pipelines: dict = {}  # gfxrt/engine/blit_kernels.py: name -> (pipeline, bind group layout)

    @property
    def capture(self):
        """The graph the calling thread captures into on this runtime (gfxrt/graph.py), else
        None: capture belongs to the thread that opened it, other threads run eagerly
        (gfxrt/engine/threadstate.py)."""
        g = THREAD.capture
        return g if g is not None and g.rt is self else None

    @capture.setter
    def capture(self, graph) -> None:
        old = self.capture
        if old is not None:
            self._captures.discard(old)
        THREAD.capture = graph
        if graph is not None:
            self._captures.add(graph)
        self.refresh_slow()

    @property
    def closed(self) -> bool:
        """gr.init() closed this runtime (or it belongs to a forked parent)."""
        return self._closed

    def add_launcher(self, launcher) -> None:
        """A new launcher (a specialization's first launch on this runtime)."""
        self.launchers.add(launcher)
        self._new_launchers += 1  # (an auto-flush bound: see AUTO_FLUSH_LAUNCHERS)

    @property
    def alive(self) -> bool:
        """The device is usable: not lost, runtime not closed."""
        return self._lost is None and not self._closed

    def uniform_slot(self, data: bytes):
        """(raw bind group, dynamic offsets) of a fresh slot of this batch's params ring
        holding `data`. The ring is written once, at flush, before the submit: never a
        write_buffer between the dispatches of one submit (they would all see its last value)."""
        if len(data) > self._uslot:
            raise GfxrtError(f"a kernel with {len(data)} bytes of scalar arguments needs immediates; this "
                             f"device has none and its params slots hold {self._uslot} bytes")
        if self._uring is None or self._uring_used + self._uslot > self.UNIFORM_RING_BYTES:
            if self._uring is not None:
                self.flush()  # ring full: submit this batch (which writes the ring) first
            ring = self._uring = self.pool.alloc(self.UNIFORM_RING_BYTES, UNIFORM, what="params ring")
            bg = getattr(ring, "_gfxrt_ring_bg", None)
            if bg is None:
                bg = ring._gfxrt_ring_bg = self.bind_group(None, (ring,), "binding the params ring", self._uslot)
            self._uring_bg = ffi.handle(bg)
            self._uring_host = bytearray(self.UNIFORM_RING_BYTES)
            self._uring_used = 0
        off = self._uring_used
        self._uring_host[off:off + len(data)] = data
        self._uring_used += self._uslot
        return self._uring_bg, ffi.dynamic_offset(off)

    def params_slots(self, datas: list) -> tuple:
        """A graph's own params (devices without immediates), written now: (buffer, bind
        group, its raw handle, the dynamic offset of each of `datas`)."""
        slot = self._uslot
        buf = self.pool.alloc(slot * len(datas), UNIFORM, what="graph params")
        host = bytearray(slot * len(datas))
        for k, data in enumerate(datas):
            host[k * slot:k * slot + len(data)] = data
        ffi.queue_write(self.queue, buf, 0, host, len(host))
        bg = self.bind_group(None, (buf,), "binding a graph's params", slot)
        return buf, bg, ffi.handle(bg), [ffi.dynamic_offset(k * slot) for k in range(len(datas))]

    def bind_group(self, layout, buffers, what: str, size: int | None = None, windows=None):
        """A bind group of `buffers` at bindings 0, 1, ... of `layout`; with `size`, the
        first `size` bytes of one params buffer in the params layout. `windows[k]`: None (the
        whole buffer) or (offset, nbytes): that range of it, cut at the buffer's end (an array
        larger than one binding is bound in windows, BindingSpec.chunk)."""
        if size is not None:
            layout, entries = params_layout(self.device), [{"binding": 0, "resource": {
                "buffer": buffers[0], "offset": 0, "size": size}}]
        else:
            entries = [{"binding": k, "resource": _resource(b, windows[k] if windows else None)}
                       for k, b in enumerate(buffers)]
        return self._call(self.device.create_bind_group, what, layout=layout, entries=entries)

    def _write_ring(self) -> None:
        ring, self._uring = self._uring, None
        if self._uring_used:
            ffi.queue_write(self.queue, ring, 0, self._uring_host, self._uring_used)
        self.ctx_buffers.append(ring)

    def after_launch(self) -> None:
        """Count a launch and flush when the batch reached the auto-flush bounds."""
        self._launches += 1
        if self._recorded >= self.AUTO_FLUSH_DISPATCHES or self._transient_over() or \
                self._new_launchers >= self.AUTO_FLUSH_LAUNCHERS:
            self.flush()

    @property
    def has_pending_work(self) -> bool:
        """True while recorded work has not been submitted."""
        return self._encoder is not None

    # -- flush and sync -------------------------------------------------------------------
    @locked
    def flush(self) -> None:
        """Submit the recorded work and queue this batch of transient buffers for release.
        When the FIFO already holds PENDING_RETIREMENTS_DEPTH batches, wait for the oldest
        submission only and release its batch first. Never waits otherwise.

        A KeyboardInterrupt leaves the runtime consistent: raised before the submit, the
        batch is discarded as by `_abandon_encoder`; raised as the submit returns, the batch
        was submitted and its transient buffers retire with the next submission."""
        if self._pass_unsure:
            self._abandon_encoder()
        if self._encoder is None:
            if self.ctx_buffers:  # e.g. arrays freed while submitted work may use them
                self._retire(self._last_index)
                self._late_frees()
            return
        self.end_pass()
        if self._uring is not None:
            self._write_ring()
        if self.profiler is not None:
            self.profiler.before_finish(self, self._encoder)
        if self.span_profiler is not None:
            self.span_profiler.before_finish(self._encoder)
        self.check_alive()
        encoder, self._encoder = self._encoder, None
        self._recorded = self._new_launchers = 0
        try:
            cmd = ffi.finish(encoder)
        except GPUError as e:  # a raw call recorded something invalid: nothing is submitted
            self._requeue_zeroing()
            self._drop_batch()
            if ffi.is_device_lost(e):
                self._on_lost(str(e))
            raise ffi.translate(e, "recording commands") from None
        except BaseException:  # interrupted: nothing is submitted
            self._requeue_zeroing()
            raise
        # From here to the submit nothing checks for signals (no call, no Python frame): an
        # interrupt is raised before finish returned (handled above) or after the submit
        self._zeroing = []
        self._flushing = True
        try:
            ffi.SUBMIT_SLOT[0] = cmd
            index = ffi.submit_one(self._queue_h, 1, ffi.SUBMIT_SLOT)
            self._last_index = int(index)
            ffi.release_commands(cmd)
            self._submissions += 1
            self._retire(self._last_index)
            if self._encoder is None:  # nothing recorded and unsubmitted: idle buffers may be destroyed
                self.pool.tick()
            if self.profiler is not None:
                self.profiler.after_submit(self, self._last_index)
            if self.span_profiler is not None:
                self.span_profiler.after_submit(self)
        finally:
            self._flushing = False
        self._late_frees()

    @locked
    def settle(self) -> None:
        """Record the pending clears of new allocations and submit all recorded work, so that a
        command buffer submitted next outside the recorder (gfxrt/gui's render passes, which
        read arrays and fields) sees every launch and clear before it. Never waits."""
        if self._unzeroed:
            self.encoder()
        self.flush()

    def _late_frees(self) -> None:
        """Buffers freed while the flush ran join the batch it just retired, so that
        `ctx_buffers` is empty afterwards. Python's garbage collector runs finalizers
        (Ndarray's free_later) at any allocation, e.g. in the pool's trimming after the
        submit; the work that may use such a buffer was recorded before (nothing records
        during a flush), so it is submitted, and retires with the last submission."""
        while self.ctx_buffers and self._encoder is None:
            late, self.ctx_buffers = self.ctx_buffers, []
            fifo = self.pending_retirements
            if self._last_index is None:  # nothing was ever submitted
                self.release(late)
            elif fifo:  # (an interrupted flush may have left the last batch with an older index: the
                fifo[-1] = (self._last_index, fifo[-1][1] + late)  # newer one covers it)
            else:
                fifo.append((self._last_index, late))

    def _on_pool_miss(self, size: int) -> None:
        """Before the pool creates a buffer of at least POLL_ON_MISS_BYTES: when a
        non-blocking poll finds the queue idle (a fast GPU usually is), take every pending
        batch back first. Never submits (callers may hold recorded copies whose staging data
        is written later)."""
        if size >= self.POLL_ON_MISS_BYTES and self.pending_retirements and not self._flushing \
                and self._lost is None and ffi.poll(self.device):
            self.drained()

    def _transient_over(self) -> bool:
        """ctx_buffers reached an auto-flush bound (count, or bytes: freed large arrays)."""
        ctx = self.ctx_buffers
        return len(ctx) >= self.AUTO_FLUSH_BUFFERS or (bool(ctx) and sum(b.size for b in ctx) >= self.AUTO_FLUSH_BYTES)

    def _retire(self, index) -> None:
        if index is None:  # nothing was ever submitted: nothing can use these buffers
            batch, self.ctx_buffers = self.ctx_buffers, []
            self.release(batch)
            return
        if len(self.pending_retirements) >= self.PENDING_RETIREMENTS_DEPTH:
            old_index, old = self.pending_retirements[0]
            self.wait(old_index)  # (interrupted: the FIFO and ctx_buffers are as they were)
            self.pending_retirements.popleft()
            self.release(old)
        batch, self.ctx_buffers = self.ctx_buffers, []
        self.pending_retirements.append((index, batch))

    def _drop_batch(self) -> None:
        """Recorded work was discarded: its transient buffers are idle again."""
        self._pass = self._pass_h = None
        if self._encoder is not None:
            ffi.drop_encoder(self._encoder)
        self._encoder = None
        self._recorded = 0
        batch, self.ctx_buffers = self.ctx_buffers, []
        self.release(batch)

    def wait(self, index=None) -> None:
        """Block until submission `index` (None: all submitted work) has finished."""
        self._waits += 1
        ffi.wait(self.device, index)

    def wait_for_maps(self, requests) -> None:
        """Wait for the last submission; with polling on (GPUs), `requests` (ffi.MapRequest,
        started after it) all mapped answer without a blocking wait."""
        spin = getattr(self.device, "_gfxrt_spin_s", 0.0)
        if requests and spin > 0.0 and ffi.spin_until(self.device, spin, requests) \
                and all(r.status[0] == ffi.MAP_SUCCESS for r in requests):
            self._waits += 1  # mapped: the last submission has finished, and every one before it
        else:
            self.wait(self._last_index)

    def release(self, buffers: list) -> None:
        """Give `buffers` back to the pool now (no recorded or submitted work may use them)."""
        # in reverse: the pool is LIFO, so the next launch gets the same buffers in the same
        # order, and with them the same cached bind group
        release = self.pool.release
        unzeroed = self._unzeroed
        for b in reversed(buffers):
            if unzeroed:  # freed before any recorded work used it: never zeroed, never needed to be
                unzeroed.pop(id(b), None)
            release(b)

    def submitted_outside(self) -> None:
        """Work went onto the queue outside the recorder (gfxrt/gui's render passes): the next
        `synchronize` waits for it too, as for the runtime's own."""
        self._outside = True

    def drained(self) -> None:
        """The queue is idle (a wait covered every submission): release every batch."""
        self._outside = False
        while self.pending_retirements:
            self.release(self.pending_retirements.popleft()[1])
        if self._encoder is None and self.ctx_buffers:
            batch, self.ctx_buffers = self.ctx_buffers, []  # swap first: a free in another thread appends
            self.release(batch)

    @locked
    def synchronize(self) -> None:
        """Flush, wait for the device to go idle, release every transient buffer, then raise
        device-side errors (debug bounds checks, adstack overflow) of the launches since the
        last sync."""
        self.check_alive()
        if self.capture is not None:
            self.capture.host_work("gr.sync()")
        if self._encoder is not None or self.pending_retirements or self.ctx_buffers or self._outside:
            self.flush()
            self.wait(None)
            self.drained()
        if self.printer is not None:
            self.printer.drain()
        if self.adstack is not None:
            self.adstack.on_sync()
        if self._encoder is None:
            self.pool.tick(flushed=False)  # the cap, also for what the sync just released
        if self._watched:
            self._check_status()

    # -- host <-> device ------------------------------------------------------------------
    def readback(self, buffer, nbytes: int, offset: int = 0) -> memoryview:
        """Copy `nbytes` of a buffer to the host, after all work recorded so far."""
        out = bytearray(nbytes)
        self.blitter.device_to_host([(buffer, offset, nbytes, out)])
        return memoryview(out)

    # -- memory ---------------------------------------------------------------------------
    @locked
    def alloc(self, nbytes: int, what: str = "array"):
        """An idle storage buffer of at least `nbytes` from the pool (MemoryError if the
        device cannot hold it)."""
        self.check_alive()
        if self._transient_over():  # arrays freed without launches in between, or large ones
            self.flush()
        return self.pool.alloc(nbytes, what=what)

    @locked
    def alloc_zeroed(self, nbytes: int, what: str = "array"):
        """`alloc`, with the first `nbytes` zeroed on the device: every allocation, new or
        reused (a GPU's fresh memory need not be zero; a pooled buffer holds its last owner's
        data). The clear is recorded, never uploaded, just before the first recorded work
        (launch, copy, fill, readback, graph replay): a host write covering the whole range
        first (`from_numpy` right after allocation) makes it unnecessary, and a buffer freed
        unused skips it. Graph capture does not record it: it happens once."""
        buf = self.alloc(nbytes, what)
        if nbytes:
            self._unzeroed[id(buf)] = (buf, (nbytes + 3) // 4 * 4)
            self._pass_h = None  # launchers' fast path then goes through compute_pass(), which records it
        return buf

    def take_unzeroed(self, buffer, offset: int, nbytes: int) -> bool:
        """A host write of `nbytes` at `offset` into `buffer` is about to be recorded. Returns
        True when the buffer's pending zeroing was dropped because the write covers it (no
        recorded work uses the buffer yet: it may be written directly); a partial write has
        the zeroing recorded first."""
        pending = self._unzeroed.get(id(buffer))
        if pending is None:
            return False
        if offset == 0 and nbytes >= pending[1]:
            del self._unzeroed[id(buffer)]
            return True
        self.encoder()  # records the zeroing; the write then goes after it, in order
        return False

    def free_later(self, buffer) -> None:
        """Give a buffer back once the work recorded so far no longer needs it. Takes no lock
        (finalizers call it from any thread): one atomic list append."""
        if not self._closed:
            self.ctx_buffers.append(buffer)

    def _before_trim(self) -> None:
        # pooled buffers are idle, but recorded work must be submitted before any is
        # destroyed, and cached bind groups must not outlive them
        self.flush()
        for launcher in list(self.launchers):
            launcher.bind_cache.clear()

    @locked
    def empty_pool(self) -> int:
        """Destroy the pool's idle buffers (returns the bytes given back to the device)."""
        return self.pool.trim()

    # -- device loss -----------------------------------------------------------------------
    def refresh_slow(self) -> None:
        """Recompute `_slow`: launchers' generated fast path defers to the checked path
        while profiling, while a graph captures in any thread (the checked path then records
        or runs, by the calling thread's `capture`), and once the runtime is lost or closed."""
        self._slow = (self.profiler is not None or bool(self._captures) or self._lost is not None
                      or self._suspect is not None or self._closed)

    def _on_lost(self, message: str) -> None:
        self._lost = message
        self._slow = True

    def _on_lost_log(self, message: str) -> None:
        # wgpu logs the loss of *a* device (possibly an old one, released after gr.init()):
        # the checked path confirms it on this device before believing it
        self._suspect = message
        self._slow = True

    def _confirm_loss(self) -> None:
        message, self._suspect = self._suspect, None
        try:
            ffi.finish(ffi.create_encoder(self.device))  # fails with "device is lost" if it is
        except GPUError as e:
            self._on_lost(f"{message}\n{e}")
            return
        self.refresh_slow()

    def check_alive(self) -> None:
        if self._forked is not None:
            raise ForkedProcessError(self._forked)
        if self._suspect is not None:
            self._confirm_loss()
        if self._lost is not None:
            raise DeviceLostError(f"the GPU device was lost; call gr.init() to continue.\n{self._lost}")
        if self._closed:
            raise GfxrtError("this runtime was closed by gr.init(); use gr.runtime()")

    def _call(self, fn, what: str, *args, **kwargs):
        """A wgpu-py call with its error translated to a gfxrt exception."""
        try:
            return fn(*args, **kwargs)
        except GPUError as e:
            if ffi.is_device_lost(e):
                self._on_lost(str(e))
            raise ffi.translate(e, what) from None

    def detach_after_fork(self, why: str) -> None:
        """In a forked child: this runtime is the parent's. Mark it closed without a sync
        (a wait on the parent's device never returns in the child) and without releasing
        anything (its buffers stay with the parent's device): every later use raises
        ForkedProcessError(why)."""
        self._forked = why
        self._closed = self._slow = True
        self._captures.clear()
        logging.getLogger("wgpu").removeHandler(self._watcher)

    @locked
    def close(self) -> None:
        """Finish pending work if possible and detach from the device (gr.init() does this)."""
        for graph in list(self._captures):  # every thread's
            graph.abandon("gr.init() closed the runtime")
        self._captures.clear()
        try:
            if self._lost is None:
                self.synchronize()
        finally:
            self._closed = self._slow = True
            logging.getLogger("wgpu").removeHandler(self._watcher)

    @locked
    def stats(self) -> dict:
        """Counters: live_bytes / pooled_bytes (pool), launches, submissions, waits,
        ctx_buffers, pending_retirements, pending_buffers (deferred buffers in the FIFO)."""
        return {"launches": self._launches, "submissions": self._submissions, "waits": self._waits,
                "ctx_buffers": len(self.ctx_buffers), "pending_retirements": len(self.pending_retirements),
                "pending_buffers": sum(len(b) for _, b in self.pending_retirements),
                "recorded_dispatches": self._recorded, **self.pool.stats()}
