"""How the adapter's loop limiter behaves: plain WGSL, no gfxrt compiler.

mesa's llvmpipe (lavapipe) stops loops after LP_MAX_TGSI_LOOP_ITERATIONS = 65535 passes. This
shows that the counter is one per invocation, shared by every loop and never reset on loop
entry (two loops of 40000: 65534 passes in all; 100 x 1000 nested: 65405), so
chunking a loop into an outer loop cannot get past it, while copying the body per pass does.
On a GPU every line prints the full count. Run: python -m experiments.loop_cap
"""
import numpy as np
import wgpu


def main():
    dev = wgpu.gpu.request_adapter_sync(power_preference="high-performance").request_device_sync()
    print(dev.adapter.summary)

    def run(body: str) -> int:
        src = ("@group(0) @binding(0) var<storage, read_write> o: array<u32>;\n"
               f"@compute @workgroup_size(1) fn main() {{ var c = 0u; {body} o[0] = c; }}")
        pipe = dev.create_compute_pipeline(layout="auto", compute={
            "module": dev.create_shader_module(code=src), "entry_point": "main"})
        buf = dev.create_buffer(size=4, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
        bg = dev.create_bind_group(layout=pipe.get_bind_group_layout(0),
                                   entries=[{"binding": 0, "resource": {"buffer": buf}}])
        enc = dev.create_command_encoder()
        cp = enc.begin_compute_pass()
        cp.set_pipeline(pipe)
        cp.set_bind_group(0, bg)
        cp.dispatch_workgroups(1)
        cp.end()
        dev.queue.submit([enc.finish()])
        return int(np.frombuffer(dev.queue.read_buffer(buf), np.uint32)[0])

    probes = {
        "one loop of 100000": "for (var k = 0u; k < 100000u; k++) { c += 1u; }",
        "two loops of 40000": "for (var k = 0u; k < 40000u; k++) { c += 1u; } "
                              "for (var k = 0u; k < 40000u; k++) { c += 1u; }",
        "100 x 1000 nested": "for (var j = 0u; j < 100u; j++) { for (var k = 0u; k < 1000u; k++) { c += 1u; } }",
        "2 chunks x 50000": "for (var j = 0u; j < 2u; j++) { for (var k = 0u; k < 50000u; k++) { c += 1u; } }",
        "100000, 4 per pass": "for (var k = 0u; k < 100000u; k += 4u) { c += 1u; c += 1u; c += 1u; c += 1u; }",
    }
    for name, body in probes.items():
        print(f"{name:22s} {run(body)}")


if __name__ == "__main__":
    main()
