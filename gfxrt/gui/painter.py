"""gr.GUI's drawing on wgpu render pipelines: a list of draws (circles, lines, triangles, an
image) recorded during a frame and rendered, in order, in one render pass into a Frame.

Data reach the shaders (gfxrt/gui/shaders.py) as read-only storage buffers. A gfxrt field or
ndarray of f32 is bound as it is, its own device buffer (`device_buffer`): no readback, no copy,
the draw sees every kernel launched before it (Frame.finish submits the runtime's work first).
Anything else (numpy, lists, other dtypes) is converted on the host and uploaded once per draw.
"""
from __future__ import annotations

import struct
import weakref

from gfxrt.compiler.npcompat import np

from ..data.ndarray import Ndarray
from ..engine.backend import ShaderStage
from ..engine.backend import wgpu_py as wgpu
from . import shaders
from .frame import FORMAT

_STAGES = ShaderStage.VERTEX | ShaderStage.FRAGMENT
_BLEND = {"color": {"src_factor": "src-alpha", "dst_factor": "one-minus-src-alpha", "operation": "add"},
          "alpha": {"src_factor": "one", "dst_factor": "one-minus-src-alpha", "operation": "add"}}
_KINDS = {"circles": (shaders.CIRCLES, "triangle-list", True), "lines": (shaders.LINES, "triangle-list", True),
          "triangles": (shaders.TRIANGLES, "triangle-list", False), "image": (shaders.IMAGE, "triangle-list", False)}
PER_ITEM_COLOR, PER_ITEM_RADIUS = 1, 2


class Pipelines:
    """The render pipelines of one device (made on first use, shared by every GUI on it)."""

    _of: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    @classmethod
    def of(cls, device) -> Pipelines:
        p = cls._of.get(device)
        if p is None:
            p = cls._of[device] = cls(device)
        return p

    def __init__(self, device):
        self.device = device
        entries = [{"binding": 0, "visibility": _STAGES, "buffer": {"type": wgpu.BufferBindingType.uniform}}]
        entries += [{"binding": k, "visibility": _STAGES,
                     "buffer": {"type": wgpu.BufferBindingType.read_only_storage}} for k in (1, 2, 3)]
        self.layout = device.create_bind_group_layout(entries=entries)
        self.pipeline_layout = device.create_pipeline_layout(bind_group_layouts=[self.layout])
        self.dummy = device.create_buffer(size=16, usage=wgpu.BufferUsage.STORAGE)
        self._pipes: dict = {}

    def __getitem__(self, kind: str):
        pipe = self._pipes.get(kind)
        if pipe is None:
            src, topology, blend = _KINDS[kind]
            module = self.device.create_shader_module(code=src, label=f"gfxrt gui {kind}")
            target = {"format": FORMAT, "blend": _BLEND if blend else None, "write_mask": wgpu.ColorWrite.ALL}
            pipe = self._pipes[kind] = self.device.create_render_pipeline(
                layout=self.pipeline_layout, label=f"gfxrt gui {kind}",
                vertex={"module": module, "entry_point": "vs", "buffers": []},
                primitive={"topology": topology, "cull_mode": wgpu.CullMode.none},
                depth_stencil=None, multisample={"count": 1, "mask": 0xFFFFFFFF, "alpha_to_coverage_enabled": False},
                fragment={"module": module, "entry_point": "fs", "targets": [target]})
        return pipe


def device_buffer(arr, components: int):
    """(wgpu buffer, f32 count) of a dense gfxrt field or ndarray of f32 whose elements hold
    `components` numbers (a 2-vector per item: 2; 0: any), else None (the host path)."""
    if not isinstance(arr, Ndarray) or getattr(arr, "__gfxrt_sparse__", None) is not None:
        return None
    if getattr(arr._scalar, "name", None) != "f32" or getattr(arr, "_buffer", None) is None:
        return None
    shape = tuple(arr.element_shape)
    if components and shape not in ((components,), (components, 1)):
        return None
    return arr._buffer, arr.nbytes // 4


def host_f32(a, what: str) -> np.ndarray:
    """`a` (numpy, list, gfxrt array) as a contiguous float32 numpy array."""
    if isinstance(a, Ndarray):
        a = a.to_numpy()
    try:
        return np.ascontiguousarray(np.asarray(a, dtype=np.float32))
    except (TypeError, ValueError) as e:
        raise TypeError(f"{what} must be numbers (a numpy array, a list or a gfxrt field), got {type(a).__name__}") \
            from e


class Draw:
    """One recorded draw: pipeline kind, vertex and instance counts, parameters, buffers (and the
    arrays they belong to, kept alive until the draw is submitted)."""

    __slots__ = ("kind", "vertices", "instances", "params", "buffers", "keep")

    def __init__(self, kind, vertices, instances, params, buffers, keep=()):
        self.kind, self.vertices, self.instances = kind, vertices, instances
        self.params, self.buffers, self.keep = params, buffers, keep


class Painter:
    """Records draws for one frame and renders them into `frame`."""

    def __init__(self, frame):
        self.frame = frame
        self.device = frame.device
        self.pipes = Pipelines.of(self.device)
        self.draws: list[Draw] = []

    def upload(self, data: np.ndarray):
        """A storage buffer holding `data` (at least 16 bytes)."""
        raw = data.tobytes()
        if len(raw) < 16:
            raw += bytes(16 - len(raw))
        return self.device.create_buffer_with_data(data=raw, usage=wgpu.BufferUsage.STORAGE)

    def source(self, arr, components: int, what: str, count: int | None = None):
        """(buffer, items, keep): an array's f32 data on the device; items = its count of
        `components`-tuples."""
        dev = device_buffer(arr, components)
        if dev is not None:
            buf, n = dev
            return buf, n // max(components, 1), arr
        a = host_f32(arr, what)
        if components:
            if a.ndim == 3 and a.shape[2] == 1:
                a = a[:, :, 0]
            if a.ndim == 1 and a.size == components:
                a = a.reshape(1, components)
            if a.ndim != 2 or a.shape[1] != components:
                raise ValueError(f"{what} must have shape (n, {components}), got {a.shape}")
        return self.upload(a), (a.shape[0] if components else a.size), None

    def add(self, kind: str, vertices: int, instances: int, buffers, params: dict, keep=()) -> None:
        if vertices and instances:
            self.draws.append(Draw(kind, vertices, instances, params, buffers, keep))

    def render(self, clear_rgba=None) -> None:
        """Render the recorded draws in order into the frame (clearing it first to `clear_rgba`
        unless None), in one render pass, and forget them."""
        draws, self.draws = self.draws, []
        if clear_rgba is None and not draws:
            return
        res = (float(self.frame.width), float(self.frame.height))
        encoder, rpass = self.frame.begin(clear_rgba)
        for d in draws:
            p = d.params
            data = struct.pack("<2ffIIIII", *res, float(p.get("radius", 1.0)), int(p.get("flags", 0)),
                               int(p.get("color", 0)) & 0xFFFFFF, int(p.get("channels", 0)), int(p.get("offset", 0)), 0)
            ubuf = self.device.create_buffer_with_data(data=data, usage=wgpu.BufferUsage.UNIFORM)
            bufs = [self.pipes.dummy if b is None else b for b in d.buffers]
            bufs += [self.pipes.dummy] * (3 - len(bufs))
            bg = self.device.create_bind_group(layout=self.pipes.layout, entries=[
                {"binding": 0, "resource": {"buffer": ubuf, "offset": 0, "size": 32}},
                *({"binding": k + 1, "resource": {"buffer": b, "offset": 0, "size": b.size}}
                  for k, b in enumerate(bufs))])
            rpass.set_pipeline(self.pipes[d.kind])
            rpass.set_bind_group(0, bg)
            rpass.draw(d.vertices, d.instances)
        self.frame.finish(encoder, rpass)
