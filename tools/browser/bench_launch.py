"""The cost of a launch in a browser tab beside the desktop's, on this machine:

    PYTHONPATH=$PWD python -m tools.browser.bench_launch [--n 256] [--launches 2000]

Desktop: gfxrt's launch of the quickstart saxpy (argument checks, recording; then with gr.sync()).
Browser: the device calls one launch makes (set pipeline, bind group, immediates, dispatch) through
gfxrt/engine/webgpu.py in headless Chromium, then with the submit and the wait; a small n keeps the
kernel's own run out of it. (gfxrt's runtime does not run in the tab yet: docs/browser.md.)"""
from __future__ import annotations

import argparse
import json
import time

import gfxrt as gr
from tools.browser.session import SPECLAUNCH, BrowserSession


@gr.kernel
def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--launches", type=int, default=2000)
    a = ap.parse_args()
    n, launches = a.n, a.launches
    x, y = gr.ndarray(gr.f32, shape=(n,)), gr.ndarray(gr.f32, shape=(n,))
    saxpy(2.0, x, y)
    gr.sync()
    for _ in range(2):  # (the first round warms up)
        t0 = time.perf_counter()
        for _ in range(launches):
            saxpy(2.0, x, y)
        t1 = time.perf_counter()
        gr.sync()
        t2 = time.perf_counter()
    print("desktop (wgpu-native): "
          f"launch {1e6 * (t1 - t0) / launches:.1f} us, with gr.sync() {1e6 * (t2 - t0) / launches:.1f} us")
    spec = saxpy.specialize((2.0, x, y)).spec
    kernel = {"wgsl": spec.wgsl, "params_size": spec.params_size,
              "params": [(p.dtype.wgsl, p.offset, 2.0 if p.source[0] == "arg" else n) for p in spec.params],
              "tasks": [(spec.tasks[0].entry, min(-(-n // spec.tasks[0].workgroup_size), 65535))],
              "bindings": [(b.binding, b.name, b.read_only) for b in spec.bindings]}
    t0 = time.perf_counter()
    with BrowserSession() as tab:
        started = time.perf_counter() - t0
        tab.run(SPECLAUNCH)
        out = tab.run(f"import speclaunch, json\nresult = speclaunch.dispatch_seconds("
                      f"json.loads({json.dumps(kernel)!r}), {n}, {launches})")
    print(f"browser (Chromium, Pyodide {tab.info['python']}, started in {started:.1f} s): device calls "
          f"{1e6 * out['record']:.1f} us, with submit and wait {1e6 * out['total']:.1f} us")


if __name__ == "__main__":
    main()
