"""The kernels/ library against numpy on this machine's default adapter.

    python -m experiments.kernels_numpy [--quick]

For each operation: best-of-N wall time per call with the result left on the device (gfxrt)
or in memory (numpy), after one warm-up call, and the rate it implies. gfxrt times include a
`gr.sync()` per call (so launch and submission costs count); on a CPU adapter (lavapipe) the
process CPU time per call is shown too, since the device is the same CPU numpy uses.
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from gfxrt.kernels import cloth, diffsim, linalg, nbody, reduce, scan, stencil

import gfxrt as gr
from gfxrt import kernels


def timed(fn, reps: int) -> tuple[float, float]:
    """(best wall seconds, mean process CPU seconds) per call."""
    fn()
    gr.sync()
    best, c0 = float("inf"), time.process_time()
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        gr.sync()
        best = min(best, time.perf_counter() - t0)
    return best, (time.process_time() - c0) / reps


def dev(a: np.ndarray) -> gr.Ndarray:
    d = gr.ndarray(a.dtype, a.shape)
    d.from_numpy(a)
    return d


def cases(quick: bool):
    rng = np.random.default_rng(0)
    n = 1 << (20 if quick else 22)
    x = rng.random(n).astype(np.float32)
    y = rng.random(n).astype(np.float32)
    xd, yd = dev(x), dev(y)
    yield "saxpy", f"{n} f32", 12 * n, "GB/s", lambda: kernels.saxpy(2.0, xd, yd), \
        lambda: np.add(y, 2.0 * x, out=y)
    yield "memcpy", f"{n} f32", 8 * n, "GB/s", lambda: kernels.memcpy(yd, xd), lambda: np.copyto(y, x)
    yield "fill", f"{n} f32", 4 * n, "GB/s", lambda: kernels.fill(yd, 3.0), lambda: y.fill(3.0)
    out = gr.ndarray(gr.f32, 1)
    yield "sum (to device)", f"{n} f32", 4 * n, "GB/s", lambda: reduce.sum(xd, out=out), lambda: x.sum()
    yield "sum (to host)", f"{n} f32", 4 * n, "GB/s", lambda: reduce.sum(xd), lambda: float(x.sum())
    yield "max (to host)", f"{n} f32", 4 * n, "GB/s", lambda: reduce.max(xd), lambda: float(x.max())
    k = rng.integers(0, 4, n).astype(np.int32)
    kd, sd, s = dev(k), gr.ndarray(gr.i32, n), np.empty(n, np.int32)
    yield "inclusive scan", f"{n} i32", 8 * n, "GB/s", lambda: scan.inclusive(kd, sd), lambda: np.cumsum(k, out=s)
    for bins in (64, 65536):
        keys = rng.integers(0, bins, n).astype(np.int32)
        keysd, hd = dev(keys), gr.ndarray(gr.i32, bins)
        yield "histogram", f"{n} keys, {bins} bins", n, "Gkeys/s", \
            lambda kd=keysd, b=bins, h=hd: kernels.histogram(kd, b, h), \
            lambda k=keys, b=bins: np.bincount(k, minlength=b)
    m = 1024 if quick else 2048
    a = rng.random((m, m)).astype(np.float32)
    ad, bd, b = dev(a), gr.ndarray(gr.f32, (m, m)), np.zeros((m, m), np.float32)

    def np_stencil():
        b[1:-1, 1:-1] = -4 * a[1:-1, 1:-1] + (a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:])
    yield "laplace5", f"{m}x{m} f32", 8 * m * m, "GB/s", lambda: stencil.laplace5(ad, bd), np_stencil
    mm = 256 if quick else 512
    p, q = rng.random((mm, mm)).astype(np.float32), rng.random((mm, mm)).astype(np.float32)
    pd, qd, cd, c = dev(p), dev(q), gr.ndarray(gr.f32, (mm, mm)), np.zeros((mm, mm), np.float32)
    yield "matmul", f"{mm}x{mm} f32", 2 * mm ** 3, "GFLOP/s", lambda: linalg.matmul(pd, qd, cd), \
        lambda: np.matmul(p, q, out=c)
    nb = 1024 if quick else 4096
    pos, vel = rng.standard_normal((nb, 3)).astype(np.float32), np.zeros((nb, 3), np.float32)
    mass = np.full(nb, 1.0 / nb, np.float32)
    posd, veld, massd = gr.ndarray(nbody.vec3, nb), gr.ndarray(nbody.vec3, nb), dev(mass)
    posd.from_numpy(pos)

    def np_nbody():
        d = pos[None, :, :] - pos[:, None, :]
        inv = (np.sum(d * d, axis=2) + 1e-4) ** -1.5
        vel[:] += 0.001 * np.einsum("ijk,ij->ik", d, mass[None, :] * inv)
        pos[:] += 0.001 * vel
    yield "n-body step", f"{nb} bodies", nb * nb, "Ginteractions/s", \
        lambda: nbody.step(posd, veld, massd, 0.001), np_nbody
    params = cloth.Params(n=64, spacing=1 / 64)
    cx, cv = cloth.init(params)
    hx, hv = cloth.initial_positions(params), np.zeros((64, 64, 3), np.float32)

    def np_cloth():
        nonlocal hx, hv
        hx, hv = cloth.step_numpy(hx, hv, params)
    yield "cloth step", "64x64 particles", 64 * 64, "Gparticles/s", lambda: cloth.step(cx, cv, params), np_cloth
    sim = diffsim.MassSpring(n=8, steps=100)
    sim.set_target(shift=(0.2, 0.1), angle=0.3)
    yield "diffsim forward", "8x8 particles, 100 steps", 100, "Gsteps/s", lambda: sim.run(), None
    yield "diffsim Tape", "8x8 particles, 100 steps", 100, "Gsteps/s", lambda: sim.loss_and_grad(), None


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="smaller sizes")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    d = gr.device()
    print(f"device: {d.name}; subgroups: {kernels.has_subgroups()}")
    print(f"{'operation':18} {'size':26} {'gfxrt ms':>9} {'(cpu ms)':>9} {'numpy ms':>9} {'gfxrt':>8} "
          f"{'numpy':>8}  unit")
    for name, size, amount, unit, ours, ref in cases(args.quick):
        wall, cpu = timed(ours, args.reps)
        rwall = timed(ref, args.reps)[0] if ref is not None else float("nan")
        scale = 1e-9
        print(f"{name:18} {size:26} {wall * 1e3:9.2f} {cpu * 1e3:9.2f} {rwall * 1e3:9.2f} "
              f"{amount * scale / wall:8.3f} {amount * scale / rwall:8.3f}  {unit}")


if __name__ == "__main__":
    main()
