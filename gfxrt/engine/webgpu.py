"""The device calls (gfxrt/engine/device_api.py: DeviceCalls) on a browser's WebGPU, from Pyodide:
`navigator.gpu` through Pyodide's JavaScript bridge (pyodide.ffi). The second implementation beside
ffi.py (wgpu-native); it imports only under Pyodide (sys.platform == "emscripten").

Objects carry wgpu-py's snake_case names (`device.create_buffer(size=, usage=)`,
`create_bind_group_layout(entries=)`, ...; descriptors as wgpu-py takes them, turned into
WebGPU's camelCase objects here), and the calls are this module's functions, whose handles are the
JavaScript objects themselves. WebGPU is asynchronous in a browser: a wait, a mapping or an error
scope is a promise, awaited with `pyodide.ffi.run_sync` (JSPI), so gfxrt's synchronous API holds;
the code must run where Pyodide can suspend (`runPythonAsync`, or a handler Pyodide runs).

Errors: a WebGPU validation or out-of-memory error is reported asynchronously; the calls that
create something or finish a recording open an error scope around it and raise this module's
GPUValidationError / GPUOutOfMemoryError (wgpu-py's names) when it closes with an error.
What WebGPU in a browser lacks: timestamps inside a pass or an encoder (the profiler's per-kernel
timings), and runtime-check levels for shader modules (checks are always "full").
"""
from __future__ import annotations

import logging

import js
from pyodide.ffi import jsnull, run_sync, to_js

from ..errors import DeviceError
from .device_errors import LostWatcher, is_device_lost, translate  # noqa: F401 (DeviceCalls names)

NULL = None
MAX_WORKGROUPS = 65535
MAP_SUCCESS = 1
SUBMIT_SLOT: list = [None]
# GFXRT_SHADER_CHECKS's levels: accepted, but a browser always keeps its own checks (bounds, loop bounding)
SHADER_CHECKS = {"full": None, "bounds": None, "none": None}
MAP_READ = 1  # GPUMapMode.READ


class GPUError(Exception):
    """A WebGPU error the browser reported (wgpu-py's class names)."""


class GPUValidationError(GPUError):
    pass


class GPUOutOfMemoryError(GPUError, MemoryError):
    pass


class GPUInternalError(GPUError):
    pass


# flag values as WebGPU defines them (wgpu-py's BufferUsage / ShaderStage / MapMode have the same)
class BufferUsage:
    MAP_READ, MAP_WRITE, COPY_SRC, COPY_DST, INDEX = 1, 2, 4, 8, 16
    VERTEX, UNIFORM, STORAGE, INDIRECT, QUERY_RESOLVE = 32, 64, 128, 256, 512


class ShaderStage:
    VERTEX, FRAGMENT, COMPUTE = 1, 2, 4


# -- descriptors: wgpu-py's Python form -> WebGPU's JavaScript objects ---------------------------
def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def _plain(value):
    """wgpu-py's descriptor form (snake_case dicts, this module's objects) as plain Python data
    with WebGPU's keys and the JavaScript objects in place of the wrappers."""
    if isinstance(value, _Wrapper):
        return value._js
    if isinstance(value, dict):
        return {_camel(k): _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _present(value) -> bool:
    """Not JavaScript's null or undefined (Pyodide gives null as `jsnull`, undefined as None)."""
    return value is not None and value is not jsnull


def _js(value):
    return to_js(_plain(value), dict_converter=js.Object.fromEntries)


def _scoped(device, make):
    """make() inside validation and out-of-memory error scopes; raises what they caught."""
    d = device._js
    d.pushErrorScope("out-of-memory")
    d.pushErrorScope("validation")
    try:
        out = make()
    finally:
        invalid = run_sync(d.popErrorScope())
        oom = run_sync(d.popErrorScope())
    if _present(oom):
        raise GPUOutOfMemoryError(str(oom.message))
    if _present(invalid):
        raise GPUValidationError(str(invalid.message))
    return out


class _Wrapper:
    """A JavaScript WebGPU object (`_js`); like wgpu-py's objects it takes the attributes gfxrt
    keeps on them (a pooled buffer's key, a device's cached layouts)."""


class Buffer(_Wrapper):
    def __init__(self, device, obj, size, usage, label=""):
        self._js, self._device, self.size, self.usage, self.label = obj, device, size, usage, label

    def destroy(self) -> None:
        self._js.destroy()


class _Object(_Wrapper):
    def __init__(self, device, obj, label=""):
        self._js, self._device, self.label = obj, device, label


class Queue(_Wrapper):
    def __init__(self, device):
        self._device, self._js = device, device._js.queue

    def write_buffer(self, buffer, buffer_offset, data, data_offset=0, size=None) -> None:
        view = memoryview(data).cast("B")[data_offset:]
        queue_write(self, buffer, buffer_offset, view, len(view) if size is None else size)

    def read_buffer(self, buffer, buffer_offset=0, size=None) -> memoryview:
        n = buffer.size - buffer_offset if size is None else size
        staging = self._device.create_buffer(size=(n + 3) // 4 * 4, usage=BufferUsage.MAP_READ | BufferUsage.COPY_DST)
        enc = self._device._js.createCommandEncoder()
        enc.copyBufferToBuffer(buffer._js, buffer_offset, staging._js, 0, (n + 3) // 4 * 4)
        self._js.submit(to_js([enc.finish()]))
        out = bytearray(n)
        req = MapRequest(staging)
        req.start((n + 3) // 4 * 4)
        req.read_into(out, n)
        staging.destroy()
        return memoryview(out)


class Device(_Wrapper):
    """A browser GPUDevice under wgpu-py's names (what gfxrt's runtime creates objects with)."""

    def __init__(self, adapter, obj):
        self.adapter, self._js = adapter, obj
        # what the device enabled (under both names), and immediates (a limit, no feature)
        enabled = set(obj.features.values())
        enabled |= {_NATIVE_NAMES[f] for f in enabled if f in _NATIVE_NAMES}
        self.features = adapter.features & frozenset(enabled | {"immediates"})
        self.limits = _limits(obj.limits)
        self.queue = Queue(self)
        self.lost = None  # the loss message once the browser reports one
        self._submitted = 0
        obj.lost.then(self._on_lost)

    def _on_lost(self, info) -> None:
        """The browser's `device.lost` resolved: logged on "wgpu" as wgpu-py logs a loss, so the runtime's
        LostWatcher (device_errors.py) sees it the same way."""
        if str(getattr(info, "reason", "")) == "destroyed":  # (our own destroy(): no loss)
            return
        self.lost = f"the WebGPU device was lost: {info.message}"
        logging.getLogger("wgpu").error(self.lost)

    def create_buffer(self, *, size: int, usage: int, mapped_at_creation: bool = False, label: str = ""):
        return _scoped(self, lambda: Buffer(self, self._js.createBuffer(_js(
            {"size": size, "usage": int(usage), "mapped_at_creation": mapped_at_creation, "label": label})),
            size, int(usage), label))

    def create_bind_group_layout(self, *, entries, label: str = ""):
        return _Object(self, self._js.createBindGroupLayout(_js({"entries": entries, "label": label})), label)

    def create_pipeline_layout(self, *, bind_group_layouts, immediate_size: int = 0, label: str = ""):
        desc = {"bind_group_layouts": bind_group_layouts, "label": label}
        if immediate_size:
            desc["immediate_size"] = immediate_size
        return _Object(self, self._js.createPipelineLayout(_js(desc)), label)

    def create_shader_module(self, *, code: str, label: str = ""):
        return _scoped(self, lambda: _Object(self, self._js.createShaderModule(_js({"code": code, "label": label})),
                                             label))

    def create_compute_pipeline(self, *, layout, compute, label: str = ""):
        return _scoped(self, lambda: _Object(self, self._js.createComputePipeline(_js(
            {"layout": layout, "compute": compute, "label": label})), label))

    def create_bind_group(self, *, layout, entries, label: str = ""):
        return _Object(self, self._js.createBindGroup(_js({"layout": layout, "entries": entries, "label": label})),
                       label)

    def create_query_set(self, *, type: str, count: int, label: str = ""):  # noqa: A002 (wgpu-py's name)
        return _Object(self, self._js.createQuerySet(_js({"type": type, "count": count, "label": label})), label)

    def destroy(self) -> None:
        self._js.destroy()


_WEBGPU_NAMES = {"subgroup": "subgroups"}  # wgpu-native's feature names -> WebGPU's
_NATIVE_NAMES = {v: k for k, v in _WEBGPU_NAMES.items()}


class Adapter(_Wrapper):
    """The browser's GPUAdapter under wgpu-py's names: `info` (a dict), `summary`, `features`,
    `limits` (kebab-case names, as wgpu-py gives them) and `request_device_sync`."""

    def __init__(self, obj):
        self._js = obj
        i = obj.info
        self.info = {"vendor": str(i.vendor), "architecture": str(i.architecture), "device": str(i.device),
                     "description": str(i.description), "backend_type": "WebGPU",
                     "adapter_type": "cpu" if getattr(i, "isFallbackAdapter", False) else "gpu"}
        self.limits = _limits(obj.limits)
        feats = set(obj.features.values())
        if self.limits.get("max-immediate-size", 0):  # var<immediate> and setImmediates (Chrome 156+)
            feats.add("immediates")
        feats |= {_NATIVE_NAMES[f] for f in feats if f in _NATIVE_NAMES}  # (under both names)
        self.features = frozenset(feats)
        name = " ".join(v for v in (self.info["vendor"], self.info["architecture"], self.info["description"]) if v)
        self.summary = f"{name or 'WebGPU adapter'} ({self.info['adapter_type'].upper()}) via the browser's WebGPU"

    def request_device_sync(self, *, required_features=(), required_limits=None) -> Device:
        feats = {_WEBGPU_NAMES.get(f, f) for f in required_features}
        feats = [f for f in sorted(feats) if self._js.features.has(f)]
        limits = {_camel(k.replace("-", "_")): v for k, v in (required_limits or {}).items()
                  if getattr(self._js.limits, _camel(k.replace("-", "_")), None) is not None}
        obj = run_sync(self._js.requestDevice(to_js({"requiredFeatures": feats, "requiredLimits": limits},
                                                    dict_converter=js.Object.fromEntries)))
        return Device(self, obj)


def _limits(limits) -> dict:
    # GPUSupportedLimits' values are getters on its prototype: list the names there
    return {_kebab(k): getattr(limits, k) for k in js.Object.keys(js.Object.getPrototypeOf(limits))
            if isinstance(getattr(limits, k), (int, float))}


def _kebab(name: str) -> str:
    return "".join("-" + c.lower() if c.isupper() else c for c in name)


def request_adapter(power_preference: str = "high-performance") -> Adapter:
    """The browser's WebGPU adapter (DeviceError where the browser has none)."""
    gpu = getattr(js.navigator, "gpu", None)
    if gpu is None:
        raise DeviceError("this browser has no WebGPU (navigator.gpu is undefined); use a browser with WebGPU "
                          "(Chrome/Edge 113+, Safari 26, Firefox 141+)")
    adapter = run_sync(gpu.requestAdapter(_js({"power_preference": power_preference})))
    if not _present(adapter):
        raise DeviceError("the browser gave no WebGPU adapter (navigator.gpu.requestAdapter() returned null); "
                          "a CPU-only adapter is offered only with --enable-unsafe-webgpu")
    return Adapter(adapter)


def request_device(features=("shader-f16", "timestamp-query", "subgroups", "float32-filterable"),
                   limits=("max-storage-buffer-binding-size", "max-buffer-size", "max-immediate-size",
                           "max-storage-buffers-per-shader-stage", "max-compute-workgroup-storage-size")) -> Device:
    """A device on the browser's adapter with those of `features` it has and its largest `limits`."""
    adapter = request_adapter()
    return adapter.request_device_sync(required_features=features,
                                       required_limits={k: adapter.limits[k] for k in limits if k in adapter.limits})


# -- the calls -------------------------------------------------------------------------------------
def handle(obj):
    return obj._js


def forget(obj) -> None:  # (no fork in a browser)
    pass


class Encoder:
    """A command encoder and the device whose error scopes check its recording."""

    __slots__ = ("js", "device")

    def __init__(self, device):
        self.device, self.js = device, device._js.createCommandEncoder()


def create_encoder(device) -> Encoder:
    return Encoder(device)


def begin_pass(encoder, query_set=None, begin_index: int = 0, end_index: int = 0):
    if query_set is None:
        return encoder.js.beginComputePass()
    return encoder.js.beginComputePass(_js({"timestamp_writes": {
        "query_set": query_set, "beginning_of_pass_write_index": begin_index, "end_of_pass_write_index": end_index}}))


def end_pass_raw(pass_) -> None:
    pass_.end()


def release_pass(pass_) -> None:  # (JavaScript's garbage collector releases it)
    pass


def set_pipeline(pass_, pipeline) -> None:
    pass_.setPipeline(pipeline)


def set_bind_group(pass_, index: int, bind_group, n_offsets: int, offsets) -> None:
    if n_offsets:
        pass_.setBindGroup(index, bind_group, to_js(list(offsets[:n_offsets])))
    else:
        pass_.setBindGroup(index, bind_group)


def set_immediates(pass_, offset: int, data, nbytes: int) -> None:
    pass_.setImmediates(offset, to_js(memoryview(data).cast("B")[:nbytes]))


def dispatch(pass_, x: int, y: int, z: int) -> None:
    pass_.dispatchWorkgroups(x, y, z)


def dynamic_offset(offset: int) -> list:
    return [offset]


def copy(encoder, src, src_offset: int, dst, dst_offset: int, nbytes: int) -> None:
    encoder.js.copyBufferToBuffer(src._js, src_offset, dst._js, dst_offset, nbytes)


def clear(encoder, buffer, offset: int, nbytes: int) -> None:
    encoder.js.clearBuffer(buffer._js, offset, nbytes)


def copy_buffer(encoder, src, src_offset: int, dst, dst_offset: int, nbytes: int) -> None:
    encoder.js.copyBufferToBuffer(src, src_offset, dst, dst_offset, nbytes)


def clear_buffer(encoder, buffer, offset: int, nbytes: int) -> None:
    encoder.js.clearBuffer(buffer, offset, nbytes)


def _no_timestamps(*args) -> None:
    raise DeviceError("timestamps inside a pass or an encoder are not available in a browser's WebGPU "
                      "(the profiler's per-kernel timings need wgpu-native)")


write_timestamp = encoder_timestamp = _no_timestamps


def resolve_queries(encoder, query_set, first: int, count: int, dst, dst_offset: int) -> None:
    encoder.js.resolveQuerySet(query_set._js, first, count, dst._js, dst_offset)


def finish(encoder):
    """The command buffer of a recording; an invalid recording raises GPUValidationError here."""
    return _scoped(encoder.device, encoder.js.finish)


def drop_encoder(encoder) -> None:
    pass


def submit_one(queue_handle, count: int, slot) -> int:
    queue_handle.submit(to_js(slot[:count]))
    submit_one.index += 1
    return submit_one.index


submit_one.index = 0


def release_commands(commands) -> None:
    pass


def queue_write(queue, buffer, offset: int, data, nbytes: int) -> None:
    queue._js.writeBuffer(buffer._js, offset, to_js(memoryview(data).cast("B")[:nbytes]))


def wait(device, index: int | None = None) -> None:
    """Until all submitted work has finished (WebGPU finishes submissions in order)."""
    run_sync(device._js.queue.onSubmittedWorkDone())
    if device.lost:
        raise GPUError(device.lost)


def poll(device) -> bool:
    wait(device)
    return True


def spin_until(device, seconds: float, requests=()) -> bool:
    wait(device)
    for r in requests:
        r.settle()
    return True


def raise_interrupted() -> None:  # (no signals in a browser)
    pass


def timestamp_period(queue) -> float:
    return 1.0  # WebGPU's timestamps are nanoseconds


# -- host memory -------------------------------------------------------------------------------
class HostMemory:
    """Host staging bytes: a buffer (PEP 688) where `+ k` addresses byte k, as a cffi pointer does."""

    __slots__ = ("view",)

    def __init__(self, view: memoryview):
        self.view = view

    def __add__(self, k: int) -> HostMemory:
        return HostMemory(self.view[k:])

    def __buffer__(self, flags) -> memoryview:
        return self.view


def host_memory(nbytes: int) -> HostMemory:
    return HostMemory(memoryview(bytearray(nbytes)))


def host_pointer(obj) -> HostMemory:
    return obj if isinstance(obj, HostMemory) else HostMemory(memoryview(obj).cast("B"))


def memmove(dest, src, nbytes: int) -> None:
    memoryview(dest).cast("B")[:nbytes] = memoryview(src).cast("B")[:nbytes]


# -- readback ----------------------------------------------------------------------------------
class MapRequest:
    """A read mapping of one staging buffer (ffi.MapRequest's interface on GPUBuffer.mapAsync)."""

    def __init__(self, buffer):
        self.buffer = buffer
        self.active = False
        self.status = [0]
        self._promise = None

    def start(self, nbytes: int) -> None:
        self.status[0] = 0
        self.active = True
        self._nbytes = nbytes
        self._promise = self.buffer._js.mapAsync(MAP_READ, 0, nbytes)

    def settle(self) -> None:
        if self._promise is not None:
            promise, self._promise = self._promise, None
            try:
                run_sync(promise)
                self.status[0] = MAP_SUCCESS
            except Exception as e:  # noqa: BLE001 (the browser's rejection: the status says it failed)
                self.status[0] = -1
                self.error = e

    def read_into(self, dest, nbytes: int) -> None:
        self.settle()
        if self.status[0] != MAP_SUCCESS:
            self.cancel()
            raise DeviceError(f"mapping a staging buffer for readback failed ({getattr(self, 'error', '')})")
        try:
            if nbytes:
                data = js.Uint8Array.new(self.buffer._js.getMappedRange(0, (nbytes + 3) // 4 * 4), 0, nbytes)
                data.assign_to(memoryview(dest).cast("B")[:nbytes])
        finally:
            self.active = False
            self.buffer._js.unmap()

    def cancel(self) -> None:
        if self.active:
            self.active = False
            self._promise = None
            self.buffer._js.unmap()


def create_shader_module(device, code: str, label: str, checks: str = "full"):
    """A WGSL shader module; its compile errors raise GPUValidationError with the browser's messages.
    `checks` cannot drop the browser's runtime checks (WebGPU has no such option)."""
    module = device.create_shader_module(code=code, label=label)
    info = run_sync(module._js.getCompilationInfo())
    errors = [m for m in info.messages if m.type == "error"]
    if errors:
        raise GPUValidationError("\n".join(f"{label}:{m.lineNum}:{m.linePos}: {m.message}" for m in errors))
    return module

