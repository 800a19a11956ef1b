"""Where lavapipe's time goes when gr.GUI draws many tiny primitives (issue 25): N tiny
triangles, one render pass, three vertex shaders: positions read from a storage buffer (what
gr.GUI does), from a vertex buffer, or computed from the vertex index alone (no memory).
Run: PYTHONPATH=$PWD XDG_RUNTIME_DIR=/tmp python -m experiments.gui_vertex_cost [N]"""
import sys
import time

import numpy as np
import wgpu

import gfxrt as gr

HEAD = """
@group(0) @binding(0) var<storage, read> pos: array<f32>;
@fragment fn fs() -> @location(0) vec4<f32> { return vec4<f32>(1.0, 1.0, 1.0, 1.0); }
fn corner(k: u32) -> vec2<f32> { return vec2<f32>(f32(k & 1u), f32(k >> 1u)) * 0.004; }
"""
VS = {
    "storage": "@vertex fn vs(@builtin(vertex_index) v: u32) -> @builtin(position) vec4<f32> {"
               " let i = v / 3u; return vec4<f32>(vec2<f32>(pos[2u * i], pos[2u * i + 1u]) * 2.0 - 1.0"
               " + corner(v % 3u), 0.0, 1.0); }",
    "vertex buffer": "@vertex fn vs(@location(0) p: vec2<f32>, @builtin(vertex_index) v: u32) -> "
                     "@builtin(position) vec4<f32> { return vec4<f32>(p * 2.0 - 1.0 + corner(v % 3u), 0.0, 1.0); }",
    "index only": "@vertex fn vs(@builtin(vertex_index) v: u32) -> @builtin(position) vec4<f32> {"
                  " let i = f32(v / 3u); return vec4<f32>(fract(vec2<f32>(i * 0.618, i * 0.382)) * 2.0 - 1.0"
                  " + corner(v % 3u), 0.0, 1.0); }",
}


def main(n):
    dev = gr.device().device
    tex = dev.create_texture(size=(512, 512, 1), format="rgba8unorm", usage=wgpu.TextureUsage.RENDER_ATTACHMENT)
    view = tex.create_view()
    p = np.random.default_rng(0).random((n, 2), dtype=np.float32)
    sbuf = dev.create_buffer_with_data(data=p.tobytes(), usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
    vbuf = dev.create_buffer_with_data(data=np.repeat(p, 3, axis=0).tobytes(), usage=wgpu.BufferUsage.VERTEX)
    for name, vs in VS.items():
        mod = dev.create_shader_module(code=HEAD + vs)
        bufs = [{"array_stride": 8, "step_mode": "vertex", "attributes": [
            {"format": "float32x2", "offset": 0, "shader_location": 0}]}] if name == "vertex buffer" else []
        pipe = dev.create_render_pipeline(layout="auto", vertex={"module": mod, "entry_point": "vs", "buffers": bufs},
                                          fragment={"module": mod, "entry_point": "fs",
                                                    "targets": [{"format": "rgba8unorm"}]},
                                          primitive={"topology": "triangle-list"})
        bg = None if name != "storage" else dev.create_bind_group(
            layout=pipe.get_bind_group_layout(0), entries=[{"binding": 0, "resource": {"buffer": sbuf}}])
        times = []
        for _ in range(4):
            t = time.perf_counter()
            enc = dev.create_command_encoder()
            rp = enc.begin_render_pass(color_attachments=[{"view": view, "load_op": "clear", "store_op": "store",
                                                           "clear_value": (0, 0, 0, 1)}])
            rp.set_pipeline(pipe)
            if bg is not None:
                rp.set_bind_group(0, bg)
            if name == "vertex buffer":
                rp.set_vertex_buffer(0, vbuf)
            rp.draw(3 * n)
            rp.end()
            dev.queue.submit([enc.finish()])
            dev.queue.read_buffer(sbuf, 0, 4)  # waits for the queue
            times.append(time.perf_counter() - t)
        print(f"{n} triangles, {name:13s}: {min(times[1:]) * 1e3:8.1f} ms per frame")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20000)
