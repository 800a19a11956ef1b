"""Hand-written WGSL variants of the run-time-loop gradient, device time on this GPU."""
import statistics
import struct
import sys

import numpy as np
import wgpu

from gfxrt.engine import ffi as gffi

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24
ads = [a for a in wgpu.gpu.enumerate_adapters_sync() if a.info["backend_type"] != "OpenGL"]
ad = sorted(ads, key=lambda a: a.info["adapter_type"] != "DiscreteGPU")[0]
dev = ad.request_device_sync(required_features=["immediates", "timestamp-query"], required_limits={k: ad.limits[k] for k in ("max-immediate-size", "max-storage-buffer-binding-size", "max-buffer-size")})
print(ad.summary, "N", N)
U = wgpu.BufferUsage
rng = np.random.default_rng(0)
bufs = {}
def mk(name, arr):
    b = dev.create_buffer(size=max(16, arr.nbytes), usage=U.STORAGE | U.COPY_DST | U.COPY_SRC); dev.queue.write_buffer(b, 0, arr); bufs[name] = b
mk("x", rng.uniform(-1, 1, N).astype(np.float32)); mk("cnt", rng.integers(0, 32, N).astype(np.int32))
mk("y", np.zeros(N, np.float32)); mk("xg", np.zeros(N, np.float32)); mk("yg", np.ones(N, np.float32))
HEAPW = 1 << 24
mk("heap", np.zeros(HEAPW, np.uint32))
HDR = """struct P { n: i32, act: i32 }
var<immediate> p: P;
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> cnt: array<i32>;
@group(0) @binding(2) var<storage, read_write> y: array<f32>;
@group(0) @binding(3) var<storage, read_write> xg: array<f32>;
@group(0) @binding(4) var<storage, read_write> yg: array<f32>;
@group(0) @binding(5) var<storage, read_write> heap: array<u32>;
var<private> stk: array<f32, 32>;
var<workgroup> sstk: array<f32, SMEM>;
var<workgroup> ustk: array<u32, SMEM>;
"""
LOOP = "let s = i32(nwg.x) * WG; for (var i = i32(g.x); i < p.n; i = i + s) { BODY }"
CAP = "let s = min(i32(nwg.x) * WG, p.act); let tid = i32(g.x); if (tid >= s) { return; } for (var i = tid; i < p.n; i = i + s) { BODY }"
FWD = "var v = x[i]; let c = cnt[i]; for (var j = 0; j < c; j++) { v = sin(v) * 0.95 + 0.01; } y[i] = v;"
PRIV = """var v = x[i]; let c = cnt[i]; for (var j = 0; j < c; j++) { stk[j] = cos(v); v = sin(v) * 0.95 + 0.01; }
  var a = yg[i]; yg[i] = 0.0; for (var j = c - 1; j >= 0; j--) { a = a * stk[j] * 0.95; } xg[i] = xg[i] + a;"""
PRIV_CLAMP = """var v = x[i]; let c = cnt[i]; for (var j = 0; j < c; j++) { stk[j & 31] = cos(v); v = sin(v) * 0.95 + 0.01; }
  var a = yg[i]; yg[i] = 0.0; for (var j = c - 1; j >= 0; j--) { a = a * stk[j & 31] * 0.95; } xg[i] = xg[i] + a;"""
HEAP = """var v = x[i]; let c = cnt[i]; let tid = i32(g.x); let A = s; for (var j = 0; j < c; j++) { heap[j * A + tid] = bitcast<u32>(cos(v)); v = sin(v) * 0.95 + 0.01; }
  var a = yg[i]; yg[i] = 0.0; for (var j = c - 1; j >= 0; j--) { a = a * bitcast<f32>(heap[j * A + tid]) * 0.95; } xg[i] = xg[i] + a;"""
NOSTORE = """var v = x[i]; let c = cnt[i]; var prod = 1.0; for (var j = 0; j < c; j++) { prod = prod * cos(v) * 0.95; v = sin(v) * 0.95 + 0.01; }
  var a = yg[i]; yg[i] = 0.0; xg[i] = xg[i] + a * prod;"""
PRE = "var v = x[i]; let c = cnt[i]; var q = 1.0; for (var j = 0; j < c; j++) { q = q * cos(v); v = sin(v) * 0.95 + 0.01; } "
V2 = {
 "fwd sin chain": "var v = x[i]; let c = cnt[i]; for (var j = 0; j < c; j++) { v = sin(v) * 0.95 + 0.01; } y[i] = v;",
 "no stack (sin+cos), first": "let a = yg[i]; let g0 = xg[i]; " + PRE + "yg[i] = 0.0; xg[i] = g0 + a * q;",
 "priv stack, first": "let a0 = yg[i]; let g0 = xg[i]; var v = x[i]; let c = cnt[i]; for (var j = 0; j < c; j++) { stk[j & 31] = cos(v); v = sin(v) * 0.95 + 0.01; } var a = a0; yg[i] = 0.0; for (var j = c - 1; j >= 0; j--) { a = a * stk[j & 31] * 0.95; } xg[i] = g0 + a;",
 "shared stack, first": "let a0 = yg[i]; let g0 = xg[i]; var v = x[i]; let c = cnt[i]; for (var j = 0; j < c; j++) { sstk[u32(j & 31) * WGu + li] = cos(v); v = sin(v) * 0.95 + 0.01; } var a = a0; yg[i] = 0.0; for (var j = c - 1; j >= 0; j--) { a = a * sstk[u32(j & 31) * WGu + li] * 0.95; } xg[i] = g0 + a;",
 "shared stack u32 bits, first": "let a0 = yg[i]; let g0 = xg[i]; var v = x[i]; let c = cnt[i]; for (var j = 0; j < c; j++) { ustk[u32(j & 31) * WGu + li] = bitcast<u32>(cos(v)); v = sin(v) * 0.95 + 0.01; } var a = a0; yg[i] = 0.0; for (var j = c - 1; j >= 0; j--) { a = a * bitcast<f32>(ustk[u32(j & 31) * WGu + li]) * 0.95; } xg[i] = g0 + a;",
 "heap SoA, first": "let a0 = yg[i]; let g0 = xg[i]; var v = x[i]; let c = cnt[i]; let tid = i32(g.x); let A = s; for (var j = 0; j < c; j++) { heap[j * A + tid] = bitcast<u32>(cos(v)); v = sin(v) * 0.95 + 0.01; } var a = a0; yg[i] = 0.0; for (var j = c - 1; j >= 0; j--) { a = a * bitcast<f32>(heap[j * A + tid]) * 0.95; } xg[i] = g0 + a;",
}
VARIANTS = {k: (CAP if "heap" in k or "stack" in k else LOOP, b) for k, b in V2.items()}
bgl = dev.create_bind_group_layout(entries=[{"binding": k, "visibility": 4, "buffer": {"type": "read-only-storage" if k < 2 else "storage"}} for k in range(6)])
pl = dev.create_pipeline_layout(bind_group_layouts=[bgl], immediate_size=8)
bg = dev.create_bind_group(layout=bgl, entries=[{"binding": k, "resource": {"buffer": bufs[nm]}} for k, nm in enumerate(["x", "cnt", "y", "xg", "yg", "heap"])])
qs = dev.create_query_set(type="timestamp", count=2); qb = dev.create_buffer(size=16, usage=U.QUERY_RESOLVE | U.COPY_SRC)
def t(pipe, groups, active):
    enc = dev.create_command_encoder()
    cp = enc.begin_compute_pass(timestamp_writes={"query_set": qs, "beginning_of_pass_write_index": 0, "end_of_pass_write_index": 1})
    cp.set_pipeline(pipe); cp.set_bind_group(0, bg); cp.set_immediates(0, struct.pack("<ii", N, active), 0, 8); cp.dispatch_workgroups(groups); cp.end()
    enc.resolve_query_set(qs, 0, 2, qb, 0); dev.queue.submit([enc.finish()])
    v = np.frombuffer(dev.queue.read_buffer(qb), np.uint64); return (int(v[1]) - int(v[0])) * 1e-9
for checks in ("bounds",):
    for name, (loop, body) in VARIANTS.items():
        for wg, groups in ((256, 65535), (256, 1024), (128, 2048), (64, 4096)):
            if loop is LOOP and groups == 1024: continue
            active = min(groups * wg, HEAPW // 32)
            src = HDR.replace("SMEM", str(32 * wg)) + f"@compute @workgroup_size({wg}) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_index) li: u32) {{ " + loop.replace("BODY", body).replace("WGu", f"{wg}u").replace("WG", str(wg)) + " }"
            try:
                m = gffi.create_shader_module(dev, src, "v", checks)
                pipe = dev.create_compute_pipeline(layout=pl, compute={"module": m, "entry_point": "main"})
                for _ in range(2): t(pipe, groups, active)
                ts = statistics.median(t(pipe, groups, active) for _ in range(7))
                print(f"  checks={checks:4s} {name:32s} wg={wg} groups={groups:5d} {ts*1e3:8.3f} ms", flush=True)
            except Exception as e:
                print(f"  {name}: FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
