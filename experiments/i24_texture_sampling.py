"""Issue 24, textures: where gfxrt's rendering/simple_texture.py differs from Taichi 1.7.4's.

    PYTHONPATH=. python experiments/i24_texture_sampling.py [TAICHI_PYTHON]

Runs a texture like simple_texture's logo (256 x 256 r32f, values 0 and 1) and one frame of its `paint` (t = 0.06) with
gfxrt (this interpreter) and Taichi (TAICHI_PYTHON, default /tmp/ti/bin/python; ti.vulkan), two ways:
`own_trig`, the example as written (warped coordinates from each library's sin / cos), and `same_uv`,
sampling at coordinates numpy computed (the same f32 inputs for both). Prints, per way, the largest
difference of the sampled values and how many of the 262,144 samples differ.

Finding (lavapipe): same_uv 0.0 in 0 samples (filtering, addressing and the texture agree bit for bit);
own_trig 1.53e-5 in 695 samples (simple_texture itself: 1.53e-5 in 468): gfxrt's f32 sin / cos and the driver's differ in the last bit for
~1/3 of the arguments, and a binary texture turns a coordinate's last bit into up to 256x that
in the filtered value. The corpus compares simple_texture uncalibrated (Taichi's CPU backend has no
textures) against a 1e-5 floor.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

PROGRAM = r'''
import sys, numpy as np
LIB = sys.argv[1]
if LIB == "ti":
    import taichi as gr
    gr.init(arch=gr.vulkan, log_level=gr.WARN)
else:
    import gfxrt as gr
    gr.init(arch=gr.vulkan)

k = 256
texture = gr.Texture(gr.Format.r32f, (k, k))


@gr.func
def logo(p):  # a binary pattern of rings and stripes (the example draws Taichi's logo, also 0 / 1)
    x, y = p[0] - 0.5, p[1] - 0.5
    r = gr.sqrt(x * x + y * y)
    ret = 0.0
    if r < 0.48 and (gr.floor(r * 12.0) % 2 == 0 or gr.floor(p[0] * 16.0) % 2 == 0):
        ret = 1.0
    return ret


@gr.kernel
def make(tex: gr.types.rw_texture(num_dimensions=2, fmt=gr.Format.r32f, lod=0)):
    for i, j in gr.ndrange(k, k):
        tex.store(gr.Vector([i, j]), gr.Vector([logo(gr.Vector([i, j]) / k), 0.0, 0.0, 0.0]))


@gr.kernel
def own_trig(t: gr.f32, tex: gr.types.texture(num_dimensions=2), o: gr.types.ndarray()):
    for i, j in o:
        uv = gr.Vector([i / 512, j / 512])
        w = uv + gr.Vector([gr.cos(t + uv.x * 5.0), gr.sin(t + uv.y * 5.0)]) * 0.1
        o[i, j] = tex.sample_lod(w, 0.0).r


@gr.kernel
def same_uv(w: gr.types.ndarray(), tex: gr.types.texture(num_dimensions=2), o: gr.types.ndarray()):
    for i, j in o:
        o[i, j] = tex.sample_lod(gr.Vector([w[i, j, 0], w[i, j, 1]]), 0.0).r


t = np.float32(0.06)
u = np.arange(512, dtype=np.float32) / np.float32(512)
cu = np.cos((t + u * np.float32(5)).astype(np.float64)).astype(np.float32)
su = np.sin((t + u * np.float32(5)).astype(np.float64)).astype(np.float32)
W = np.zeros((512, 512, 2), np.float32)
W[..., 0] = (u + cu * np.float32(0.1))[:, None]
W[..., 1] = (u + su * np.float32(0.1))[None, :]
wa = gr.ndarray(gr.f32, (512, 512, 2))
wa.from_numpy(W)
a, b = gr.ndarray(gr.f32, (512, 512)), gr.ndarray(gr.f32, (512, 512))
make(texture)
own_trig(0.06, texture, a)
same_uv(wa, texture, b)
np.savez(sys.argv[2], own_trig=a.to_numpy(), same_uv=b.to_numpy())
'''


def main():
    taichi_python = sys.argv[1] if len(sys.argv) > 1 else "/tmp/ti/bin/python"
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "prog.py")
        with open(src, "w") as f:
            f.write(PROGRAM)
        out = {}
        for lib, py in (("gr", sys.executable), ("ti", taichi_python)):
            path = os.path.join(d, f"{lib}.npz")
            subprocess.run([py, src, lib, path], check=True, env={**os.environ, "XDG_RUNTIME_DIR": "/tmp"})
            out[lib] = np.load(path)
        for way in ("own_trig", "same_uv"):
            diff = np.abs(out["gr"][way] - out["ti"][way])
            print(f"{way:9s} max |gfxrt - Taichi| = {diff.max():.3g} in {(diff > 0).sum()} of {diff.size} samples")


if __name__ == "__main__":
    main()
