"""Compile time of a 20-line kernel (math, a while loop, branches): the first call of a fresh
kernel object minus its second call, i.e. Python source to a launched pipeline.

cold: source never seen before (a fresh constant in it), so no cache of any kind can hit.
warm: a fresh kernel object (new module) whose source was compiled before in this process: it
      hits whatever cache the framework keeps across kernel objects (memory or disk).
"""
import importlib.util
import os
import tempfile
import time
import uuid

import numpy as np

from ..registry import Case, Work, benchmark

compile_time = benchmark(
    "compile", "compile a 20-line kernel: first call minus second call", unit="ms", group="compile",
    cases=lambda quick: [Case("cold", "cold"), Case("warm cache", "warm")],
    na={"numpy": "no kernel compiler (eager library calls)", "torch": "no kernel compiler measured (eager ops)"})

BODY = """
        v = x[i] * a + SALT
        acc = 0.0
        j = 0
        while j < n:
            if v > 1.0:
                v = v * 0.5 - 0.1
            else:
                v = M.sin(v) + 0.25
            acc += M.sqrt(M.abs(v)) * 0.5
            j += 1
        t = M.exp(-acc) + M.max(v, 0.0)
        if t > 10.0:
            t = 10.0
        y[i] = t + M.cos(acc) * 0.125
"""

SOURCES = {
    "gfxrt": """import gfxrt as M

@M.kernel
def k(x: M.types.ndarray(dtype=M.f32, ndim=1), y: M.types.ndarray(dtype=M.f32, ndim=1), a: M.f32, n: M.i32):
    for i in range(x.shape[0]):""" + BODY,
    "taichi": """import {mod} as M

@M.kernel
def k(x: M.types.ndarray(dtype=M.f32, ndim=1), y: M.types.ndarray(dtype=M.f32, ndim=1), a: M.f32, n: M.i32):
    for i in range(x.shape[0]):""" + BODY,
    "warp": """import warp as M

@M.kernel(module="unique")
def k(x: M.array(dtype=M.float32), y: M.array(dtype=M.float32), a: float, n: int):
    i = M.tid()
    if True:""" + BODY.replace("acc = 0.0", "acc = float(0.0)").replace("j = 0", "j = int(0)"),
}  # warp: a variable mutated in a loop must be declared dynamic
N = 1024


def _source(fw, salt: str) -> str:
    kind = "taichi" if fw.kind in ("taichi", "quadrants") else fw.kind
    return SOURCES[kind].replace("{mod}", fw.kind).replace("SALT", salt)


def _load(fw, text: str):
    folder = fw.memo("compile-dir", lambda: tempfile.mkdtemp(prefix="gfxrt-bench-compile-"))
    name = f"bench_compile_{fw.kind}_{uuid.uuid4().hex[:12]}"
    path = os.path.join(folder, name + ".py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.k


def _launcher(fw, k):
    x0 = np.linspace(0.1, 2.0, N, dtype=np.float32)
    x, y = fw.to_device(x0), fw.to_device(np.zeros(N, np.float32))
    if fw.kind == "warp":
        return lambda: fw.mod.launch(k, dim=N, inputs=[x, y, 1.5, 8], device=fw.dev)
    return lambda: k(x, y, 1.5, 8)


def _compile_once(fw, salt: str) -> float:
    return first_call_extra(fw, _launcher(fw, _load(fw, _source(fw, salt))))


def first_call_extra(fw, call) -> float:
    """Seconds the first call of `call` (a fresh kernel's launch) takes over its second, each
    synced: what compiling it cost."""
    t0 = time.perf_counter()
    call()
    fw.sync()
    t1 = time.perf_counter()
    call()
    fw.sync()
    t2 = time.perf_counter()
    return max(0.0, (t1 - t0) - (t2 - t1))


def _salt() -> str:
    return f"{int(uuid.uuid4().int % 10**8) * 1e-12:.12f}"  # unique per sample, across processes too


@compile_time.impl("gfxrt", "taichi", "quadrants", "warp")
def _kernel_languages(fw, mode):
    def samples(k: int) -> list[float]:
        k = min(k, 5)
        if mode == "cold":
            return [_compile_once(fw, _salt()) for _ in range(k)]
        salt = _salt()
        _compile_once(fw, salt)
        return [_compile_once(fw, salt) for _ in range(k)]
    return Work(samples=samples, impl="fresh module file per sample, imported with importlib")
