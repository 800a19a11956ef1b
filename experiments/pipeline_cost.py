"""Issue 13: what the driver's pipeline creation costs for the compile benchmark's kernel, and
how much of it the shape of our WGSL decides.

Compiles bench/benchmarks/compile.py's 20-line kernel once, then creates its shader module and
pipeline again and again from edited copies of the WGSL, each with a fresh float constant so that
no cache (wgpu's, the driver's on-disk one) can hit:

- as generated: gfxrt's WGSL (our own f32 sin / cos / exp: issue 8's accuracy fix);
- driver sin/cos/exp: the same with WGSL's builtins instead of ours;
- no loop: the body without its `while` loop;
- trivial: `y[i] = x[i] * a + c` in the same grid-stride frame;
- checks none: as generated, with naga's bounds checks off (GFXRT_SHADER_CHECKS=none).

`--tasks`: instead, the first call minus the second call of kernels of 1, 3 and 6 tasks (the
benchmark's loop body in each top-level loop, salted), with the pipelines created one after another
(GFXRT_PIPELINE_THREADS=1) and by threads together (the default), interleaved.

Run: `python -m experiments.pipeline_cost [samples] [--uncapped] [--tasks]` (default 9; variants interleave by\nround; --uncapped: a loop-capped adapter (lavapipe) gets the code of one without a cap).
"""
from __future__ import annotations

import random
import re
import statistics
import sys
import time

from gfxrt.compiler import compile_kernel

import gfxrt as gr
from bench.benchmarks import compile as cb
from experiments.compile_profile import _Fw, _specs
from gfxrt.engine import ffi

N = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 9
SALT = "0.000123"


def _builtins(w: str) -> str:
    w = re.sub(r"fn gr_\w+\(.*?\n}\n", "", w, flags=re.S)  # the helpers
    for f in ("sin", "cos", "exp"):
        w = w.replace(f"gr_{f}_f32(", f"{f}(")
    return w


def _no_loop(w: str) -> str:
    return re.sub(r"\n(\s*)while \(.*?\n\1}", "", w, flags=re.S)


def _trivial(w: str) -> str:
    head, _, rest = w.partition("@compute")
    body = re.search(r"for \(var t_ .*?\{", rest).group(0)
    frame = rest[:rest.index("  var l0_t")]
    return (_builtins(head) + "@compute" + frame + "  let extent_ = max(P.p0, 0i);\n  let stride_ = i32(nwg_.x) * 256;\n  "
            + body + "\n    b1_y[t_] = b0_x[t_] * P.p2 + SALTf;\n  }\n}\n")


def _multi(tasks: int, salt: str) -> str:
    head, _, _ = cb.SOURCES["gfxrt"].partition("    for i in")
    loop = "    for i in range(x.shape[0]):" + cb.BODY.replace("SALT", salt)
    return head + "\n".join(loop.replace("y[i] = t", f"y[i] += {k}.0 * t") for k in range(tasks))


def tasks_main() -> None:
    import os
    gr.init()
    fw = _Fw()
    cb._compile_once(fw, cb._salt())
    print(f"device: {gr.device().name}; first call minus second call, ms, median of {N}", flush=True)
    rows: dict[tuple, list[float]] = {}
    for r in range(N + 1):
        for tasks in (1, 3, 6):
            for threads in ("1", None):
                if threads:
                    os.environ["GFXRT_PIPELINE_THREADS"] = threads
                else:
                    os.environ.pop("GFXRT_PIPELINE_THREADS", None)
                ms = cb.first_call_extra(fw, cb._launcher(fw, cb._load(fw, _multi(tasks, cb._salt())))) * 1e3
                if r:
                    rows.setdefault((tasks, threads), []).append(ms)
    os.environ.pop("GFXRT_PIPELINE_THREADS", None)
    for (tasks, threads), v in rows.items():
        print(f"  {tasks} task(s), {'one thread' if threads else 'threads   '}  {statistics.median(v):7.2f}  "
              f"[{min(v):6.2f} - {max(v):6.2f}]", flush=True)


def main() -> None:
    if "--tasks" in sys.argv:
        return tasks_main()
    gr.init()
    dev = gr.device()
    fw = _Fw()
    k = cb._load(fw, cb._source(fw, SALT))
    target = dev.target
    if "--uncapped" in sys.argv:  # the code an adapter without a loop cap gets (an H100's), here too
        import dataclasses
        target = dataclasses.replace(target, loop_cap=0)
    spec = compile_kernel(k.func, _specs(k), target, name=k.__name__, directory=None)
    lit = re.search(r"0\.000123\d*f", spec.wgsl).group(0)
    base = spec.wgsl.replace(lit, "SALTf")
    variants = {"as generated": (base, "bounds"), "driver sin/cos/exp": (_builtins(base), "bounds"),
                "no loop": (_no_loop(base), "bounds"), "trivial": (_trivial(base), "bounds"),
                "checks none": (base, "none")}
    d = dev.device
    bgl = d.create_bind_group_layout(entries=[
        {"binding": b.binding, "visibility": 4, "buffer": {"type": "read-only-storage" if b.read_only else "storage"}}
        for b in spec.bindings])
    layout = d.create_pipeline_layout(bind_group_layouts=[bgl], immediate_size=spec.params_size)
    print(f"device: {dev.name}; {spec.wgsl.count(chr(10))} WGSL lines; ms per creation, median of {N} "
          "(each with a fresh constant)", flush=True)
    rows: dict[str, dict[str, list[float]]] = {v: {"module": [], "pipeline": []} for v in variants}
    rng = random.Random()
    for r in range(N + 1):
        for name, (w, checks) in variants.items():
            code = w.replace("SALTf", f"{rng.uniform(1e-6, 1e-3):.9e}f")
            t0 = time.perf_counter()
            mod = ffi.create_shader_module(d, code, "probe", checks)
            t1 = time.perf_counter()
            d.create_compute_pipeline(layout=layout, compute={"module": mod, "entry_point": spec.tasks[0].entry})
            t2 = time.perf_counter()
            if r:  # round 0: warm-up
                rows[name]["module"].append((t1 - t0) * 1e3)
                rows[name]["pipeline"].append((t2 - t1) * 1e3)
    for name, (w, _) in variants.items():
        m, p = (statistics.median(rows[name][x]) for x in ("module", "pipeline"))
        lo, hi = min(rows[name]["pipeline"]), max(rows[name]["pipeline"])
        print(f"  {name:20s} module {m:6.2f}  pipeline {p:6.2f} [{lo:6.2f} - {hi:6.2f}]  "
              f"({w.count(chr(10))} lines)", flush=True)


if __name__ == "__main__":
    main()
