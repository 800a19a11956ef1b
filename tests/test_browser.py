"""The browser tier: gfxrt's own runtime (`import gfxrt as gr`, the WebGPU backend
gfxrt/engine/webgpu.py) in headless Chromium under Pyodide (tools/browser/session.py), each program
against the desktop run of the same source on the same inputs. One Pyodide for the whole session.

Skipped, with the reason, where chromium or Pyodide is absent (`bash dev.sh test` installs both).
The programs take and give Python lists (Pyodide has no numpy), so one source runs on both sides
(`both`): written to a module file and imported there and here, its `main(*args)` returns JSON data.
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import pathlib

import numpy as np
import pytest

from tools.browser import session as browser

pytestmark = pytest.mark.skipif(browser.missing() is not None, reason=str(browser.missing()))

PRELUDE = """
import sys
sys.path.insert(0, "/home/pyodide")
import gfxrt as gr
gr.init()
from gfxrt.engine import backend, context
rt = context.runtime()
d = rt.device
result = {"backend": backend.calls.__name__, "in_browser": backend.IN_BROWSER, "name": rt.dev.name,
          "info": d.adapter.info, "summary": d.adapter.summary, "features": sorted(d.features), "limits": d.limits}
"""


@pytest.fixture(scope="session")
def tab():
    with browser.BrowserSession() as t:
        t.adapter = t.run(PRELUDE)
        yield t


RUN_PROGRAM = """
import importlib, sys
open(f"/home/pyodide/{NAME}.py", "w").write(SOURCE)
sys.modules.pop(NAME, None)
importlib.invalidate_caches()
result = importlib.import_module(NAME).main(*ARGS)
"""


def both(tab, tmp_path, name: str, source: str, *args) -> tuple[dict, dict]:
    """`main(*args)` of the module `source` run in the tab and here (the desktop: lavapipe), each
    result through JSON."""
    got = tab.run(f"NAME = {name!r}\nSOURCE = {source!r}\nARGS = {args!r}\n" + RUN_PROGRAM, timeout=300)
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return got, json.loads(json.dumps(mod.main(*args)))


def test_adapter_is_webgpu(tab):
    assert tab.info["webgpu"] is True
    a = tab.adapter
    assert a["in_browser"] is True and a["backend"] == "gfxrt.engine.webgpu"  # backend.py's choice there
    assert a["name"].endswith("via the browser's WebGPU")  # gr.init() opened the browser's adapter
    # webgpu.Adapter: wgpu-py's names, which gfxrt/engine/device.py reads
    assert a["info"]["backend_type"] == "WebGPU" and a["info"]["adapter_type"] in ("cpu", "gpu")
    assert "via the browser's WebGPU" in a["summary"]
    assert a["limits"]["max-storage-buffer-binding-size"] >= 1 << 27  # WebGPU's default at least
    assert "immediates" in a["features"]  # Chrome 156: var<immediate> (the kernels below use it)


SAXPY = '''
import gfxrt as gr


@gr.kernel
def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


def main(n):
    x, y = gr.ndarray(gr.f32, n), gr.ndarray(gr.f32, n)
    x.from_numpy([(i * 7919 % 1000) / 1000 for i in range(n)])
    y.fill(1.0)
    saxpy(2.0, x, y)
    return {"x": x.to_list(), "y": y.to_list()}
'''


def test_quickstart_saxpy_matches_desktop(tab, tmp_path):
    got, desktop = both(tab, tmp_path, "tab_saxpy", SAXPY, 1000)
    np.testing.assert_allclose(got["y"], desktop["y"], rtol=1e-6)  # (an fma or not: the last bit)
    assert got["x"] == desktop["x"]  # read-only argument untouched
    np.testing.assert_allclose(desktop["y"], np.float32(2) * np.float32(desktop["x"]) + 1, rtol=1e-6)


NONFINITE = '''
import gfxrt as gr


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


def main(xs, ys):
    x, y, o = gr.ndarray(gr.f32, len(xs)), gr.ndarray(gr.f32, len(xs)), gr.ndarray(gr.f32, 9 * len(xs))
    x.from_numpy(xs)
    y.from_numpy(ys)
    nonfinite_math(x, y, o)
    return {"o": o.to_list()}
'''


def test_math_with_nan_and_inf_results_matches_desktop(tab, tmp_path):
    """Helpers that return NaN / inf (codegen/wgsl_nonfinite.py) build under Tint, which rejects a
    NaN / inf constant expression, and give the desktop's values: NaN where it has NaN, -inf from log(0)."""
    xs = [0.5, -0.25, 2.0, 0.0, -1.0, 3.5, 1e30, -7.0]
    ys = [1.5, 0.0, -2.0, 0.0, 3.0, -0.5, 2.0, 2.5]
    got, desktop = both(tab, tmp_path, "tab_nonfinite", NONFINITE, xs, ys)
    got, desktop = np.reshape(got["o"], (9, 8)), np.reshape(desktop["o"], (9, 8))
    assert np.isnan(desktop).any() and np.isinf(desktop).any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(desktop))  # a NaN's sign is the hardware's (0 / 0)
    np.testing.assert_array_equal(got[np.isinf(desktop)], desktop[np.isinf(desktop)])
    finite = np.isfinite(desktop) & (np.abs(xs) < 1e6)  # sin / cos / tan of 1e30: range reduction differs by driver
    np.testing.assert_allclose(got[finite], desktop[finite], rtol=1e-5, atol=1e-6)


LOOPS = '''
import gfxrt as gr


@gr.kernel
def accumulate(m: gr.i32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        v = x[i]
        for k in range(m):  # a run-time trip count
            y[i] += v * k


@gr.kernel
def chain(x: gr.types.ndarray(dtype=gr.f32, ndim=1), cnt: gr.types.ndarray(dtype=gr.i32, ndim=1),
          y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        v = x[i]
        for _ in range(cnt[i]):  # a run-time trip count: the gradient keeps each v on the adstack
            v = gr.sin(v) * 1.5 + v * v
        y[i] = v


@gr.kernel
def total(y: gr.types.ndarray(dtype=gr.f32, ndim=1), loss: gr.types.ndarray(dtype=gr.f32, ndim=0)):
    for i in range(y.shape[0]):
        loss[None] += y[i] * y[i]


def arrays(n):
    x = gr.ndarray(gr.f32, n, needs_grad=True)
    y = gr.ndarray(gr.f32, n, needs_grad=True)
    x.from_numpy([(i * 37 % 100) / 100 for i in range(n)])
    return x, y


def grad(n, m):
    x, y = arrays(n)
    y.grad.from_numpy([(i * 13 % 10) / 10 for i in range(n)])
    accumulate.grad(m, x, y)
    return {"x_grad": x.grad.to_list(), "y_grad": y.grad.to_list()}


def tape(n):
    x, y = arrays(n)
    cnt = gr.ndarray(gr.i32, n)
    cnt.from_numpy([i % 5 for i in range(n)])
    loss = gr.ndarray(gr.f32, (), needs_grad=True)
    with gr.Tape(loss=loss):
        chain(x, cnt, y)
        total(y, loss)
    return {"loss": loss.to_list(), "y": y.to_list(), "x_grad": x.grad.to_list()}


def main(what, *args):
    return {"grad": grad, "tape": tape}[what](*args)
'''


def test_gradient_through_runtime_loop_matches_desktop(tab, tmp_path):
    n, m = 300, 7
    got, desktop = both(tab, tmp_path, "tab_grad", LOOPS, "grad", n, m)
    np.testing.assert_allclose(desktop["x_grad"], np.float32(desktop["y_grad"]) * (m * (m - 1) / 2), rtol=1e-5)
    np.testing.assert_allclose(got["x_grad"], desktop["x_grad"], rtol=1e-6)


def test_tape_matches_desktop(tab, tmp_path):
    """gr.Tape over two kernels, one with a run-time loop (the adstack), in the tab as on the desktop."""
    got, desktop = both(tab, tmp_path, "tab_tape", LOOPS, "tape", 64)
    assert desktop["x_grad"][0] == 2 * desktop["y"][0]  # no iteration: dloss/dx = 2 y
    for k in ("loss", "y", "x_grad"):  # SwiftShader's sin may differ from lavapipe's in the last bits
        np.testing.assert_allclose(got[k], desktop[k], rtol=1e-4, err_msg=k)


GRAPH = '''
import gfxrt as gr


@gr.kernel
def step(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * y[i] + x[i]


@gr.kernel
def bump(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        x[i] += 1.0


def main(n, replays):
    x, y = gr.ndarray(gr.f32, n), gr.ndarray(gr.f32, n)
    x.from_numpy([i / n for i in range(n)])
    y.fill(0.5)
    with gr.graph() as g:  # recorded (not run), then each replay runs both launches
        step(0.5, x, y)
        bump(x)
    after_capture = y.to_list()
    for _ in range(replays):
        g.replay()
    return {"after_capture": after_capture, "y": y.to_list(), "x": x.to_list()}
'''


def test_graph_replay_matches_desktop(tab, tmp_path):
    got, desktop = both(tab, tmp_path, "tab_graph", GRAPH, 128, 3)
    assert desktop["x"][0] == 3.0 and desktop["after_capture"] == [0.5] * 128  # capturing records, replays run
    for k in ("after_capture", "y", "x"):
        np.testing.assert_allclose(got[k], desktop[k], rtol=1e-6, err_msg=k)


ERRORS = '''
import gfxrt as gr


@gr.kernel
def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        x[i] = a * x[i]


@gr.kernel
def broken(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        x[i] = undefined_name


def main():
    out = {}
    x = gr.ndarray(gr.f32, 4)
    for name, call in (("argument", lambda: saxpy("two", x)), ("shape", lambda: saxpy(2.0, gr.ndarray(gr.f32, (2, 2)))),
                       ("compile", lambda: broken(x))):
        try:
            call()
        except Exception as e:  # noqa: BLE001
            out[name] = [type(e).__name__, str(e)]
    x.fill(1.5)
    saxpy(2.0, x)  # the runtime works on after them
    out["after"] = x.to_list()
    return out
'''


def test_errors_raise_at_the_call(tab, tmp_path):
    """A wrong argument raises TypeError / ValueError before the launch, a kernel that does not compile
    gr.CompileError with its line, in the tab as on the desktop; the runtime works on after them."""
    got, desktop = both(tab, tmp_path, "tab_errors", ERRORS)
    assert got["argument"] == desktop["argument"] and got["argument"][0] == "TypeError"
    assert got["shape"] == desktop["shape"] and got["shape"][0] == "ValueError"
    line = ERRORS.splitlines().index("        x[i] = undefined_name") + 1
    for out in (got, desktop):
        assert out["compile"][0] == "CompileError" and "undefined_name" in out["compile"][1]
        assert f'tab_errors.py", line {line}, in broken' in out["compile"][1]  # the file and line
    assert got["after"] == desktop["after"] == [3.0] * 4


DEVICE_ERRORS = """
from gfxrt.engine import backend, context
W, d = backend.calls, context.runtime().device
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


def test_device_errors_raise_at_the_call(tab):
    """On the runtime's device: WGSL errors raise at create_shader_module with the line; an invalid
    recording raises at finish (WebGPU error scopes), a DeviceError once translated; the device stays usable."""
    out = tab.run(DEVICE_ERRORS)
    assert ":2:" in out["wgsl"] and "undefined_name" in out["wgsl"]  # the line of the error
    assert out["finish"] == ["GPUValidationError", "DeviceError"]
    assert out["after"] == [0] * 16


COMPILE = '''
import sys, time
open("/home/pyodide/browser_kernels.py", "w").write(SOURCE)
sys.modules.pop("browser_kernels", None)
from gfxrt.compiler import types as T
from gfxrt.compiler.pipeline import compile_kernel
from gfxrt.compiler.spec import ArgSpec
from gfxrt.compiler.target import Target
import browser_kernels
args = [ArgSpec("a", "scalar", dtype=T.f32), ArgSpec("x", "ndarray", elem=T.f32, ndim=1),
        ArgSpec("y", "ndarray", elem=T.f32, ndim=1)]
target = Target(frozenset({"immediates"}), 64)
t0 = time.perf_counter()
spec = compile_kernel(browser_kernels.saxpy, args, target, directory=None)
result = {"wgsl": spec.wgsl, "seconds": time.perf_counter() - t0}
'''

SOURCE = '''
def saxpy(a, x, y):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]
'''


DEFAULTS = """
from gfxrt.engine import context, device
context.init(**vars(device.Options()))  # what a first gr.ndarray / kernel call does without gr.init()
result = {"offline_cache": context.runtime().dev.options.offline_cache}
"""


def test_defaults_without_init_open_the_tab(tab):
    """Without gr.init(), the runtime opens with the default options; in a tab their on-disk cache is
    off (it raised ValueError: 'offline_cache=True: a browser tab has no disk')."""
    assert tab.run(DEFAULTS) == {"offline_cache": False}


def test_compile_in_browser_matches_host(tab, tmp_path):
    """gfxrt.compiler runs in the tab (no numpy there) and emits the host's WGSL byte for byte."""
    out = tab.run(f"SOURCE = {SOURCE!r}\n" + COMPILE)
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
from gfxrt.engine import device as D
from gfxrt.engine.init_options import read_env
dev = D.open_device(D.Options(), read_env())
result = {"name": dev.name, "features": sorted(dev.features), "immediates": dev.target.max_immediate_size,
          "max_binding": dev.target.max_binding, "limits": dev.limits}
'''


def test_engine_opens_the_browser_adapter(tab):
    """gfxrt/engine/device.py opens the browser's adapter through backend.py as any adapter, and derives
    the compiler's target from its features and limits."""
    out = tab.run(OPEN_DEVICE)
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
import logging
from gfxrt.engine import backend
from gfxrt.engine.device_errors import LostWatcher
W = backend.calls
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
import struct
from gfxrt.engine import backend, context, memory
W, rt = backend.calls, context.runtime()
d, pool = rt.device, rt.pool
host = W.host_memory(32)                       # staging as the runtime uses it: pointer + k is byte k
W.memmove(host + 8, struct.pack("<4f", 1, 2, 3, 4), 16)
buf = pool.alloc(32)
W.queue_write(d.queue, buf, 0, host + 8, 16)   # writes bytes 8..23 of the staging
W.queue_write(d.queue, buf, 16, bytearray(struct.pack("<2f", 5, 6)), 8)
back = W.host_memory(24)
req = W.MapRequest(staging := pool.alloc(32, memory.READBACK))
enc = W.create_encoder(d)
W.copy(enc, buf, 0, staging, 0, 32)
W.SUBMIT_SLOT[0] = W.finish(enc)
W.submit_one(W.handle(d.queue), 1, W.SUBMIT_SLOT)
req.start(32)
W.wait(d)
req.read_into(W.host_pointer(memoryview(back.view)[0:]), 24)
result = {"floats": list(struct.unpack("<6f", bytes(memoryview(back)))), "active": req.active}
pool.release(buf)
pool.release(staging)
'''


def test_host_memory_acts_as_a_pointer(tab):
    """webgpu.host_memory(n) + k addresses byte k, as the cffi pointer ffi.py hands the runtime does;
    writes from it and readback into it round-trip through the runtime's device and pool."""
    out = tab.run(HOST_MEMORY)
    assert out == {"floats": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "active": False}


def test_closing_ends_every_browser_process(tmp_path, monkeypatch):
    """Closing a session ends the browser and all its children. Debian's chromium-headless-shell is a
    shell script whose child is the browser: ending the script alone left browsers running. Here a
    launcher script of that shape, which never serves the page, stands in for it."""
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


# -- the no-numpy program: tests/nonumpy_program.py in the tab ----------------------------------------
REAL_RUNTIME = '''
import contextlib, io, json, runpy, sys, time
open("/home/pyodide/nonumpy_program.py", "w").write(PROGRAM)
out, err = io.StringIO(), io.StringIO()
sys.argv = ["nonumpy_program.py", "--block-numpy"]
t0 = time.perf_counter()
try:
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        runpy.run_path("/home/pyodide/nonumpy_program.py", run_name="nonumpy_program")
    from gfxrt.engine import context
    result = {"out": json.loads(out.getvalue().strip().splitlines()[-1]), "stderr": err.getvalue(),
              "seconds": time.perf_counter() - t0, "device": context.runtime().dev.name}
finally:
    if sys.modules.get("numpy", 0) is None:
        del sys.modules["numpy"]
'''


def test_nonumpy_program_in_the_tab_matches_desktop(tab):
    """tests/nonumpy_program.py (`gr.init()`, lists in and out, saxpy, a run-time loop's gradient,
    gr.Tape, a graph replay, a return value, vector / matrix arguments, host values and containers)
    in the tab, equal to the desktop run of the same program with numpy (lavapipe here)."""
    from test_runtime_nonumpy import _run
    program = (pathlib.Path(__file__).parent / "nonumpy_program.py").read_text()
    got = tab.run(f"PROGRAM = {program!r}\n" + REAL_RUNTIME, timeout=300)
    tabout, desktop = got["out"], _run()
    assert got["device"].endswith("via the browser's WebGPU"), got["stderr"]  # gr.init opened the tab's adapter
    assert tabout.pop("numpy") is False and desktop.pop("numpy") is True
    assert set(tabout) == set(desktop)
    for k, v in tabout.items():  # SwiftShader's sin / fma may differ from lavapipe's in the last bits
        ragged = k in ("elements", "host_math", "struct")  # lists of unlike items: item by item
        pairs = zip(v, desktop[k]) if ragged else [(v, desktop[k])]
        for a, b in pairs:
            np.testing.assert_allclose(np.ravel(np.array(a, np.float64)), np.ravel(np.array(b, np.float64)),
                                       rtol=1e-4, err_msg=k)
    assert tabout["saxpy"] == desktop["saxpy"] and tabout["m"] == desktop["m"] and tabout["to_numpy_error"]
    assert tabout["host_math"] == desktop["host_math"]  # host values: Python arithmetic, no device
    assert not math.isnan(tabout["ret"])
    print(f"the program ran in the tab in {got['seconds']:.2f} s (its compiles included)")
