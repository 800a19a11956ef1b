"""Compile-time benchmark: a 20-line kernel from Python source to WGSL + KernelSpec, cold
(nothing cached: AST parse, lowering, passes, code generation) and warm (offline disk
cache hit: no parsing, lowering or code generation), and separately the driver's
shader-module + pipeline creation, which neither figure includes.

    python -m experiments.compile_time          # prints the figures
    from experiments.compile_time import run    # returns them (milliseconds)
"""
from __future__ import annotations

import statistics
import tempfile
import time

from gfxrt.compiler import ArgSpec, compile_kernel
from gfxrt.compiler.cache import compiler_digest
from gfxrt.compiler.frontend import source as _source
from gfxrt.compiler.types import VectorType, f32

import gfxrt as gr


@gr.func
def clamp01(v):
    return gr.min(gr.max(v, 0.0), 1.0)


F2 = gr.types.ndarray(dtype=gr.f32, ndim=2)


def advect(q: F2, vel: gr.types.ndarray(dtype=gr.types.vector(2, gr.f32), ndim=2), out: F2,
           dt: gr.f32) -> gr.f32:                # the 20-line kernel
    n, m = q.shape[0], q.shape[1]
    for i, j in gr.ndrange(n, m):
        v = vel[i, j]
        p = gr.Vector([i - v.x * dt, j - v.y * dt])
        px = gr.min(gr.max(p.x, 0.0), n - 1.001)
        py = gr.min(gr.max(p.y, 0.0), m - 1.001)
        i0, j0 = int(px), int(py)
        fx, fy = px - i0, py - j0
        a = q[i0, j0] * (1 - fx) + q[i0 + 1, j0] * fx
        b = q[i0, j0 + 1] * (1 - fx) + q[i0 + 1, j0 + 1] * fx
        r = a * (1 - fy) + b * fy
        if r > 1.0:
            r = clamp01(r)
        elif r < 0.0:
            r = 0.0
        out[i, j] = r
    total = 0.0
    for i, j in out:
        total += out[i, j]
    return total


ARGS = [ArgSpec("q", "ndarray", elem=f32, ndim=2), ArgSpec("vel", "ndarray", elem=VectorType(2, f32), ndim=2),
        ArgSpec("out", "ndarray", elem=f32, ndim=2), ArgSpec("dt", "scalar", dtype=f32)]


def _median_ms(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def run(repeats: int = 20) -> dict:
    """Figures in milliseconds: cold compile, warm (disk cache) load, the one-time compiler
    digest of a process, and the driver's pipeline creation (excluded from both)."""
    target = gr.device().target
    digest_ms = _median_ms(lambda: (compiler_digest.cache_clear(), compiler_digest()), 5)

    def cold():
        _source.clear()  # as in a fresh process: parse the source again
        return compile_kernel(advect, ARGS, target, directory=None)
    cold_ms = _median_ms(cold, repeats)
    with tempfile.TemporaryDirectory() as d:
        compile_kernel(advect, ARGS, target, directory=d)

        def warm():
            _source.clear()
            spec = compile_kernel(advect, ARGS, target, directory=d)
            assert spec is not None
        warm_ms = _median_ms(warm, repeats)
    from gfxrt.engine.program import Program
    spec = cold()
    driver_ms = _median_ms(lambda: Program(gr.device().device, spec), 5)
    return {"device": gr.device().name, "cold_compile_ms": cold_ms, "warm_cache_ms": warm_ms,
            "compiler_digest_once_per_process_ms": digest_ms, "driver_pipeline_ms": driver_ms,
            "kernel_source_lines": 20, "tasks": len(spec.tasks), "wgsl_lines": spec.wgsl.count("\n")}


if __name__ == "__main__":
    for k, v in run().items():
        print(f"{k:40s} {v:.3f}" if isinstance(v, float) else f"{k:40s} {v}")
