"""python -m bench.micro_runtime [--quick] [--log2n N] [--json PATH]

The runtime's figures (issue 4): host time per launch of a tiny kernel on device arrays,
a launch with numpy arguments (copy in + copy out), and saxpy bandwidth from timestamp
queries for several workgroup sizes, next to a hand-written WGSL grid-stride saxpy (and
torch, where it is installed with CUDA) in the same run.

`run(...)` returns the figures as a dict for the bench suite (bench helper: call
`bench.micro_runtime.run(quick=True)`).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time

import numpy as np

import gfxrt as gr
from gfxrt.program import shader_checks


def _kernels():
    """Fresh kernel objects (compiled for the device's current target)."""
    @gr.kernel
    def tiny(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(1):
            x[i] = x[i] + 1.0

    @gr.kernel
    def tiny_scalar(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(1):
            x[i] = x[i] + a

    @gr.kernel
    def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]
    return tiny, tiny_scalar, saxpy


def _per_call(fn, n: int, reps: int, sync_inside: bool) -> float:
    """Median over `reps` of the seconds per call of `n` calls (after a sync); the final
    sync counts only when `sync_inside`."""
    out = []
    for _ in range(reps):
        gr.sync()
        t = time.perf_counter()
        for _ in range(n):
            fn()
        if sync_inside:
            gr.sync()
        out.append((time.perf_counter() - t) / n)
    gr.sync()
    return statistics.median(out)


def launch_figures(quick: bool) -> dict:
    tiny, tiny_scalar, _ = _kernels()
    x = gr.ndarray(gr.f32, 16)
    xn = np.zeros(16, np.float32)
    tiny(x), tiny_scalar(1.0, x), tiny(xn)
    rt = gr.runtime()
    burst = 3 * rt.AUTO_FLUSH_DISPATCHES  # no FIFO wait can happen within a burst after a sync
    reps = 5 if quick else 15
    return {
        "launch_us": 1e6 * _per_call(lambda: tiny(x), burst, reps, False),
        "launch_scalar_us": 1e6 * _per_call(lambda: tiny_scalar(1.0, x), burst, reps, False),
        "launch_sustained_us": 1e6 * _per_call(lambda: tiny(x), 2000 if quick else 20000, 3, True),
        "numpy_launch_us": 1e6 * _per_call(lambda: tiny(xn), 100 if quick else 500, reps, False),
    }


def _device_seconds(fn, reps: int) -> list[float]:
    with gr.profile() as p:
        for _ in range(reps):
            fn()
    return [t for _, t in p.records]


def saxpy_figures(log2n: int, wg_sizes, reps: int) -> dict:
    n = 1 << log2n
    nbytes = 3 * 4 * n
    dev = gr.device()
    x, y = gr.ndarray(gr.f32, n), gr.ndarray(gr.f32, n)
    x.fill(1.0)
    y.fill(2.0)
    out = {"saxpy_n": n}
    target = dev.target
    limit = int(dev.limits.get("max-compute-invocations-per-workgroup", 256))
    try:
        for wg in wg_sizes:
            if wg > limit:
                continue
            dev.target = dataclasses.replace(target, workgroup_size=wg)
            saxpy = _kernels()[2]
            saxpy(2.0, x, y)
            ts = _device_seconds(lambda saxpy=saxpy: saxpy(2.0, x, y), reps)
            out[f"saxpy_wg{wg}_GBps"] = nbytes / statistics.median(ts) / 1e9
            out[f"saxpy_wg{wg}_best_GBps"] = nbytes / min(ts) / 1e9
    finally:
        dev.target = target
    gr.sync()
    t_host = _per_call(lambda: (saxpy(2.0, x, y), gr.sync()), 1, reps, False)
    out["saxpy_host_synced_GBps"] = nbytes / t_host / 1e9
    out["wgsl_reference_GBps"] = reference_wgsl_saxpy(n, reps)
    torch_bw = torch_saxpy(n, reps)
    if torch_bw is not None:
        out["torch_GBps"] = torch_bw
    return out


REFERENCE_WGSL = """
struct P { a: f32, n: u32 }
var<immediate> p: P;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let stride = nwg.x * 256u;
  for (var i = gid.x; i < p.n; i = i + stride) { y[i] = p.a * x[i] + y[i]; }
}
"""


def reference_wgsl_saxpy(n: int, reps: int) -> float:
    """GB/s of a hand-written grid-stride WGSL saxpy on the same device, timed with
    timestamp queries around the same kind of pass gfxrt records."""
    import struct

    import wgpu
    rt = gr.runtime()
    d = rt.device
    mod = d.create_shader_module(code=REFERENCE_WGSL)
    bgl = d.create_bind_group_layout(entries=[
        {"binding": 0, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": "read-only-storage"}},
        {"binding": 1, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": "storage"}}])
    layout = d.create_pipeline_layout(bind_group_layouts=[bgl], immediate_size=8)
    pipe = d.create_compute_pipeline(layout=layout, compute={"module": mod, "entry_point": "main"})
    x, y = gr.ndarray(gr.f32, n), gr.ndarray(gr.f32, n)
    x.fill(1.0)
    bg = d.create_bind_group(layout=bgl, entries=[{"binding": 0, "resource": {"buffer": x._buffer}},
                                                   {"binding": 1, "resource": {"buffer": y._buffer}}])
    imm = struct.pack("<fI", 2.0, n)
    groups = min(-(-n // 256), 65535)

    def one():
        rt.dispatch(pipe, bg, imm, groups, label="wgsl_reference")
    one()
    ts = _device_seconds(one, reps)
    return 3 * 4 * n / statistics.median(ts) / 1e9


def torch_saxpy(n: int, reps: int) -> float | None:
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    x = torch.ones(n, device="cuda")
    y = torch.full((n,), 2.0, device="cuda")
    ts = []
    for _ in range(reps + 1):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        y.add_(x, alpha=2.0)
        b.record()
        torch.cuda.synchronize()
        ts.append(a.elapsed_time(b) / 1e3)
    return 3 * 4 * n / statistics.median(ts[1:]) / 1e9


def run(quick: bool = False, log2n: int | None = None, wg_sizes=(64, 128, 256, 512)) -> dict:
    """All figures: {'device': ..., 'launch_us': ..., 'numpy_launch_us': ..., 'saxpy_wg*_GBps': ...}."""
    dev = gr.device()
    if log2n is None:
        log2n = 20 if quick else (22 if dev.is_cpu else 26)
    figures = {"device": dev.name, "shader_checks": shader_checks()}
    figures.update(launch_figures(quick))
    figures.update(saxpy_figures(log2n, wg_sizes, 3 if quick else 10))
    return figures


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.micro_runtime")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--log2n", type=int, default=None, help="saxpy size 2^N (default 22 on CPU, 26 on a GPU)")
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args(argv)
    figs = run(args.quick, args.log2n)
    for k, v in figs.items():
        print(f"{k:28s} {v:12.2f}" if isinstance(v, float) else f"{k:28s} {v}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figs, f, indent=1)


if __name__ == "__main__":
    main()
