"""kernels.linalg's GPU matmul (`linalg.tiled`) at several tile shapes and sizes (issue 13).

For each tile shape (BMxBN/TK[/db], see kernels/linalg.py `Tiles`) and square size N: the first
call's wall time (compile + pipeline creation + one run), a check against numpy, and TFLOP/s
from the device time of REPS launches (`gr.profile()`, median) and from host wall time (REPS
launches and one sync), after WARM_S seconds of launches: without them the GPU's clocks are
still low after the host-side checks between shapes (the first run of this probe on the H100
read 5.5 TFLOP/s where `python -m bench` read 30 for the same kernel). Also prints the adapter, its workgroup-memory limit and whether it
offers wgpu-native's `cooperative-matrix` feature (tensor-core tiles; wgpu 0.32 exposes it for
8x8 f32 only).

Run: `python -m experiments.matmul_tiles [N ...]` (default 1024 2048 4096);
GFXRT_MATMUL_PROBE=128x128/8/db,64x128/8 picks the shapes.
"""
from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np
from gfxrt.kernels import linalg

import gfxrt as gr

SHAPES = "128x128/8/db,128x128/8,128x128/16/db,128x128/16,64x128/8/db,64x128/16/db,64x64/8/db"
REPS = 10
WARM_S = 0.4


def parse(text: str) -> linalg.Tiles:
    bmbn, tk, *rest = text.split("/")
    bm, bn = (int(x) for x in bmbn.split("x"))
    return linalg.Tiles(bm, bn, int(tk), rest == ["db"])


def main() -> None:
    sizes = [int(x) for x in sys.argv[1:]] or [1024, 2048, 4096]
    gr.init(arch=gr.gpu)
    dev = gr.device()
    import wgpu
    print(f"adapter: {dev.name}; wgpu {wgpu.__version__}; max-compute-workgroup-storage-size "
          f"{dev.limits.get('max-compute-workgroup-storage-size')}")
    feats = sorted(str(f) for f in dev.adapter.features)
    print(f"adapter features ({len(feats)}): {', '.join(feats)}")
    print(f"cooperative-matrix offered: {'cooperative-matrix' in feats}")
    shapes = [parse(s) for s in os.environ.get("GFXRT_MATMUL_PROBE", SHAPES).split(",")]
    rng = np.random.default_rng(5)
    print(f"{'tiles':16s} {'N':>5s} {'first s':>8s} {'max err':>9s} {'dev TF/s':>9s} {'host TF/s':>9s}")
    for n in sizes:
        a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
        want = a.astype(np.float64) @ b.astype(np.float64)
        ad, bd, cd = gr.ndarray(gr.f32, (n, n)), gr.ndarray(gr.f32, (n, n)), gr.ndarray(gr.f32, (n, n))
        ad.from_numpy(a)
        bd.from_numpy(b)
        flop = 2.0 * n ** 3
        for cfg in shapes:
            if cfg.double and cfg.shared_bytes > dev.target.max_workgroup_storage:
                print(f"{cfg!s:16s} {n:5d} skipped: {cfg.shared_bytes} bytes of workgroup memory")
                continue
            k = linalg.tiled(cfg)
            cd.fill(0.0)
            gr.sync()
            t0 = time.perf_counter()
            k(ad, bd, cd)
            gr.sync()
            first = time.perf_counter() - t0
            err = float(np.abs(cd.to_numpy() - want).max())
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < WARM_S:
                for _ in range(REPS):
                    k(ad, bd, cd)
                gr.sync()
            with gr.profile() as p:
                for _ in range(REPS):
                    k(ad, bd, cd)
                gr.sync()
            dev_s = statistics.median(t for _, t in p.records)
            walls = []
            for _ in range(3):
                t0 = time.perf_counter()
                for _ in range(REPS):
                    k(ad, bd, cd)
                gr.sync()
                walls.append((time.perf_counter() - t0) / REPS)
            print(f"{cfg!s:16s} {n:5d} {first:8.2f} {err:9.2e} {flop / dev_s / 1e12:9.2f} "
                  f"{flop / min(walls) / 1e12:9.2f}", flush=True)


if __name__ == "__main__":
    main()
