"""Issue 24 item 3: Taichi 1.7.4's sparse-matrix examples (simulation/implicit_mass_spring.py and
simulation/implicit_fem.py --use_sparse, also without it), headless, against Taichi's CPU backend.

    PYTHONPATH=. python experiments/i24_sparse_examples.py [TAICHI_PYTHON] [STEPS]

TAICHI_PYTHON (default /tmp/ti/bin/python) runs Taichi; this interpreter runs gfxrt. Each program
is the example's source with `taichi` renamed, its GUI left out, and (gfxrt only) the forms of
issue 24 item 1 that gfxrt does not compile yet written out by hand: `*args` in ndrange, list
comprehensions, `[0.0] * 3`. Prints the largest difference of the final positions.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

EX = "lib/python3.11/site-packages/taichi/examples/simulation/"
ITEM1 = [("ti.ndrange(*(n_cube - 1))", "ti.ndrange(n_cube[0] - 1, n_cube[1] - 1, n_cube[2] - 1)"),
         ("ti.ndrange(*(n_cube))", "ti.ndrange(n_cube[0], n_cube[1], n_cube[2])"),
         ("[verts[i] >> k for k in range(3)]", "ti.Vector([verts[i] >> 0, verts[i] >> 1, verts[i] >> 2])"),
         ("[0.0] * 3", "[0.0, 0.0, 0.0]"),
         ("[F_x[verts[i]] - F_x[verts[3]] for i in range(3)]",
          "[F_x[verts[0]] - F_x[verts[3]], F_x[verts[1]] - F_x[verts[3]], F_x[verts[2]] - F_x[verts[3]]]"),
         ("[H[j, i] for j in range(3)]", "[H[0, i], H[1, i], H[2, i]]")]

RUN = {
    "implicit_mass_spring": """
ti.init(arch=ARCH)
cloth = Cloth(N=5)
for _ in range(STEPS):
    cloth.update(0.01)
OUT = cloth.pos.to_numpy()
""",
    "implicit_fem": """
get_vertices(); init()
if use_sparse:
    init_A()
for _ in range(STEPS):
    substep()
OUT = F_x.to_numpy()
""",
}


def program(src: str, name: str, gfxrt: bool, steps: int, out: str) -> str:
    src = src.replace("from taichi._lib import core as _ti_core\n", "").replace("_ti_core.GGUI_AVAILABLE", "False")
    src = src.replace('if __name__ == "__main__":', "if False:").replace("ti.init(arch=ti.cuda)", "ti.init(arch=ARCH)")
    if gfxrt:
        for a, b in ITEM1:
            src = src.replace(a, b)
        src = src.replace("import taichi as ti", "import gfxrt as ti")
    arch = "ti.vulkan" if gfxrt else "ti.cpu"
    return (src.replace("ARCH", arch) + f"\nSTEPS = {steps}\n" + RUN[name].replace("ARCH", arch)
            + f"\nimport numpy\nnumpy.save({out!r}, OUT)\n")


def main():
    ti_python = sys.argv[1] if len(sys.argv) > 1 else "/tmp/ti/bin/python"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    root = os.path.dirname(os.path.dirname(ti_python))
    with tempfile.TemporaryDirectory() as d:
        for name, flags in (("implicit_mass_spring", []), ("implicit_fem", ["--use_sparse"]), ("implicit_fem", [])):
            src = open(os.path.join(root, EX, name + ".py")).read()
            res = {}
            for who, py in (("taichi", ti_python), ("gfxrt", sys.executable)):
                path, out = os.path.join(d, f"{who}_{name}.py"), os.path.join(d, f"{who}.npy")
                with open(path, "w") as f:
                    f.write(program(src, name, who == "gfxrt", steps, out))
                r = subprocess.run([py, path, *flags], capture_output=True, text=True, cwd=d)
                if r.returncode:
                    print(name, flags, who, "failed:", r.stderr.strip().splitlines()[-1:])
                    break
                res[who] = np.load(out)
            if len(res) == 2:
                diff = np.abs(res["taichi"] - res["gfxrt"]).max()
                label = " ".join([name, *flags])
                print(f"{label}: {steps} steps, max |gfxrt - taichi| = {diff:.3g} "
                      f"(largest value {np.abs(res['taichi']).max():.3g})")


if __name__ == "__main__":
    main()
