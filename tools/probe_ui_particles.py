"""Cost of drawing particles with gr.ui: frames per second of a 3D scene of N particles (spheres
read in place from the field a kernel writes), and the share of a step (kernel + draw) the
drawing takes.

    python tools/probe_ui_particles.py [--n 1000000] [--res 1024 768] [--frames 20]

Each frame: a kernel moves the particles, `scene.particles` + `canvas.scene` draw them, `show()`
ends the frame; `gr.sync()` waits for the device before the clock stops (no readback).
"""
import argparse
import time

import numpy as np

import gfxrt as gr


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=10**6)
    ap.add_argument("--res", type=int, nargs=2, default=(1024, 768))
    ap.add_argument("--frames", type=int, default=20)
    a = ap.parse_args()
    n = a.n
    x = gr.Vector.field(3, gr.f32, n)
    x.from_numpy(np.random.default_rng(0).random((n, 3)).astype(np.float32) - 0.5)

    @gr.kernel
    def step(t: gr.f32):
        for i in x:
            p = x[i]
            x[i] = [p[0] * gr.cos(t) - p[2] * gr.sin(t), p[1], p[0] * gr.sin(t) + p[2] * gr.cos(t)]

    win = gr.ui.Window("particles", tuple(a.res), show_window=False)
    scene, canvas = win.get_scene(), win.get_canvas()
    cam = gr.ui.Camera()
    cam.position(0, 0.5, 2)
    cam.lookat(0, 0, 0)

    def draw():
        scene.set_camera(cam)
        scene.point_light((0, 2, 2), (1, 1, 1))
        scene.particles(x, radius=0.002, color=(0.2, 0.6, 1.0))
        canvas.scene(scene)
        win.show()

    def timed(fn):
        fn()
        gr.sync()  # warm: pipelines compiled
        t = time.perf_counter()
        for _ in range(a.frames):
            fn()
        gr.sync()
        return (time.perf_counter() - t) / a.frames

    t_step = timed(lambda: step(0.01))
    t_draw = timed(draw)
    t_both = timed(lambda: (step(0.01), draw()))
    print(f"device: {gr.device().name}; {n} particles, {a.res[0]}x{a.res[1]}")
    print(f"step {t_step * 1e3:.2f} ms, draw {t_draw * 1e3:.2f} ms ({1 / t_draw:.1f} frames/s), "
          f"step + draw {t_both * 1e3:.2f} ms: drawing is {t_draw / (t_step + t_draw):.0%} of a step")


if __name__ == "__main__":
    main()
