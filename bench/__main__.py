"""python -m bench [--quick]: launch overhead and saxpy bandwidth, gfxrt vs numpy."""
from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import gfxrt as gr


@gr.kernel
def _tiny(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(1):
        x[i] = x[i] + 1.0


@gr.kernel
def _saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


def _median(fn, repeats: int) -> float:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench")
    ap.add_argument("--quick", action="store_true", help="a few-second run")
    args = ap.parse_args(argv)
    n_launch = 200 if args.quick else 2000
    x = gr.ndarray(gr.f32, 16)
    _tiny(x)
    gr.sync()

    def launches():
        for _ in range(n_launch):
            _tiny(x)
        gr.sync()
    t_launch = _median(launches, 5) / n_launch
    n = 1 << (20 if args.quick else 24)
    xs, ys = gr.ndarray(gr.f32, n), gr.ndarray(gr.f32, n)
    xs.fill(1.0)
    ys.fill(2.0)
    _saxpy(2.0, xs, ys)
    gr.sync()

    def saxpy():
        _saxpy(2.0, xs, ys)
        gr.sync()
    t_saxpy = _median(saxpy, 5)
    xn, yn = np.ones(n, np.float32), np.full(n, 2.0, np.float32)
    t_np = _median(lambda: np.add(yn, 2.0 * xn, out=yn), 5)
    print(f"device: {gr.device().name}")
    print(f"{'benchmark':34s} {'gfxrt':>12s} {'numpy':>12s}")
    print(f"{'launch overhead (us/launch)':34s} {t_launch * 1e6:12.1f} {'-':>12s}")
    gb = 3 * 4 * n / 1e9
    label = f"saxpy 2^{n.bit_length() - 1} f32 (GB/s)"
    print(f"{label:34s} {gb / t_saxpy:12.1f} {gb / t_np:12.1f}")


if __name__ == "__main__":
    main()
