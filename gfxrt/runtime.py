"""GfxRuntime: one open command encoder and compute pass, the retirement FIFO of transient
buffers, readbacks and synchronization. See DESIGN.md "Runtime"."""
from __future__ import annotations

import collections

import numpy as np

from .device import Device


def status_error(code: int, message: str) -> Exception:
    """The exception for a device-side error code (compiler/spec.py STATUS_*)."""
    from compiler.spec import STATUS_ACCESS_RULE, STATUS_ADSTACK_OVERFLOW, STATUS_OUT_OF_BOUNDS

    from .errors import AdstackOverflowError, DeviceError, GfxrtError, OutOfBoundsError
    cls = {STATUS_OUT_OF_BOUNDS: OutOfBoundsError, STATUS_ADSTACK_OVERFLOW: AdstackOverflowError,
           STATUS_ACCESS_RULE: GfxrtError}.get(code, DeviceError)
    return cls(message)


class GfxRuntime:
    """Records launches into one open compute pass and submits them on flush."""

    PENDING_RETIREMENTS_DEPTH = 3

    def __init__(self, device: Device):
        import wgpu
        self._wgpu = wgpu
        self.dev = device
        self.device = device.device
        self.queue = self.device.queue
        self.ctx_buffers: list = []
        self.pending_retirements: collections.deque = collections.deque()
        self._encoder = None
        self._pass = None
        self._recorded = 0
        self._launches = 0
        self._submissions = 0
        self._watched: dict[int, tuple] = {}  # id(status buffer) -> (buffer, KernelSpec)
        self.adstack = None   # gfxrt.adstack.AdstackHeap, created by the first adstack launch
        self.sync_hooks: list = []  # called by synchronize() once the device is idle

    # -- command recording ----------------------------------------------------------------
    def compute_pass(self):
        """The open compute pass, opening an encoder and a pass if needed."""
        if self._pass is None:
            if self._encoder is None:
                self._encoder = self.device.create_command_encoder()
            self._pass = self._encoder.begin_compute_pass()
        return self._pass

    def encoder(self):
        """The open command encoder with no pass open (for copies)."""
        if self._pass is not None:
            self._pass.end()
            self._pass = None
        if self._encoder is None:
            self._encoder = self.device.create_command_encoder()
        return self._encoder

    def dispatch(self, pipeline, bind_group, immediates: bytes, groups: int) -> None:
        p = self.compute_pass()
        p.set_pipeline(pipeline)
        p.set_bind_group(0, bind_group)
        if immediates:
            p.set_immediates(0, immediates, 0, len(immediates))
        p.dispatch_workgroups(groups)
        self._recorded += 1

    @property
    def has_pending_work(self) -> bool:
        return self._encoder is not None

    # -- flush and sync -------------------------------------------------------------------
    def flush(self) -> None:
        """Submit recorded work; retire this batch of transient buffers through the FIFO."""
        if self._encoder is None:
            return
        if self._pass is not None:
            self._pass.end()
            self._pass = None
        cmd = self._encoder.finish()
        self._encoder = None
        self.queue.submit([cmd])
        self._submissions += 1
        self._recorded = 0
        if len(self.pending_retirements) >= self.PENDING_RETIREMENTS_DEPTH:
            self._wait_idle()
            self.pending_retirements.clear()
        self.pending_retirements.append((self._submissions, self.ctx_buffers))
        self.ctx_buffers = []

    def _wait_idle(self) -> None:
        from wgpu.backends.wgpu_native import ffi, lib
        lib.wgpuDevicePoll(self.device._internal, True, ffi.NULL)

    def synchronize(self) -> None:
        """Flush, wait for the device to go idle, release every transient buffer, then raise
        device-side errors (debug bounds checks, adstack overflow) of the launches since the
        last sync."""
        self.flush()
        self._wait_idle()
        self.pending_retirements.clear()
        self.ctx_buffers.clear()
        for hook in self.sync_hooks:
            hook()
        if self._watched:
            self._check_status()

    # -- device-side errors (protocol in compiler/spec.py) ------------------------------------
    def watch_status(self, buffer, spec) -> None:
        """Check this kernel's status buffer at the next sync."""
        self._watched[id(buffer)] = (buffer, spec)

    def _check_status(self) -> None:
        from compiler.spec import STATUS_HEADER_WORDS
        watched, self._watched = list(self._watched.values()), {}
        failure = None
        for buf, spec in watched:
            nwords = STATUS_HEADER_WORDS + len(spec.asserts)
            words = np.frombuffer(self.readback(buf, 4 * nwords), dtype=np.uint32)
            if words[0]:
                self.queue.write_buffer(buf, 0, np.zeros(nwords, np.uint32))
                for k, (code, message) in enumerate(spec.asserts):
                    if words[STATUS_HEADER_WORDS + k] and failure is None:
                        failure = (code, f"{message} ({words[STATUS_HEADER_WORDS + k]} time(s))")
        if failure is not None:
            raise status_error(*failure)

    # -- host <-> device --------------------------------------------------------------------
    def upload(self, buffer, data: np.ndarray, offset: int = 0) -> None:
        """Write host data into a buffer, after all work recorded so far."""
        self.flush()
        self.queue.write_buffer(buffer, offset, np.ascontiguousarray(data))

    def readback(self, buffer, nbytes: int, offset: int = 0) -> memoryview:
        """Copy `nbytes` of a buffer to the host, after all work recorded so far."""
        wgpu = self._wgpu
        size = (nbytes + 3) // 4 * 4
        staging = self.device.create_buffer(size=size, usage=wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST)
        self.encoder().copy_buffer_to_buffer(buffer, offset, staging, 0, size)
        self.synchronize()
        staging.map_sync(wgpu.MapMode.READ)
        data = staging.read_mapped(0, size, copy=True)
        staging.unmap()
        staging.destroy()
        return memoryview(data)[:nbytes]

    def stats(self) -> dict:
        return {"launches": self._launches, "submissions": self._submissions,
                "ctx_buffers": len(self.ctx_buffers), "pending_retirements": len(self.pending_retirements)}
