"""gr.ui's render pipelines and its one way to draw: `Painter.encode` records one render pass
into a window's frame (gfxrt/gui/frame.py, with depth) and submits it after the work gfxrt
recorded so far, so that a draw sees every write a kernel made before the call and reads those
buffers where they are.

Every pass has the frame's depth buffer: a scene's pass clears it to 0 (far, in reversed
depth) and tests `greater`; a canvas pass keeps it and neither tests nor writes it.
"""
from __future__ import annotations

import struct
from typing import NamedTuple

import wgpu

from gfxrt.compiler.npcompat import np

from ..gui.frame import DEPTH_FORMAT, FORMAT
from . import shaders


class Kind(NamedTuple):
    """How one kind of draw is built: its shader entries, whether it is depth-tested (drawn in a
    scene), vertices per element (1: a vertex each), its primitive topology, and whether it
    blends onto the picture (2D kinds) or writes its pixels as they are, alpha included."""
    vs: str
    fs: str
    depth: bool
    per: int
    topology: str = "triangle-list"
    blend: bool = True


KINDS = {
    "particles": Kind("vs_particles", "fs_particles", True, 6),
    "mesh": Kind("vs_mesh", "fs_mesh", True, 1),
    "mesh_wire": Kind("vs_mesh_wire", "fs_mesh", True, 1, "line-list"),  # show_wireframe: the edges
    "scene_lines": Kind("vs_lines", "fs_lines", True, 6),
    "triangles": Kind("vs_mesh", "fs_flat", False, 1),
    "lines": Kind("vs_lines", "fs_lines", False, 6),
    "circles": Kind("vs_circles", "fs_circles", False, 6),
    "image": Kind("vs_image", "fs_image", False, 3, blend=False),  # as Taichi's set_image
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
        entries += [{"binding": b, "visibility": vf, "buffer": {"type": "read-only-storage"}} for b in range(2, 8)]
        self.bind_layout = device.create_bind_group_layout(entries=entries)
        self.layout = device.create_pipeline_layout(bind_group_layouts=[self.bind_layout])
        self.empty = device.create_buffer(size=64, usage=wgpu.BufferUsage.STORAGE)
        self.pipelines: dict[str, object] = {}

    def pipeline(self, kind: str):
        p = self.pipelines.get(kind)
        if p is None:
            k = KINDS[kind]
            target = {"format": FORMAT}
            if not k.depth and k.blend:
                target["blend"] = _BLEND
            p = self.pipelines[kind] = self.device.create_render_pipeline(
                layout=self.layout, vertex={"module": self.module, "entry_point": k.vs},
                fragment={"module": self.module, "entry_point": k.fs, "targets": [target]},
                primitive={"topology": k.topology, "cull_mode": "none"},
                depth_stencil={"format": DEPTH_FORMAT, "depth_write_enabled": k.depth,
                               "depth_compare": "greater" if k.depth else "always"})
        return p

    def uniform(self, data: bytes):
        return self.device.create_buffer_with_data(data=data, usage=wgpu.BufferUsage.UNIFORM)

    def bind_group(self, draw: bytes, scene, lights=None, buffers=None):
        """The bind group of one draw: `scene` its Scene uniform buffer, `buffers` maps bindings
        3..7 to storage buffers."""
        buffers = buffers or {}
        res = [self.uniform(draw), scene, lights or self.empty] + \
              [buffers.get(b) or self.empty for b in range(3, 8)]
        return self.device.create_bind_group(layout=self.bind_layout, entries=[
            {"binding": b, "resource": {"buffer": r, "offset": 0, "size": r.size}} for b, r in enumerate(res)])

    def encode(self, frame, draws, clear=None, scene: bool = False) -> None:
        """Record one render pass into `frame` and submit it: `draws` is a list of (kind, bind
        group, element count, instances); the colour is first cleared to `clear` (r, g, b, a)
        unless None, the depth cleared for a scene."""
        encoder, rp = frame.begin(clear, 0.0 if scene else None)
        for kind, group, count, instances in draws:
            if count <= 0 or instances <= 0:
                continue
            rp.set_pipeline(self.pipeline(kind))
            rp.set_bind_group(0, group)
            per = KINDS[kind].per
            if per == 1:  # a vertex per element, `instances` copies (mesh instances)
                rp.draw(count, instances)
            else:  # an instance per element (a sprite, a segment, the image), `per` vertices each
                rp.draw(per, count)
        frame.finish(encoder, rp)
