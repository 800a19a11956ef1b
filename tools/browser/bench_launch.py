"""A launch's and a compile's cost in a browser tab beside the desktop's, on this machine: one
program (this module: gfxrt and the standard library only) run by gfxrt's own runtime on both sides,
the same kernel (the quickstart saxpy, n = 256: small, so the kernel's own run stays out of it).

    PYTHONPATH=$PWD python -m tools.browser.bench_launch [--samples 7]

prints both; `python -m bench --only browser_launch,browser_compile` records them
(bench/benchmarks/browser.py). `measure(k)` returns k samples, in seconds, of:

- "launch": one `saxpy(2.0, x, y)` (the checks, the recording), LAUNCHES of them queued, no wait;
- "launch + gr.sync()": one launch and its wait;
- "first compile": a fresh kernel's first call minus its second (each with gr.sync()): Python
  source to a launched pipeline, its source never seen before (a fresh constant in it);
- "cached compile": the same for a fresh kernel object whose source was compiled before in the
  process (whatever cache the runtime keeps: memory, or on the desktop the disk).
"""
from __future__ import annotations

import importlib.util
import os
import tempfile
import time
import uuid

import gfxrt as gr

N = 256
LAUNCHES = 200
SOURCE = '''
import gfxrt as gr


@gr.kernel
def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i] + SALT
'''
KINDS = ("launch", "launch + gr.sync()", "first compile", "cached compile")
_FOLDER: list[str] = []


def _kernel(salt: str):
    """saxpy from a fresh module file (a fresh kernel object) whose constant is `salt`."""
    if not _FOLDER:
        _FOLDER.append(tempfile.mkdtemp(prefix="gfxrt-bench-browser-"))
    name = f"bench_browser_{uuid.uuid4().hex[:12]}"
    path = os.path.join(_FOLDER[0], name + ".py")
    with open(path, "w") as f:
        f.write(SOURCE.replace("SALT", salt))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.saxpy


def _first_call_extra(k, x, y) -> float:
    """Seconds the first launch of kernel k (each synced) takes over its second: its compile."""
    t0 = time.perf_counter()
    k(2.0, x, y)
    gr.sync()
    t1 = time.perf_counter()
    k(2.0, x, y)
    gr.sync()
    t2 = time.perf_counter()
    return max(0.0, (t1 - t0) - (t2 - t1))


def measure(k: int) -> dict[str, list[float]]:
    """k samples of each of KINDS, in seconds (see the module doc)."""
    x, y = gr.ndarray(gr.f32, N), gr.ndarray(gr.f32, N)
    x.from_numpy([i / N for i in range(N)])
    y.fill(0.0)
    saxpy = _kernel("0.0")
    saxpy(2.0, x, y)  # (compiled and warm)
    gr.sync()
    out: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for _ in range(k):
        t0 = time.perf_counter()
        for _ in range(LAUNCHES):
            saxpy(2.0, x, y)
        out["launch"].append((time.perf_counter() - t0) / LAUNCHES)
        gr.sync()
        t0 = time.perf_counter()
        for _ in range(LAUNCHES // 4):
            saxpy(2.0, x, y)
            gr.sync()
        out["launch + gr.sync()"].append((time.perf_counter() - t0) / (LAUNCHES // 4))
    for _ in range(k):
        salt = f"{int(uuid.uuid4().int % 10**8) * 1e-12:.12f}"  # a source never seen before
        out["first compile"].append(_first_call_extra(_kernel(salt), x, y))
        out["cached compile"].append(_first_call_extra(_kernel(salt), x, y))
    return out


def in_tab(tab, k: int) -> dict[str, list[float]]:
    """measure(k) in a started tools.browser.session.BrowserSession (this module's source, imported there)."""
    with open(__file__) as f:
        source = f.read()
    return tab.run(f"import sys\nsys.path.insert(0, '/home/pyodide')\nopen('/home/pyodide/bench_tab.py', 'w')"
                   f".write({source!r})\nimport bench_tab\nresult = bench_tab.measure({k})", timeout=600)


def main() -> None:
    import argparse
    import statistics

    from tools.browser.session import BrowserSession
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=7)
    k = ap.parse_args().samples
    desktop = measure(k)
    t0 = time.perf_counter()
    with BrowserSession() as tab:
        started = time.perf_counter() - t0
        tab_out = in_tab(tab, k)
    print(f"the quickstart saxpy, n = {N}; medians of {k} samples (Pyodide {tab.info['python']}, "
          f"started in {started:.1f} s)")
    print(f"{'':24}{'desktop':>12}{'browser tab':>14}")
    for kind in KINDS:
        scale, unit = (1e3, "ms") if "compile" in kind else (1e6, "us")
        print(f"{kind:24}" + "".join(f"{scale * statistics.median(v[kind]):>10.1f} {unit}"
                                     for v in (desktop, tab_out)))


if __name__ == "__main__":
    main()
