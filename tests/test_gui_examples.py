"""Programs in the style of Taichi's GUI examples (fractal.py, mpm88.py, a GGUI scene like
mass_spring_3d_ggui.py), written here because CI has no Taichi: each runs its own frame loop through
gr.GUI / gr.ui off-screen and its last frame is checked where numpy says things must be (the Julia
set's pixels, every particle's circle, the projected ball in front of the cloth). Small frames and
few steps: seconds on lavapipe."""
from __future__ import annotations

import numpy as np
import pytest

import gfxrt as gr
from gfxrt.gui.png import read_png

pytestmark = pytest.mark.gpu


def rgb(c):
    return np.array([(c >> 16) & 255, (c >> 8) & 255, c & 255], np.float64) / 255


def test_fractal_frames_are_the_julia_set(tmp_path):
    """fractal.py at 1/10 of its size: a kernel paints a field, set_image shows it, show(file) saves it."""
    n = 24
    pixels = gr.field(dtype=gr.f32, shape=(n * 2, n))

    @gr.func
    def complex_sqr(z):
        return gr.Vector([z[0] ** 2 - z[1] ** 2, z[1] * z[0] * 2])

    @gr.kernel
    def paint(t: gr.f32):
        for i, j in pixels:
            c = gr.Vector([-0.8, gr.cos(t) * 0.2])
            z = gr.Vector([i / n - 1, j / n - 0.5]) * 2
            iterations = 0
            while z.norm() < 20 and iterations < 50:
                z = complex_sqr(z) + c
                iterations += 1
            pixels[i, j] = 1 - iterations * 0.02

    gui = gr.GUI("Julia Set", res=(n * 2, n), show_gui=False)
    for i in range(3):
        paint(i * 0.03)
        gui.set_image(pixels)
        gui.show(str(tmp_path / f"frame{i}.png"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["frame0.png", "frame1.png", "frame2.png"]

    t = np.float32(2 * 0.03)
    i, j = np.meshgrid(np.arange(2 * n), np.arange(n), indexing="ij")
    z = np.stack([(i / n - 1) * 2, (j / n - 0.5) * 2], -1).astype(np.float64)
    c = np.array([-0.8, np.cos(t) * 0.2])
    it = np.zeros(i.shape)
    for _ in range(50):
        go = np.hypot(z[..., 0], z[..., 1]) < 20
        z = np.where(go[..., None], np.stack([z[..., 0] ** 2 - z[..., 1] ** 2, 2 * z[..., 0] * z[..., 1]], -1) + c, z)
        it += go
    expect = np.floor((1 - it * 0.02) * 255)
    png = read_png(str(tmp_path / "frame2.png"))  # rows top-down, as an image file
    img = png[::-1].transpose(1, 0, 2)[..., :3].astype(np.float64)  # [x, y], y up
    assert img.shape == (2 * n, n, 3)
    assert (img == img[..., :1]).all()  # gray
    off = np.abs(img[..., 0] - expect) > 6  # an iteration count may differ on the set's rim (rounding)
    assert off.mean() < 0.03, off.mean()
    assert expect.min() < 100 and expect.max() > 240  # the picture has its dark set and its light outside


def test_mpm88_frames_draw_every_particle_where_the_simulation_put_it():
    """mpm88.py, smaller: the same MPM step, particles drawn from their field with circles()."""
    n_particles, n_grid = 512, 32
    dx = 1 / n_grid
    dt = 2e-4
    p_rho = 1
    p_vol = (dx * 0.5) ** 2
    p_mass = p_vol * p_rho
    gravity, bound, E = 9.8, 3, 400
    x = gr.Vector.field(2, float, n_particles)
    v = gr.Vector.field(2, float, n_particles)
    C = gr.Matrix.field(2, 2, float, n_particles)
    J = gr.field(float, n_particles)
    grid_v = gr.Vector.field(2, float, (n_grid, n_grid))
    grid_m = gr.field(float, (n_grid, n_grid))

    @gr.kernel
    def substep():
        for i, j in grid_m:
            grid_v[i, j] = [0, 0]
            grid_m[i, j] = 0
        for p in x:
            Xp = x[p] / dx
            base = int(Xp - 0.5)
            fx = Xp - base
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1) ** 2, 0.5 * (fx - 0.5) ** 2]
            stress = -dt * 4 * E * p_vol * (J[p] - 1) / dx**2
            affine = gr.Matrix([[stress, 0], [0, stress]]) + p_mass * C[p]
            for i, j in gr.static(gr.ndrange(3, 3)):
                offset = gr.Vector([i, j])
                dpos = (offset - fx) * dx
                weight = w[i].x * w[j].y
                grid_v[base + offset] += weight * (p_mass * v[p] + affine @ dpos)
                grid_m[base + offset] += weight * p_mass
        for i, j in grid_m:
            if grid_m[i, j] > 0:
                grid_v[i, j] /= grid_m[i, j]
            grid_v[i, j].y -= dt * gravity
            if i < bound and grid_v[i, j].x < 0:
                grid_v[i, j].x = 0
            if i > n_grid - bound and grid_v[i, j].x > 0:
                grid_v[i, j].x = 0
            if j < bound and grid_v[i, j].y < 0:
                grid_v[i, j].y = 0
            if j > n_grid - bound and grid_v[i, j].y > 0:
                grid_v[i, j].y = 0
        for p in x:
            Xp = x[p] / dx
            base = int(Xp - 0.5)
            fx = Xp - base
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1.0) ** 2, 0.5 * (fx - 0.5) ** 2]
            new_v = gr.Vector.zero(float, 2)
            new_C = gr.Matrix.zero(float, 2, 2)
            for i, j in gr.static(gr.ndrange(3, 3)):
                offset = gr.Vector([i, j])
                dpos = (offset - fx) * dx
                weight = w[i].x * w[j].y
                g_v = grid_v[base + offset]
                new_v += weight * g_v
                new_C += 4 * weight * g_v.outer_product(dpos) / dx**2
            v[p] = new_v
            x[p] += dt * v[p]
            J[p] *= 1 + dt * new_C.trace()
            C[p] = new_C

    @gr.kernel
    def init():
        for i in range(n_particles):
            x[i] = [gr.random() * 0.4 + 0.2, gr.random() * 0.4 + 0.2]
            v[i] = [0, -1]
            J[i] = 1

    init()
    x0 = x.to_numpy()
    res, radius, color, bg = (96, 96), 1.5, 0x068587, 0x112F41
    gui = gr.GUI("MPM88", res=res, background_color=bg, show_gui=False)
    for _ in range(3):
        for _ in range(50):  # mpm88's substeps per frame
            substep()
        gui.circles(x, radius=radius, color=color)  # straight from x's device buffer
        img = gui.get_image()[..., :3].astype(np.float64)
        gui.show()
    pos = x.to_numpy()
    assert np.isfinite(pos).all() and (pos > 0).all() and (pos < 1).all()
    assert pos[:, 1].mean() < x0[:, 1].mean() - 0.02  # the block falls (by more than 2 pixels)
    # each pixel: the particle colour where some centre lies within radius - 1, the background
    # where every centre is farther than radius + 1 (the one-pixel antialiased rim in between)
    px, py = np.meshgrid(np.arange(res[0]), np.arange(res[1]), indexing="ij")
    d = np.hypot(px[..., None] - pos[:, 0] * res[0], py[..., None] - pos[:, 1] * res[1]).min(-1)
    inside, outside = d < radius - 1, d > radius + 1
    assert inside.sum() > 100 and outside.sum() > res[0] * res[1] / 2
    assert np.abs(img[inside] - rgb(color)).max() < 2 / 255
    assert np.abs(img[outside] - rgb(bg)).max() < 2 / 255


def _pixel(cam, p, w, h):
    clip = np.append(p, 1.0) @ cam.get_view_matrix() @ cam.get_projection_matrix(w / h)
    ndc = clip[:3] / clip[3]
    return int((ndc[0] + 1) / 2 * w), int((ndc[1] + 1) / 2 * h)


def test_a_ggui_scene_draws_the_cloth_behind_the_moving_ball():
    """mass_spring_3d_ggui.py's picture: a cloth mesh (kernel-made vertices, indices, per-vertex colours)
    and a ball (particles) that a kernel moves each frame; the ball hides the cloth where it is in
    front, the cloth shows around it, the background elsewhere."""
    n, W, H = 16, 96, 72
    verts = gr.Vector.field(3, float, n * n)
    colors = gr.Vector.field(3, float, n * n)
    indices = gr.field(int, (n - 1) * (n - 1) * 6)
    ball = gr.Vector.field(3, float, 1)

    @gr.kernel
    def make_cloth():
        for i, j in gr.ndrange(n, n):
            verts[i * n + j] = [i / (n - 1) - 0.5, j / (n - 1) - 0.5, 0.0]
            if (i // 4 + j // 4) % 2 == 0:  # a checkerboard of two colours
                colors[i * n + j] = [0.2, 0.4, 1.0]
            else:
                colors[i * n + j] = [1.0, 0.5, 0.5]
        for i, j in gr.ndrange(n - 1, n - 1):
            q = (i * (n - 1) + j) * 6
            indices[q + 0] = i * n + j
            indices[q + 1] = (i + 1) * n + j
            indices[q + 2] = i * n + j + 1
            indices[q + 3] = (i + 1) * n + j + 1
            indices[q + 4] = i * n + j + 1
            indices[q + 5] = (i + 1) * n + j

    @gr.kernel
    def move(t: float):
        ball[0] = [0.3 * gr.cos(t), 0.2 * gr.sin(t), 0.3]

    make_cloth()
    window = gr.ui.Window("cloth", (W, H), show_window=False)
    canvas, scene = window.get_canvas(), window.get_scene()
    camera = gr.ui.Camera()
    camera.position(0.0, 0.0, 2.5)
    camera.lookat(0.0, 0.0, 0.0)
    camera.up(0.0, 1.0, 0.0)
    for frame in range(3):
        move(frame * 0.7)
        canvas.set_background_color((1, 1, 1))
        scene.set_camera(camera)
        scene.ambient_light((1, 1, 1))  # flat colours: no point light
        scene.mesh(verts, indices=indices, per_vertex_color=colors, two_sided=True)
        scene.particles(ball, radius=0.1, color=(0.5, 0.42, 0.8))
        canvas.scene(scene)
        img = window.get_image_buffer_as_numpy()[..., :3]
        window.show()
    b = ball.to_numpy()[0]
    assert np.allclose(b, [0.3 * np.cos(1.4), 0.2 * np.sin(1.4), 0.3], atol=1e-5)
    bx, by = _pixel(camera, b, W, H)
    assert np.abs(img[bx, by] - [0.5, 0.42, 0.8]).max() < 0.02  # the ball, in front of the cloth
    cloth = {(0.2, 0.4, 1.0), (1.0, 0.5, 0.5)}
    for p in ([-0.45, -0.45, 0], [0.45, 0.45, 0], [-0.45, 0.45, 0]):  # the cloth's corners, far from the ball
        cx, cy = _pixel(camera, np.array(p), W, H)
        assert min(np.abs(img[cx, cy] - c).max() for c in cloth) < 0.02, (p, img[cx, cy])
    for p in ([-0.8, 0, 0], [0.8, 0, 0], [0, 0.75, 0]):  # beside the cloth: background
        cx, cy = _pixel(camera, np.array(p), W, H)
        assert np.abs(img[cx, cy] - 1).max() < 0.01, (p, img[cx, cy])
    # the ball's projected disc: its colour fills the disc's core and nothing far outside it
    lit = np.abs(img - [0.5, 0.42, 0.8]).max(-1) < 0.02
    xs, ys = np.nonzero(lit)
    assert len(xs) > 4 and np.hypot(xs - bx, ys - by).max() < 0.1 * H
