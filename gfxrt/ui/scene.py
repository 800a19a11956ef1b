"""`gr.ui.Scene`: what a 3D view holds for one frame (particles, meshes, lines, lights and the
camera), drawn into the window's canvas by `canvas.scene(scene)`, which empties it, as
Taichi's GGUI does. Every method takes the containers kernels write (gfxrt fields and
ndarrays of 3-vectors: read in place on the device) or numpy arrays.
"""
from __future__ import annotations

import warnings

from gfxrt.compiler.npcompat import np

from ..engine import context
from . import shaders
from .camera import Camera
from .normals import indexed_normals
from .painter import draw_uniform
from .sources import source, upload

_COLOR = (3, 4)


def _rgb(color, what: str) -> tuple[float, float, float]:
    c = tuple(float(v) for v in color)
    if len(c) not in (3, 4):
        raise ValueError(f"{what}: an (r, g, b) triple in [0, 1], got {color!r}")
    return c[:3]


class Item:
    """One draw of a scene or a canvas: its kind, Draw uniform, sources by binding and count."""

    def __init__(self, kind: str, uniform: bytes, sources: dict, count: int, instances: int = 1):
        self.kind, self.uniform, self.sources, self.count, self.instances = kind, uniform, sources, count, instances


def colors(rt, per_vertex_color, n: int, what: str):
    """(flag, colour components, {4: source}) of a draw's per-vertex colours."""
    if per_vertex_color is None:
        return 0, 3, {}
    src = source(rt, per_vertex_color, f"{what}: per_vertex_color", _COLOR)
    if src.n < n:
        raise ValueError(f"{what}: per_vertex_color has {src.n} elements, the draw reads {n}")
    return shaders.FLAG_COLORS, src.comps, {4: src}


class Scene:
    """A 3D scene (`window.get_scene()`, or Taichi's deprecated `gr.ui.Scene()`)."""

    def __init__(self, _window=None):
        if _window is None:
            warnings.warn("Instantiating gr.ui.Scene directly is deprecated, use the get_scene() function "
                          "from a gr.ui.Window object instead.", DeprecationWarning, stacklevel=2)
        self.camera = Camera()
        self.items: list[Item] = []
        self.lights: list[tuple] = []
        self.ambient = (0.1, 0.1, 0.1)  # Taichi's default ambient light

    def set_camera(self, camera) -> None:
        if not isinstance(camera, Camera):
            raise TypeError(f"set_camera takes a gr.ui.Camera, got {type(camera).__name__}")
        self.camera = camera

    def point_light(self, pos, color) -> None:
        p = tuple(float(v) for v in pos)
        if len(p) != 3:
            raise ValueError(f"point_light: pos is 3 numbers, got {pos!r}")
        self.lights.append((p, _rgb(color, "point_light")))

    def ambient_light(self, color) -> None:
        self.ambient = _rgb(color, "ambient_light")

    def particles(self, centers, radius, color=(0.5, 0.5, 0.5), per_vertex_color=None, per_vertex_radius=None,
                  index_offset: int = 0, index_count: int | None = None) -> None:
        """Spheres of `radius` (or `per_vertex_radius[i]`) at `centers[i]`, for i in
        [index_offset, index_offset + index_count)."""
        rt = context.runtime()
        pos = source(rt, centers, "particles: centers", (3,))
        count = pos.n - index_offset if index_count is None else int(index_count)
        _range_check("particles", index_offset, count, pos.n)
        flags, cc, srcs = colors(rt, per_vertex_color, pos.n, "particles")
        if per_vertex_radius is not None:
            srcs[5] = source(rt, per_vertex_radius, "particles: per_vertex_radius", (1,))
            flags |= shaders.FLAG_RADII
        u = draw_uniform(_rgb(color, "particles: color"), (float(radius), 0, 0, 0),
                         (int(index_offset), 0, flags, cc), (3, 0, 0, 0))
        self.items.append(Item("particles", u, {3: pos, **srcs}, count))

    def mesh(self, vertices, indices=None, normals=None, color=(0.5, 0.5, 0.5), per_vertex_color=None,
             two_sided: bool = False, vertex_offset: int = 0, vertex_count: int | None = None,
             index_offset: int = 0, index_count: int | None = None, show_wireframe: bool = False) -> None:
        """Triangles over `vertices` (three in a row, or by `indices`), lit by the scene's lights."""
        self.mesh_instance(vertices, indices, normals, color, per_vertex_color, two_sided, None, 0, None,
                           vertex_offset, vertex_count, index_offset, index_count, show_wireframe)

    def mesh_instance(self, vertices, indices=None, normals=None, color=(0.5, 0.5, 0.5), per_vertex_color=None,
                      two_sided: bool = False, transforms=None, instance_offset: int = 0,
                      instance_count: int | None = None, vertex_offset: int = 0, vertex_count: int | None = None,
                      index_offset: int = 0, index_count: int | None = None, show_wireframe: bool = False) -> None:
        """`mesh`, drawn once per 4x4 matrix of `transforms` (a matrix field: instance k at
        transforms[instance_offset + k] @ (x, 1)), lit as the untransformed mesh, as Taichi's;
        without transforms, the mesh once. `show_wireframe`: the triangles' edges only, lit lines
        one pixel wide."""
        rt = context.runtime()
        pos = source(rt, vertices, "mesh: vertices", (3,))
        flags, cc, srcs = colors(rt, per_vertex_color, pos.n, "mesh")
        count = _counts(rt, "mesh", pos.n, indices, vertex_offset, vertex_count, index_offset, index_count, srcs, 3)
        if normals is None and indices is not None:
            normals = indexed_normals(vertices, indices)
        if normals is not None:
            srcs[5] = source(rt, normals, "mesh: normals", (3,))
            flags |= shaders.FLAG_NORMALS
        flags |= shaders.FLAG_INDICES if indices is not None else 0
        instances = 1
        if transforms is not None:
            srcs[7] = source(rt, transforms, "mesh_instance: transforms", (16,))
            instances = srcs[7].n - instance_offset if instance_count is None else int(instance_count)
            _range_check("mesh_instance (transforms)", instance_offset, instances, srcs[7].n)
            flags |= shaders.FLAG_INSTANCES
        u = draw_uniform(_rgb(color, "mesh: color"), (0.0, 1.0 if two_sided else 0.0, float(instance_offset), 0),
                         (int(vertex_offset), int(index_offset), flags, cc), (3, 0, 0, 0))
        if show_wireframe:  # the triangles' edges only, as Taichi's (6 line vertices per 3 corners)
            self.items.append(Item("mesh_wire", u, {3: pos, **srcs}, count // 3 * 6, instances))
        else:
            self.items.append(Item("mesh", u, {3: pos, **srcs}, count, instances))

    def lines(self, vertices, width, indices=None, color=(0.5, 0.5, 0.5), per_vertex_color=None,
              vertex_offset: int = 0, vertex_count: int | None = None, index_offset: int = 0,
              index_count: int | None = None) -> None:
        """Segments between vertices 2k and 2k+1 (or by `indices`), `width` pixels wide."""
        rt = context.runtime()
        item = line_item(rt, "scene_lines", vertices, width, indices, color, per_vertex_color, (3,),
                         vertex_offset, vertex_count, index_offset, index_count)
        self.items.append(item)

    def _take(self):
        items, lights, self.items, self.lights = self.items, self.lights, [], []
        return items, lights


def line_item(rt, kind, vertices, width, indices, color, per_vertex_color, comps, vertex_offset=0,
              vertex_count=None, index_offset=0, index_count=None) -> Item:
    what = "lines"
    pos = source(rt, vertices, f"{what}: vertices", comps)
    flags, cc, srcs = colors(rt, per_vertex_color, pos.n, what)
    count = _counts(rt, what, pos.n, indices, vertex_offset, vertex_count, index_offset, index_count, srcs, 2)
    flags |= shaders.FLAG_INDICES if indices is not None else 0
    if kind == "lines":
        flags |= shaders.FLAG_CANVAS
    u = draw_uniform(_rgb(color, f"{what}: color"), (float(width), 0, 0, 0),
                     (int(vertex_offset), int(index_offset), flags, cc), (pos.comps, 0, 0, 0))
    return Item(kind, u, {3: pos, **srcs}, count // 2)


def _range_check(what, first, count, n) -> None:
    if first < 0 or count < 0 or first + count > n:
        raise ValueError(f"{what}: elements [{first}, {first + count}) are outside the {n} given")


def _counts(rt, what, n, indices, vertex_offset, vertex_count, index_offset, index_count, srcs, per) -> int:
    """How many vertices a draw walks (checked against the data), the index source put in `srcs`."""
    if indices is None:
        count = n - vertex_offset if vertex_count is None else int(vertex_count)
        _range_check(what, vertex_offset, count, n)
    else:
        idx = source(rt, indices, f"{what}: indices", (1, 2, 3), kind="u32")
        total = idx.n * idx.comps
        count = total - index_offset if index_count is None else int(index_count)
        _range_check(f"{what} (indices)", index_offset, count, total)
        srcs[6] = idx
    return count - count % per


def host_item(rt, kind, positions, colors_rgba, comps=2) -> Item:
    """A canvas draw of host data (the widgets' overlay): positions (n, comps), colours (n, 4)."""
    pos = upload(rt, np.asarray(positions, np.float32), len(positions), comps)
    col = upload(rt, np.asarray(colors_rgba, np.float32), len(colors_rgba), 4)
    u = draw_uniform((1, 1, 1, 1), (0, 0, 0, 0), (0, 0, shaders.FLAG_COLORS | shaders.FLAG_CANVAS, 4), (comps, 0, 0, 0))
    return Item(kind, u, {3: pos, 4: col}, len(positions))
