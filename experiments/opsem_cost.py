"""What Python's operator semantics cost (issue 21): device time per element of kernels heavy in
float `%` / `//`, comparisons / min / max and float -> int casts, next to the same arithmetic
without them (`gr.math.mod`: `x - y * floor(x / y)`, the formula `%` compiled to before) and a
plain saxpy. Run it on two checkouts to compare, as a file so that gfxrt comes from PYTHONPATH (with
`python -m` the current folder's gfxrt would come first):
    PYTHONPATH=<checkout> python3 experiments/opsem_cost.py [elements, default 2**20]
"""
import resource
import sys
import time

import numpy as np

import gfxrt as gr

gr.init()
F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
D1 = gr.types.ndarray(dtype=gr.f64, ndim=1)
I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)


@gr.kernel
def mod_small(a: F1, b: F1, y: F1):  # quotients below 2**8: one remainder step
    for i in range(a.shape[0]):
        x = a[i]
        y[i] = x % b[i] + (x * 1.5) % b[i] + (x + 3.0) % b[i] + (x - 1.0) % b[i]


@gr.kernel
def glsl_mod_small(a: F1, b: F1, y: F1):  # the same with x - y * floor(x / y)
    for i in range(a.shape[0]):
        x = a[i]
        y[i] = gr.math.mod(x, b[i]) + gr.math.mod(x * 1.5, b[i]) + gr.math.mod(x + 3.0, b[i]) + \
            gr.math.mod(x - 1.0, b[i])


@gr.kernel
def mod_large(a: F1, b: F1, y: F1):  # a * 1e6 % b: quotients near 2**27, four steps
    for i in range(a.shape[0]):
        x = a[i] * 1e6
        y[i] = x % b[i] + (x * 1.5) % b[i] + (x + 3.0) % b[i] + (x - 1.0) % b[i]


@gr.kernel
def mod_pow2(a: F1, y: F1):
    for i in range(a.shape[0]):
        x = a[i]
        y[i] = x % 1.0 + (x * 1.5) % 4.0 + x // 2.0 + (x - 1.0) // 8.0


@gr.kernel
def floordiv_small(a: F1, b: F1, y: F1):
    for i in range(a.shape[0]):
        x = a[i]
        y[i] = x // b[i] + (x * 1.5) // b[i] + (x + 3.0) // b[i] + (x - 1.0) // b[i]


@gr.kernel
def mod_f64(a: D1, b: D1, y: D1):
    for i in range(a.shape[0]):
        x = a[i]
        y[i] = x % b[i] + (x * 1.5) % b[i] + (x + 3.0) % b[i] + (x - 1.0) % b[i]


@gr.kernel
def compare_minmax(a: F1, b: F1, y: F1):  # comparisons, min / max / clamp: NaN decided on the bits
    for i in range(a.shape[0]):
        x, z = a[i], b[i]
        v = max(x, z) - min(x * 0.5, z) + gr.clamp(x * z, -1.0, 1.0)
        if x < z:
            v += 1.0
        if x * 2.0 >= z:
            v -= 0.5
        y[i] = v + gr.select(x != z, 0.25, 0.0)


@gr.kernel
def casts(a: F1, b: F1, y: I1):  # float -> int: saturating, NaN -> 0
    for i in range(a.shape[0]):
        x = a[i] * 100.0
        y[i] = int(x) + gr.cast(x * b[i], gr.i32) + int(b[i] * 7.0) + gr.cast(x + b[i], gr.i32)


@gr.kernel
def saxpy(a: F1, b: F1, y: F1):
    for i in range(a.shape[0]):
        y[i] = 2.0 * a[i] + b[i]


def timed(fn, args, reps=25):
    """The fastest of `reps` launches, in wall time and in this process's CPU time (on a CPU
    adapter shared with other work the CPU time is the steadier figure)."""
    fn(*args)
    gr.sync()
    wall, cpu = [], []
    for _ in range(reps):
        r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        fn(*args)
        gr.sync()
        r1, t1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        wall.append(t1 - t0)
        cpu.append(r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime)
    return min(wall), min(cpu)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2**20
    rng = np.random.default_rng(0)
    a = gr.ndarray(gr.f32, (n,))
    b = gr.ndarray(gr.f32, (n,))
    y = gr.ndarray(gr.f32, (n,))
    yi = gr.ndarray(gr.i32, (n,))
    a.from_numpy(rng.uniform(-100, 100, n).astype(np.float32))
    b.from_numpy(rng.uniform(0.5, 10, n).astype(np.float32))
    rows = [("saxpy", saxpy, (a, b, y)), ("mod_small (x % b, 4 per element)", mod_small, (a, b, y)),
            ("glsl_mod_small (x - b*floor(x/b))", glsl_mod_small, (a, b, y)),
            ("mod_large (quotients ~2**27)", mod_large, (a, b, y)), ("floordiv_small", floordiv_small, (a, b, y)),
            ("mod_pow2 (% 1.0, // 2.0 ...)", mod_pow2, (a, y)), ("compare_minmax", compare_minmax, (a, b, y)),
            ("casts (4 float -> int)", casts, (a, b, yi))]
    if {"shader-f64", "shader-int64"} <= set(gr.device().features):
        ad, bd, yd = (gr.ndarray(gr.f64, (n,)) for _ in range(3))
        ad.from_numpy(rng.uniform(-100, 100, n))
        bd.from_numpy(rng.uniform(0.5, 10, n))
        rows.append(("mod_f64", mod_f64, (ad, bd, yd)))
    print(f"n={n}")
    print(f"{'kernel':38s} {'wall ms':>8s} {'ns/elem':>8s} {'cpu ms':>8s}")
    for name, fn, args in rows:
        wall, cpu = timed(fn, args)
        print(f"{name:38s} {wall * 1e3:8.3f} {wall / n * 1e9:8.2f} {cpu * 1e3:8.2f}")


if __name__ == "__main__":
    main()
