"""Issue 24 item 2: does Taichi's rendering/oit_renderer.py (1000 x 1000 lists of at most 2048
structs, 32 GB dense: gfxrt's chunk pool) render what Taichi 1.7.4 renders?

The example draws its spheres with ti.random(), whose streams differ between Taichi and gfxrt
(and Taichi's Vulkan backend cannot run sparse SNodes, so the corpus cannot calibrate a
distribution comparison). This script writes the example twice with the spheres from one
seeded numpy array instead (the only change), runs it with Taichi (CPU) and with gfxrt, and
compares the images and the fragment counts.

    python -m experiments.i24_oit_pool --taichi-python /tmp/ti/bin/python [--res 1000]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

EXAMPLE = "examples/rendering/oit_renderer.py"

NEW_GENERATE = '''@ti.kernel
def generate_sphere(n: ti.i32, p: ti.types.ndarray()):
    for i in range(n):
        spheres.append(
            Sphere(
                vec3(p[i, 0] * 3 - 1.5, p[i, 1] * 3 - 1.5, p[i, 2] * 3 - 1.5),
                p[i, 3] * 0.2 + 0.1,
                (p[i, 4], p[i, 5], p[i, 6], p[i, 7]),
            )
        )


'''

NEW_MAIN = '''def main():
    init()
    p = np.random.default_rng(0).random((256, 8)).astype(np.float32)
    generate_sphere(256, p)
    render()
    np.save(sys.argv[1], color_buffer.to_numpy())
    lengths = ti.field(ti.i32, shape=res)

    @ti.kernel
    def count():
        for u, v in lengths:
            lengths[u, v] = colors_in_pixel[u, v].length()
    count()
    a = lengths.to_numpy()
    print("fragments", int(a.sum()), "longest", int(a.max()))


if __name__ == "__main__":
    main()
'''


def variant(src: str, res: int, gfxrt: bool) -> str:
    src = src.replace("ti.init(arch=ti.cuda)", "import sys\nimport numpy as np\nti.init(arch=ti.cpu)")
    src = src.replace("res = (1000, 1000)", f"res = ({res}, {res})")
    start, end = src.index("@ti.kernel\ndef generate_sphere"), src.index("@ti.kernel\ndef render")
    src = src[:start] + NEW_GENERATE + src[end:]
    src = src[:src.index("def main():")] + NEW_MAIN
    if gfxrt:
        src = src.replace("import taichi as ti", "import gfxrt as ti").replace("from taichi.math", "from gfxrt.math")
    return src


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--taichi-python", required=True)
    ap.add_argument("--res", type=int, default=1000)
    a = ap.parse_args()
    where = subprocess.run([a.taichi_python, "-c", "import taichi, os; print(os.path.dirname(taichi.__file__))"],
                           capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
    src = open(os.path.join(where, EXAMPLE)).read()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, python, gfxrt in (("taichi", a.taichi_python, False), ("gfxrt", sys.executable, True)):
            prog, img = os.path.join(tmp, f"oit_{name}.py"), os.path.join(tmp, f"{name}.npy")
            open(prog, "w").write(variant(src, a.res, gfxrt))
            r = subprocess.run([python, prog, img], capture_output=True, text=True)
            print(name, r.stdout.strip().splitlines()[-1:] if r.returncode == 0 else r.stderr[-2000:])
            out[name] = np.load(img)
    d = np.abs(out["gfxrt"] - out["taichi"])
    print(f"image {out['taichi'].shape}: max |gfxrt - taichi| {d.max():.3g}; components off by > 1e-3: "
          f"{int((d > 1e-3).sum())} of {d.size}")


if __name__ == "__main__":
    main()
