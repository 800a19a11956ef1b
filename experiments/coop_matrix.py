"""Does wgpu-native's experimental `cooperative-matrix` feature work on this adapter, how exact
is it, and how fast (issue 13)? Raw wgpu, no gfxrt: gfxrt's language has no cooperative matrix
types.

wgpu 0.32 exposes the feature where the Vulkan driver reports an 8x8x8 f32 configuration of
VK_KHR_cooperative_matrix; WGSL then has `enable wgpu_cooperative_matrix;`,
`coop_mat8x8<f32, A|B|C>`, `coopLoad`, `coopMultiplyAdd` and `coopStore`. This runs the plain
kernel (one subgroup per 8x8 tile of c, tiles of a and b loaded straight from storage, no
workgroup memory) on an N x N f32 product and prints the largest error against float64
(f32 FMA accumulation over K = 1024 stays near 1e-5; TF32 inputs, 10-bit mantissas, would give
about 1e-3) and the time.

On the lent H100 (2026-11-24, driver 580.159.04) the adapter lists `cooperative-matrix`, but
request_device fails: "Some experimental features, EXPERIMENTAL_COOPERATIVE_MATRIX, were
requested, but experimental features are not enabled"; wgpu-native 0.32's C API (wgpu.h:
WGPUDeviceExtras holds a trace path only) has no way to enable them, so the kernel never ran.

Run: `python -m experiments.coop_matrix [N] [workgroup size]` (default 1024, 32).
"""
from __future__ import annotations

import sys
import time

import numpy as np
import wgpu

SHADER = """enable wgpu_cooperative_matrix;

@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> dims: vec4<u32>;  // n, n, n, n

@compute @workgroup_size(WG, 1, 1)
fn main(@builtin(workgroup_id) wid: vec3<u32>) {
    let n = dims.x;
    let row = wid.x * 8u;
    let col = wid.y * 8u;
    var acc = coopLoad<coop_mat8x8<f32, C>>(&C[row * n + col], n);
    for (var k = 0u; k < n; k += 8u) {
        let a = coopLoad<coop_mat8x8<f32, A>>(&A[row * n + k], n);
        let b = coopLoad<coop_mat8x8<f32, B>>(&B[k * n + col], n);
        acc = coopMultiplyAdd(a, b, acc);
    }
    coopStore(acc, &C[row * n + col], n);
}
"""


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    wg = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    print(f"adapter: {adapter.summary}; wgpu {wgpu.__version__}")
    if "cooperative-matrix" not in adapter.features:
        print("cooperative-matrix: not offered by this adapter")
        return
    try:
        device = adapter.request_device_sync(required_features=["cooperative-matrix"])
        module = device.create_shader_module(code=SHADER.replace("WG", str(wg)))
        pipeline = device.create_compute_pipeline(layout="auto", compute={"module": module, "entry_point": "main"})
    except Exception as e:  # noqa: BLE001 (a probe reports what failed)
        print(f"cooperative-matrix: device, shader or pipeline failed: {type(e).__name__}: {e}"[:2000])
        return
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    ba = device.create_buffer_with_data(data=a, usage=usage)
    bb = device.create_buffer_with_data(data=b, usage=usage)
    bc = device.create_buffer_with_data(data=np.zeros((n, n), np.float32), usage=usage)
    bu = device.create_buffer_with_data(data=np.array([n, n, n, n], np.uint32),
                                        usage=wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_SRC)
    group = device.create_bind_group(layout=pipeline.get_bind_group_layout(0), entries=[
        {"binding": i, "resource": {"buffer": buf, "offset": 0, "size": buf.size}}
        for i, buf in enumerate((ba, bb, bc, bu))])

    def run(reps: int) -> float:
        device.queue.write_buffer(bc, 0, np.zeros((n, n), np.float32))
        enc = device.create_command_encoder()
        for _ in range(reps):
            cp = enc.begin_compute_pass()
            cp.set_pipeline(pipeline)
            cp.set_bind_group(0, group)
            cp.dispatch_workgroups(n // 8, n // 8, 1)
            cp.end()
        t0 = time.perf_counter()
        device.queue.submit([enc.finish()])
        device.queue.read_buffer(bu)  # waits for the work
        return time.perf_counter() - t0

    run(1)
    c = np.frombuffer(device.queue.read_buffer(bc), np.float32).reshape(n, n)
    want = a.astype(np.float64) @ b.astype(np.float64)
    err = float(np.abs(c - want).max())
    f32 = float(np.abs((a @ b) - want).max())
    print(f"cooperative-matrix {n}x{n}, workgroup {wg}: max error {err:.2e} (numpy f32: {f32:.2e})")
    reps = 20
    run(reps)
    t = min(run(reps) for _ in range(3)) / reps
    print(f"cooperative-matrix {n}x{n}: {t * 1e3:.3f} ms per product, {2 * n ** 3 / t / 1e12:.2f} TFLOP/s "
          "(accumulating c is not reset between repeats: timing only)")


if __name__ == "__main__":
    main()
