"""The 2x interleaved grid-stride loop (compiler/codegen/interleave.py): same results as one
iteration per step, for every trip count, and not applied where it would change meaning."""
import dataclasses

import numpy as np
import pytest
from gfxrt.compiler import ArgSpec, Target, compile_kernel
from gfxrt.compiler.codegen import interleave
from gfxrt.compiler.types import f32, i32

import gfxrt as gr

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)


@gr.kernel
def mixed(x: F1, y: F1, z: F1, k: I1):
    for i in range(x.shape[0]):
        a = x[i] * 2.0
        y[i] = a + 1.0                  # first store: its operands hoisted into the prefix
        b = a * x[(i + 1) % x.shape[0]]  # locals computed after a store, per iteration
        if b > 0.5:
            z[i] = b
        else:
            z[i] = -b
        k[i] = i


@pytest.mark.parametrize("n", [1, 2, 3, 255, 256, 257, 511, 4097])
def test_interleaved_matches_numpy_for_every_count(rng, n):
    xs = rng.uniform(0.1, 1.0, n).astype(np.float32)
    y, z, k = np.zeros(n, np.float32), np.zeros(n, np.float32), np.full(n, -1, np.int32)
    mixed(xs, y, z, k)
    a = xs * 2
    b = a * np.roll(xs, -1)
    np.testing.assert_allclose(y, a + 1, rtol=1e-6)
    np.testing.assert_allclose(z, np.where(b > 0.5, b, -b), rtol=1e-6)
    np.testing.assert_array_equal(k, np.arange(n))


def test_interleaving_off_gives_the_same_results(rng):
    dev = gr.device()
    saved = dev.target
    xs = rng.uniform(0.1, 1.0, 1001).astype(np.float32)
    outs = []
    for on in (True, False):
        dev.target = dataclasses.replace(saved, interleave=on)
        mixed._cache.clear()
        mixed._fast.clear()
        try:
            y, z, k = np.zeros(1001, np.float32), np.zeros(1001, np.float32), np.zeros(1001, np.int32)
            mixed(xs, y, z, k)
            outs.append((y, z, k))
        finally:
            dev.target = saved
    mixed._cache.clear()
    mixed._fast.clear()
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


def _wgsl(fn, args):
    return compile_kernel(fn, args, Target(frozenset({"immediates"}), 128)).wgsl


def test_not_applied_with_a_continue_of_the_parallel_loop():
    def k(x, y):
        for i in range(x.shape[0]):
            v = x[i]
            if v < 0.0:
                continue  # would skip the other iteration's rest
            y[i] = v
    src = _wgsl(k, [ArgSpec("x", "ndarray", elem=f32, ndim=1), ArgSpec("y", "ndarray", elem=f32, ndim=1)])
    assert "two iterations per step" not in src


def test_applied_when_the_continue_belongs_to_an_inner_loop():
    def k(x, y):
        for i in range(x.shape[0]):
            v = x[i]
            for j in range(3):
                if j == 1:
                    continue
                v += 1.0
            y[i] = v
    src = _wgsl(k, [ArgSpec("x", "ndarray", elem=f32, ndim=1), ArgSpec("y", "ndarray", elem=f32, ndim=1)])
    assert "two iterations per step" in src


def test_not_applied_to_a_body_with_a_run_time_loop():
    """Its loops would run one after the other anyway; three copies of the body would only
    cost the driver's compile time (interleave.py)."""
    args = [ArgSpec("x", "ndarray", elem=f32, ndim=1), ArgSpec("y", "ndarray", elem=f32, ndim=1),
            ArgSpec("n", "scalar", dtype=i32)]

    def with_while(x, y, n):
        for i in range(x.shape[0]):
            v = x[i]
            j = 0
            while j < n:
                v = v * 0.5
                j += 1
            y[i] = v

    def with_range(x, y, n):
        for i in range(x.shape[0]):
            v = x[i]
            for _ in range(n):
                v = v * 0.5
            y[i] = v
    assert "two iterations per step" not in _wgsl(with_while, args)
    assert "two iterations per step" not in _wgsl(with_range, args)


def test_no_load_no_interleave():
    def k(y):
        for i in range(y.shape[0]):
            y[i] = i
    assert interleave.plan(()) is None
    assert "two iterations per step" not in _wgsl(k, [ArgSpec("y", "ndarray", elem=i32, ndim=1)])
