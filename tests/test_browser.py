"""The browser tier: gfxrt's WebGPU backend (gfxrt/engine/webgpu.py) in headless Chromium under
Pyodide (tools/browser/session.py), against the desktop result. One Pyodide for the whole session.

Skipped, with the reason, where chromium or Pyodide is absent (`bash dev.sh test` installs both).
Most tests compile on the host and run the WGSL in the browser through the backend's device calls
alone; test_real_runtime_in_the_tab_matches_desktop runs gfxrt's own runtime there (no numpy)."""
from __future__ import annotations

import json

import numpy as np
import pytest

import gfxrt as gr
from tools.browser import session as browser

pytestmark = pytest.mark.skipif(browser.missing() is not None, reason=str(browser.missing()))

PRELUDE = browser.SPECLAUNCH + """
mod = speclaunch
result = {"backend": mod.backend.calls.__name__, "in_browser": mod.backend.IN_BROWSER,
          "info": mod.DEVICE.adapter.info, "summary": mod.DEVICE.adapter.summary,
          "features": sorted(mod.DEVICE.features), "limits": mod.DEVICE.limits}
"""


@pytest.fixture(scope="session")
def tab():
    with browser.BrowserSession() as t:
        t.adapter = t.run(PRELUDE)
        yield t


def run_in_browser(tab, compiled, arrays: dict, values: dict) -> dict:
    """Launch a host-compiled specialization in the browser on float32 `arrays` (binding name ->
    numpy array: 'x', 'x.grad'); `values`: the scalar arguments by index, shapes come from `arrays`.
    Returns every bound buffer after the launch (internal ones as float32 bits)."""
    spec = compiled.spec
    names = {b.binding: b.name for b in spec.bindings}
    params = []
    for p in spec.params:
        if p.source[0] == "arg":
            v = values[p.source[1]]
        else:  # ('shape', i, d): the extent of the array bound for argument i
            b = next(b for b in spec.bindings if b.kind == "arg" and b.source == p.source[1])
            v = arrays[b.name].shape[p.source[2]]
        params.append((p.dtype.wgsl, p.offset, v))
    tasks = []
    for t in spec.tasks:
        n = t.extent_fn([v for _, _, v in params]) if t.extent_fn else 1
        tasks.append((t.entry, max(1, min(-(-n // t.workgroup_size), t.max_groups))))
    kernel = {"wgsl": spec.wgsl, "params_size": spec.params_size, "params": params, "tasks": tasks,
              "bindings": [(b.binding, b.name, b.read_only) for b in spec.bindings]}
    arrays = dict(arrays)
    for b in spec.bindings:  # internal buffers (status, temps): zeroed, as the runtime hands them out
        if b.kind in spec.internal:
            arrays[b.name] = np.zeros(spec.internal[b.kind] // 4, np.float32)
    used = {names[k]: arrays[names[k]].tolist() for k in names}
    out = tab.run(f"import speclaunch, json\nresult = speclaunch.launch(json.loads({json.dumps(kernel)!r}), "
                  f"json.loads({json.dumps(used)!r}))")
    return {k: np.array(v, np.float32) for k, v in out.items()}


def test_adapter_is_webgpu(tab):
    assert tab.info["webgpu"] is True
    a = tab.adapter
    assert a["in_browser"] is True and a["backend"] == "gfxrt.engine.webgpu"  # backend.py's choice there
    # webgpu.Adapter: wgpu-py's names, which gfxrt/engine/device.py reads
    assert a["info"]["backend_type"] == "WebGPU" and a["info"]["adapter_type"] in ("cpu", "gpu")
    assert "via the browser's WebGPU" in a["summary"]
    assert a["limits"]["max-storage-buffer-binding-size"] >= 1 << 27  # WebGPU's default at least
    assert "immediates" in a["features"]  # Chrome 156: var<immediate> (the kernels below use it)


@gr.kernel
def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


def test_quickstart_saxpy_matches_desktop(tab):
    n = 1000
    xs = np.random.default_rng(1).random(n, dtype=np.float32)
    x, y = gr.ndarray(gr.f32, shape=(n,)), gr.ndarray(gr.f32, shape=(n,))
    x.from_numpy(xs)
    y.fill(1.0)
    saxpy(2.0, x, y)
    desktop = y.to_numpy()
    compiled = saxpy.specialize((2.0, x, y))
    out = run_in_browser(tab, compiled, {"x": xs, "y": np.ones(n, np.float32)}, {0: 2.0})
    np.testing.assert_allclose(out["y"], desktop, rtol=1e-6)
    np.testing.assert_array_equal(out["x"], xs)  # read-only binding untouched


@gr.kernel
def nonfinite_math(x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1),
                   o: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    n = x.shape[0]
    for i in range(n):
        a, b = x[i], y[i]
        o[0 * n + i] = gr.sin(a)
        o[1 * n + i] = gr.cos(a)
        o[2 * n + i] = gr.tan(a)
        o[3 * n + i] = gr.log(a)
        o[4 * n + i] = gr.atan2(a, b)
        o[5 * n + i] = gr.asin(a)
        o[6 * n + i] = gr.acos(a)
        o[7 * n + i] = a // b
        o[8 * n + i] = a % b


def test_math_with_nan_and_inf_results_matches_desktop(tab):
    """Helpers that return NaN / inf (codegen/wgsl_nonfinite.py) build under Tint, which rejects a
    NaN / inf constant expression, and give the desktop's values: NaN where it has NaN, -inf from log(0)."""
    xs = np.array([0.5, -0.25, 2.0, 0.0, -1.0, 3.5, 1e30, -7.0], np.float32)
    ys = np.array([1.5, 0.0, -2.0, 0.0, 3.0, -0.5, 2.0, 2.5], np.float32)
    x, y = gr.ndarray(gr.f32, shape=(8,)), gr.ndarray(gr.f32, shape=(8,))
    o = gr.ndarray(gr.f32, shape=(72,))
    x.from_numpy(xs)
    y.from_numpy(ys)
    nonfinite_math(x, y, o)
    desktop = o.to_numpy().reshape(9, 8)
    compiled = nonfinite_math.specialize((x, y, o))
    assert "bitcast<f32>(0x7f" not in compiled.spec.wgsl and "gr_f32_bits(" in compiled.spec.wgsl
    out = run_in_browser(tab, compiled, {"x": xs, "y": ys, "o": np.zeros(72, np.float32)}, {})
    got = out["o"].reshape(9, 8)
    special = ~np.isfinite(desktop)
    assert np.isnan(desktop).any() and np.isinf(desktop).any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(desktop))  # a NaN's sign is the hardware's (0 / 0)
    np.testing.assert_array_equal(got[np.isinf(desktop)], desktop[np.isinf(desktop)])
    finite = ~special & (np.abs(xs) < 1e6)  # sin / cos / tan of 1e30: range reduction differs by driver
    np.testing.assert_allclose(got[finite], desktop[finite], rtol=1e-5, atol=1e-6)


@gr.kernel
def accumulate(m: gr.i32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        v = x[i]
        for k in range(m):  # a run-time trip count
            y[i] += v * k


def test_gradient_through_runtime_loop_matches_desktop(tab):
    n, m = 300, 7
    rng = np.random.default_rng(2)
    xs, gys = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    x = gr.ndarray(gr.f32, shape=(n,), needs_grad=True)
    y = gr.ndarray(gr.f32, shape=(n,), needs_grad=True)
    x.from_numpy(xs)
    y.grad.from_numpy(gys)
    accumulate.grad(m, x, y)
    desktop = x.grad.to_numpy()
    np.testing.assert_allclose(desktop, gys * (m * (m - 1) / 2), rtol=1e-5)
    compiled = accumulate.specialize((m, x, y), mode="grad")
    out = run_in_browser(tab, compiled, {"x": xs, "y": np.zeros(n, np.float32), "x.grad": np.zeros(n, np.float32),
                                         "y.grad": gys}, {0: m})
    np.testing.assert_allclose(out["x.grad"], desktop, rtol=1e-6)
    if "gr.status" in out:  # no device-side error raised
        assert not out["gr.status"].view(np.uint32).any()


ERRORS = """
import speclaunch
W, d = speclaunch.W, speclaunch.DEVICE
out = {}
try:
    W.create_shader_module(d, "@compute @workgroup_size(1) fn main() {\\n  let x: f32 = undefined_name;\\n}", "bad")
except W.GPUValidationError as e:
    out["wgsl"] = str(e)
a = d.create_buffer(size=16, usage=W.BufferUsage.STORAGE | W.BufferUsage.COPY_SRC | W.BufferUsage.COPY_DST)
enc = W.create_encoder(d)
W.copy(enc, a, 0, a, 8, 64)  # past the end, and overlapping: invalid
try:
    W.finish(enc)
except W.GPUError as e:
    out["finish"] = [type(e).__name__, type(W.translate(e, "recording commands")).__name__]
enc = W.create_encoder(d)  # the device still works after both
W.clear(enc, a, 0, 16)
W.SUBMIT_SLOT[0] = W.finish(enc)
W.submit_one(W.handle(d.queue), 1, W.SUBMIT_SLOT)
W.wait(d)
out["after"] = list(d.queue.read_buffer(a))
result = out
"""


def test_errors_raise_at_the_call(tab):
    """WGSL errors raise at create_shader_module with the line; an invalid recording raises at finish
    (WebGPU error scopes), as a DeviceError once translated; the device stays usable."""
    out = tab.run(ERRORS)
    assert ":2:" in out["wgsl"] and "undefined_name" in out["wgsl"]  # the line of the error
    assert out["finish"] == ["GPUValidationError", "DeviceError"]
    assert out["after"] == [0] * 16


COMPILE = '''
import sys, time
sys.path.insert(0, "/home/pyodide")
open("/home/pyodide/browser_kernels.py", "w").write(SOURCE)
try:
    import gfxrt.compiler  # (gfxrt/__init__ is not run: its API needs numpy, speclaunch.py's bare package)
except ModuleNotFoundError as e:
    result = {"missing": e.name}
else:
    from gfxrt.compiler import types as T
    from gfxrt.compiler.pipeline import compile_kernel
    from gfxrt.compiler.spec import ArgSpec
    from gfxrt.compiler.target import Target
    import browser_kernels
    args = [ArgSpec("a", "scalar", dtype=T.f32), ArgSpec("x", "ndarray", elem=T.f32, ndim=1),
            ArgSpec("y", "ndarray", elem=T.f32, ndim=1)]
    target = Target(frozenset({"immediates"}), 64)
    t0 = time.perf_counter()
    spec = compile_kernel(browser_kernels.saxpy, args, target)
    seconds = time.perf_counter() - t0
    result = {"wgsl": spec.wgsl, "seconds": seconds}
'''

SOURCE = '''
def saxpy(a, x, y):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]
'''


def test_compile_in_browser_matches_host(tab, tmp_path, monkeypatch):
    """gfxrt.compiler runs in the tab (no numpy there) and emits the host's WGSL byte for byte."""
    out = tab.run(f"SOURCE = {SOURCE!r}\n" + COMPILE)
    if "missing" in out:
        pytest.skip(f"gfxrt.compiler does not import in Pyodide: it needs {out['missing']} "
                    "(branch i26-nonumpy removes numpy from the compiler)")
    import importlib.util

    from gfxrt.compiler import types as T
    from gfxrt.compiler.pipeline import compile_kernel
    from gfxrt.compiler.spec import ArgSpec
    from gfxrt.compiler.target import Target
    path = tmp_path / "browser_kernels.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location("browser_kernels", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    args = [ArgSpec("a", "scalar", dtype=T.f32), ArgSpec("x", "ndarray", elem=T.f32, ndim=1),
            ArgSpec("y", "ndarray", elem=T.f32, ndim=1)]
    host = compile_kernel(mod.saxpy, args, Target(frozenset({"immediates"}), 64), directory=None)
    assert out["wgsl"] == host.wgsl
    print(f"saxpy compiled in the browser in {out['seconds'] * 1e3:.0f} ms")


OPEN_DEVICE = '''
try:
    from gfxrt.engine import device as D
except ModuleNotFoundError as e:
    result = {"missing": e.name}
else:
    from gfxrt.engine.init_options import read_env
    dev = D.open_device(D.Options(), read_env())
    result = {"name": dev.name, "features": sorted(dev.features), "immediates": dev.target.max_immediate_size,
              "max_binding": dev.target.max_binding, "limits": dev.limits}
'''


def test_engine_opens_the_browser_adapter(tab):
    """gfxrt/engine/device.py opens the browser's adapter through backend.py as any adapter, and derives
    the compiler's target from its features and limits."""
    out = tab.run(OPEN_DEVICE)
    if "missing" in out:
        pytest.skip(f"gfxrt.engine.device does not import in Pyodide: gfxrt.compiler needs {out['missing']} "
                    "(branch i26-nonumpy removes numpy from the compiler)")
    assert out["name"].endswith("via the browser's WebGPU")
    assert "immediates" in out["features"] and out["immediates"] == out["limits"]["max-immediate-size"] > 0
    assert out["max_binding"] == min(out["limits"]["max-storage-buffer-binding-size"], out["limits"]["max-buffer-size"])


def test_a_browser_that_exits_raises_at_once(monkeypatch):
    """A Chromium that dies at start is reported with its status, not waited for until the timeout."""
    monkeypatch.setenv("GFXRT_CHROMIUM", "false")
    with pytest.raises(browser.BrowserError, match="Chromium exited with status 1"):
        with browser.BrowserSession(start_timeout=60):
            pass


LOSS = '''
import logging, speclaunch
from gfxrt.engine.device_errors import LostWatcher
W = speclaunch.W
seen = []
watcher = LostWatcher(seen.append)
logging.getLogger("wgpu").addHandler(watcher)
d = W.request_device()  # a second device, lost on purpose
d._on_lost(type("Info", (), {"reason": "unknown", "message": "test"})())
logging.getLogger("wgpu").removeHandler(watcher)
try:
    W.wait(d)
    raised = None
except W.GPUError as e:
    raised = [W.is_device_lost(e), type(W.translate(e, "waiting")).__name__]
d.destroy()
result = {"seen": seen, "raised": raised}
'''


def test_device_loss_reaches_the_runtimes_watcher(tab):
    """The browser reports a loss through a promise; webgpu.py logs it as wgpu-py does, so the runtime's
    LostWatcher flags it, and the next wait raises DeviceLostError once translated."""
    out = tab.run(LOSS)
    assert len(out["seen"]) == 1 and "device was lost" in out["seen"][0]
    assert out["raised"] == [True, "DeviceLostError"]


HOST_MEMORY = '''
import speclaunch, struct
W, d = speclaunch.W, speclaunch.DEVICE
host = W.host_memory(32)                       # staging as the runtime uses it: pointer + k is byte k
W.memmove(host + 8, struct.pack("<4f", 1, 2, 3, 4), 16)
buf = speclaunch.POOL.alloc(32)
W.queue_write(d.queue, buf, 0, host + 8, 16)   # writes bytes 8..23 of the staging
W.queue_write(d.queue, buf, 16, bytearray(struct.pack("<2f", 5, 6)), 8)
back = W.host_memory(24)
req = W.MapRequest(staging := speclaunch.POOL.alloc(32, speclaunch.memory.READBACK))
enc = W.create_encoder(d)
W.copy(enc, buf, 0, staging, 0, 32)
W.SUBMIT_SLOT[0] = W.finish(enc)
W.submit_one(W.handle(d.queue), 1, W.SUBMIT_SLOT)
req.start(32)
W.wait(d)
req.read_into(W.host_pointer(memoryview(back.view)[0:]), 24)
result = {"floats": list(struct.unpack("<6f", bytes(memoryview(back)))), "active": req.active}
speclaunch.POOL.release(buf)
speclaunch.POOL.release(staging)
'''


def test_host_memory_acts_as_a_pointer(tab):
    """webgpu.host_memory(n) + k addresses byte k, as the cffi pointer ffi.py hands the runtime does;
    writes from it and readback into it round-trip through the device."""
    out = tab.run(HOST_MEMORY)
    assert out == {"floats": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "active": False}


def test_closing_ends_every_browser_process(tmp_path, monkeypatch):
    """Closing a session ends the browser and all its children. Debian's chromium-headless-shell is a
    shell script whose child is the browser: ending the script alone left browsers running. Here a
    launcher script of that shape, which never serves the page, stands in for it."""
    import os
    launcher = tmp_path / "fake-chromium"
    launcher.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {tmp_path}/child\nwait\n")
    launcher.chmod(0o755)
    monkeypatch.setenv("GFXRT_CHROMIUM", str(launcher))
    session = browser.BrowserSession(start_timeout=1)
    with pytest.raises(browser.BrowserError, match="did not start"):
        session.__enter__()
    child = int((tmp_path / "child").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)  # the launcher's child (the browser, here a sleep): gone
    assert not os.path.exists(session.profile)


PROGRAM = '''
if "missing" not in result:
    import speclaunch
    from gfxrt.engine.program import Program
    program = Program(speclaunch.DEVICE, spec, "bounds", 1)
    result = {"pipelines": len(program.pipelines), "tasks": len(spec.tasks)}
'''


def test_engine_program_builds_in_browser(tab):
    """gfxrt/engine/program.py (the runtime's pipelines and layouts of a KernelSpec) runs on the browser
    backend, for a kernel compiled in the tab."""
    out = tab.run(f"SOURCE = {SOURCE!r}\n" + COMPILE + PROGRAM)
    if "missing" in out:
        pytest.skip(f"gfxrt.compiler does not import in Pyodide: it needs {out['missing']} "
                    "(branch i26-nonumpy removes numpy from the compiler)")
    assert out["pipelines"] == out["tasks"] == 1


# -- gfxrt's own runtime in the tab (no numpy there): tests/nonumpy_program.py ------------------------
REAL_RUNTIME = '''
import contextlib, io, json, runpy, sys, time
saved = {k: v for k, v in sys.modules.items() if k == "gfxrt" or k.startswith("gfxrt.")}
for k in saved:  # the page's bare package (speclaunch.py) steps aside for gfxrt's own __init__
    del sys.modules[k]
open("/home/pyodide/nonumpy_program.py", "w").write(PROGRAM)
out, err = io.StringIO(), io.StringIO()
sys.argv = ["nonumpy_program.py", "--block-numpy"]
t0 = time.perf_counter()
try:
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        runpy.run_path("/home/pyodide/nonumpy_program.py", run_name="nonumpy_program")
    result = {"out": json.loads(out.getvalue().strip().splitlines()[-1]), "stderr": err.getvalue(),
              "seconds": time.perf_counter() - t0}
finally:
    import gfxrt
    gfxrt.reset() if "__all__" in vars(gfxrt) else None
    for k in [k for k in sys.modules if k == "gfxrt" or k.startswith("gfxrt.")]:
        del sys.modules[k]
    sys.modules.update(saved)
    if sys.modules.get("numpy", 0) is None:
        del sys.modules["numpy"]
'''


def test_real_runtime_in_the_tab_matches_desktop(tab):
    """`import gfxrt as gr; gr.init()`, @gr.kernel, gr.ndarray from lists, `.grad` through a run-time
    loop, gr.Tape, gr.graph replay and a return value run in the tab through gfxrt's own runtime (no
    numpy in Pyodide), equal to the desktop run of the same program with numpy (lavapipe here)."""
    import math
    import pathlib

    from test_runtime_nonumpy import _run
    program = (pathlib.Path(__file__).parent / "nonumpy_program.py").read_text()
    got = tab.run(f"PROGRAM = {program!r}\n" + REAL_RUNTIME, timeout=300)
    tabout, desktop = got["out"], _run()
    assert "via the browser's WebGPU" in got["stderr"]  # gr.init opened the tab's adapter
    assert tabout.pop("numpy") is False and desktop.pop("numpy") is True
    assert set(tabout) == set(desktop)
    flat = {k: np.ravel(np.array(v, np.float64)) for k, v in desktop.items()}
    for k, v in tabout.items():  # SwiftShader's sin / fma may differ from lavapipe's in the last bits
        np.testing.assert_allclose(np.ravel(np.array(v, np.float64)), flat[k], rtol=1e-4, err_msg=k)
    assert tabout["saxpy"] == desktop["saxpy"] and tabout["m"] == desktop["m"] and tabout["to_numpy_error"]
    assert not math.isnan(tabout["ret"])
    print(f"the program ran in the tab in {got['seconds']:.2f} s (its compiles included)")
