"""Count the Python calls of a first `saxpy.grad(...)`, and time a warm compile.

    python tools/calltrace.py            # calls and file-to-file hops inside gfxrt/ and compiler/
    python tools/calltrace.py --warm 20  # and the median warm compile (disk cache hit), ms

The kernel is y[i] += a * x[i] over needs_grad ndarrays; its first forward launch is done
(and synced) before counting, so the count is the gradient's first compile and launch, in
a fresh process with an empty offline cache. A hop is a call whose caller is in another file.
Only gfxrt's public API is used, so the same script measures any revision of the code.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCOPES = tuple(os.path.join(ROOT, d) + os.sep for d in ("gfxrt", "compiler"))
SOURCE = """import gfxrt as gr

@gr.kernel
def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] += a * x[i] + SALT
"""


def load(folder: str, salt: str):
    """A fresh kernel object from a fresh module file (no in-process cache can hold it)."""
    name = f"calltrace_{len(os.listdir(folder))}"
    path = os.path.join(folder, name + ".py")
    with open(path, "w") as f:
        f.write(SOURCE.replace("SALT", salt))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.saxpy


def count_calls(fn) -> tuple[int, int]:
    """(calls into gfxrt/ and compiler/ code, those whose caller is in another file) made by fn()."""
    calls = hops = 0

    def profile(frame, event, arg):
        nonlocal calls, hops
        if event != "call":
            return
        file = frame.f_code.co_filename
        if file.startswith(SCOPES):
            calls += 1
            back = frame.f_back
            if back is not None and back.f_code.co_filename != file:
                hops += 1
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls, hops


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--warm", type=int, default=0, help="also time this many warm compiles")
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as home:
        os.environ["GFXRT_CACHE_DIR"] = os.path.join(home, "cache")  # an empty offline cache
        import gfxrt as gr
        gr.init()
        saxpy = load(home, "0.0")
        n = 1024
        x = gr.ndarray(gr.f32, shape=(n,), needs_grad=True)
        y = gr.ndarray(gr.f32, shape=(n,), needs_grad=True)
        x.from_numpy(np.linspace(0, 1, n, dtype=np.float32))
        saxpy(2.0, x, y)
        gr.sync()
        y.grad.fill(1.0)
        calls, hops = count_calls(lambda: (saxpy.grad(2.0, x, y), gr.sync()))
        assert np.allclose(x.grad.to_numpy(), 2.0)
        print(f"first saxpy.grad: {calls} calls in gfxrt/ and compiler/, {hops} file-to-file hops")
        if opts.warm:
            ms = []
            for _ in range(opts.warm + 1):
                k = load(home, "1.0")  # the same source each time: a disk cache hit after the first
                t0 = time.perf_counter()
                k(2.0, x, y)
                gr.sync()
                t1 = time.perf_counter()
                k(2.0, x, y)
                gr.sync()
                ms.append(max(0.0, (t1 - t0) - (time.perf_counter() - t1)) * 1e3)
            print(f"warm compile (disk cache hit, first call minus second): median {statistics.median(ms[1:]):.3f} ms "
                  f"over {opts.warm}")


if __name__ == "__main__":
    main()
