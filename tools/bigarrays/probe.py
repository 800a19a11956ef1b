"""Arrays larger than one storage binding, on this machine's adapter: its limits, a check against
numpy on an array past the adapter's own binding size (when its buffers hold one), and the cost
of windowed access (the same saxpy on arrays bound whole and in windows).

    PYTHONPATH=$PWD python -m tools.bigarrays.probe [--mib N] [--windows K]
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

import gfxrt as gr


def _saxpy_time(n: int, reps: int) -> tuple[float, int]:
    x, y = gr.ndarray(gr.f32, (n,)), gr.ndarray(gr.f32, (n,))

    @gr.kernel
    def saxpy(a: gr.f32, x: gr.types.ndarray(), y: gr.types.ndarray()):
        for i in x:
            y[i] = a * x[i] + y[i]

    x.fill(1.0)
    y.fill(0.0)
    saxpy(2.0, x, y)
    gr.sync()
    t = time.perf_counter()
    for _ in range(reps):
        saxpy(2.0, x, y)
    gr.sync()
    dt = (time.perf_counter() - t) / reps
    assert y.to_numpy()[n // 2] == 2.0 * (reps + 1)
    return dt, x.chunks


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=64, help="saxpy array size (MiB per array) for the timing")
    ap.add_argument("--windows", type=int, default=4, help="windows to force for the timing")
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    os.environ.pop("GFXRT_MAX_BINDING", None)
    gr.init()
    dev = gr.device()
    lim = {k: dev.limits.get(k) for k in ("max-storage-buffer-binding-size", "max-buffer-size",
                                          "max-storage-buffers-per-shader-stage")}
    print("device:", dev.name)
    print("limits:", lim)
    binding, maxbuf = lim["max-storage-buffer-binding-size"], gr.runtime().pool.max_buffer
    # 1. past the adapter's own binding: 1.5x one binding (within one buffer), checked against numpy
    n = min(binding * 3 // 2, maxbuf) // 4
    if n * 4 > binding:
        x = gr.ndarray(gr.f32, (n,))
        h = gr.ndarray(gr.i32, (1024,))

        @gr.kernel
        def fill(x: gr.types.ndarray(), h: gr.types.ndarray()):
            for i in x:
                x[i] = gr.f32(i % 1000003)
                if i % 4096 == 0:
                    gr.atomic_add(h[(i // 4096) % 1024], 1)

        t = time.perf_counter()
        fill(x, h)
        got = x.to_numpy()
        dt = time.perf_counter() - t
        want_h = np.bincount((np.arange(0, n, 4096) // 4096) % 1024, minlength=1024)
        ok = np.array_equal(got, (np.arange(n) % 1000003).astype(np.float32)) and \
            np.array_equal(h.to_numpy(), want_h)
        print(f"array of {n * 4 / 2**20:.0f} MiB ({x.chunks} windows of {binding / 2**20:.0f} MiB): "
              f"{'matches numpy' if ok else 'MISMATCH'} ({dt:.2f} s with readback)")
        del x, got
    else:
        print("this adapter's buffers are no larger than one binding: nothing to window")
    # 2. the cost of windows: one saxpy size, bound whole and in windows (GFXRT_MAX_BINDING)
    n = a.mib * 2**20 // 4
    whole, k1 = _saxpy_time(n, a.reps)
    os.environ["GFXRT_MAX_BINDING"] = str(-(-n * 4 // a.windows))
    gr.init()
    windowed, k2 = _saxpy_time(n, a.reps)
    os.environ.pop("GFXRT_MAX_BINDING")
    gr.init()
    print(f"saxpy on {a.mib} MiB arrays: {whole * 1e3:.3f} ms bound whole ({k1} window), "
          f"{windowed * 1e3:.3f} ms in {k2} windows ({windowed / whole:.2f}x)")


if __name__ == "__main__":
    main()
