"""Where the compile benchmark's milliseconds go (issue 13).

Compiles bench/benchmarks/compile.py's 20-line kernel the way the benchmark does (a fresh
module file per sample, first call minus second call) cold (a fresh constant: nothing can
hit) and warm (the same source again in a new module: an offline-cache hit), then splits
one cold and one warm compile into phases:

- key: the offline cache's key (`kernel_key`);
- frontend / passes / codegen: `frontend`, LOWER, the primal passes and `emit` (compiler/pipeline.py; cold only);
- load: reading and checking the cache entry (warm only);
- shader module / layouts / pipelines: the driver (`Program`), the floor that is not ours.

Run: `python -m experiments.compile_profile [N] [--variants] [--cprofile [--all]]` with
GFXRT_CACHE_DIR pointing at an empty folder (made here when unset). --variants: the
benchmark again with other code generator settings (interleaving off, one loop copy) and the
kernel's run time under each; --cprofile: one cold and one warm compile under cProfile.
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time

if not os.environ.get("GFXRT_CACHE_DIR"):
    os.environ["GFXRT_CACHE_DIR"] = tempfile.mkdtemp(prefix="gfxrt-compile-profile-")


import numpy as np  # noqa: E402
from gfxrt.compiler import compile_kernel  # noqa: E402

import gfxrt as gr  # noqa: E402
from bench.benchmarks import compile as cb  # noqa: E402

N = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 15


class _Fw:
    kind = "gfxrt"
    _memo: dict = {}

    def memo(self, key, make):
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def to_device(self, a):
        x = gr.ndarray(gr.f32, shape=a.shape)
        x.from_numpy(a)
        return x

    def sync(self):
        gr.sync()


def _dir() -> str:
    return os.environ["GFXRT_CACHE_DIR"]


def _specs(k):
    x = gr.ndarray(gr.f32, shape=(cb.N,))
    return [k._arg_spec(p, v, i) for i, (p, v) in enumerate(zip(k._signature(), [x, x, 1.5, 8]))]


def _phases(k, warm: bool) -> dict:
    """One compile of kernel object `k`, phase by phase (ms)."""
    from gfxrt.compiler.cache import kernel_key, load
    from gfxrt.compiler.codegen.wgsl import emit
    from gfxrt.compiler.pipeline import CODEGEN, LOWER, frontend, run, transform
    from gfxrt.compiler.semantic import defaults

    from gfxrt.engine import context, ffi
    from gfxrt.engine.program import Program
    dev = context.device()
    specs = _specs(k)
    out, t = {}, time.perf_counter()

    def lap(name):
        nonlocal t
        now = time.perf_counter()
        out[name] = (now - t) * 1e3
        t = now
    key = kernel_key(k.func, specs, dev.target, k.__name__, "primal")
    lap("key")
    if warm:
        spec = load(_dir(), key, k.func, specs)
        assert spec is not None, "expected a cache hit"
        lap("load")
    else:
        with defaults(dev.target.default_fp, dev.target.default_ip):
            fe = frontend(k.func, specs, debug=dev.target.debug, name=k.__name__)
        lap("frontend")
        ir = run(fe.ir, LOWER, dev.target)
        lap("passes")
        spec = emit(run(transform(ir, "primal", dev.target), CODEGEN, dev.target), dev.target)
        lap("codegen")
    d = dev.device
    module = ffi.create_shader_module(d, spec.wgsl, spec.name, "bounds")
    lap("shader module")
    bgl = d.create_bind_group_layout(entries=[
        {"binding": b.binding, "visibility": 4, "buffer": {"type": "read-only-storage" if b.read_only else "storage"}}
        for b in spec.bindings])
    if spec.params_uniform:
        from gfxrt.engine.program import params_layout
        layout = d.create_pipeline_layout(bind_group_layouts=[bgl, params_layout(d)])
    else:
        layout = d.create_pipeline_layout(bind_group_layouts=[bgl], immediate_size=spec.params_size)
    lap("layouts")
    for tk in spec.tasks:
        d.create_compute_pipeline(layout=layout, compute={"module": module, "entry_point": tk.entry})
    lap("pipelines")
    t0 = time.perf_counter()
    Program(d, spec)
    out["Program total"] = (time.perf_counter() - t0) * 1e3
    out["wgsl lines"] = spec.wgsl.count("\n")
    out["tasks"] = len(spec.tasks)
    return out


def _profile(fw, mode: str, top: int) -> None:
    import cProfile
    import pstats
    salt = cb._salt()
    if mode == "warm":
        cb._compile_once(fw, salt)
    call = cb._launcher(fw, cb._load(fw, cb._source(fw, salt)))
    prof = cProfile.Profile()
    prof.enable()
    call()
    fw.sync()
    prof.disable()
    print(f"--- cProfile, {mode} ---")
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


def _bench_style(fw, n: int) -> tuple[float, float]:
    cold = [cb._compile_once(fw, cb._salt()) * 1e3 for _ in range(n)]
    salt = cb._salt()
    cb._compile_once(fw, salt)
    warm = [cb._compile_once(fw, salt) * 1e3 for _ in range(n)]
    return statistics.median(cold), statistics.median(warm)


def _run_time(fw, size: int) -> float:
    """Median wall time (ms, sync included) of the kernel on `size` items, 8 loop trips."""
    k = cb._load(fw, cb._source(fw, cb._salt()))
    x, y = fw.to_device(np.linspace(0.1, 2.0, size, dtype=np.float32)), fw.to_device(np.zeros(size, np.float32))
    k(x, y, 1.5, 8)
    gr.sync()
    times = []
    for _ in range(15):
        t = time.perf_counter()
        k(x, y, 1.5, 8)
        gr.sync()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main():
    gr.init()
    fw = _Fw()
    dev = gr.device()
    print(f"device: {dev.name}; cache dir {os.environ['GFXRT_CACHE_DIR']}")
    cb._compile_once(fw, cb._salt())  # first-of-process costs (compiler digest, imports) out of the way
    if "--cprofile" in sys.argv:
        _profile(fw, "cold", 30)
        _profile(fw, "warm", 30)
        if "--all" not in sys.argv:
            return
    cold, warm = _bench_style(fw, N)
    print(f"bench-style: cold {cold:.2f} ms, warm {warm:.2f} ms (median of {N})")
    rows = {}
    salt = cb._salt()
    for w in (False, True):
        for _ in range(5):
            k = cb._load(fw, cb._source(fw, salt if w else cb._salt()))
            if w:
                compile_kernel(k.func, _specs(k), dev.target, name=k.__name__, directory=_dir())
            for name, v in _phases(k, w).items():
                rows.setdefault(("warm " if w else "cold ") + name, []).append(v)
    for name, vs in rows.items():
        print(f"  {name:24s} {statistics.median(vs):8.2f}")
    if "--variants" in sys.argv:  # the same benchmark with other code generator settings
        import dataclasses
        base = dev.target
        size = 1 << 22 if "CPU" not in dev.name else 1 << 16
        variants = {"as is": {}, "interleave off": {"interleave": False}}
        if base.loop_cap:
            variants["loop copies 1"] = {"loop_copies": 1}
        for name, change in variants.items():
            dev.target = dataclasses.replace(base, **change)
            c, w = _bench_style(fw, max(5, N // 2))
            print(f"  variant {name:16s} cold {c:7.2f} ms  warm {w:6.2f} ms  run {size} items {_run_time(fw, size):7.3f} ms")
        dev.target = base


if __name__ == "__main__":
    main()
