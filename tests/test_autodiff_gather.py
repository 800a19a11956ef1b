"""Reverse mode's neighbour scatters as gathers (compiler/autodiff/gather.py): gradients of
stencils against float64 references, the seeds zeroed, the rewrite applied (no atomics in the
grad kernel) where it is exact and not where it is not."""
import os

import numpy as np
import pytest
from adprograms import F1, arr
from hypothesis import given, settings
from hypothesis import strategies as st

import gfxrt as gr

F2 = gr.types.ndarray(dtype=gr.f32, ndim=2)


def _init_with_threshold(items):
    if items is None:
        os.environ.pop("GFXRT_AD_GATHER_ITEMS", None)
    else:
        os.environ["GFXRT_AD_GATHER_ITEMS"] = str(items)
    gr.init()


@pytest.fixture(scope="module", autouse=True)
def always_gather():
    """Gathers at every size (GFXRT_AD_GATHER_ITEMS=0): by default launches of fewer than
    2^19 items take the atomic variant, and these tests' arrays are small."""
    _init_with_threshold(0)
    yield
    _init_with_threshold(None)


def grad_wgsl(kernel, *args) -> str:
    return kernel.specialize(args, mode="grad").spec.wgsl


@gr.kernel
def stencil(offs: gr.template(), w: gr.template(), lo: gr.template(), hi: gr.template(), x: F1, y: F1):
    for i in range(lo, x.shape[0] - hi):  # x[i + offs[k]] stays in bounds
        acc = 0.0
        for k in gr.static(range(len(offs))):
            acc += w[k] * gr.sin(x[i + offs[k]])
        y[i] = x[i] * acc


def stencil_reference(offs, w, xs, gy):
    """(y, x.grad) of `stencil` in float64, y.grad = gy."""
    n, X = len(xs), xs.astype(np.float64)
    lo, hi = max(0, -min(offs)), n - max(0, max(offs))
    y, g = np.zeros(n), np.zeros(n)
    for i in range(lo, hi):
        acc = sum(wk * np.sin(X[i + o]) for o, wk in zip(offs, w))
        y[i] = X[i] * acc
        g[i] += gy[i] * acc
        for o, wk in zip(offs, w):
            g[i + o] += gy[i] * X[i] * wk * np.cos(X[i + o])
    return y, g


@settings(max_examples=25, deadline=None)
@given(offs=st.lists(st.integers(-3, 3), min_size=1, max_size=4, unique=True),
       n=st.integers(1, 70), seed=st.integers(0, 2 ** 16))
def test_random_stencils_match_float64(offs, n, seed):
    rng = np.random.default_rng(seed)
    offs = tuple(offs)
    w = tuple(float(v) for v in np.round(rng.uniform(-1, 1, len(offs)), 3))
    xs = rng.uniform(-1, 1, n).astype(np.float32)
    gy = rng.uniform(0.5, 1.5, n).astype(np.float32)
    x, y = arr(xs), arr(np.zeros(n, np.float32))
    margins = max(0, -min(offs)), max(0, max(offs))
    stencil(offs, w, *margins, x, y)
    y.grad.from_numpy(gy)
    stencil.grad(offs, w, *margins, x, y)
    want_y, want_g = stencil_reference(offs, w, xs, gy)
    np.testing.assert_allclose(y.to_numpy(), want_y, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(x.grad.to_numpy(), want_g, rtol=1e-4, atol=1e-5)
    lo = max(0, -min(offs))
    hi = max(lo, n - max(0, max(offs)))
    left = y.grad.to_numpy()
    assert not left[lo:hi].any()  # the seeds the items read are zeroed
    np.testing.assert_array_equal(left[:lo], gy[:lo])
    np.testing.assert_array_equal(left[hi:], gy[hi:])


def test_stencil_grad_has_no_atomics():
    x, y = arr(np.zeros(8, np.float32)), arr(np.zeros(8, np.float32))
    src = grad_wgsl(stencil, (-1, 0, 1), (1.0, -2.0, 1.0), 1, 1, x, y)
    assert "fn task0_grad_gather" in src and "fn task0_grad_zero" in src
    assert "atomic" not in src
    centre = grad_wgsl(stencil, (0,), (1.0,), 0, 0, x, y)  # nothing to gather: one item touches one element
    assert "fn task0_grad_gather" not in centre


# -- the ad_tape step: rows t (read) and t + 1 (written) of the same arrays ------------------------
@gr.kernel
def step(x: F2, v: F2, t: gr.i32):
    for i in range(x.shape[1]):
        xc = x[t, i]
        xl = xc
        xr = xc
        if i > 0:
            xl = x[t, i - 1]
        if i < x.shape[1] - 1:
            xr = x[t, i + 1]
        vn = v[t, i] + 0.01 * (50.0 * (xl + xr - 2.0 * xc) - 0.1 * v[t, i])
        v[t + 1, i] = vn
        x[t + 1, i] = xc + 0.01 * vn


@gr.kernel
def energy(x: F2, loss: gr.types.ndarray(dtype=gr.f32, ndim=1), t: gr.i32):
    for i in range(x.shape[1]):
        loss[0] += x[t, i] * x[t, i]


def chain_reference(x0, v0, steps):
    """x.grad[0] of sum(x[steps]^2) through the mass-spring chain, float64."""
    def lap(a):
        return np.concatenate([a[:1], a[:-1]]) + np.concatenate([a[1:], a[-1:]]) - 2 * a
    x, v = x0.astype(np.float64), v0.astype(np.float64)
    for _ in range(steps):
        v = v + 0.01 * (50.0 * lap(x) - 0.1 * v)
        x = x + 0.01 * v
    gx, gv = 2 * x, np.zeros_like(x)
    for _ in range(steps):
        gvt = gv + 0.01 * gx
        gx = gx + 0.01 * 50.0 * lap(gvt)
        gv = gvt * (1 - 0.01 * 0.1)
    return gx, gv


@pytest.mark.parametrize("n", [1, 2, 37, 300])
def test_tape_through_a_chain(n, rng):
    steps = 6
    x0, v0 = rng.uniform(-1, 1, n).astype(np.float32), rng.uniform(-0.5, 0.5, n).astype(np.float32)
    xs, vs = np.zeros((steps + 1, n), np.float32), np.zeros((steps + 1, n), np.float32)
    xs[0], vs[0] = x0, v0
    x, v, loss = arr(xs), arr(vs), arr(np.zeros(1, np.float32))
    with gr.Tape(loss):
        for t in range(steps):
            step(x, v, t)
        energy(x, loss, steps)
    gx, gv = chain_reference(x0, v0, steps)
    np.testing.assert_allclose(x.grad.to_numpy()[0], gx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(v.grad.to_numpy()[0], gv, rtol=1e-4, atol=1e-5)
    assert not x.grad.to_numpy()[1:].any() and not v.grad.to_numpy()[1:].any()  # rows 1.. were seeds
    assert "atomic" not in grad_wgsl(step, x, v, 0)


# -- where the rewrite needs more than the item's own column ---------------------------------------
@gr.kernel
def pair(a: F1, b: F1, y: F1):
    for i in range(1, a.shape[0] - 1):
        y[i] = a[i - 1] * b[i + 1]


def test_one_array_passed_twice_keeps_atomics(rng):
    """Both gradient bindings are one buffer: the launch takes the variant without the rewrite."""
    xs = rng.uniform(-1, 1, 20).astype(np.float32)
    x, y = arr(xs), arr(np.zeros(20, np.float32))
    pair(x, x, y)
    y.grad.fill(1.0)
    pair.grad(x, x, y)
    want = np.zeros(20)
    for i in range(1, 19):
        want[i - 1] += xs[i + 1]
        want[i + 1] += xs[i - 1]
    np.testing.assert_allclose(x.grad.to_numpy(), want, rtol=1e-5, atol=1e-6)
    a, b = arr(xs), arr(xs)
    assert "atomic" not in grad_wgsl(pair, a, b, y)


@gr.kernel
def flat_by_hand(x: F1, y: F1, n: gr.i32):
    for i in range(n - 1):
        y[i] = x[n + i + 1] * 2.0  # row 1 of a (2, n) array flattened by hand: no bound ties i to n


@gr.kernel
def indirect(x: F1, idx: gr.types.ndarray(dtype=gr.i32, ndim=1), y: F1):
    for i in range(idx.shape[0]):
        y[i] = x[idx[i]] * x[i]


def test_unprovable_indices_keep_atomics(rng):
    x, y = arr(rng.uniform(-1, 1, 16).astype(np.float32)), arr(np.zeros(8, np.float32))
    assert "atomic" in grad_wgsl(flat_by_hand, x, y, 8)
    idx = arr(np.array([3, 3, 0, 7, 1, 2, 3, 5], np.int32), grad=False, dtype=gr.i32)
    assert "atomic" in grad_wgsl(indirect, x, idx, y)
    xs = x.to_numpy()
    indirect(x, idx, y)
    y.grad.fill(1.0)
    indirect.grad(x, idx, y)
    want = np.zeros(16)
    for i, k in enumerate(idx.to_numpy()):
        want[k] += xs[i]
        want[i] += xs[k]
    np.testing.assert_allclose(x.grad.to_numpy(), want, rtol=1e-5, atol=1e-6)


# -- fields (constant shapes) and accumulating kernels ---------------------------------------------
def test_field_rows_and_accumulation(rng):
    n = 33
    f = gr.field(gr.f32, shape=(2, n), needs_grad=True)
    out = gr.field(gr.f32, shape=(n,), needs_grad=True)
    fs = rng.uniform(-1, 1, (2, n)).astype(np.float32)
    f.from_numpy(fs)

    @gr.kernel
    def smooth():
        for i in range(1, n - 1):
            out[i] += f[1, i - 1] * f[0, i + 1]  # `+=`: the seeds are read, not zeroed

    gy = rng.uniform(0.5, 1.5, n).astype(np.float32)
    out.grad.from_numpy(gy)
    smooth.grad()
    want = np.zeros((2, n))
    for i in range(1, n - 1):
        want[1, i - 1] += gy[i] * fs[0, i + 1]
        want[0, i + 1] += gy[i] * fs[1, i - 1]
    np.testing.assert_allclose(f.grad.to_numpy(), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out.grad.to_numpy(), gy)
    assert "atomic" not in smooth.specialize((), mode="grad").spec.wgsl


def test_launch_size_picks_the_variant(rng):
    """With a threshold, the grad kernel holds both variants and each launch dispatches the one
    for its size: atomics below, the gather and its zero pass from the threshold on."""
    _init_with_threshold(64)
    try:
        offs, w = (-1, 0, 1), (0.5, -1.0, 0.25)
        for n in (37, 300):
            xs = rng.uniform(-1, 1, n).astype(np.float32)
            gy = rng.uniform(0.5, 1.5, n).astype(np.float32)
            x, y = arr(xs), arr(np.zeros(n, np.float32))
            stencil(offs, w, 1, 1, x, y)
            y.grad.from_numpy(gy)
            stencil.grad(offs, w, 1, 1, x, y)
            np.testing.assert_allclose(x.grad.to_numpy(), stencil_reference(offs, w, xs, gy)[1], rtol=1e-4, atol=1e-5)
            assert not y.grad.to_numpy()[1:n - 1].any()
        compiled = stencil.specialize((offs, w, 1, 1, x, y), mode="grad")
        entries = [t.entry for t in compiled.spec.tasks]
        assert entries == ["task0_grad_gather", "task0_grad_zero", "task0_grad"]
        small, large = compiled.launcher.groups_cache.values()  # in launch order: 37 items, then 300
        assert [g > 0 for g in small] == [False, False, True]
        assert [g > 0 for g in large] == [True, True, False]
    finally:
        _init_with_threshold(0)
