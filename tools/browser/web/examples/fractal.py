"""Fractal: a Julia set.

Taichi's examples/simulation/fractal.py: one thread per pixel iterates z = z^2 + c on the GPU.
"""
import gfxrt as gr

gr.init()

n = 320
pixels = gr.field(dtype=float, shape=(n * 2, n))


@gr.func
def complex_sqr(z):
    return gr.Vector([z[0] ** 2 - z[1] ** 2, z[1] * z[0] * 2])


@gr.kernel
def paint(t: float):
    for i, j in pixels:  # Parallelized over all pixels
        c = gr.Vector([-0.8, gr.cos(t) * 0.2])
        z = gr.Vector([i / n - 1, j / n - 0.5]) * 2
        iterations = 0
        while z.norm() < 20 and iterations < 50:
            z = complex_sqr(z) + c
            iterations += 1
        pixels[i, j] = 1 - iterations * 0.02


for frame in range(20):  # an animation: Taichi's example steps t by 0.03 a frame, here by 0.1
    paint(frame * 0.1)
    show(pixels)  # pixels[i, j]: i from the left, j from the bottom, 0 black .. 1 white; redrawn each frame
print(f"painted {frame + 1} frames of {n * 2} x {n} pixels; the middle one is {pixels[n, n // 2]:.2f}")
