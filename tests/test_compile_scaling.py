"""Compile time grows linearly with the kernel (issue 21 item 8), and long or deeply nested
kernels compile or raise a clear CompileError, never a RecursionError. No device: the
compiler alone, for the loop-capped target (lavapipe's code paths: loop body copies).

Each scaling case compiles a kernel of n and of 4n statements and compares the CPU time
(the least of two compiles each): 4x for linear work, 16x for quadratic. Every case was
quadratic or worse before (x11.6 to x31 at these sizes); the bound 8 leaves linear code
twice its ratio for a loaded machine.
experiments/compile_scaling.py measures the same shapes phase by phase at 1k-20k.
"""
from __future__ import annotations

import dataclasses
import gc
import importlib.util
import time

import pytest
from gfxrt.compiler import ArgSpec, CompileError, Target, compile_kernel
from gfxrt.compiler.types import f32

TARGET = Target(frozenset({"immediates"}), 128, loop_cap=65535)
ARRAYS = [ArgSpec("x", "ndarray", elem=f32, ndim=1, needs_grad=True),
          ArgSpec("y", "ndarray", elem=f32, ndim=1, needs_grad=True)]
SCALAR = [*ARRAYS, ArgSpec("s", "scalar", dtype=f32)]


def _loop(lines: list[str]) -> list[str]:
    return ["for i in range(x.shape[0]):"] + ["    " + ln for text in lines for ln in text.split("\n")]


# shape -> (body lines for n, arguments, mode, n): each was superlinear before, with a ratio of
# 11-31 (or a RecursionError) at these sizes. (Many tasks and long grad bodies, also fixed, cost
# n^2 only with a small constant: experiments/compile_scaling.py shows them at 2k-16k.)
SHAPES = {
    # n inner loops: the loop variable's "read after the loop?" walked the whole function per loop,
    # and fresh() rescanned `k, k_1, k_2, ...` for each new `k`
    "inner loops": (lambda n: _loop(["a = 0.0"] + [ln for _ in range(n) for ln in
                                                  ("for k in range(i % 3):", "    a = a + x[k]")] + ["y[i] = a"]),
                    ARRAYS, "primal", 100),
    # a chain assigned in reverse order in a loop: the loop-copy taint analysis re-walked it per link
    "reverse chain": (lambda n: _loop([f"v{j} = 0.0" for j in range(n + 1)] + ["for j in range(i % 7):"]
                                      + [f"    v{j} = v{j + 1} * 1.0001" for j in range(n)]
                                      + [f"    v{n} = x[j]", "y[i] = v0"]), ARRAYS, "primal", 200),
    # a kernel-scope chain on a scalar: one ever deeper direct binding, re-walked per line
    "kernel-scope chain": (lambda n: ["v = s"] + ["v = v * s + 1.0"] * n + _loop(["y[i] = v"]), SCALAR, "primal", 60),
}


def _module(tmp_path, name: str, lines: list[str], params: str):
    path = tmp_path / f"{name}.py"
    body = "".join(f"    {ln}\n" for text in lines for ln in text.split("\n"))
    path.write_text(f"def k({params}):\n{body}")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.k


def _seconds(tmp_path, shape: str, n: int) -> float:
    """The least CPU time of two compiles of the `shape` kernel with n statements."""
    make, args, mode, _ = SHAPES[shape]
    params = ", ".join(a.name for a in args)
    best = float("inf")
    for rep in range(2):
        fn = _module(tmp_path, f"k_{shape.replace(' ', '_').replace('-', '_')}_{n}_{rep}", make(n), params)
        gc.collect()
        t = time.process_time()
        compile_kernel(fn, args, TARGET, mode=mode)
        best = min(best, time.process_time() - t)
    return best


@pytest.mark.parametrize("shape", list(SHAPES))
def test_compile_time_is_linear(tmp_path, shape):
    n = SHAPES[shape][3]
    small, large = _seconds(tmp_path, shape, n), _seconds(tmp_path, shape, 4 * n)
    assert large / small < 8, f"{shape}: {n} statements {small:.3f} s, {4 * n}: {large:.3f} s (x{large / small:.1f})"


def test_doubling_direct_bindings_compile_at_once(tmp_path):
    """`v1 = v0 * v0; v2 = v1 * v1; ...`: each name was bound to its expression, so the
    expression doubled per line (these 16 lines took 30 s, each line more twice that)."""
    fn = _module(tmp_path, "k_doubling", ["v0 = s"] + [f"v{j + 1} = v{j} * v{j}" for j in range(16)]
                 + _loop(["y[i] = v16"]), "x, y, s")
    t = time.process_time()
    for mode in ("primal", "grad"):
        compile_kernel(fn, SCALAR, TARGET, mode=mode)
    assert time.process_time() - t < 5


def test_long_chains_compile_without_recursion_error(tmp_path):
    """A long straight-line kernel recurses nowhere in the compiler: 400 updates of one
    kernel-scope value (a CompileError for a RecursionError after seconds before) and 300
    `if ...: continue` lines in a loop (autodiff nested one guard per line: 300 deep, a
    RecursionError from about 500; the capped target's copied loop bodies nested one guard
    per line too, past WGSL's 127 nested braces from 128 on)."""
    for name, line in (("k_chain", "v = v * s + 1.0"), ("k_negations", "v = -v")):  # (the deepest direct binding)
        fn = _module(tmp_path, name, ["v = s"] + [line] * 400 + _loop(["y[i] = v"]), "x, y, s")
        for mode in ("primal", "grad"):
            compile_kernel(fn, SCALAR, TARGET, mode=mode)
    for n in (300, 130):
        conts = _module(tmp_path, f"k_conts_{n}", _loop(["a = 0.0", "for j in range(i % 7):"]
                                                       + [f"    if j == {k}:\n        continue" for k in range(n)]
                                                       + ["    a = a + 1.0", "y[i] = a"]), "x, y")
        for mode in ("primal", "grad"):
            wgsl = compile_kernel(conts, ARRAYS, TARGET, mode=mode).wgsl
            assert max(_depths(wgsl)) < 20, (n, mode)
    assert "iterations per pass" in wgsl  # 130: a copied body, its guards one after the other


def _depths(wgsl: str):
    depth = 0
    for line in wgsl.split("\n"):
        code = line.split("//")[0]
        depth += code.count("{") - code.count("}")
        yield depth


def test_too_deep_nesting_is_a_compile_error_at_the_line(tmp_path):
    """An elif chain nests one level per branch: past WGSL's 127 nested braces (or Python's
    recursion limit, for longer ones) a CompileError names the kernel, not a shader the
    driver rejects or a RecursionError."""
    for branches, where in ((140, "elif a < "), (1000, None)):
        lines = _loop(["a = x[i]", "if a < 0.0:", "    y[i] = 0.0"]
                      + [f"elif a < {j}.5:\n    y[i] = {j}.0" for j in range(branches)] + ["y[i] = a"])
        fn = _module(tmp_path, f"k_elif_{branches}", lines, "x, y")
        with pytest.raises(CompileError) as e:
            compile_kernel(fn, ARRAYS, TARGET)
        assert type(e.value) is CompileError and "deep" in e.value.message
        assert e.value.loc is not None and e.value.loc.file.endswith(f"k_elif_{branches}.py")
        if where:
            assert where in e.value.loc.text
    ok = _module(tmp_path, "k_elif_100", _loop(["a = x[i]", "if a < 0.0:", "    y[i] = 0.0"]
                                                + [f"elif a < {j}.5:\n    y[i] = {j}.0" for j in range(100)]), "x, y")
    for mode in ("primal", "grad"):
        compile_kernel(ok, ARRAYS, dataclasses.replace(TARGET, loop_cap=0), mode=mode)
