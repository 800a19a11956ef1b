"""gr.ui's render pipelines and its one way to draw: `Painter.draw` encodes one render pass
of one kind of draw into a window's Target and submits it after the kernels recorded so far
(gfxrt's open command encoder is flushed first, so a draw sees every write a kernel made
before the call, and reads those buffers where they are).
"""
from __future__ import annotations

import struct

import numpy as np
import wgpu

from . import shaders
from .target import COLOR_FORMAT, DEPTH_FORMAT

# kind -> (vertex entry, fragment entry, drawn in a scene (depth), vertices per element)
KINDS = {
    "particles": ("vs_particles", "fs_particles", True, 6),
    "mesh": ("vs_mesh", "fs_mesh", True, 1),
    "scene_lines": ("vs_lines", "fs_lines", True, 6),
    "triangles": ("vs_mesh", "fs_flat", False, 1),
    "lines": ("vs_lines", "fs_lines", False, 6),
    "circles": ("vs_circles", "fs_circles", False, 6),
    "image": ("vs_image", "fs_image", False, 3),
}
_BLEND = {"color": {"src_factor": "src-alpha", "dst_factor": "one-minus-src-alpha", "operation": "add"},
          "alpha": {"src_factor": "one", "dst_factor": "one-minus-src-alpha", "operation": "add"}}


def draw_uniform(color=(0.5, 0.5, 0.5, 1.0), params=(0.0, 0.0, 0.0, 0.0), a=(0, 0, 0, 3), b=(3, 0, 0, 0)) -> bytes:
    """The `Draw` uniform of shaders.WGSL."""
    color = tuple(float(c) for c in color) + (1.0,) * (4 - len(color))
    return struct.pack("4f4f4i4i", *color[:4], *params, *a, *b)


def scene_uniform(view, proj, camera_pos, ambient, width, height, tan_half_fov, n_lights) -> bytes:
    """The `Scene` uniform of shaders.WGSL (the matrices as Taichi lays them out: column-major)."""
    return (np.asarray(view, np.float32).tobytes() + np.asarray(proj, np.float32).tobytes()
            + struct.pack("4f4f4f", *camera_pos, 1.0, *ambient, 1.0, width, height, tan_half_fov, n_lights))


class Painter:
    """The shader module, the bind group layout and the pipelines (built on first use) of one device."""

    def __init__(self, device):
        self.device = device
        self.module = device.create_shader_module(code=shaders.WGSL, label="gr.ui")
        vf = wgpu.ShaderStage.VERTEX | wgpu.ShaderStage.FRAGMENT
        entries = [{"binding": 0, "visibility": vf, "buffer": {"type": "uniform"}},
                   {"binding": 1, "visibility": vf, "buffer": {"type": "uniform"}}]
        entries += [{"binding": b, "visibility": vf, "buffer": {"type": "read-only-storage"}} for b in range(2, 7)]
        self.bind_layout = device.create_bind_group_layout(entries=entries)
        self.layout = device.create_pipeline_layout(bind_group_layouts=[self.bind_layout])
        self.empty = device.create_buffer(size=64, usage=wgpu.BufferUsage.STORAGE)
        self.no_scene = self.uniform(bytes(176))
        self.pipelines: dict[str, object] = {}

    def pipeline(self, kind: str):
        p = self.pipelines.get(kind)
        if p is None:
            vs, fs, depth, _ = KINDS[kind]
            target = {"format": COLOR_FORMAT}
            if not depth:
                target["blend"] = _BLEND
            desc = {"layout": self.layout, "vertex": {"module": self.module, "entry_point": vs},
                    "fragment": {"module": self.module, "entry_point": fs, "targets": [target]},
                    "primitive": {"topology": "triangle-list", "cull_mode": "none"}}
            if depth:
                desc["depth_stencil"] = {"format": DEPTH_FORMAT, "depth_write_enabled": True,
                                         "depth_compare": "greater"}
            p = self.pipelines[kind] = self.device.create_render_pipeline(**desc)
        return p

    def uniform(self, data: bytes):
        return self.device.create_buffer_with_data(data=data, usage=wgpu.BufferUsage.UNIFORM)

    def bind_group(self, draw: bytes, scene=None, lights=None, buffers=None):
        """The bind group of one draw: `buffers` maps bindings 3..6 to storage buffers."""
        buffers = buffers or {}
        res = [self.uniform(draw), scene or self.no_scene, lights or self.empty] + \
              [buffers.get(b) or self.empty for b in range(3, 7)]
        return self.device.create_bind_group(layout=self.bind_layout, entries=[
            {"binding": b, "resource": {"buffer": r, "offset": 0, "size": r.size}} for b, r in enumerate(res)])

    def encode(self, target, passes, clear=None) -> None:
        """Encode and submit one render pass per entry of `passes`, a list of (depth, draws)
        with draws a list of (kind, bind group, element count): the first pass clears the
        colour to `clear` (r, g, b, a) unless None, a pass with depth clears the depth first."""
        encoder = self.device.create_command_encoder()
        for depth, draws in passes:
            rp = encoder.begin_render_pass(color_attachments=[target.color_attachment(clear)],
                                           depth_stencil_attachment=target.depth_attachment() if depth else None)
            clear = None
            for kind, group, count in draws:
                if count <= 0:
                    continue
                rp.set_pipeline(self.pipeline(kind))
                rp.set_bind_group(0, group)
                per = KINDS[kind][3]
                if per == 1:
                    rp.draw(count)
                else:  # an instance per element (a sprite, a segment, the image), `per` vertices each
                    rp.draw(per, count)
            rp.end()
        if clear is not None:  # nothing drawn: the clear alone
            rp = encoder.begin_render_pass(color_attachments=[target.color_attachment(clear)])
            rp.end()
        self.device.queue.submit([encoder.finish()])
