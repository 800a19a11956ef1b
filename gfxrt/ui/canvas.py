"""`gr.ui.Canvas` (`window.get_canvas()`): 2D drawing on the window, in call order, and the
place a 3D scene is drawn (`canvas.scene(scene)`). Positions are in [0, 1]^2 with y up; the
first draw of a frame clears the window to the background colour.
"""
from __future__ import annotations

from gfxrt.compiler.npcompat import np

from ..data.ndarray import Ndarray
from ..data.texture import Texture
from ..engine import context
from . import shaders
from .painter import draw_uniform
from .scene import Item, Scene, _counts, _rgb, colors, line_item
from .sources import source


class Canvas:
    def __init__(self, window):
        self._window = window

    def set_background_color(self, color) -> None:
        """The colour (r, g, b) in [0, 1] that each frame starts from (black by default)."""
        self._window._background = _rgb(color, "set_background_color")

    def set_image(self, img) -> None:
        """Cover the window with `img`, indexed [x, y] (y up), of shape (w, h) (grey), (w, h, 3)
        or (w, h, 4): floats in [0, 1] or uint8; a gfxrt field or ndarray of f32 is read in
        place on the device; a 2-D `gr.Texture` shows texel (x, y) at pixel (x, y). An image of
        another size is stretched over the window."""
        if isinstance(img, Texture):
            img = texels(img)
        rt = context.runtime()
        shape = tuple(img.shape) + tuple(getattr(img, "element_shape", ())) if isinstance(img, Ndarray) \
            else np.shape(img)
        if len(shape) not in (2, 3) or (len(shape) == 3 and shape[2] not in (1, 3, 4)):
            raise ValueError(f"set_image: an image of shape (w, h), (w, h, 3) or (w, h, 4), got {shape}")
        w, h = shape[:2]
        c = shape[2] if len(shape) == 3 else 1
        src = source(rt, img, "set_image", (c,), ndim=2)
        u = draw_uniform((1, 1, 1, 1), (0, 0, 0, 0), (0, 0, 0, 3), (c, w, h, c))
        self._window._paint_canvas(Item("image", u, {3: src}, 1))

    def circles(self, centers, radius, color=(0.5, 0.5, 0.5), per_vertex_color=None, per_vertex_radius=None) -> None:
        """Disks at `centers` (2-vectors), `radius` a fraction of the window's height."""
        rt = context.runtime()
        pos = source(rt, centers, "circles: centers", (2, 3))
        flags, cc, srcs = colors(rt, per_vertex_color, pos.n, "circles")
        if per_vertex_radius is not None:
            srcs[5] = source(rt, per_vertex_radius, "circles: per_vertex_radius", (1,))
            flags |= shaders.FLAG_RADII
        u = draw_uniform(_rgb(color, "circles: color"), (float(radius), 0, 0, 0), (0, 0, flags, cc),
                         (pos.comps, 0, 0, 0))
        self._window._paint_canvas(Item("circles", u, {3: pos, **srcs}, pos.n))

    def triangles(self, vertices, color=(0.5, 0.5, 0.5), indices=None, per_vertex_color=None) -> None:
        """Flat-coloured triangles over `vertices` (three in a row, or by `indices`)."""
        rt = context.runtime()
        pos = source(rt, vertices, "triangles: vertices", (2, 3))
        flags, cc, srcs = colors(rt, per_vertex_color, pos.n, "triangles")
        count = _counts(rt, "triangles", pos.n, indices, 0, None, 0, None, srcs, 3)
        flags |= shaders.FLAG_CANVAS | (shaders.FLAG_INDICES if indices is not None else 0) | shaders.FLAG_NORMALS
        u = draw_uniform(_rgb(color, "triangles: color"), (0, 0, 0, 0), (0, 0, flags, cc), (pos.comps, 0, 0, 0))
        self._window._paint_canvas(Item("triangles", u, {3: pos, **srcs}, count))

    def lines(self, vertices, width, indices=None, color=(0.5, 0.5, 0.5), per_vertex_color=None) -> None:
        """Segments between vertices 2k and 2k+1 (or by `indices`), `width` a fraction of the
        window's height."""
        rt = context.runtime()
        item = line_item(rt, "lines", vertices, float(width) * self._window.res[1], indices, color,
                         per_vertex_color, (2, 3))
        self._window._paint_canvas(item)

    def contour(self, scalar_field, cmap_name="plasma", normalize=False) -> None:
        """`set_image` of a 2D scalar field through a matplotlib colour map (Taichi's: needs
        matplotlib; the field is read back)."""
        try:
            from matplotlib import colormaps
        except ImportError:
            raise RuntimeError("canvas.contour needs matplotlib (pip install matplotlib)") from None
        a = np.asarray(scalar_field.to_numpy() if isinstance(scalar_field, Ndarray) else scalar_field, np.float64)
        if a.ndim != 2:
            raise ValueError("contour() can only be used on a 2D scalar field.")
        if normalize:
            a = (a - a.min()) / (a.max() - a.min() + 1e-16)
        self.set_image(np.ascontiguousarray(colormaps[cmap_name](a).astype(np.float32)[:, :, :3]))

    def vector_field(self, vector_field, arrow_spacing=5, scale=0.1, width=0.002, color=(0, 0, 0)) -> None:
        """Arrows of a 2D field of 2-vectors, one every `arrow_spacing` cells (and the last row
        and column), the longest `scale` long (Taichi's; the field is read back)."""
        v = np.asarray(vector_field.to_numpy() if isinstance(vector_field, Ndarray) else vector_field, np.float32)
        if v.ndim != 3 or v.shape[2] != 2:
            raise ValueError(f"vector_field: a 2D field of 2-vectors, got shape {v.shape}")
        nx, ny = v.shape[:2]
        sx = [i * arrow_spacing for i in range(nx // arrow_spacing)] + [nx - 1]
        sy = [j * arrow_spacing for j in range(ny // arrow_spacing)] + [ny - 1]
        i, j = (a.ravel() for a in np.meshgrid(sx, sy, indexing="ij"))
        x, y = i / max(nx - 1, 1), j / max(ny - 1, 1)
        vmax = float(np.linalg.norm(v, axis=-1).max())
        d = v[i, j] * (scale / vmax if vmax > 0 else 0.0)
        ex, ey = x + d[:, 0], y + d[:, 1]
        angle, tip = np.arctan2(d[:, 1], d[:, 0]), np.hypot(d[:, 0], d[:, 1]) * 0.2
        tip_angle = 30 / 180 * 3.14  # Taichi's constants
        a1, a2 = angle + 3.14 - tip_angle, angle - 3.14 + tip_angle
        ends = [(x, y), (ex, ey), (ex, ey), (ex + tip * np.cos(a1), ey + tip * np.sin(a1)),
                (ex, ey), (ex + tip * np.cos(a2), ey + tip * np.sin(a2))]
        points = np.stack([np.stack(e, -1) for e in ends], 1).reshape(-1, 2).astype(np.float32)
        self.lines(points, width, color=color)

    def scene(self, scene) -> None:
        """Draw `scene` (its particles, meshes and lines, lit and depth-tested) and empty it."""
        if not isinstance(scene, Scene):
            raise TypeError(f"canvas.scene takes a gr.ui.Scene, got {type(scene).__name__}")
        self._window._paint_scene(scene)


def texels(tex: Texture) -> np.ndarray:
    """A 2-D texture's texels as an image [x, y] (texel (x, y) at pixel (x, y), as Taichi's
    canvas shows a texture): unorm8 formats as uint8, the others as float32; two channels get a
    zero blue one."""
    if tex.num_dims != 2:
        raise ValueError(f"set_image: a 2-D texture, got a {tex.num_dims}-D one")
    w, h = tex.shape
    raw = tex.to_numpy().reshape(h, w, -1).transpose(1, 0, 2)  # texel (x, y) is the x + y * w-th
    a = raw if raw.dtype == np.uint8 else raw.astype(np.float32)
    if a.shape[2] == 2:
        a = np.concatenate([a, np.zeros_like(a[:, :, :1])], axis=2)
    return a[:, :, 0] if a.shape[2] == 1 else a
