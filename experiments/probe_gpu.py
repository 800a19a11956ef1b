"""One-off probe (not part of gfxrt): saxpy WGSL variants' bandwidth and raw launch cost."""
import os
import statistics
import struct
import time

import numpy as np
import wgpu
from wgpu.backends.wgpu_native import ffi, lib

N = int(os.environ.get("N", 1 << 26))
REPS = int(os.environ.get("REPS", 20))
ads = [a for a in wgpu.gpu.enumerate_adapters_sync() if a.info["backend_type"] != "OpenGL"]
ad = sorted(ads, key=lambda a: a.info["adapter_type"] != "DiscreteGPU")[0]
print(ad.summary, flush=True)
feats = [f for f in ("immediates", "timestamp-query", "subgroup") if f in ad.features]
dev = ad.request_device_sync(required_features=feats, required_limits={k: ad.limits[k] for k in (
    "max-immediate-size", "max-storage-buffer-binding-size", "max-buffer-size")})
print("limits imm", dev.limits["max-immediate-size"], "binding", dev.limits["max-storage-buffer-binding-size"])
U = wgpu.BufferUsage
x = dev.create_buffer(size=N * 4, usage=U.STORAGE | U.COPY_DST | U.COPY_SRC)
y = dev.create_buffer(size=N * 4, usage=U.STORAGE | U.COPY_DST | U.COPY_SRC)
dev.queue.write_buffer(x, 0, np.ones(N, np.float32))
dev.queue.write_buffer(y, 0, np.full(N, 2.0, np.float32))
qs = dev.create_query_set(type="timestamp", count=2)
qbuf = dev.create_buffer(size=16, usage=U.QUERY_RESOLVE | U.COPY_SRC)

HDR = """struct P { a: f32, n: u32 }
var<immediate> p: P;
@group(0) @binding(0) var<storage, read> x: array<{T}>;
@group(0) @binding(1) var<storage, read_write> y: array<{T}>;
"""
VARIANTS = {
 "gridstride_wg64_cap65535": ("f32", 64, "cap", """
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let s = nw.x * 64u; for (var i = g.x; i < p.n; i += s) { y[i] = p.a * x[i] + y[i]; } }"""),
 "gridstride_wg256_cap65535": ("f32", 256, "cap", """
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let s = nw.x * 256u; for (var i = g.x; i < p.n; i += s) { y[i] = p.a * x[i] + y[i]; } }"""),
 "onepert_2d_wg256": ("f32", 256, "2d", """
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let i = g.x + g.y * nw.x * 256u; if (i < p.n) { y[i] = p.a * x[i] + y[i]; } }"""),
 "onepert_2d_wg64": ("f32", 64, "2d", """
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let i = g.x + g.y * nw.x * 64u; if (i < p.n) { y[i] = p.a * x[i] + y[i]; } }"""),
 "vec4_2d_wg256": ("vec4<f32>", 256, "2d4", """
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let i = g.x + g.y * nw.x * 256u; if (i < p.n / 4u) { y[i] = p.a * x[i] + y[i]; } }"""),
 "vec4_gridstride_wg256_sm": ("vec4<f32>", 256, "sm", """
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let s = nw.x * 256u; for (var i = g.x; i < p.n / 4u; i += s) { y[i] = p.a * x[i] + y[i]; } }"""),
 "gridstride_wg256_sm": ("f32", 256, "sm", """
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let s = nw.x * 256u; for (var i = g.x; i < p.n; i += s) { y[i] = p.a * x[i] + y[i]; } }"""),
 "i32idx_gridstride_wg256_cap": ("f32", 256, "cap", """
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
  let s = i32(nw.x * 256u); let n = i32(p.n); for (var i = i32(g.x); i < n; i = i + s) { y[i] = p.a * x[i] + y[i]; } }"""),
 "unroll4_2d_wg256": ("f32", 256, "2du4", """
@compute @workgroup_size(256) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>, @builtin(workgroup_id) w: vec3<u32>) {
  let wgid = w.x + w.y * nw.x; let base = wgid * 1024u + l.x;
  for (var k = 0u; k < 4u; k++) { let i = base + k * 256u; if (i < p.n) { y[i] = p.a * x[i] + y[i]; } } }"""),
}

def groups_for(mode, wg):
    if mode == "cap":
        return (min(65535, -(-N // wg)), 1)
    if mode == "sm":
        return (132 * 8, 1)
    per = {"2d": 1, "2d4": 4, "2du4": 4}[mode]
    total = -(-N // (wg * per))
    gx = min(total, 65535)
    return (gx, -(-total // gx))

bgl = dev.create_bind_group_layout(entries=[
    {"binding": 0, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": "read-only-storage"}},
    {"binding": 1, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": "storage"}}])
pl = dev.create_pipeline_layout(bind_group_layouts=[bgl], immediate_size=8)
bg = dev.create_bind_group(layout=bgl, entries=[{"binding": 0, "resource": {"buffer": x}},
                                                 {"binding": 1, "resource": {"buffer": y}}])
imm = struct.pack("<fI", 2.0, N)

def run(pipe, groups, timestamps):
    enc = dev.create_command_encoder()
    kw = {"timestamp_writes": {"query_set": qs, "beginning_of_pass_write_index": 0, "end_of_pass_write_index": 1}} if timestamps else {}
    cp = enc.begin_compute_pass(**kw)
    cp.set_pipeline(pipe); cp.set_bind_group(0, bg); cp.set_immediates(0, imm, 0, 8)
    cp.dispatch_workgroups(*groups); cp.end()
    if timestamps:
        enc.resolve_query_set(qs, 0, 2, qbuf, 0)
    dev.queue.submit([enc.finish()])
    if timestamps:
        t = np.frombuffer(dev.queue.read_buffer(qbuf), np.uint64)
        return (int(t[1]) - int(t[0])) * 1e-9
    lib.wgpuDevicePoll(dev._internal, True, ffi.NULL)

print(f"saxpy N={N} ({N*4/2**20:.0f} MiB/array); GB/s = 12*N / device time (median of {REPS})")
for name, (T, wg, mode, body) in VARIANTS.items():
    try:
        m = dev.create_shader_module(code=HDR.replace("{T}", T) + body)
        pipe = dev.create_compute_pipeline(layout=pl, compute={"module": m, "entry_point": "main"})
        g = groups_for(mode, wg)
        for _ in range(3): run(pipe, g, False)
        ts = [run(pipe, g, True) for _ in range(REPS)]
        t0 = time.perf_counter()
        for _ in range(REPS): run(pipe, g, False)
        wall = (time.perf_counter() - t0) / REPS
        med = statistics.median(ts)
        print(f"  {name:30s} groups={g} device {med*1e3:8.3f} ms {12*N/med/1e9:8.1f} GB/s | wall/launch+sync {wall*1e3:8.3f} ms {12*N/wall/1e9:8.1f} GB/s", flush=True)
    except Exception as e:
        print(f"  {name}: FAILED {type(e).__name__}: {str(e)[:200]}")

# launch cost: tiny kernel, many dispatches in one open pass, wgpu-py methods vs raw calls
m = dev.create_shader_module(code=HDR.replace("{T}", "f32") + """
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x == 0u) { y[0] = y[0] + p.a; } }""")
tiny = dev.create_compute_pipeline(layout=pl, compute={"module": m, "entry_point": "main"})
K = 20000
for mode in ("methods", "raw"):
    best = 1e9
    for _rep in range(3):
        enc = dev.create_command_encoder(); cp = enc.begin_compute_pass()
        t0 = time.perf_counter()
        if mode == "methods":
            for _ in range(K):
                cp.set_pipeline(tiny); cp.set_bind_group(0, bg); cp.set_immediates(0, imm, 0, 8); cp.dispatch_workgroups(1)
        else:
            h = cp._internal; pi = tiny._internal; bi = bg._internal
            cdata = ffi.new("uint8_t[]", imm)
            spipe = lib.wgpuComputePassEncoderSetPipeline; sbg = lib.wgpuComputePassEncoderSetBindGroup
            simm = lib.wgpuComputePassEncoderSetImmediates; disp = lib.wgpuComputePassEncoderDispatchWorkgroups
            null = ffi.NULL
            for _ in range(K):
                spipe(h, pi); sbg(h, 0, bi, 0, null); simm(h, 0, cdata, 8); disp(h, 1, 1, 1)
        t1 = time.perf_counter()
        cp.end(); cb = enc.finish(); t2 = time.perf_counter()
        dev.queue.submit([cb]); t3 = time.perf_counter()
        lib.wgpuDevicePoll(dev._internal, True, ffi.NULL); t4 = time.perf_counter()
        best = min(best, (t1 - t0) / K)
        print(f"  {mode:8s} record {((t1-t0)/K)*1e6:6.2f} us/dispatch, finish {(t2-t1)*1e3:7.2f} ms, submit {(t3-t2)*1e3:7.2f} ms, wait {(t4-t3)*1e3:7.2f} ms ({(t4-t0)/K*1e6:.2f} us/dispatch all-in)", flush=True)
# submit + wait round trip of an empty-ish encoder
ts = []
for _ in range(50):
    t0 = time.perf_counter(); enc = dev.create_command_encoder(); cp = enc.begin_compute_pass()
    cp.set_pipeline(tiny); cp.set_bind_group(0, bg); cp.set_immediates(0, imm, 0, 8); cp.dispatch_workgroups(1); cp.end()
    dev.queue.submit([enc.finish()]); lib.wgpuDevicePoll(dev._internal, True, ffi.NULL); ts.append(time.perf_counter() - t0)
print(f"  encoder+pass+dispatch+submit+wait: median {statistics.median(ts)*1e6:.1f} us")

try:
    import torch
    if torch.cuda.is_available():
        tx = torch.ones(N, device="cuda"); ty = torch.full((N,), 2.0, device="cuda")
        for _ in range(3): ty.add_(tx, alpha=2.0)
        torch.cuda.synchronize(); e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
        tt = []
        for _ in range(REPS):
            e0.record(); ty.add_(tx, alpha=2.0); e1.record(); torch.cuda.synchronize(); tt.append(e0.elapsed_time(e1) * 1e-3)
        print(f"  torch add_ device {statistics.median(tt)*1e3:.3f} ms {12*N/statistics.median(tt)/1e9:.1f} GB/s")
except Exception as e:
    print("torch:", e)
