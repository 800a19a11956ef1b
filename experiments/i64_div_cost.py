"""python -m experiments.i64_div_cost

The cost of gfxrt's own 64-bit integer division (compiler/codegen/wgsl_types.py `udiv64`, which
replaced the driver's after the H100's opsem seed 263): `q[i] = a[i] // b[i] + a[i] % 7` over
2**20 i64 elements, best of 5, for large operands (a up to 2**62, b up to 2**40: the bit loop)
and small ones (|a| < 2**30, b < 1000: one 32-bit division each). Run it at two commits to
compare (lavapipe, 2 cores, 2026-11-27, three runs each, back to back, load 0.3-0.6: before
14-16 / 15-16 ms at 0692aac, after 70-77 / 16-21 ms).
"""
from __future__ import annotations

import time

import numpy as np

import gfxrt as gr

L = gr.types.ndarray(dtype=gr.i64, ndim=1)


@gr.kernel
def divmod_sum(a: L, b: L, q: L):
    for i in range(a.shape[0]):
        q[i] = a[i] // b[i] + a[i] % 7


def main() -> None:
    rng = np.random.default_rng(0)
    n = 1 << 20
    print(gr.device().name)
    for name, a, b in [("large operands", rng.integers(-2**62, 2**62, n), rng.integers(1, 2**40, n)),
                       ("small operands", rng.integers(-2**30, 2**30, n), rng.integers(1, 1000, n))]:
        arrays = [gr.ndarray(gr.i64, n) for _ in range(3)]
        arrays[0].from_numpy(a.astype(np.int64))
        arrays[1].from_numpy(b.astype(np.int64))
        divmod_sum(*arrays)
        gr.sync()
        times = []
        for _ in range(5):
            t = time.perf_counter()
            divmod_sum(*arrays)
            gr.sync()
            times.append(time.perf_counter() - t)
        print(f"{name:15s} {min(times) * 1e3:7.1f} ms")


if __name__ == "__main__":
    main()
