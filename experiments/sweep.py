import os
import statistics
import struct

import numpy as np
import wgpu

N = int(os.environ.get("N", 1 << 26)); REPS = int(os.environ.get("REPS", 15))
ads = [a for a in wgpu.gpu.enumerate_adapters_sync() if a.info["backend_type"] != "OpenGL"]
ad = sorted(ads, key=lambda a: a.info["adapter_type"] != "DiscreteGPU")[0]
dev = ad.request_device_sync(required_features=["immediates", "timestamp-query"], required_limits={k: ad.limits[k] for k in ("max-immediate-size", "max-storage-buffer-binding-size", "max-buffer-size")})
U = wgpu.BufferUsage
x = dev.create_buffer(size=N * 4, usage=U.STORAGE | U.COPY_DST); y = dev.create_buffer(size=N * 4, usage=U.STORAGE | U.COPY_DST)
dev.queue.write_buffer(x, 0, np.ones(N, np.float32)); dev.queue.write_buffer(y, 0, np.full(N, 2.0, np.float32))
qs = dev.create_query_set(type="timestamp", count=2); qbuf = dev.create_buffer(size=16, usage=U.QUERY_RESOLVE | U.COPY_SRC)
bgl = dev.create_bind_group_layout(entries=[{"binding": 0, "visibility": 4, "buffer": {"type": "read-only-storage"}}, {"binding": 1, "visibility": 4, "buffer": {"type": "storage"}}])
pl = dev.create_pipeline_layout(bind_group_layouts=[bgl], immediate_size=8)
bg = dev.create_bind_group(layout=bgl, entries=[{"binding": 0, "resource": {"buffer": x}}, {"binding": 1, "resource": {"buffer": y}}])
imm = struct.pack("<fI", 2.0, N)
HDR = "struct P { a: f32, n: u32 }\nvar<immediate> p: P;\n@group(0) @binding(0) var<storage, read> x: array<T>;\n@group(0) @binding(1) var<storage, read_write> y: array<T>;\n"
SCAL = "@compute @workgroup_size(WG) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) { let s = nw.x * WGu; for (var i = g.x; i < p.n; i += s) { y[i] = p.a * x[i] + y[i]; } }"
VEC4 = "@compute @workgroup_size(WG) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) { let s = nw.x * WGu; for (var i = g.x; i < p.n / 4u; i += s) { y[i] = p.a * x[i] + y[i]; } }"
UNR4 = """@compute @workgroup_size(WG) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
 let s = nw.x * WGu; var i = g.x;
 for (; i + 3u * s < p.n; i += 4u * s) { let a0 = x[i]; let a1 = x[i + s]; let a2 = x[i + 2u*s]; let a3 = x[i + 3u*s];
   let b0 = y[i]; let b1 = y[i + s]; let b2 = y[i + 2u*s]; let b3 = y[i + 3u*s];
   y[i] = p.a * a0 + b0; y[i + s] = p.a * a1 + b1; y[i + 2u*s] = p.a * a2 + b2; y[i + 3u*s] = p.a * a3 + b3; }
 for (; i < p.n; i += s) { y[i] = p.a * x[i] + y[i]; } }"""
UNR2 = """@compute @workgroup_size(WG) fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>) {
 let s = nw.x * WGu; var i = g.x;
 for (; i + s < p.n; i += 2u * s) { let a0 = x[i]; let a1 = x[i + s]; let b0 = y[i]; let b1 = y[i + s]; y[i] = p.a * a0 + b0; y[i + s] = p.a * a1 + b1; }
 for (; i < p.n; i += s) { y[i] = p.a * x[i] + y[i]; } }"""
def dev_time(pipe, g):
    enc = dev.create_command_encoder()
    cp = enc.begin_compute_pass(timestamp_writes={"query_set": qs, "beginning_of_pass_write_index": 0, "end_of_pass_write_index": 1})
    cp.set_pipeline(pipe); cp.set_bind_group(0, bg); cp.set_immediates(0, imm, 0, 8); cp.dispatch_workgroups(g); cp.end()
    enc.resolve_query_set(qs, 0, 2, qbuf, 0); dev.queue.submit([enc.finish()])
    t = np.frombuffer(dev.queue.read_buffer(qbuf), np.uint64); return (int(t[1]) - int(t[0])) * 1e-9
res = []
for name, body, T in (("scalar", SCAL, "f32"), ("vec4", VEC4, "vec4<f32>"), ("unroll2", UNR2, "f32"), ("unroll4", UNR4, "f32")):
    for wg in (64, 128, 256, 512, 1024):
        m = dev.create_shader_module(code=HDR.replace("array<T>", f"array<{T}>") + body.replace("WGu", f"{wg}u").replace("WG", str(wg)))
        pipe = dev.create_compute_pipeline(layout=pl, compute={"module": m, "entry_point": "main"})
        for mult in (2, 4, 8, 16, 32, 64, 0):
            g = min(65535, 132 * mult) if mult else 65535
            if g * wg > N: continue
            for _ in range(2): dev_time(pipe, g)
            t = statistics.median(dev_time(pipe, g) for _ in range(REPS))
            res.append((12 * N / t / 1e9, name, wg, g))
res.sort(reverse=True)
for r in res[:25]: print(f"{r[0]:8.1f} GB/s  {r[1]:8s} wg={r[2]:5d} groups={r[3]}")
print("worst", res[-3:])
for name in ("scalar", "unroll2", "unroll4", "vec4"):
    print("best", name, max(r for r in res if r[1] == name))
