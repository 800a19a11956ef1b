"""What gr.profile()'s device time measures on a CPU adapter (lavapipe), for a tiny launch.

Prints, per batch size, the device time per launch (timestamps around each dispatch) of
- device-array launches recorded back to back, one sync per batch (what the suite timed),
- the same with a sync after every launch (each dispatch alone on the queue),
- numpy-argument launches (each waits for its result, so each dispatch runs alone),
and the host time per launch of the first kind without profiling.
On lavapipe the first read 3-4x the host time per launch: the timestamps of back-to-back
dependent dispatches include the driver's waits between them, so the suite measures no device
time on CPU adapters (bench/frameworks/gfxrt_fw.py CPU_DEVICE_TIME, docs/bench.md).

Run: XDG_RUNTIME_DIR=/tmp python -m experiments.device_time_cpu
"""
import time

import numpy as np

import gfxrt as gr
from bench.frameworks.gfxrt_fw import profile_seconds


@gr.kernel
def tiny(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        x[i] = x[i] + 1.0


def device_us(run, inner, sync_each):
    gr.sync()
    with gr.profile() as p:
        for _ in range(inner):
            run()
            if sync_each:
                gr.sync()
        gr.sync()
    return profile_seconds(p) / inner * 1e6


def host_us(run, inner):
    gr.sync()
    t = time.perf_counter()
    for _ in range(inner):
        run()
    gr.sync()
    return (time.perf_counter() - t) / inner * 1e6


def main():
    x = gr.ndarray(gr.f32, shape=(16,))
    a = np.zeros(16, np.float32)
    tiny(x)
    tiny(a)
    gr.sync()
    print(f"device: {gr.device().adapter.info.get('device')}")
    print(f"{'inner':>6s} {'batched dev us':>15s} {'synced dev us':>14s} {'numpy dev us':>13s} {'batched host us':>16s}")
    for _ in range(2):
        for inner in (16, 256, 1000):
            print(f"{inner:6d} {device_us(lambda: tiny(x), inner, False):15.1f} "
                  f"{device_us(lambda: tiny(x), inner, True):14.1f} {device_us(lambda: tiny(a), inner, False):13.1f} "
                  f"{host_us(lambda: tiny(x), inner):16.1f}")


if __name__ == "__main__":
    main()
