"""Compile time against kernel size (issue 21 item 8): is every phase linear?

Generates kernels of n straight-line statements in several shapes and times each compile
phase separately:

    chain     one local updated n times: `a = a * 1.0001 + x[i]`
    locals    n distinct locals, each from the one before: `v7 = v6 * 1.0001 + x[i]`
    stores    n array stores: `y[i] = x[i] * 7.0 + 7.0`  (index offsets so none fold away)
    ifs       n if-blocks: `if x[i] > 0.7: a = a + 7.0`
    calls     n calls of a small @gr.func chain (each call inlines three nested funcs)
    static    one `for j in gr.static(range(n)): a = a * 1.0001 + x[i]` loop, unrolled
    tasks     n top-level loops (n tasks): `for i in range(x.shape[0]): y[i] = x[i] * 7.0 + a`
    uniform   kernel-scope code on a scalar argument: `v7 = v6 * s + 1.0` (no loop around it)
    reduce    n kernel-scope sums in one loop: `s7 += x[i] * 7.0`
    loop      the chain inside a run-time inner loop `for j in range(i % 7)`
    loops     n inner loops `for k in range(i % 3): a = a + x[k]`
    continues that inner loop with n `if x[j] > 0.3: continue` / `a = a + 7.0` pairs
    stencil   the chain on neighbours, `a = a * 1.0001 + x[i + 1]` (its grad gathers)
    taint     an inner loop `v0 = v1 * 1.0001; v1 = v2 * 1.0001; ...; v<n> = x[j]`: each local depends
              on memory only through the next one, which is assigned after it
    grad<s>   `kernel.grad` of shape s (reverse mode); `grad` is gradchain

Phases (CPU seconds of this process, so other work on the machine counts little): key (the
offline cache's key: reading and parsing the source), frontend (compiler.pipeline.frontend), verify (all its
runs), simplify, autodiff (the transform for the mode), cg passes (demote_atomics,
reductions), emit (WGSL), cache (the entry's JSON); `ours` is their sum. With --driver, the
driver's cost for the WGSL text alone, through wgpu: module (naga's WGSL front end and
validation) and pipelines (naga's SPIR-V and lavapipe's compile) - not gfxrt's code.

Findings (issue 21, bench/RESULTS.md has the tables): gfxrt's part is linear, 0.3-0.7 ms a
line on the 2-core CPU machine (grad ~1 ms; 20,000 lines 7-14 s, gr.static(range(200000))
60 s); before, many tasks, inner loops, reverse chains in loops, kernel-scope chains and
grad bodies were quadratic or worse (4,000 inner loops: >300 s, now 4.7 s). The driver is
not linear: naga's WGSL front end is quadratic per function (Typifier::grow) and lavapipe's
pipeline compile superlinear in memory accesses (16,000-20,000 array stores: 200-230 s).

Run: `python -m experiments.compile_scaling [shape ...] [--n 1000,2000,4000] [--driver]
[--fresh [--limit S]] [--cprofile SHAPE:N]`. --fresh: each row in a new process (killed
after S wall seconds). Prints one row per (shape, n): seconds per phase, `ours`, and
microseconds per statement.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time

SHAPES = ("chain", "locals", "stores", "ifs", "calls", "static", "tasks", "uniform", "reduce", "loop", "loops", "continues",
          "taint",
          "stencil", "grad", "gradlocals", "gradifs", "gradcalls", "gradtasks", "gradloop", "gradstencil")
_HEAD = "import gfxrt as gr\n\n"
_ARGS = "x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)"
_FUNCS = ("@gr.func\ndef f1(a: gr.f32, b: gr.f32) -> gr.f32:\n    return a * 1.0001 + b\n\n"
          "@gr.func\ndef f2(a: gr.f32, b: gr.f32) -> gr.f32:\n    return f1(a, b) * 0.5\n\n"
          "@gr.func\ndef f3(a: gr.f32, b: gr.f32) -> gr.f32:\n    return f2(a, b) + 1.0\n\n")


def _kernel(lines: list[str], args: str = _ARGS) -> str:
    return f"@gr.kernel\ndef k({args}):\n" + "".join(f"    {ln}\n" for ln in lines)


def _loop(lines: list[str]) -> list[str]:
    return ["for i in range(x.shape[0]):"] + ["    " + ln for ln in lines]


def source(shape: str, n: int) -> str:
    """Python source of a module defining kernel `k` of `shape` with n statements (a shape
    `grad<s>` is the kernel of shape s; `grad` alone is `gradchain`)."""
    base = "chain" if shape == "grad" else shape[4:] if shape.startswith("grad") else shape
    if base == "chain":
        lines = _loop(["a = 0.0"] + ["a = a * 1.0001 + x[i]"] * n + ["y[i] = a"])
    elif base == "locals":
        lines = _loop(["v0 = x[i]"] + [f"v{j + 1} = v{j} * 1.0001 + x[i]" for j in range(n)] + [f"y[i] = v{n}"])
    elif base == "stores":
        lines = _loop([f"y[(i + {j}) % 64] = x[i] * {j}.0 + {j % 7}.0" for j in range(n)])
    elif base == "ifs":
        lines = _loop(["a = 0.0"] + [ln for j in range(n) for ln in (f"if x[i] > 0.{j % 9 + 1}:", f"    a = a + {j}.0")]
                      + ["y[i] = a"])
    elif base == "calls":
        return _HEAD + _FUNCS + _kernel(_loop(["a = 0.0"] + ["a = f3(a, x[i])"] * n + ["y[i] = a"]))
    elif base == "static":
        lines = _loop(["a = 0.0", f"for j in gr.static(range({n})):", "    a = a * 1.0001 + x[i]", "y[i] = a"])
    elif base == "tasks":
        lines = ["a = 1.0"] + [ln for j in range(n) for ln in _loop([f"y[i] = x[i] * {j}.0 + a"])]
    elif base == "uniform":
        lines = (["v0 = s"] + [f"v{j + 1} = v{j} * s + 1.0" for j in range(n)]
                 + _loop([f"y[i] = v{n}"]))
        return _HEAD + _kernel(lines, _ARGS + ", s: gr.f32")
    elif base == "reduce":
        lines = ([f"s{j} = 0.0" for j in range(n)] + _loop([f"s{j} += x[i] * {j}.0" for j in range(n)])
                 + _loop(["y[i] = " + " + ".join(f"s{j}" for j in range(min(n, 8)))]))
    elif base == "loop":
        lines = _loop(["a = 0.0", "for j in range(i % 7):"] + ["    a = a * 1.0001 + x[j]"] * n + ["y[i] = a"])
    elif base == "loops":
        lines = _loop(["a = 0.0"] + [ln for _ in range(n) for ln in ("for k in range(i % 3):", "    a = a + x[k]")]
                      + ["y[i] = a"])
    elif base == "continues":
        lines = _loop(["a = 0.0", "for j in range(i % 7):"]
                      + [ln for j in range(n) for ln in (f"    if x[j] > 0.{j % 9 + 1}:", "        continue",
                                                         f"    a = a + {j}.0")] + ["y[i] = a"])
    elif base == "stencil":
        lines = ["for i in range(1, x.shape[0] - 1):", "    a = 0.0"] + [
            f"    a = a * 1.0001 + x[i {'+-'[j % 2]} 1]" for j in range(n)] + ["    y[i] = a"]
    elif base == "taint":
        lines = _loop([f"v{j} = 0.0" for j in range(n + 1)] + ["for j in range(i % 7):"]
                      + [f"    v{j} = v{j + 1} * 1.0001" for j in range(n)] + [f"    v{n} = x[j]", "y[i] = v0"])
    else:
        raise ValueError(shape)
    return _HEAD + _kernel(lines)


_dir = tempfile.mkdtemp(prefix="gfxrt-compile-scaling-")
_count = 0


def load(shape: str, n: int):
    """The kernel object of a fresh module file (inspect needs a real file)."""
    global _count
    _count += 1
    path = os.path.join(_dir, f"k{_count}_{shape}_{n}.py")
    with open(path, "w") as f:
        f.write(source(shape, n))
    spec = importlib.util.spec_from_file_location(f"_scaling_{_count}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.k


def specs(shape: str):
    from gfxrt.compiler.spec import ArgSpec
    from gfxrt.compiler.types import f32
    grad = shape.startswith("grad")
    out = [ArgSpec(name, "ndarray", elem=f32, ndim=1, needs_grad=grad) for name in ("x", "y")]
    return out + [ArgSpec("s", "scalar", dtype=f32)] if shape == "uniform" else out


def phases(shape: str, n: int, target, driver: bool = False) -> dict:
    """One compile of a fresh kernel of `shape` and size n, split into phases (CPU seconds)."""
    import json

    from gfxrt.compiler.cache import kernel_key, spec_to_json
    from gfxrt.compiler.codegen.wgsl import emit
    from gfxrt.compiler.passes.verify import verify
    from gfxrt.compiler.pipeline import CODEGEN, LOWER, MODES, PASSES, frontend
    from gfxrt.compiler.semantic import defaults
    k = load(shape, n)
    mode = "grad" if shape.startswith("grad") else "primal"
    args = specs(shape)
    out, t = {}, time.process_time()

    def lap(name):
        nonlocal t
        now = time.process_time()
        out[name] = out.get(name, 0.0) + now - t
        t = now
    kernel_key(k.func, args, target, "k", mode)
    lap("key")
    with defaults(target.default_fp, target.default_ip):
        ir = frontend(k.func, args, debug=target.debug, name="k").ir
    lap("frontend")
    verify(ir)
    lap("verify")
    for group, names in (("passes", LOWER), ("autodiff", MODES[mode]), ("cg passes", CODEGEN)):
        for name in names:
            if PASSES[name].when(target):
                ir = PASSES[name].run(ir, target)
                lap(group if group != "passes" else name)
                verify(ir)
                lap("verify")
    spec = emit(ir, target)
    lap("emit")
    json.dumps(spec_to_json(spec, {}))
    lap("cache")
    out["ours"] = sum(out.values())
    if driver:
        out.update(_driver(spec))
    out["wgsl KB"] = len(spec.wgsl) / 1024
    return out


def _driver(spec) -> dict:
    """The driver's own cost for a spec's WGSL, through wgpu alone (not ours: naga's WGSL
    front end and validation, then lavapipe's pipeline compile), CPU seconds."""
    from gfxrt.engine import context, ffi
    dev = context.device().device
    t = time.process_time()
    module = ffi.create_shader_module(dev, spec.wgsl, spec.name, "bounds")
    t1 = time.process_time()
    bgl = dev.create_bind_group_layout(entries=[
        {"binding": b.binding, "visibility": 4, "buffer": {"type": "read-only-storage" if b.read_only else "storage"}}
        for b in spec.bindings])
    layout = dev.create_pipeline_layout(bind_group_layouts=[bgl], immediate_size=spec.params_size)
    t2 = time.process_time()
    for tk in spec.tasks:
        dev.create_compute_pipeline(layout=layout, compute={"module": module, "entry_point": tk.entry})
    return {"module": t1 - t, "pipelines": time.process_time() - t2}


def _row(shape: str, n: int, r: dict) -> str:
    cols = "  ".join(f"{k} {v:.2f}" for k, v in r.items() if k not in ("ours", "wgsl KB"))
    return (f"{shape:10s} n={n:6d}  ours {r['ours']:7.2f} s  {r['ours'] / n * 1e6:6.0f} us/stmt  [{cols}]  "
            f"wgsl {r['wgsl KB']:.0f} KB")


def main():
    argv = sys.argv[1:]
    ns = [1000, 2000, 4000, 8000, 16000, 20000]
    if "--n" in argv:
        ns = [int(v) for v in argv[argv.index("--n") + 1].split(",")]
    shapes = [a for a in argv if a in SHAPES] or list(SHAPES)
    driver = "--driver" in argv
    if "--fresh" in argv:  # each row in a new process (no memory or caches left by the row before)
        import subprocess
        limit = float(argv[argv.index("--limit") + 1]) if "--limit" in argv else 600
        print(f"load {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores), CPU seconds", flush=True)
        for shape in shapes:
            for n in ns:
                cmd = [sys.executable, "-m", "experiments.compile_scaling", shape, "--n", str(n), "--quiet"]
                try:
                    p = subprocess.run(cmd + (["--driver"] if driver else []), capture_output=True, text=True,
                                       timeout=limit)
                    print((p.stdout.strip().splitlines() or [p.stderr.strip()[-200:]])[-1], flush=True)
                except subprocess.TimeoutExpired:
                    print(f"{shape:10s} n={n:6d}  not done after {limit:.0f} s (wall)", flush=True)
        return
    import gfxrt as gr
    from gfxrt.engine import context
    gr.init(offline_cache=False)
    target = context.device().target  # what a user's compile gets on this adapter
    if "--cprofile" in argv:
        import cProfile
        import pstats
        shape, n = argv[argv.index("--cprofile") + 1].split(":")
        prof = cProfile.Profile()
        prof.enable()
        phases(shape, int(n), target, driver)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return
    if "--quiet" not in argv:
        print(f"load {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores), CPU seconds")
    phases("chain", 50, target, driver)  # imports and first-use costs out of the way
    for shape in shapes:
        for n in ns:
            t0 = time.process_time()
            try:
                r = phases(shape, n, target, driver)
            except Exception as e:  # noqa: BLE001 (a probe: report and go on)
                msg = " | ".join(ln.strip() for ln in str(e).splitlines())
                print(f"{shape:10s} n={n:6d}  FAILED after {time.process_time() - t0:.1f} s: {type(e).__name__}: "
                      f"{msg[-160:]}", flush=True)
                continue
            print(_row(shape, n, r), flush=True)


if __name__ == "__main__":
    main()
