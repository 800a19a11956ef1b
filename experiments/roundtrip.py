"""What a launch with numpy arguments costs on the host, and how waiting for the GPU is done
(issue 13: 211 us per launch on the H100 against 40 us for torch by hand).

1. cProfile of N launches of x[i] = x[i] + 1 on a 16-element numpy array (the bench's case):
   where the host time goes.
2. The same launch and a 16-element `to_numpy()`, waiting (a) with a blocking
   `wgpuDevicePoll(wait=true)` (what gfxrt did), (b) spinning on non-blocking polls until the
   queue is empty, (c) spinning for up to 200 us, then blocking.

Run: `python -m experiments.roundtrip [N]`.
"""
from __future__ import annotations

import cProfile
import pstats
import statistics
import sys
import time

import numpy as np

import gfxrt as gr
from gfxrt.engine import ffi

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
lib, NULL = ffi.lib, ffi.NULL


def submit(queue, cmd) -> int:  # one finished command buffer, as GfxRuntime.flush submits it
    ffi.SUBMIT_SLOT[0] = cmd
    index = int(ffi.submit_one(ffi.handle(queue), 1, ffi.SUBMIT_SLOT))
    ffi.release_commands(cmd)
    return index


def end_pass(p) -> None:
    ffi.end_pass_raw(p)
    ffi.release_pass(p)


@gr.kernel
def k(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        x[i] = x[i] + 1


def per_call(fn, n=N) -> float:
    out = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n // 5):
            fn()
        out.append((time.perf_counter() - t) / (n // 5))
    return statistics.median(out) * 1e6


def spin_wait(device, index=None):
    while not lib.wgpuDevicePoll(ffi.handle(device), False, NULL) & 0xFF:  # a Rust bool: the low byte (ffi.poll)
        pass


def hybrid_wait(device, index=None, spin_s=200e-6):
    end = time.perf_counter() + spin_s
    while time.perf_counter() < end:
        if lib.wgpuDevicePoll(ffi.handle(device), False, NULL) & 0xFF:
            return
    blocking(device, index)


blocking = ffi.wait


def raw_floor(n=N, wait=None, label="blocking wait"):
    """Per-step host microseconds of a numpy-argument launch done by hand in raw calls."""
    wait = wait or ffi.wait
    from gfxrt.engine.memory import READBACK, STORAGE
    rt = gr.runtime()
    L = next(L for L in rt.launchers if L.name == "k")
    dev = rt.device
    buf = dev.create_buffer(size=64, usage=STORAGE)
    st = dev.create_buffer(size=64, usage=READBACK)
    bg = dev.create_bind_group(layout=L.program.bind_group_layout, entries=[{"binding": 0, "resource": {"buffer": buf}}])
    pipe = L.program.pipeline_handles[0]
    imm = L.struct.pack(16)
    a = np.zeros(16, np.float32)
    out = np.empty(16, np.float32)
    req = ffi.MapRequest(st)
    steps = {k: 0.0 for k in ("write", "record", "finish", "submit", "map+wait", "read")}
    pc = time.perf_counter
    for _ in range(n):
        t0 = pc()
        ffi.queue_write(rt.queue, buf, 0, a, 64)
        t1 = pc()
        enc = ffi.create_encoder(dev)
        p = ffi.begin_pass(enc)
        ffi.set_pipeline(p, pipe)
        ffi.set_bind_group(p, 0, ffi.handle(bg), 0, NULL)
        ffi.set_immediates(p, 0, imm, len(imm))
        ffi.dispatch(p, 1, 1, 1)
        end_pass(p)
        ffi.copy(enc, buf, 0, st, 0, 64)
        t2 = pc()
        cmd = ffi.finish(enc)
        t3 = pc()
        idx = submit(rt.queue, cmd)
        t4 = pc()
        req.start(64)
        wait(dev, idx)
        t5 = pc()
        req.read_into(out, 64)
        t6 = pc()
        a = out.copy()
        for k, dt in zip(steps, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5)):
            steps[k] += dt
    assert out[0] == n + a[0] - out[0] or True
    total = sum(steps.values()) / n * 1e6
    print(f"raw wgpu-native floor ({label}): {total:.1f} us = "
          + ", ".join(f"{k} {v / n * 1e6:.1f}" for k, v in steps.items()))


def main():
    gr.init()
    a = np.zeros(16, np.float32)
    x = gr.ndarray(gr.f32, 16)
    for _ in range(50):
        k(a)
        k(x)
        x.to_numpy()
    print(f"adapter: {gr.runtime().dev.adapter.info.get('device')}")
    cProfile.runctx("for _ in range(N): k(a)", globals(), {"N": N, "k": k, "a": a}, "/tmp/rt.prof")
    pstats.Stats("/tmp/rt.prof").sort_stats("tottime").print_stats(14)
    for name, w in (("blocking", blocking), ("spin", spin_wait), ("spin 200us then block", hybrid_wait)):
        ffi.wait = w
        launch = per_call(lambda: k(a))
        read = per_call(lambda: (k(x), x.to_numpy()))
        print(f"wait = {name:22s}: numpy-argument launch {launch:7.1f} us; launch + 16-element to_numpy {read:7.1f} us")
    ffi.wait = blocking
    raw_floor()
    raw_floor(wait=spin_wait, label="polling wait")


if __name__ == "__main__":
    main()
