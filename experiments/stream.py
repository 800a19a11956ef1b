"""Where the host time of a stream of tiny launches goes, and whether host and device overlap
(issue 13).

K batches of B launches of x = 0.99 x + 0.01 (16 float32), each batch then `rt.flush()`, and
one `gr.sync()` at the end. Per launch: recording (the fast path's calls), `finish` (wgpu-core
encodes the recorded pass into Vulkan), `submit`, waits inside flush (the retirement FIFO),
the final sync, and the wall time. With the device time per dependent dispatch (about 2.4 us on
the H100, experiments/dispatch_time.py), wall ~ max(host, device) means the two overlap and
wall ~ host + device means they do not.

Run: `python -m experiments.stream [B] [K]`.
"""
from __future__ import annotations

import statistics
import sys
import time

import gfxrt as gr
from gfxrt.engine import ffi

B = int(sys.argv[1]) if len(sys.argv) > 1 else 200
K = int(sys.argv[2]) if len(sys.argv) > 2 else 50


@gr.kernel
def tiny(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        x[i] = 0.99 * x[i] + 0.01


T: dict[str, float] = {}


def timed(name, fn):
    def w(*a):
        t = time.perf_counter()
        try:
            return fn(*a)
        finally:
            T[name] = T.get(name, 0.0) + time.perf_counter() - t
    w.__wrapped__ = fn
    return w


def run(issue, label):
    rt = gr.runtime()
    issue()
    gr.sync()
    walls = []
    parts = {k: [] for k in ("record", "finish", "submit", "wait", "sync")}
    for _ in range(5):
        T.clear()
        t0 = time.perf_counter()
        rec = 0.0
        for _ in range(K):
            t = time.perf_counter()
            issue()
            rec += time.perf_counter() - t
            rt.flush()
        t = time.perf_counter()
        gr.sync()
        sync = time.perf_counter() - t
        walls.append(time.perf_counter() - t0)
        n = K * B
        parts["record"].append(rec / n)
        parts["finish"].append(T.get("finish", 0) / n)
        parts["submit"].append(T.get("submit", 0) / n)
        parts["wait"].append((T.get("wait", 0) - T.get("final", 0)) / n)
        parts["sync"].append(sync / n)
    med = {k: statistics.median(v) * 1e6 for k, v in parts.items()}
    print(f"{label:28s} wall {statistics.median(walls) / (K * B) * 1e6:6.2f} us/launch = record {med['record']:.2f}"
          f" (of which finish+submit in auto-flushes) + flush finish {med['finish']:.2f} + submit {med['submit']:.2f}"
          f" + FIFO waits {med['wait']:.2f} + final sync {med['sync']:.2f}")


def raw_replay(x):
    """The floor of a replay: B raw dispatch calls into one pass, end, finish, submit (host
    microseconds per dispatch, each step), K times, then a wait."""
    rt = gr.runtime()
    L = next(L for L in rt.launchers if L.name == "tiny")
    bg, pipes = next(iter(L.bind_cache.values()))[:2]
    imm = L.struct.pack(16)
    dev, pc = rt.device, time.perf_counter
    lib = ffi.lib
    finish, submit = ffi.finish.__wrapped__, ffi.submit.__wrapped__
    rec = fin = sub = 0.0
    gr.sync()
    t0 = pc()
    for _ in range(K):
        t = pc()
        enc = ffi.create_encoder(dev)
        p = lib.wgpuCommandEncoderBeginComputePass(enc, ffi.ffi.new("WGPUComputePassDescriptor*"))
        lib.wgpuComputePassEncoderSetPipeline(p, pipes[0])
        lib.wgpuComputePassEncoderSetBindGroup(p, 0, bg, 0, ffi.NULL)
        lib.wgpuComputePassEncoderSetImmediates(p, 0, imm, len(imm))
        d = lib.wgpuComputePassEncoderDispatchWorkgroups
        for _ in range(B):
            d(p, 1, 1, 1)
        ffi.end_pass(p)
        t1 = pc()
        cmd = finish(enc)
        t2 = pc()
        submit(rt.queue, cmd)
        t3 = pc()
        rec, fin, sub = rec + t1 - t, fin + t2 - t1, sub + t3 - t2
    ffi.wait.__wrapped__(dev, None)
    n = K * B
    print(f"{'raw wgpu-native replay':28s} wall {(pc() - t0) / n * 1e6:6.2f} us/launch = record {rec / n * 1e6:.2f}"
          f" + finish {fin / n * 1e6:.2f} + submit {sub / n * 1e6:.2f} (+ the wait)")


def main():
    gr.init()
    ffi.finish = timed("finish", ffi.finish)
    ffi.submit = timed("submit", ffi.submit)
    ffi.wait = timed("wait", ffi.wait)
    x = gr.ndarray(gr.f32, 16)
    xs = [gr.ndarray(gr.f32, 16) for _ in range(B)]
    tiny(x)
    with gr.graph() as g:
        for _ in range(B):
            tiny(x)
    print(f"adapter: {gr.runtime().dev.adapter.info.get('device')}; {K} batches of {B} launches")
    run(lambda: [tiny(x) for _ in range(B)], "eager, dependent")
    run(lambda: [tiny(z) for z in xs], "eager, independent")
    run(g.replay, "graph replay, dependent")
    raw_replay(x)


if __name__ == "__main__":
    main()
