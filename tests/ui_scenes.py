"""Small GGUI scenes written once for Taichi and gfxrt: `render(ti, name)` draws scene `name`
with the module given (`taichi` or `gfxrt`) and returns the window's picture
(`get_image_buffer_as_numpy()`: float32 (W, H, 4), [x, y], y up).

tests/golden/ui/NAME.png holds Taichi 1.7.4's picture of each (GGUI on lavapipe), made by
`python tests/ui_scenes.py --taichi-python /tmp/ti/bin/python` (one process per scene: Taichi's
GGUI opens one window per process); tests/test_ui.py compares gfxrt's with them.
"""
import numpy as np

W, H = 64, 48
SCENES = ("particle", "particles", "mesh_indexed", "mesh_two_sided", "mesh_instance", "mesh_wireframe", "image",
          "image_rgba", "image_texture", "canvas", "lines", "scene_lines", "vector_field")


def _camera(ui, pos=(0.3, 0.4, 3.0)):
    c = ui.Camera()
    c.position(*pos)
    c.lookat(0, 0, 0)
    c.up(0, 1, 0)
    return c


def _vec(ti, n, rows):
    f = ti.Vector.field(n, ti.f32, len(rows))
    f.from_numpy(np.array(rows, np.float32))
    return f


MESH = [[-1, -1, 0], [1, -1, 0], [0, 1, 0], [-0.5, -0.5, 0.5], [0.8, -0.2, 0.5], [0, 0.6, 0.5]]
COLORS = [[1, 0, 0]] * 3 + [[0, 1, 0]] * 3


def render(ti, name):
    ui = ti.ui
    win = ui.Window("gfxrt ui test", (W, H), show_window=False)
    canvas, scene = win.get_canvas(), win.get_scene()
    if name == "particle":  # one sphere, full ambient light: its colour at its projected place
        canvas.set_background_color((0.1, 0.2, 0.3))
        scene.set_camera(_camera(ui, (0, 0, 3)))
        scene.particles(_vec(ti, 3, [[0.5, 0.2, 0]]), radius=0.1, color=(1, 0, 0))
        scene.ambient_light((1, 1, 1))
        canvas.scene(scene)
    elif name == "particles":  # per-particle colours and radii, a point light, depth between spheres
        canvas.set_background_color((1, 1, 1))
        scene.set_camera(_camera(ui))
        r = ti.field(ti.f32, 3)
        r.from_numpy(np.array([0.2, 0.3, 0.15], np.float32))
        scene.point_light((0, 3, 3), (1, 1, 1))
        scene.particles(_vec(ti, 3, [[0, 0, 0], [0.5, 0.5, -0.5], [-0.6, 0.1, 0.3]]), radius=0.1,
                        per_vertex_color=_vec(ti, 3, COLORS[2:5]), per_vertex_radius=r)
        canvas.scene(scene)
    elif name == "mesh_indexed":  # two triangles, the nearer occluding the farther; smooth normals
        scene.set_camera(_camera(ui))
        idx = ti.field(ti.i32, 6)
        idx.from_numpy(np.arange(6, dtype=np.int32))
        scene.point_light((0, 0, 5), (1, 1, 1))
        scene.ambient_light((0.2, 0.2, 0.2))
        scene.mesh(_vec(ti, 3, MESH), indices=idx, per_vertex_color=_vec(ti, 3, COLORS))
        canvas.scene(scene)
    elif name == "mesh_two_sided":  # triangle normals, default ambient, a coloured light
        scene.set_camera(_camera(ui))
        scene.point_light((2, 2, 2), (0.5, 0.5, 1))
        scene.mesh(_vec(ti, 3, MESH), color=(0.9, 0.8, 0.1), two_sided=True)
        canvas.scene(scene)
    elif name == "mesh_instance":  # instances 1 and 2 of three transforms (scaled, moved)
        scene.set_camera(_camera(ui))
        scene.point_light((0, 0, 5), (1, 1, 1))
        xf = np.zeros((3, 4, 4), np.float32)
        for k, (t, sc) in enumerate([((9, 9, 9), 1.0), ((-0.6, 0, 0), 0.5), ((0.6, 0.2, -0.5), 0.7)]):
            xf[k] = np.diag([sc, sc, sc, 1.0])
            xf[k, :3, 3] = t
        transforms = ti.Matrix.field(4, 4, ti.f32, 3)
        transforms.from_numpy(xf)
        scene.mesh_instance(_vec(ti, 3, MESH[:3]), per_vertex_color=_vec(ti, 3, [[1, 0, 0], [0, 1, 0], [0, 0, 1]]),
                            transforms=transforms, instance_offset=1, instance_count=2)
        canvas.scene(scene)
    elif name == "mesh_wireframe":  # the two triangles' edges only, one pixel wide, lit
        scene.set_camera(_camera(ui))
        idx = ti.field(ti.i32, 6)
        idx.from_numpy(np.array([0, 1, 2, 3, 4, 5], np.int32))
        scene.ambient_light((1, 1, 1))
        scene.mesh(_vec(ti, 3, MESH), indices=idx, per_vertex_color=_vec(ti, 3, COLORS), show_wireframe=True)
        canvas.scene(scene)
    elif name == "image":
        img = ti.Vector.field(3, ti.f32, (W, H))
        img.from_numpy(np.random.default_rng(0).random((W, H, 3)).astype(np.float32))
        canvas.set_image(img)
    elif name in ("image_rgba", "image_texture"):  # uint8 RGBA written as it is (no blending), or a texture's texels
        rgba = (np.arange(W * H * 4).reshape(W, H, 4) * 5 % 256).astype(np.uint8)
        if name == "image_rgba":
            canvas.set_image(rgba)
        else:
            texels = ti.Vector.field(4, ti.u8, (W, H))  # Taichi's from_field: a raw copy, texel x + y * W
            texels.from_numpy(rgba)
            tex = ti.Texture(ti.Format.rgba8, (W, H))
            tex.from_field(texels)
            canvas.set_image(tex)
    elif name == "canvas":  # a triangle under three circles
        canvas.set_background_color((0.2, 0.2, 0.2))
        canvas.triangles(_vec(ti, 2, [[0.1, 0.1], [0.9, 0.1], [0.5, 0.9]]), color=(0, 0, 1))
        canvas.circles(_vec(ti, 2, [[0.2, 0.3], [0.5, 0.5], [0.8, 0.7]]), radius=0.05, color=(1, 0.5, 0))
    elif name == "lines":
        canvas.lines(_vec(ti, 2, [[0.1, 0.2], [0.9, 0.2], [0.5, 0.1], [0.5, 0.9]]), 0.05, color=(1, 1, 0))
    elif name == "scene_lines":
        scene.set_camera(_camera(ui))
        scene.lines(_vec(ti, 3, [[-1, 0, 0], [1, 0, 0]]), 3, color=(0, 1, 1))
        canvas.scene(scene)
    elif name == "vector_field":  # a swirl, an arrow every 4 cells
        canvas.set_background_color((1, 1, 1))
        g = np.stack(np.meshgrid(np.linspace(-1, 1, 16), np.linspace(-1, 1, 12), indexing="ij"), -1)
        field = ti.Vector.field(2, ti.f32, (16, 12))
        field.from_numpy(np.stack([-g[..., 1], g[..., 0]], -1).astype(np.float32))
        canvas.vector_field(field, arrow_spacing=4, scale=0.15, width=0.01, color=(0.8, 0, 0))
    else:
        raise ValueError(name)
    return win.get_image_buffer_as_numpy()


def to_png_pixels(img) -> np.ndarray:
    """A window's picture ([x, y], y up, floats) as PNG pixels: uint8 (H, W, 4), top row first."""
    return np.clip(np.round(np.asarray(img)[:, ::-1].transpose(1, 0, 2) * 255), 0, 255).astype(np.uint8)


if __name__ == "__main__":
    import argparse
    import os
    import subprocess
    import sys

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--taichi-python", help="a Python with taichi 1.7.4: regenerate every reference")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # the child: render one scene with taichi
    args = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    if args.one:
        import taichi

        sys.path.insert(0, os.path.dirname(here))
        from gfxrt.gui.png import write_png

        taichi.init(arch=taichi.vulkan)
        write_png(os.path.join(here, "golden", "ui", f"{args.one}.png"), to_png_pixels(render(taichi, args.one)))
    else:
        for name in SCENES:
            subprocess.run([args.taichi_python, __file__, "--one", name], check=True)
            print("wrote", name)
