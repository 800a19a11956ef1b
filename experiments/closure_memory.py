"""Issue 21: what a closure kernel created, launched once and dropped leaves behind.

Default: 800 kernels `make(v)` (each closes over a new float, so each needs its own shader and
pipeline), launched on one gr.ndarray without a sync; prints the process's resident memory at
100 / 400 / 800 kernels and the growth per kernel (`--sync`: a gr.sync() after each launch).
`--wgpu KEEP`: the floor with plain wgpu calls, no gfxrt: create a shader module and pipeline per
kernel, keep the last KEEP alive, submit after each.

lavapipe, this repository's machine: before issue 21, 72.9 KB per kernel from the 100th to the
800th (the pipelines of dropped kernels stayed alive in recorded work and in a program cache
of 256 cleared all at once; lavapipe keeps ~83 KB per pipeline); after, 4.8 KB; plain wgpu
with KEEP=64, 1.5 KB. Run: python -m experiments.closure_memory [--sync | --wgpu KEEP]
"""
import collections
import gc
import os
import sys
import time


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def report(label: str, marks: dict, t0: float) -> None:
    mib = {n: round(v / 2 ** 20, 1) for n, v in marks.items()}
    print(f"{label}: RSS {mib} MiB; per kernel 100->800 {(marks[800] - marks[100]) / 700 / 1024:.1f} KB, "
          f"400->800 {(marks[800] - marks[400]) / 400 / 1024:.1f} KB ({time.time() - t0:.0f} s)")


def gfxrt_kernels(sync: bool) -> None:
    import gfxrt as gr
    x = gr.ndarray(gr.f32, (16,))

    def make(v):
        @gr.kernel
        def k(a: gr.types.ndarray(dtype=gr.f32, ndim=1)):
            for i in range(a.shape[0]):
                a[i] = v
        return k

    marks, t0 = {}, time.time()
    for j in range(800):
        make(float(j))(x)
        if sync:
            gr.sync()
        if j + 1 in (100, 400, 800):
            gr.sync()
            gc.collect()
            marks[j + 1] = rss()
    print(gr.runtime().dev.name)
    report("gfxrt closure kernels" + (", sync after each" if sync else ""), marks, t0)


def wgpu_pipelines(keep: int) -> None:
    import wgpu
    from wgpu.backends.wgpu_native import _ffi
    dev = wgpu.gpu.request_adapter_sync(power_preference="high-performance").request_device_sync()
    bgl = dev.create_bind_group_layout(entries=[{"binding": 0, "visibility": wgpu.ShaderStage.COMPUTE,
                                                 "buffer": {"type": "storage"}}])
    layout = dev.create_pipeline_layout(bind_group_layouts=[bgl])
    alive, marks, t0 = collections.deque(), {}, time.time()
    for j in range(800):
        src = ("@group(0) @binding(0) var<storage, read_write> a: array<f32>;\n@compute @workgroup_size(64) "
               "fn main(@builtin(global_invocation_id) g: vec3<u32>) { if (g.x < arrayLength(&a)) "
               f"{{ a[g.x] = {j}.0; }} }}\n")
        module = dev.create_shader_module(code=src)
        alive.append(dev.create_compute_pipeline(layout=layout, compute={"module": module, "entry_point": "main"}))
        while len(alive) > keep:
            alive.popleft()
        dev.queue.submit([dev.create_command_encoder().finish()])
        if j + 1 in (100, 400, 800):
            gc.collect()
            _ffi.lib.wgpuDevicePoll(dev._internal, True, _ffi.ffi.NULL)
            marks[j + 1] = rss()
    print(dev.adapter.summary)
    report(f"plain wgpu, {keep} pipelines kept", marks, t0)


if __name__ == "__main__":
    if "--wgpu" in sys.argv:
        wgpu_pipelines(int(sys.argv[sys.argv.index("--wgpu") + 1]))
    else:
        gfxrt_kernels("--sync" in sys.argv)
