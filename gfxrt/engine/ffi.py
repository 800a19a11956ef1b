"""Raw wgpu-native calls for the hot paths (launch, submit, wait, map), and wgpu error
translation. Everything here skips wgpu-py's error capture, so callers validate first
(see WGPU-NOTES.md): an invalid raw call shows up at `encoder.finish()`, and an invalid
submit aborts the process.

Never call `wgpuBufferGetMapState`: wgpu-native 0.32 panics in it (unimplemented).
"""
from __future__ import annotations

import time

from wgpu.backends.wgpu_native import ffi, lib

from ..errors import DeviceError
from .device_errors import LostWatcher, is_device_lost, translate  # noqa: F401 (device calls: shared with webgpu.py)

NULL = ffi.NULL
MAP_READ_MODE = lib.WGPUMapMode_Read
MAP_SUCCESS = lib.WGPUMapAsyncStatus_Success
MAX_WORKGROUPS = 65535  # per dimension (WebGPU's maxComputeWorkgroupsPerDimension default)

# compute pass encoding (pass handle first)
set_pipeline = lib.wgpuComputePassEncoderSetPipeline
set_bind_group = lib.wgpuComputePassEncoderSetBindGroup
set_immediates = lib.wgpuComputePassEncoderSetImmediates
dispatch = lib.wgpuComputePassEncoderDispatchWorkgroups
copy_buffer = lib.wgpuCommandEncoderCopyBufferToBuffer   # (encoder, src, src_off, dst, dst_off, size), raw handles
clear_buffer = lib.wgpuCommandEncoderClearBuffer         # (encoder, buffer, offset, size), raw handles
from_buffer = ffi.from_buffer
_CData = ffi.CData


# The rest of gfxrt passes wgpu-py objects; only this module reads their raw handles
def handle(obj):
    """The wgpu-native handle of a wgpu-py object (pipeline, bind group, buffer, queue)."""
    return obj._internal


def dynamic_offset(offset: int):
    """A dynamic offset as set_bind_group takes it (a params slot)."""
    return ffi.new("uint32_t[1]", [offset])


def host_memory(nbytes: int):  # host staging: a pointer (`+ k` addresses byte k) memmove and queue_write take
    return ffi.new("uint8_t[]", nbytes)


memmove = ffi.memmove
host_pointer = ffi.from_buffer


def forget(obj) -> None:  # a forked child's inherited object: drop the handle unreleased (device.py)
    obj._internal = None


def queue_write(queue, buffer, offset: int, data, nbytes: int) -> None:
    """Write `nbytes` of `data` (a buffer-protocol object or a cffi pointer) into `buffer`,
    before the next submitted command buffer."""
    lib.wgpuQueueWriteBuffer(queue._internal, buffer._internal, offset,
                             data if isinstance(data, _CData) else from_buffer(data), nbytes)


def copy(encoder, src, src_offset: int, dst, dst_offset: int, nbytes: int) -> None:
    copy_buffer(encoder, src._internal, src_offset, dst._internal, dst_offset, nbytes)


def clear(encoder, buffer, offset: int, nbytes: int) -> None:
    clear_buffer(encoder, buffer._internal, offset, nbytes)


def write_timestamp(pass_, query_set, index: int) -> None:  # timestamp-query-inside-passes
    lib.wgpuComputePassEncoderWriteTimestamp(pass_, query_set._internal, index)


def encoder_timestamp(encoder, query_set, index: int) -> None:  # timestamp-query-inside-encoders
    lib.wgpuCommandEncoderWriteTimestamp(encoder, query_set._internal, index)


def resolve_queries(encoder, query_set, first: int, count: int, dst, dst_offset: int) -> None:
    lib.wgpuCommandEncoderResolveQuerySet(encoder, query_set._internal, first, count, dst._internal, dst_offset)


_ENCODER_DESC = ffi.new("WGPUCommandEncoderDescriptor*")
_PASS_DESC = ffi.new("WGPUComputePassDescriptor*")
_FINISH_DESC = ffi.new("WGPUCommandBufferDescriptor*")


def create_encoder(device) -> object:
    """A raw command encoder (release it with `finish` or `drop_encoder`)."""
    return lib.wgpuDeviceCreateCommandEncoder(device._internal, _ENCODER_DESC)


def begin_pass(encoder, query_set=None, begin_index: int = 0, end_index: int = 0):
    """A raw compute pass on a raw encoder, optionally with begin/end timestamp writes."""
    if query_set is None:
        return lib.wgpuCommandEncoderBeginComputePass(encoder, _PASS_DESC)
    ts = ffi.new("WGPUPassTimestampWrites*", {"querySet": query_set._internal,
                                              "beginningOfPassWriteIndex": begin_index,
                                              "endOfPassWriteIndex": end_index})
    desc = ffi.new("WGPUComputePassDescriptor*", {"timestampWrites": ts})
    return lib.wgpuCommandEncoderBeginComputePass(encoder, desc)


end_pass_raw = lib.wgpuComputePassEncoderEnd    # (the runtime calls these directly: no Python frame in
release_pass = lib.wgpuComputePassEncoderRelease  # between, so a KeyboardInterrupt cannot leave a pass open)


def finish(encoder):
    """Finish a raw encoder into a raw command buffer, with wgpu-py's error capture: an
    invalid recording raises a wgpu GPUError here and must not be submitted."""
    from wgpu.backends.wgpu_native._api import libf
    try:
        return libf.wgpuCommandEncoderFinish(encoder, _FINISH_DESC)
    finally:
        lib.wgpuCommandEncoderRelease(encoder)


def drop_encoder(encoder) -> None:
    lib.wgpuCommandEncoderRelease(encoder)


# the runtime's flush submits with these raw calls inline, so that no Python frame (whose entry
# checks for signals) comes between its finish and the submit: see GfxRuntime.flush
submit_one = lib.wgpuQueueSubmitForIndex           # (queue handle, 1, SUBMIT_SLOT) -> submission index
release_commands = lib.wgpuCommandBufferRelease
SUBMIT_SLOT = ffi.new("WGPUCommandBuffer[1]")


def wait(device, index: int | None = None) -> None:
    """Block until submission `index` (or all submitted work, for None) has finished.

    A wait for all work first polls without blocking for up to `device._gfxrt_spin_s` seconds
    (gfxrt/engine/device.py: GFXRT_SPIN_WAIT_US, 0 on CPU adapters), as CUDA's default sync does: a
    blocking wait on the H100's Vulkan driver wakes up late (bench/RESULTS.md, issue 13). A
    wait for one submission blocks at once (a non-blocking poll only tells whether all work
    has finished). A Ctrl-C during the wait raises KeyboardInterrupt once it returns."""
    if index is None:
        spin = getattr(device, "_gfxrt_spin_s", 0.0)
        if spin > 0.0 and spin_until(device, spin):
            return
        lib.wgpuDevicePoll(device._internal, True, NULL)
    else:
        lib.wgpuDevicePoll(device._internal, True, ffi.new("WGPUSubmissionIndex*", index))
    if _interrupted:
        raise_interrupted()


def spin_until(device, seconds: float, requests=()) -> bool:
    """Poll without blocking until every submission has finished, or, given MapRequests, until
    each has had its callback (which fires once the work that used its buffer has finished):
    True; False once `seconds` have passed."""
    clock = time.perf_counter
    end = clock() + seconds
    while True:
        empty = poll(device)  # (also fires the map callbacks)
        if all(r.status[0] for r in requests) if requests else empty:
            return True
        if clock() > end:
            return False


def poll(device) -> bool:
    """Process finished work without blocking; True when every submission has finished.

    wgpu-native's wgpuDevicePoll is a Rust `bool` function declared as returning a 32-bit
    WGPUBool: only the low byte is the answer, the rest is whatever the register held
    (0xe43c5800 was seen while work ran, which `bool()` took for "idle")."""
    done = bool(lib.wgpuDevicePoll(device._internal, False, NULL) & 0xFF)
    if _interrupted:
        raise_interrupted()
    return done


def timestamp_period(queue) -> float:
    """Nanoseconds per timestamp-query tick."""
    return float(lib.wgpuQueueGetTimestampPeriod(queue._internal))


class MapRequest:
    """A reusable raw `wgpuBufferMapAsync(READ)` for one staging buffer. The status lands in
    a C int the callback writes, so no Python object is looked up per map. `active` is True
    from `start` until the buffer is unmapped again (`read_into` or `cancel`)."""

    _callback = None  # one ffi callback for every request (kept alive by the class)

    def __init__(self, buffer):
        if MapRequest._callback is None:
            MapRequest._callback = ffi.callback("void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)",
                                                _on_mapped, onerror=_on_mapped_error)
        self.buffer = buffer
        self.active = False
        self.status = ffi.new("int*", 0)
        self.info = ffi.new("WGPUBufferMapCallbackInfo*", {
            "mode": lib.WGPUCallbackMode_AllowProcessEvents, "callback": MapRequest._callback,
            "userdata1": self.status})

    def start(self, nbytes: int) -> None:
        """Ask for a read mapping of the first `nbytes` (a multiple of 4)."""
        self.status[0] = 0
        self.active = True  # (set before the call: an interrupt cannot come between the call and this)
        lib.wgpuBufferMapAsync(self.buffer._internal, MAP_READ_MODE, 0, nbytes, self.info[0])

    def read_into(self, dest, nbytes: int) -> None:
        """After a wait that covers the copy into the buffer: copy `nbytes` into the writable
        buffer-protocol object `dest`, then unmap."""
        if self.status[0] != MAP_SUCCESS:
            # the callback fires inside wgpuDevicePoll; poll once more in case it is late
            lib.wgpuDevicePoll(self.buffer._device._internal, True, NULL)
            if _interrupted:
                raise_interrupted()
            if self.status[0] != MAP_SUCCESS:
                raise DeviceError(f"mapping a staging buffer for readback failed (status {self.status[0]})")
        ptr = lib.wgpuBufferGetMappedRange(self.buffer._internal, 0, (nbytes + 3) // 4 * 4)
        try:
            if nbytes:
                ffi.memmove(dest, ptr, nbytes)
        finally:
            self.active = False
            lib.wgpuBufferUnmap(self.buffer._internal)

    def cancel(self) -> None:
        """Leave the buffer unmapped whatever happened since `start` (a readback was
        interrupted): a pending map is aborted (its callback fires now), a done one unmapped."""
        if self.active:
            self.active = False
            lib.wgpuBufferUnmap(self.buffer._internal)


def _on_mapped(status, message, userdata1, userdata2):
    ffi.cast("int*", userdata1)[0] = status


# Signals: CPython runs a signal's Python handler (SIGINT: raise KeyboardInterrupt) at the
# next bytecode, which during a wait is often inside the map callback above, even before its
# first line. cffi would print "Exception ignored from cffi callback" and drop the exception,
# leaving the status unwritten (the readback then failed as a DeviceError). Instead the
# status is written from the callback's arguments and the exception is raised by the wait
# once wgpuDevicePoll returns (`raise_interrupted`).
_interrupted: list = []


def _on_mapped_error(exc_type, exc, tb):
    frame = tb.tb_frame if tb is not None else None
    if frame is not None and frame.f_code is _on_mapped.__code__:
        args = frame.f_locals
        ffi.cast("int*", args["userdata1"])[0] = args["status"]
    _interrupted.append(exc if exc is not None else exc_type())


def raise_interrupted() -> None:
    """Raise the exception a signal handler raised inside a callback during the last poll, if any."""
    if not _interrupted:
        return
    exc = _interrupted[0]
    _interrupted.clear()
    raise exc.with_traceback(None)


# -- shader modules with chosen runtime checks ------------------------------------------------
SHADER_CHECKS = {"full": None,  # wgpu's default: bounds checks and forced loop bounding
                 "bounds": int(lib.WGPUShaderRuntimeChecks_BoundsChecks),
                 "none": int(lib.WGPUShaderRuntimeChecks_None)}


def create_shader_module(device, code: str, label: str, checks: str = "full"):
    """A WGSL shader module; `checks` other than "full" drops naga's injected checks through
    wgpuDeviceCreateShaderModuleTrusted ("bounds": keep bounds checks, drop the loop
    bounding that guards against infinite loops; "none": drop both)."""
    flags = SHADER_CHECKS[checks]
    if flags is None:
        return device.create_shader_module(code=code, label=label)
    from wgpu.backends.wgpu_native._api import GPUShaderModule, libf, new_struct_p, to_c_string_view
    source = new_struct_p("WGPUShaderSourceWGSL *", code=to_c_string_view(code))
    source[0].chain.next = NULL
    source[0].chain.sType = lib.WGPUSType_ShaderSourceWGSL
    desc = new_struct_p("WGPUShaderModuleDescriptor *", nextInChain=ffi.cast("WGPUChainedStruct *", source),
                        label=to_c_string_view(label))
    handle = libf.wgpuDeviceCreateShaderModuleTrusted(device._internal, desc, flags)
    if handle == NULL:
        raise RuntimeError("shader module creation failed")
    return GPUShaderModule(label, handle, device)
