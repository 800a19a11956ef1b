"""Issue 13: where kernels.reduce.sum and the bandwidth kernels lose to torch on an H100.

Parts (each prints its own table; PARTS=wait,reduce,trace,shapes,gfxrt,torch selects; default
all but shapes; SIZES_MB and REDUCE_LOG2 pick sizes):

- wait: round trip of a tiny launch + 1-element `to_numpy()`, and of a launch + `gr.sync()`,
  with the wait spinning on non-blocking polls (default on GPUs) and blocking at once.
- wait: also that a polling sync still waits for a long launch, and a readback sees its write.
- reduce: kernels.reduce.sum for U (independent loads per thread) x MAX_BLOCKS x polling: device
  time (timestamps around one pass of R launches with `out=`, no readback; and of the first
  pass alone) and host time per `sum()` call (Python float included).
- trace: where one reduce.sum(x) call's host time goes (timers around the readback path).
- shapes: hand-written WGSL saxpy / memcpy / fill shapes at 1, 16, 256 MB, device time per
  dispatch in a pass of R back-to-back dispatches (the barriers between them included, as
  in a launch loop): the grid-stride loop with two interleaved iterations (gfxrt's codegen)
  at several group counts, four interleaved, vec4, one pass without a loop.
- gfxrt: kernels.saxpy / memcpy / fill with the launcher's spread K = 1 and 4 (gfxrt/engine/launch.py).
- torch: the same operations, CUDA events around R back-to-back ops.

Run on the GPU machine: `. .gl/enter.sh && python -m experiments.bandwidth13`.
"""
from __future__ import annotations

import os
import statistics
import struct
import time

import numpy as np
from gfxrt.kernels import reduce

import gfxrt as gr
from gfxrt import kernels
from gfxrt.engine import ffi
from gfxrt.engine.memory import QUERY

PARTS = os.environ.get("PARTS", "wait,reduce,trace,gfxrt,torch").split(",")
SIZES_MB = [int(v) for v in os.environ.get("SIZES_MB", "1,16,256").split(",")]
REDUCE_LOG2 = [int(v) for v in os.environ.get("REDUCE_LOG2", "20,24,26").split(",")]
REPS = 5


class Span:
    """Device seconds of one pass holding whatever `fn` records (timestamps at its ends)."""

    def __init__(self, rt):
        self.rt = rt
        self.qs = rt.device.create_query_set(type="timestamp", count=2)
        self.rb = rt.device.create_buffer(size=16, usage=QUERY)
        self.period = ffi.timestamp_period(rt.queue)

    def __call__(self, fn) -> float:
        rt = self.rt
        gr.sync()
        rt.open_pass(self.qs, 0, 1)
        fn()
        assert rt._pass is not None, "something split the pass"
        rt.end_pass()
        ffi.resolve_queries(rt.encoder(), self.qs, 0, 2, self.rb, 0)
        rt.flush()
        gr.sync()
        t = np.frombuffer(rt.device.queue.read_buffer(self.rb, 0, 16), np.uint64).astype(np.int64)
        return float(t[1] - t[0]) * self.period * 1e-9


def reps_for(nbytes: int) -> int:
    return max(10, min(200, int(2e9 / max(nbytes, 1))))


@gr.kernel
def tiny(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        x[i] = x[i] + 1.0


@gr.kernel
def slow(y: gr.types.ndarray(dtype=gr.f32, ndim=1), k: gr.i32):
    for i in range(y.shape[0]):
        v = y[i]
        for _ in range(k):
            v = v * 0.999 + 0.001
        y[i] = v


@gr.kernel
def bump(x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1), k: gr.i32):
    """A long launch whose last block to run (it cannot know which) leaves x[0] one higher."""
    for i in range(y.shape[0]):
        v = y[i]
        for _ in range(k):
            v = v * 0.999 + 0.001
        y[i] = v
        if i == y.shape[0] - 1:
            x[0] = x[0] + 1.0


def part_wait(rt, span):
    x = gr.ndarray(gr.f32, 1)
    print("\n== wait: round trips (median of 300, us)")
    for spin in (2e-3, 0.0):
        rt.device._gfxrt_spin_s = spin
        for name, fn in (("launch + to_numpy(1 elem)", lambda: (tiny(x), x.to_numpy())),
                         ("launch + gr.sync()", lambda: (tiny(x), gr.sync())),
                         ("to_numpy only", lambda: x.to_numpy())):
            for _ in range(20):
                fn()
            ts = []
            for _ in range(300):
                t = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t)
            print(f"  spin {spin * 1e6:6.0f} us  {name:28s} {statistics.median(ts) * 1e6:8.1f}  "
                  f"(p10 {np.percentile(ts, 10) * 1e6:.1f}, p90 {np.percentile(ts, 90) * 1e6:.1f})")
    rt.device._gfxrt_spin_s = 2e-3
    # the spin must still wait: a long launch then gr.sync() / a readback of what it wrote
    y = gr.ndarray(gr.f32, 1 << 20)
    for spin in (2e-3, 0.0):
        rt.device._gfxrt_spin_s = spin
        slow(y, 400)
        gr.sync()
        t = time.perf_counter()
        slow(y, 400)
        gr.sync()
        synced = time.perf_counter() - t
        d = span(lambda y=y: slow(y, 400))
        bad = 0
        x.from_numpy(np.zeros(1, np.float32))
        for k in range(20):
            bump(x, y, 200)
            bad += int(x.to_numpy()[0] != float(k + 1))
        print(f"  spin {spin * 1e6:6.0f} us  long launch: device {d * 1e3:.3f} ms, launch + gr.sync() "
              f"{synced * 1e3:.3f} ms ({'waits' if synced >= 0.9 * d else 'RETURNED EARLY'}); "
              f"readback after a long launch: {20 - bad}/20 current values")
    rt.device._gfxrt_spin_s = 2e-3


def host_per_call(fn, budget=0.25, sync=lambda: None) -> float:
    """Host seconds per call: the best of 3 batches of k calls and one `sync`."""
    for _ in range(3):
        fn()
    sync()
    t = time.perf_counter()
    fn()
    sync()
    one = time.perf_counter() - t
    k = max(5, min(2000, int(budget / max(one, 1e-6))))
    samples = []
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(k):
            fn()
        sync()
        samples.append((time.perf_counter() - t) / k)
    return min(samples)


def part_reduce(rt, span):
    print("\n== reduce: kernels.reduce.sum, f32 (GB/s = 4n / time; device: pass span / R; host: per sum() call)")
    variants = [(1, 1024, 0.0), (1, 1024, 2e-3), (4, 1024, 0.0), (4, 1024, 2e-3), (8, 1024, 2e-3), (4, 2048, 2e-3)]
    for lg in REDUCE_LOG2:
        n = 1 << lg
        x0 = np.random.default_rng(1).random(n, dtype=np.float32)
        want = float(x0.astype(np.float64).sum())
        xd = gr.ndarray(gr.f32, n)
        xd.from_numpy(x0)
        out = gr.ndarray(gr.f32, 1)
        R = min(100, reps_for(4 * n))
        warm()
        for u, mb, spin in variants:
            reduce.U, reduce.MAX_BLOCKS = u, mb
            rt.device._gfxrt_spin_s = spin
            got = reduce.sum(xd)
            ok = abs(got - want) <= 1e-4 * abs(want)
            dev = statistics.median(span(lambda xd=xd, out=out, R=R: [reduce.sum(xd, out=out) for _ in range(R)])
                                    for _ in range(REPS)) / R
            g = reduce._blocks(n)
            part = reduce.scratch("reduce.partials", gr.f32, g)
            acc_t = gr.types.vector(u, gr.f32)
            sg = kernels.has_subgroups()
            first = statistics.median(span(lambda xd=xd, part=part, R=R, acc_t=acc_t, sg=sg: [
                reduce.reduce_blocks(xd, part, "add", gr.f32, sg, acc_t) for _ in range(R)]) for _ in range(REPS)) / R
            host = host_per_call(lambda xd=xd: reduce.sum(xd))
            print(f"  2^{lg} U={u} blocks<={mb:5d} spin={spin * 1e6:5.0f}us  device {dev * 1e6:8.1f} us "
                  f"{4 * n / dev / 1e9:7.0f} GB/s (first pass {first * 1e6:.1f} us, {g} blocks) | host "
                  f"{host * 1e6:8.1f} us {4 * n / host / 1e9:7.0f} GB/s{'' if ok else '  WRONG ' + str(got)}", flush=True)
    reduce.U, reduce.MAX_BLOCKS = 4, 1024
    rt.device._gfxrt_spin_s = 2e-3


T: dict[str, list] = {}


def timed(name, fn):
    def w(*a, **k):
        t = time.perf_counter()
        try:
            return fn(*a, **k)
        finally:
            T.setdefault(name, []).append(time.perf_counter() - t)
    return w


def part_trace(rt):
    """Where one kernels.reduce.sum(x) call's host time goes (2^20 f32), spin on."""
    from gfxrt.engine import blitter
    n = 1 << 20
    xd = gr.ndarray(gr.f32, n)
    xd.from_numpy(np.ones(n, np.float32))
    for _ in range(20):
        reduce.sum(xd)
    names = {"ffi.finish": (ffi, "finish"), "ffi.submit_one": (ffi, "submit_one"), "ffi.spin_until": (ffi, "spin_until"),
             "ffi.wait": (ffi, "wait"), "map start": (ffi.MapRequest, "start"),
             "map read_into": (ffi.MapRequest, "read_into"), "rt.flush": (type(rt), "flush"),
             "blitter.record_read": (blitter.HostDeviceContextBlitter, "record_read"),
             "blitter._complete": (blitter.HostDeviceContextBlitter, "_complete"),
             "Ndarray.to_numpy": (gr.Ndarray, "to_numpy"),
             "reduce_blocks": (reduce, "reduce_blocks"), "reduce.reduce": (reduce, "reduce")}
    saved = {k: getattr(o, a) for k, (o, a) in names.items()}
    try:
        for k, (o, a) in names.items():
            setattr(o, a, timed(k, saved[k]))
        reduce.sum(xd)
        T.clear()
        for _ in range(300):
            reduce.sum(xd)
    finally:
        for k, (o, a) in names.items():
            setattr(o, a, saved[k])
    print("\n== trace: one reduce.sum(x), 2^20 f32, spin on: median us per call (count per call)")
    for k, v in sorted(T.items(), key=lambda kv: -statistics.median(kv[1]) * len(kv[1])):
        print(f"  {k:22s} {statistics.median(v) * 1e6:8.1f} us  x{len(v) / 300:.1f}")


def warm(seconds=0.3):
    """Keep the GPU busy a moment (clocks up) before a timed part."""
    y = gr.ndarray(gr.f32, 1 << 24)
    t = time.perf_counter()
    while time.perf_counter() - t < seconds:
        for _ in range(20):
            slow(y, 20)
        gr.sync()


HDR = """struct P { a: f32, n: i32 }
var<immediate> p: P;
@group(0) @binding(0) var<storage, read_write> x: array<T>;
@group(0) @binding(1) var<storage, read_write> y: array<T>;
"""
ENTRY = ("@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) gid: vec3<u32>, "
         "@builtin(num_workgroups) nw: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>, "
         "@builtin(local_invocation_index) lid: u32) {\n")
OPS = {"saxpy": ("p.a * x[I] + y[I]", "y[I] = V;"), "memcpy": ("x[I]", "y[I] = V;"), "fill": ("p.a", "y[I] = V;")}
BYTES = {"saxpy": 12, "memcpy": 8, "fill": 4}


def shape_src(shape: str, op: str, T: str = "f32") -> tuple[str, int]:
    """WGSL for (shape, op) and the elements per array element (4 for vec4)."""
    val, st = OPS[op]
    if op == "fill":
        val = f"{T}(p.a)"

    def S(i):
        return st.replace("V", val).replace("I", i)

    def L(i, v):
        return f"let {v} = {val.replace('I', i)};"

    def W(i, v):
        return st.replace("V", v).replace("I", i)
    if shape == "gs1":
        body = f"  let s = i32(nw.x) * 256; for (var t = i32(gid.x); t < p.n; t = t + s) {{ {S('t')} }}\n"
    elif shape == "il2":
        body = ("  let s = i32(nw.x) * 256; var t = i32(gid.x);\n"
                f"  loop {{ if (t + s >= p.n) {{ break; }} {L('t', 'a0')} {L('t + s', 'a1')} {W('t', 'a0')} "
                f"{W('t + s', 'a1')} t = t + 2 * s; }}\n  if (t < p.n) {{ {S('t')} }}\n")
    elif shape == "il4":
        body = ("  let s = i32(nw.x) * 256; var t = i32(gid.x);\n"
                f"  loop {{ if (t + 3 * s >= p.n) {{ break; }} {L('t', 'a0')} {L('t + s', 'a1')} {L('t + 2 * s', 'a2')} "
                f"{L('t + 3 * s', 'a3')} {W('t', 'a0')} {W('t + s', 'a1')} {W('t + 2 * s', 'a2')} {W('t + 3 * s', 'a3')} "
                "t = t + 4 * s; }\n"
                f"  for (; t < p.n; t = t + s) {{ {S('t')} }}\n")
    elif shape == "onepass":
        body = f"  let t = i32(wid.x + wid.y * nw.x) * 256 + i32(lid); if (t < p.n) {{ {S('t')} }}\n"
    elif shape == "vec4":
        return shape_src("gs1", op, "vec4<f32>")[0], 4
    elif shape == "vec4il2":
        return shape_src("il2", op, "vec4<f32>")[0], 4
    else:
        raise ValueError(shape)
    src = HDR + ENTRY + body + "}\n"
    return src.replace("array<T>", f"array<{T}>"), 1


def part_shapes(rt):
    import wgpu
    dev = rt.device
    U = wgpu.BufferUsage
    big = max(SIZES_MB) << 20
    x = dev.create_buffer(size=big, usage=U.STORAGE | U.COPY_DST)
    y = dev.create_buffer(size=big, usage=U.STORAGE | U.COPY_DST)
    bgl = dev.create_bind_group_layout(entries=[
        {"binding": k, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": "storage"}} for k in (0, 1)])
    pl = dev.create_pipeline_layout(bind_group_layouts=[bgl], immediate_size=8)
    qs = dev.create_query_set(type="timestamp", count=2)
    qb = dev.create_buffer(size=16, usage=QUERY)
    period = ffi.timestamp_period(rt.queue)
    pipes = {}
    print("\n== shapes: hand-written WGSL, device us per dispatch in a pass of R dispatches (GB/s counted as the bench)")
    cases = [("gs1", "cap"), ("il2", "cap"), ("il2", "n/2"), ("il2", "n/4"), ("il2", "sm8"), ("il2", "sm16"),
             ("il2", "sm32"), ("il4", "n/4"), ("il4", "sm16"), ("onepass", "all"), ("vec4", "cap"),
             ("vec4il2", "n/2")]
    for op in ("saxpy", "memcpy", "fill"):
        for mb in SIZES_MB:
            nbytes = mb << 20
            n = nbytes // 4
            bg = dev.create_bind_group(layout=bgl, entries=[
                {"binding": 0, "resource": {"buffer": x, "offset": 0, "size": nbytes}},
                {"binding": 1, "resource": {"buffer": y, "offset": 0, "size": nbytes}}])
            R = reps_for(BYTES[op] * n)
            row = []
            for shape, grid in cases:
                if op != "saxpy" and (shape in ("gs1", "il4") or grid in ("sm8", "sm32")):
                    continue
                src, per = shape_src(shape, op)
                key = (shape, op)
                if key not in pipes:
                    m = dev.create_shader_module(code=src)
                    pipes[key] = dev.create_compute_pipeline(layout=pl, compute={"module": m, "entry_point": "main"})
                ne = n // per
                if grid == "cap":
                    g = (min(65535, -(-ne // 256)), 1)
                elif grid.startswith("n/"):
                    g = (min(65535, -(-ne // (256 * int(grid[2:])))), 1)
                elif grid.startswith("sm"):
                    g = (min(132 * int(grid[2:]), -(-ne // 256)), 1)
                else:
                    tot = -(-ne // 256)
                    gx = min(tot, 65535)
                    g = (gx, -(-tot // gx))
                imm = struct.pack("<fi", 2.0, ne)
                ts = []
                for rep in range(REPS + 1):
                    enc = dev.create_command_encoder()
                    cp = enc.begin_compute_pass(timestamp_writes={"query_set": qs, "beginning_of_pass_write_index": 0,
                                                                  "end_of_pass_write_index": 1})
                    cp.set_pipeline(pipes[key])
                    cp.set_bind_group(0, bg)
                    cp.set_immediates(0, imm, 0, 8)
                    for _ in range(R):
                        cp.dispatch_workgroups(*g)
                    cp.end()
                    enc.resolve_query_set(qs, 0, 2, qb, 0)
                    dev.queue.submit([enc.finish()])
                    t = np.frombuffer(dev.queue.read_buffer(qb, 0, 16), np.uint64).astype(np.int64)
                    if rep:
                        ts.append(float(t[1] - t[0]) * period * 1e-9 / R)
                d = statistics.median(ts)
                row.append(f"{shape}/{grid} g={g[0]}x{g[1]}: {d * 1e6:.2f} us {BYTES[op] * n / d / 1e9:.0f}")
            print(f"  {op} {mb} MB (R={R}):\n    " + "\n    ".join(row), flush=True)


def part_gfxrt(rt, span):
    print("\n== gfxrt kernels, launcher spread K (SPREAD; device us per launch, pass span / R; host us per launch)")
    for op in ("saxpy", "memcpy", "fill"):
        for mb in SIZES_MB:
            n = (mb << 20) // 4
            x = gr.ndarray(gr.f32, n)
            y = gr.ndarray(gr.f32, n)
            x.fill(1.0)
            y.fill(2.0)
            fn = {"saxpy": lambda x=x, y=y: kernels.saxpy(2.0, x, y), "memcpy": lambda x=x, y=y: kernels.memcpy(y, x),
                  "fill": lambda x=x: kernels.fill(x, 3.0)}[op]
            R = reps_for(BYTES[op] * n)
            row = []
            warm(0.1)
            for k in (1, 4):
                fn()
                for L in list(rt.launchers):
                    L.spread = k
                    L.groups_cache.clear()
                fn()
                d = statistics.median(span(lambda fn=fn, R=R: [fn() for _ in range(R)]) for _ in range(REPS)) / R
                h = host_per_call(fn, 0.1, gr.sync)
                row.append(f"K={k}: dev {d * 1e6:.2f} us {BYTES[op] * n / d / 1e9:.0f} GB/s, host {h * 1e6:.2f} us "
                           f"{BYTES[op] * n / h / 1e9:.0f} GB/s")
            want = {"saxpy": None, "memcpy": 1.0, "fill": 3.0}[op]
            if want is not None:
                got = (y if op == "memcpy" else x).to_numpy()
                row.append("values ok" if bool(np.all(got == want)) else "VALUES WRONG")
            del x, y
            print(f"  {op} {mb} MB (R={R}): " + " | ".join(row), flush=True)
    for L in list(rt.launchers):
        L.spread = launch_spread()
        L.groups_cache.clear()


def launch_spread():
    from gfxrt.engine import launch
    return launch.SPREAD


def part_torch():
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        print("torch: no CUDA torch")
        return
    print("\n== torch (CUDA events around R back-to-back ops; host: per op, one sync per batch)")
    for mb in SIZES_MB:
        n = (mb << 20) // 4
        x = torch.ones(n, device="cuda")
        y = torch.full((n,), 2.0, device="cuda")
        for op, fn in (("saxpy", lambda x=x, y=y: y.add_(x, alpha=2.0)), ("memcpy", lambda x=x, y=y: y.copy_(x)),
                       ("fill", lambda x=x: x.fill_(3.0))):
            R = reps_for(BYTES[op] * n)
            ts = []
            for _ in range(REPS + 1):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                for _ in range(R):
                    fn()
                e1.record()
                torch.cuda.synchronize()
                ts.append(e0.elapsed_time(e1) * 1e-3 / R)
            d = statistics.median(ts[1:])
            print(f"  {op} {mb} MB: device {d * 1e6:.2f} us {BYTES[op] * n / d / 1e9:.0f} GB/s")
    for lg in REDUCE_LOG2:
        n = 1 << lg
        x = torch.rand(n, device="cuda")
        R = reps_for(4 * n)
        ts = []
        for _ in range(REPS + 1):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(R):
                x.sum()
            e1.record()
            torch.cuda.synchronize()
            ts.append(e0.elapsed_time(e1) * 1e-3 / R)
        d = statistics.median(ts[1:])
        h = host_per_call(lambda x=x: x.sum().item())
        print(f"  sum 2^{lg}: device {d * 1e6:.1f} us {4 * n / d / 1e9:.0f} GB/s | host .item() {h * 1e6:.1f} us "
              f"{4 * n / h / 1e9:.0f} GB/s")


def main():
    gr.init()
    rt = gr.runtime()
    rt.AUTO_FLUSH_DISPATCHES = 1 << 20  # a span's launches stay in one pass
    print(f"adapter: {rt.dev.adapter.info.get('device')}; subgroups: {kernels.has_subgroups()}")
    span = Span(rt)
    warm()
    if "wait" in PARTS:
        part_wait(rt, span)
    if "reduce" in PARTS:
        part_reduce(rt, span)
    if "trace" in PARTS:
        part_trace(rt)
    if "shapes" in PARTS:
        part_shapes(rt)
    if "gfxrt" in PARTS:
        part_gfxrt(rt, span)
    if "torch" in PARTS:
        part_torch()


if __name__ == "__main__":
    main()
