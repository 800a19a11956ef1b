# Runs inside Pyodide (the browser test tier sends it as the session's first job): the device calls of
# gfxrt/engine/webgpu.py driven as gfxrt's recorder drives them, for a kernel the host compiled
# (its WGSL and binding table as JSON). It stands in for gfxrt's launcher until gfxrt's runtime
# imports under Pyodide (it needs numpy and wgpu-py's module today: docs/browser.md).
import importlib.util
import struct
import sys
import types


def _bare_package(name, path):
    """Register package `name` without running its __init__ (gfxrt's imports wgpu-py and numpy)."""
    if name not in sys.modules:
        mod = types.ModuleType(name)
        mod.__path__ = [path]
        sys.modules[name] = mod


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


SRC = "/home/pyodide/src/gfxrt"
_bare_package("gfxrt", SRC)
_bare_package("gfxrt.engine", SRC + "/engine")
try:
    _load("gfxrt.errors", SRC + "/errors.py")
except ModuleNotFoundError as e:  # gfxrt.compiler imports numpy until branch i26-nonumpy lands: the two
    if e.name != "numpy":         # exceptions webgpu.py raises, by their names, meanwhile
        raise
    sys.modules.pop("gfxrt.errors", None)
    errors = sys.modules["gfxrt.errors"] = types.ModuleType("gfxrt.errors")
    errors.DeviceError = type("DeviceError", (RuntimeError,), {})
    errors.DeviceLostError = type("DeviceLostError", (errors.DeviceError,), {})
_load("gfxrt.engine.device_errors", SRC + "/engine/device_errors.py")
backend = _load("gfxrt.engine.backend", SRC + "/engine/backend.py")  # chooses webgpu.py here
memory = _load("gfxrt.engine.memory", SRC + "/engine/memory.py")     # the runtime's buffer pool
W = backend.calls
DEVICE = W.request_device()
POOL = memory.MemoryPool(DEVICE, DEVICE.limits)
_PACK = {"f32": "f", "i32": "i", "u32": "I"}


def launch(kernel: dict, arrays: dict) -> dict:
    """Run `kernel` ({wgsl, bindings: [(binding, name, read_only)], params: [(dtype, offset, value)],
    params_size, tasks: [(entry, groups)]}) on float32 `arrays` (name -> list); return the arrays after."""
    d = DEVICE
    bufs = {}
    for name, values in arrays.items():
        data = struct.pack(f"<{len(values)}f", *values)
        bufs[name] = POOL.alloc(max(4, len(data)))  # (a bucket: possibly larger than the data)
        W.queue_write(d.queue, bufs[name], 0, data, len(data))
    module = W.create_shader_module(d, kernel["wgsl"], "kernel")
    bgl = d.create_bind_group_layout(entries=[
        {"binding": b, "visibility": W.ShaderStage.COMPUTE,
         "buffer": {"type": "read-only-storage" if ro else "storage"}} for b, _, ro in kernel["bindings"]])
    layout = d.create_pipeline_layout(bind_group_layouts=[bgl], immediate_size=kernel["params_size"])
    group = d.create_bind_group(layout=bgl, entries=[
        {"binding": b, "resource": {"buffer": bufs[name], "offset": 0, "size": max(4, 4 * len(arrays[name]))}}
        for b, name, _ in kernel["bindings"]])
    imm = bytearray(kernel["params_size"])
    for dtype, offset, value in kernel["params"]:
        struct.pack_into("<" + _PACK[dtype], imm, offset, value)
    enc = W.create_encoder(d)
    pass_ = W.begin_pass(enc)
    for entry, groups in kernel["tasks"]:
        pipeline = d.create_compute_pipeline(layout=layout, compute={"module": module, "entry_point": entry})
        W.set_pipeline(pass_, W.handle(pipeline))
        W.set_bind_group(pass_, 0, W.handle(group), 0, W.NULL)
        if imm:
            W.set_immediates(pass_, 0, bytes(imm), len(imm))
        W.dispatch(pass_, groups, 1, 1)
    W.end_pass_raw(pass_)
    W.release_pass(pass_)
    staging = {n: POOL.alloc(b.size, memory.READBACK, "readback") for n, b in bufs.items()}
    for n, b in bufs.items():
        W.copy(enc, b, 0, staging[n], 0, b.size)
    W.SUBMIT_SLOT[0] = W.finish(enc)
    W.submit_one(W.handle(d.queue), 1, W.SUBMIT_SLOT)
    out = {}
    requests = {n: W.MapRequest(s) for n, s in staging.items()}
    for n, r in requests.items():
        r.start(staging[n].size)
    W.wait(d)
    for n, r in requests.items():
        host = W.host_memory(staging[n].size)
        r.read_into(host, staging[n].size)
        out[n] = list(struct.unpack(f"<{len(arrays[n])}f", bytes(memoryview(host)[:4 * len(arrays[n])])))
    for b in (*bufs.values(), *staging.values()):
        POOL.release(b)
    return out


def dispatch_seconds(kernel: dict, n: int, launches: int) -> dict:
    """Seconds per launch of `kernel` on float32 arrays of `n` elements, through the device calls as the
    recorder makes them (set pipeline, bind group, immediates, dispatch) in one pass, then a submit and
    a wait: {"record": recording only, "total": with the submit and the wait}."""
    import time
    d = DEVICE
    bufs = {name: POOL.alloc(4 * n) for _, name, _ in kernel["bindings"]}
    module = W.create_shader_module(d, kernel["wgsl"], "kernel")
    bgl = d.create_bind_group_layout(entries=[
        {"binding": b, "visibility": W.ShaderStage.COMPUTE,
         "buffer": {"type": "read-only-storage" if ro else "storage"}} for b, _, ro in kernel["bindings"]])
    layout = d.create_pipeline_layout(bind_group_layouts=[bgl], immediate_size=kernel["params_size"])
    group = W.handle(d.create_bind_group(layout=bgl, entries=[
        {"binding": b, "resource": {"buffer": bufs[name], "offset": 0, "size": 4 * n}}
        for b, name, _ in kernel["bindings"]]))
    entry, groups = kernel["tasks"][0]
    pipeline = W.handle(d.create_compute_pipeline(layout=layout, compute={"module": module, "entry_point": entry}))
    imm = bytearray(kernel["params_size"])
    for dtype, offset, value in kernel["params"]:
        struct.pack_into("<" + _PACK[dtype], imm, offset, value)
    imm = bytes(imm)
    out = {}
    for _ in range(2):  # (the first round warms up)
        t0 = time.perf_counter()
        enc = W.create_encoder(d)
        pass_ = W.begin_pass(enc)
        for _ in range(launches):
            W.set_pipeline(pass_, pipeline)
            W.set_bind_group(pass_, 0, group, 0, W.NULL)
            W.set_immediates(pass_, 0, imm, len(imm))
            W.dispatch(pass_, groups, 1, 1)
        W.end_pass_raw(pass_)
        t1 = time.perf_counter()
        W.SUBMIT_SLOT[0] = W.finish(enc)
        W.submit_one(W.handle(d.queue), 1, W.SUBMIT_SLOT)
        W.wait(d)
        t2 = time.perf_counter()
        out = {"record": (t1 - t0) / launches, "total": (t2 - t0) / launches}
    for b in bufs.values():
        POOL.release(b)
    return out
