"""Where a wait goes in a browser tab (issue 26): a launch of the quickstart saxpy and its
gr.sync() in headless Chromium cost about 3 ms on this machine against 0.12 ms on the desktop
(bench/RESULTS.md). This counts the promises gfxrt/engine/webgpu.py awaits with
`pyodide.ffi.run_sync` in one launch + gr.sync() and times one awaited promise of each kind.

    PYTHONPATH=$PWD python -m experiments.browser_waits

Needs what the browser tier needs (`bash dev.sh test` installs Chromium and Pyodide).
"""
from tools.browser.session import BrowserSession

KERNEL = """
import gfxrt as gr


@gr.kernel
def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]
"""

CODE = '''
import time
import js
from pyodide.ffi import run_sync as _run_sync
import gfxrt as gr
from gfxrt.engine import context, webgpu

calls = []
def counting(p):  # every promise webgpu.py awaits, by what it came from
    calls.append(type(p).__name__)
    return _run_sync(p)
webgpu.run_sync = counting

import sys
sys.path.insert(0, "/home/pyodide")
open("/home/pyodide/waits_kernel.py", "w").write(KERNEL)  # (a kernel's source must be a file)
from waits_kernel import saxpy

d = context.runtime().device._js
x, y = gr.ndarray(gr.f32, 256), gr.ndarray(gr.f32, 256)
saxpy(2.0, x, y)
gr.sync()
out = {}

def per_call(name, f, k=40):
    f()
    t0 = time.perf_counter()
    for _ in range(k):
        f()
    out[name + " (ms)"] = round((time.perf_counter() - t0) / k * 1e3, 3)

calls.clear()
saxpy(2.0, x, y)
gr.sync()
out["promises awaited by one launch + gr.sync()"] = len(calls)
per_call("launch + gr.sync()", lambda: (saxpy(2.0, x, y), gr.sync()))
per_call("an already resolved promise", lambda: _run_sync(js.Promise.resolve(1)))
per_call("an error scope (push, pop)", lambda: (d.pushErrorScope("validation"), _run_sync(d.popErrorScope())))
per_call("onSubmittedWorkDone, queue idle", lambda: _run_sync(d.queue.onSubmittedWorkDone()))
result = out
'''


def main() -> None:
    with BrowserSession() as tab:
        for k, v in tab.run(f"KERNEL = {KERNEL!r}\n" + CODE).items():
            print(f"{k:48} {v}")


if __name__ == "__main__":
    main()
