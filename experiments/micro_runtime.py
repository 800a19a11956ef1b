"""python -m experiments.micro_runtime [--quick] [--log2n N] [--json PATH]

The runtime's figures (issue 4): host time per launch of a tiny kernel on device arrays,
a launch with numpy arguments (copy in + copy out), and saxpy bandwidth from timestamp
queries for several workgroup sizes, next to a hand-written WGSL grid-stride saxpy (and
torch, where it is installed with CUDA) in the same run.

`run(...)` returns the figures as a dict (`experiments.micro_runtime.run(quick=True)`).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time

import numpy as np

import gfxrt as gr


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
        # recording only: fewer launches than one auto-flush batch, so no submit and no wait
        "launch_record_us": 1e6 * _per_call(lambda: tiny(x), rt.AUTO_FLUSH_DISPATCHES - 1, reps, False),
        # three batches with their submits (the FIFO has room: no wait), device work running alongside
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
    for variant in REFERENCE_WGSL:
        for checks in ("full", "none"):
            out[f"wgsl_{variant}_{checks}_GBps"] = reference_wgsl_saxpy(n, reps, variant, checks)
    torch_bw = torch_saxpy(n, reps)
    if torch_bw is not None:
        out["torch_GBps"] = torch_bw
    return out


REFERENCE_WGSL = {
    # one element per thread per grid-stride step (what gfxrt's codegen emits today)
    "scalar": ("f32", 1, """
  for (var i = gid.x; i < p.n; i = i + stride) { y[i] = p.a * x[i] + y[i]; }"""),
    # four consecutive elements per step through vec4 loads (16-byte transactions)
    "vec4": ("vec4<f32>", 4, """
  for (var i = gid.x; i < p.n / 4u; i = i + stride) { y[i] = p.a * x[i] + y[i]; }"""),
    # four independent scalar loads in flight per thread per step
    "unroll4": ("f32", 4, """
  let m = p.n / 4u;
  for (var i = gid.x; i < m; i = i + stride) {
    let a = x[i]; let b = x[i + m]; let c = x[i + 2u * m]; let d = x[i + 3u * m];
    let e = y[i]; let f = y[i + m]; let g = y[i + 2u * m]; let h = y[i + 3u * m];
    y[i] = p.a * a + e; y[i + m] = p.a * b + f; y[i + 2u * m] = p.a * c + g; y[i + 3u * m] = p.a * d + h;
  }"""),
}


def reference_wgsl_saxpy(n: int, reps: int, variant: str = "scalar", checks: str = "full", wg: int = 256) -> float:
    """GB/s of a hand-written grid-stride WGSL saxpy on the same device and timed the same
    way (timestamp queries around each dispatch). `checks`: naga's injected runtime checks
    kept ("full", "bounds", "none"; see gfxrt/engine/init_options.py, GFXRT_SHADER_CHECKS)."""
    import struct

    import wgpu

    from gfxrt.engine import ffi
    elem, per, body = REFERENCE_WGSL[variant]
    code = (f"struct P {{ a: f32, n: u32 }}\nvar<immediate> p: P;\n"
            f"@group(0) @binding(0) var<storage, read> x: array<{elem}>;\n"
            f"@group(0) @binding(1) var<storage, read_write> y: array<{elem}>;\n"
            f"@compute @workgroup_size({wg})\n"
            f"fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{\n"
            f"  let stride = nwg.x * {wg}u;{body}\n}}\n")
    rt = gr.runtime()
    d = rt.device
    mod = ffi.create_shader_module(d, code, f"saxpy_{variant}", checks)
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
    groups = min(-(-n // (wg * per)), 65535)

    def one():
        rt.dispatch(pipe, bg, imm, groups, label=f"wgsl_{variant}")
    one()
    ts = _device_seconds(one, reps)
    y_host = y.to_numpy()
    if not np.allclose(y_host[:: max(1, n // 1000)], 2.0 * (reps + 1)):
        raise AssertionError(f"reference saxpy {variant} computed wrong values")
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
    figures = {"device": dev.name, "shader_checks": gr.device().env.shader_checks}
    figures.update(launch_figures(quick))
    figures.update(saxpy_figures(log2n, wg_sizes, 3 if quick else 10))
    return figures


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m experiments.micro_runtime")
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
