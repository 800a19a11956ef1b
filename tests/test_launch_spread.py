"""Issue 13: the launcher's spread of grid-stride tasks (gfxrt/engine/launch.py SPREAD). CPU adapters
do not spread, so these tests switch it on for one launcher: the results must not change, only
the group counts."""
import numpy as np
import pytest

import gfxrt as gr
from gfxrt.engine import ffi, launch


@gr.kernel
def axpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]  # interleaved two at a time (loads first)


@gr.kernel
def put(x: gr.types.ndarray(dtype=gr.i32, ndim=1), v: gr.i32):
    for i in range(x.shape[0]):
        x[i] = v + i  # no load: a plain grid-stride loop


@gr.kernel
def skip_odd(x: gr.types.ndarray(dtype=gr.i32, ndim=1)):
    for i in range(x.shape[0]):
        if i % 2 == 1:
            continue  # a `continue` of the parallel loop: not interleaved
        x[i] = x[i] + 1


def _launcher(kernel):
    (compiled,) = [c for c in kernel._cache.values() if c.launcher is not None]
    return compiled.launcher


@pytest.fixture
def spread():
    """spread(kernel, *args): launch once with `args` (to build the launcher), then give it a
    GPU's spread and group cap; undone after the test."""
    changed = []

    def on(kernel, *args):
        kernel(*args)
        gr.sync()
        L = _launcher(kernel)
        changed.append((L, L.spread, L.max_groups))
        L.spread, L.max_groups = launch.SPREAD, ffi.MAX_WORKGROUPS
        L.groups_cache.clear()
        return L
    yield on
    for L, s, m in changed:
        L.spread, L.max_groups = s, m
        L.groups_cache.clear()


@pytest.mark.parametrize("n", [7, 256 * launch.SPREAD_MIN_GROUPS, 256 * launch.SPREAD_MIN_GROUPS + 1,
                               256 * 4096 + 7, 5 * 2**20 + 3])
def test_spread_groups_and_results(rng, spread, n):
    x0 = rng.standard_normal(n).astype(np.float32)
    y0 = rng.standard_normal(n).astype(np.float32)
    x, y = gr.ndarray(gr.f32, n), gr.ndarray(gr.f32, n)
    x.from_numpy(x0)
    y.from_numpy(y0)
    L = spread(axpy, 0.0, x, y)
    axpy(2.0, x, y)
    np.testing.assert_allclose(y.to_numpy(), 2.0 * x0 + y0, rtol=1e-6, atol=1e-6)
    (g,) = [v for v in L.groups_cache.values() if v]
    blocks = -(-n // 256)
    want = blocks if blocks <= launch.SPREAD_MIN_GROUPS else max(launch.SPREAD_MIN_GROUPS, -(-blocks // launch.SPREAD))
    assert g == (want,)
    if blocks > 4 * launch.SPREAD_MIN_GROUPS:
        assert g[0] * 256 * launch.SPREAD >= n > (g[0] - 1) * 256 * launch.SPREAD  # SPREAD iterations per thread


def test_spread_plain_and_continue_loops(spread):
    n = 3 * 2**20 + 5
    a = gr.ndarray(gr.i32, n)
    spread(put, a, 0)
    put(a, 3)
    np.testing.assert_array_equal(a.to_numpy(), 3 + np.arange(n, dtype=np.int32))
    spread(skip_odd, gr.ndarray(gr.i32, 4))
    skip_odd(a)
    want = 3 + np.arange(n, dtype=np.int32)
    want[0::2] += 1
    np.testing.assert_array_equal(a.to_numpy(), want)


def test_spread_default():
    x = gr.ndarray(gr.i32, 8)
    put(x, 1)
    want = 1 if gr.runtime().dev.is_cpu or gr.runtime().dev.target.loop_cap else launch.SPREAD
    assert _launcher(put).spread == want
