"""Where gfxrt's and Taichi's final states of features/sparse/taichi_sparse.py differ, and why.

    python -m tools.taichi_examples.probe_taichi_sparse [OUT]   (OUT: the corpus's --out, default
                                                                /tmp/taichi_examples_gr)

Run the corpus for the program first (`python -m tools.taichi_examples.run -k taichi_sparse
--out OUT`); this reads its states (OUT/state/features/sparse/taichi_sparse/{gr,ti-*}.npz).
The program marks x[i, j] = 1 where Taichi's logo, rotated by sin(t), is 0, at t = 0.05 *
frames in its last frame. For each element of x that differs, it prints the pixel, both values,
and the distance (in logo units, computed in f64) from the rotated pixel to the nearest edge of
the logo's decision tests: a distance near f32 rounding (1e-7 .. 1e-5) means the pixel sits on
an edge, where the last bits of sin / cos (left to the backend by Taichi, 2^-11 absolute error
in WGSL) decide it. It also says how many img cells differ (img mixes x with block activity).
"""
import json
import sys
from pathlib import Path

import numpy as np

N = 512
SCALE = 1 / 1.11
# the logo's tests in order: (kind, centre, radius, value of ret when the test holds)
TESTS = [("out", (0.5, 0.5), 0.52, 0), ("out", (0.5, 0.5), 0.495, 1), ("in", (0.5, 0.25), 0.08, 1),
         ("in", (0.5, 0.75), 0.08, 0), ("in", (0.5, 0.25), 0.25, 0), ("in", (0.5, 0.75), 0.25, 1)]


def logo_ret_and_margin(i, j, t):
    """(ret, distance to the nearest test edge) in f64 for pixels (i, j): x is 1 where ret == 1."""
    q = np.stack([i / N, j / N]) - 0.5
    a = np.sin(t)
    pos = np.stack([np.cos(a) * q[0] - np.sin(a) * q[1], np.sin(a) * q[0] + np.cos(a) * q[1]]) + 0.5
    p = (pos - 0.5) / SCALE + 0.5
    ret = np.full(np.shape(i), -1)
    margin = np.abs(p[0] - 0.5)
    for kind, c, r, value in TESTS:
        d = np.hypot(p[0] - c[0], p[1] - c[1])
        hit = d > r if kind == "out" else d <= r
        ret = np.where((ret == -1) & hit, value, ret)
        margin = np.minimum(margin, np.abs(d - r))
    ret = np.where(ret == -1, np.where(p[0] < 0.5, 1, 0), ret)
    return ret, margin


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0] if argv else "/tmp/taichi_examples_gr")
    st = out / "state" / "features" / "sparse" / "taichi_sparse"
    gr = dict(np.load(st / "gr.npz"))
    refs = [k for k in ("ti-vulkan", "ti-cpu", "ti-cpu-fm0") if (st / f"{k}.npz").exists()
            and json.loads((st / f"{k}.json").read_text())["status"] != "error"]
    frames = json.loads((st / "gr.json").read_text())["frames"]
    t = 0.05 * frames
    ii, jj = np.meshgrid(np.arange(N), np.arange(N), indexing="ij")
    ret, margin = logo_ret_and_margin(ii, jj, t)
    host = (ret == 1).astype(np.int32)
    print(f"t = {t} (frames {frames}); f64 host mask vs gfxrt: {np.count_nonzero(host != gr['x'])} cells differ")
    for i, j in np.argwhere(host != gr["x"])[:10]:
        print(f"  x[{i}, {j}]: gfxrt {gr['x'][i, j]}, f64 {host[i, j]}, edge distance {margin[i, j]:.2e}")
    for name in refs:
        ref = dict(np.load(st / f"{name}.npz"))
        dx = np.argwhere(gr["x"] != ref["x"])
        print(f"gfxrt vs {name}: x differs in {len(dx)} of {gr['x'].size} cells, "
              f"img in {np.count_nonzero(gr['img'] != ref['img'])} of {gr['img'].size}; "
              f"f64 host mask vs {name}: {np.count_nonzero(host != ref['x'])}")
        for i, j in dx[:20]:
            print(f"  x[{i}, {j}]: gfxrt {gr['x'][i, j]}, {name} {ref['x'][i, j]}, f64 {host[i, j]}, "
                  f"edge distance {margin[i, j]:.2e}")
    print(f"edge distances over all cells: min {margin.min():.2e}, "
          f"{np.count_nonzero(margin < 1e-5)} cells closer than 1e-5")


if __name__ == "__main__":
    main()
