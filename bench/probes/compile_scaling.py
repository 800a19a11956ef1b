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
    continues that inner loop with n `if x[j] > 0.3: continue` / `a = a + 7.0` pairs
    taint     an inner loop `v0 = v1 * 1.0001; v1 = v2 * 1.0001; ...; v<n> = x[j]`: each local depends
              on memory only through the next one, which is assigned after it
    grad<s>   `kernel.grad` of shape s (reverse mode); `grad` is gradchain

Phases: key (the offline cache's key), frontend (lower_raw), simplify + verify (pipeline),
autodiff (transform for the mode), codegen passes (demote_atomics, reductions), emit (WGSL),
store (the cache entry's JSON) and, with --driver, the driver: wgpu's shader module and
pipeline creation from the WGSL text alone (not ours: lavapipe's/naga's own cost).

Run: `python -m bench.probes.compile_scaling [shape ...] [--n 1000,2000,4000] [--driver]
[--cprofile SHAPE:N]`. Prints one row per (shape, n): seconds per phase, total, and
microseconds per statement.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time

SHAPES = ("chain", "locals", "stores", "ifs", "calls", "static", "tasks", "uniform", "reduce", "loop", "continues", "taint",
          "grad", "gradlocals", "gradifs", "gradcalls", "gradtasks", "gradloop")
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
    elif base == "continues":
        lines = _loop(["a = 0.0", "for j in range(i % 7):"]
                      + [ln for j in range(n) for ln in (f"    if x[j] > 0.{j % 9 + 1}:", "        continue",
                                                         f"    a = a + {j}.0")] + ["y[i] = a"])
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
    from compiler.spec import ArgSpec
    from compiler.types import f32
    grad = shape.startswith("grad")
    out = [ArgSpec(name, "ndarray", elem=f32, ndim=1, needs_grad=grad) for name in ("x", "y")]
    return out + [ArgSpec("s", "scalar", dtype=f32)] if shape == "uniform" else out


def phases(shape: str, n: int, target, driver=None) -> dict:
    """One compile of a fresh kernel of `shape` and size n, split into phases (seconds)."""
    from compiler import lower_raw
    from compiler.autodiff import transform
    from compiler.cache import kernel_key, spec_to_json
    from compiler.codegen.wgsl import emit
    from compiler.passes import CODEGEN_PASSES, PASSES
    from compiler.passes.verify import verify
    from compiler.semantic import defaults
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
        ir = lower_raw(k.func, args, debug=target.debug, name="k").ir
    lap("frontend")
    verify(ir)
    lap("verify")
    for name, fn in PASSES:
        ir = fn(ir)
        lap(name)
        verify(ir)
        lap("verify")
    ir = transform(ir, mode, target)
    lap("autodiff")
    if mode != "primal":
        verify(ir)
        lap("verify")
    for _name, fn in CODEGEN_PASSES:
        ir = fn(ir)
        lap("codegen passes")
        verify(ir)
        lap("verify")
    spec = emit(ir, target)
    lap("emit")
    spec_to_json(spec, {})
    lap("store json")
    if driver is not None:
        driver(spec)
        lap("driver")
    out["total"] = sum(out.values())
    out["wgsl KB"] = len(spec.wgsl) / 1024
    return out


def _driver():
    """wgpu's shader module + pipelines for a spec's WGSL (the driver's cost, not ours)."""
    from gfxrt import context
    from gfxrt.program import Program
    dev = context.device().device

    def run(spec):
        Program(dev, spec)
    return run


def main():
    argv = sys.argv[1:]
    ns = [1000, 2000, 4000, 8000, 16000, 20000]
    if "--n" in argv:
        ns = [int(v) for v in argv[argv.index("--n") + 1].split(",")]
    shapes = [a for a in argv if a in SHAPES] or list(SHAPES)
    import gfxrt as gr
    from gfxrt import context
    gr.init(offline_cache=False)
    target = context.device().target  # what a user's compile gets on this adapter
    driver = _driver() if "--driver" in argv else None
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
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 1000))
    print(f"load {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)")
    phases("chain", 50, target, driver)  # imports and first-use costs out of the way
    for shape in shapes:
        for n in ns:
            t0 = time.process_time()
            try:
                r = phases(shape, n, target, driver)
            except Exception as e:  # noqa: BLE001 (a probe: report and go on)
                print(f"{shape:7s} n={n:6d}  FAILED after {time.process_time() - t0:.1f} s: {type(e).__name__}: "
                      f"{str(e)[:120]}", flush=True)
                continue
            cols = "  ".join(f"{k} {v:.2f}" for k, v in r.items() if k not in ("total", "wgsl KB"))
            print(f"{shape:7s} n={n:6d}  total {r['total']:7.2f} s  {r['total'] / n * 1e6:7.0f} us/stmt  "
                  f"[{cols}]  wgsl {r['wgsl KB']:.0f} KB", flush=True)


if __name__ == "__main__":
    main()
