"""Atomics, reductions, fields and return values, on the device against numpy."""
import contextlib
import dataclasses

import numpy as np
import pytest

import gfxrt as gr

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)
U1 = gr.types.ndarray(dtype=gr.u32, ndim=1)


@contextlib.contextmanager
def target_without(*features):
    """Compile as if the adapter lacked some features (the device still has them)."""
    dev = gr.device()
    saved = dev.target
    dev.target = dataclasses.replace(saved, features=saved.features - set(features))
    try:
        yield
    finally:
        dev.target = saved


counter = gr.field(gr.i32, shape=())


@gr.kernel
def tickets(out: I1):
    for i in range(out.shape[0]):
        out[i] = gr.atomic_add(counter[None], 1)


def test_atomic_add_returns_the_old_value():
    counter[None] = 5
    out = np.full(1000, -1, np.int32)
    tickets(out)
    np.testing.assert_array_equal(np.sort(out), np.arange(5, 1005))
    assert counter[None] == 1005


@gr.kernel
def int_atomics(x: I1, acc: I1, old: I1):
    for i in range(x.shape[0]):
        gr.atomic_min(acc[0], x[i])
        gr.atomic_max(acc[1], x[i])
        gr.atomic_and(acc[2], x[i])
        gr.atomic_or(acc[3], x[i])
        gr.atomic_xor(acc[4], x[i])
        acc[5] -= x[i]
        old[i] = gr.atomic_sub(acc[6], 1)


def test_integer_atomics(rng):
    x = rng.integers(1, 1 << 20, 777).astype(np.int32)
    acc = np.array([2**31 - 1, -(2**31), -1, 0, 0, 0, 0], np.int32)
    old = np.zeros_like(x)
    int_atomics(x, acc, old)
    assert acc[0] == x.min() and acc[1] == x.max()
    assert acc[2] == np.bitwise_and.reduce(x) and acc[3] == np.bitwise_or.reduce(x)
    assert acc[4] == np.bitwise_xor.reduce(x) and acc[5] == -x.sum() and acc[6] == -777
    np.testing.assert_array_equal(np.sort(old), np.arange(-776, 1))


@gr.kernel
def float_atomics(x: F1, idx: I1, bins: F1, mx: F1, olds: F1):
    for i in range(x.shape[0]):
        bins[idx[i]] += x[i]
        gr.atomic_max(mx[idx[i]], x[i])
        olds[i] = gr.atomic_min(mx[4], x[i])


@pytest.mark.parametrize("native", [True, False])
def test_float_atomics_native_and_compare_and_swap(rng, native):
    x = rng.standard_normal(2000).astype(np.float32)
    idx = rng.integers(0, 4, 2000).astype(np.int32)
    bins = np.zeros(4, np.float32)
    mx = np.full(5, -np.inf, np.float32)
    mx[4] = np.inf
    olds = np.zeros_like(x)
    with (contextlib.nullcontext() if native else target_without("shader-float32-atomic")):
        float_atomics._cache.clear()
        float_atomics(x, idx, bins, mx, olds)
        float_atomics._cache.clear()
    np.testing.assert_allclose(bins, np.bincount(idx, weights=x, minlength=4), rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(mx[:4], [x[idx == k].max() for k in range(4)])
    assert mx[4] == x.min()
    assert (olds >= x.min()).all() and np.isinf(olds).sum() == 1  # exactly one thread saw the initial value


@gr.kernel
def reductions(x: F1, k: I1) -> (gr.f32, gr.f32, gr.f32, gr.i32, gr.i32, gr.i32):
    s = 0.0
    lo = 1e30
    hi = -1e30
    n_pos = 0
    bits = 0
    ks = 0
    for i in range(x.shape[0]):
        s += x[i]
        gr.atomic_min(lo, x[i])
        gr.atomic_max(hi, x[i])
        if x[i] > 0:
            n_pos += 1
        bits |= k[i]
        ks -= k[i]
    return s, lo, hi, n_pos, bits, ks


@pytest.mark.parametrize("subgroups", [True, False])
@pytest.mark.parametrize("n", [1, 1000, 64 * 1024 * 2 + 17])
def test_reductions(rng, n, subgroups):
    x = rng.standard_normal(n).astype(np.float32)
    k = rng.integers(0, 1 << 12, n).astype(np.int32)
    with (contextlib.nullcontext() if subgroups else target_without("subgroup")):
        reductions._cache.clear()
        s, lo, hi, n_pos, bits, ks = reductions(x, k)
        reductions._cache.clear()
    assert s == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-4, abs=1e-3)
    assert (lo, hi) == (x.min(), x.max())
    assert n_pos == (x > 0).sum() and bits == np.bitwise_or.reduce(k) and ks == -k.sum()


@gr.kernel
def nan_min_max(x: F1, acc: F1) -> (gr.f32, gr.f32):
    lo = 1e30
    hi = -1e30
    for i in range(x.shape[0]):
        gr.atomic_min(acc[0], x[i])
        gr.atomic_max(acc[1], x[i])
        gr.atomic_min(lo, x[i])
        gr.atomic_max(hi, x[i])
    return lo, hi


@pytest.mark.parametrize("subgroups", [True, False])
@pytest.mark.parametrize("where", [0, 77, 999])
def test_float_min_max_atomics_and_reductions_propagate_nan(rng, subgroups, where):
    """A NaN among the values makes atomic_min / atomic_max and min / max reductions NaN
    (np.minimum.reduce), whichever thread or subgroup lane holds it: WGSL's max and
    subgroupMax may return the other operand."""
    x = rng.standard_normal(1000).astype(np.float32)
    x[where] = np.nan
    acc = np.float32([np.inf, -np.inf])
    with (contextlib.nullcontext() if subgroups else target_without("subgroup")):
        nan_min_max._cache.clear()
        lo, hi = nan_min_max(x, acc)
        nan_min_max._cache.clear()
    assert np.isnan(acc).all() and np.isnan(lo) and np.isnan(hi), (acc, lo, hi)


loss = gr.field(gr.f32, shape=())
grid = gr.field(gr.types.vector(2, gr.f32), shape=(4, 3))


@gr.kernel
def field_kernel(x: F1):
    for i in range(x.shape[0]):
        loss[None] += x[i] * x[i]
    for i, j in grid:
        grid[i, j] = gr.Vector([i * 1.0, j + loss[None]])


def test_fields_used_by_name_and_reduced_into(rng):
    x = rng.random(500, dtype=np.float32)
    loss[None] = 1.0
    field_kernel(x)
    want = 1.0 + float((x.astype(np.float64) ** 2).sum())
    assert loss[None] == pytest.approx(want, rel=1e-5)
    g = grid.to_numpy()
    assert g.shape == (4, 3, 2)
    np.testing.assert_allclose(g[..., 0], np.arange(4)[:, None] * np.ones(3))
    np.testing.assert_allclose(g[..., 1], np.broadcast_to(np.arange(3) + loss[None], (4, 3)), rtol=1e-6)


@gr.kernel
def field_template(f: gr.template(), v: gr.f32):
    for I in gr.grouped(f):  # noqa: E741
        f[I] = v + I[0]


def test_field_as_template_argument():
    a, b = gr.field(gr.f32, shape=(3,)), gr.field(gr.f32, shape=(5,))
    field_template(a, 1.0)
    field_template(b, 2.0)
    np.testing.assert_allclose(a.to_numpy(), [1, 2, 3])
    np.testing.assert_allclose(b.to_numpy(), [2, 3, 4, 5, 6])
    assert len(field_template._cache) == 2


@gr.kernel
def vector_total(p: gr.types.ndarray(dtype=gr.types.vector(3, gr.f32), ndim=1)) -> gr.types.vector(3, gr.f32):
    c = gr.Vector([0.0, 0.0, 0.0])
    for i in p:
        c += p[i]
    return c / p.shape[0]


def test_vector_reduction_and_vector_return(rng):
    p = rng.random((300, 3), dtype=np.float32)
    c = vector_total(p)
    assert isinstance(c, np.ndarray) and c.shape == (3,)
    np.testing.assert_allclose(c, p.mean(0), rtol=1e-5)


@gr.kernel
def serial_only(a: gr.i32, b: gr.f32) -> gr.f32:
    s = b
    k = 0
    while k < a:
        s = s * 2 + 1
        k += 1
    return s


def test_serial_kernel_returns_a_value():
    want = 1.5
    for _ in range(5):
        want = want * 2 + 1
    assert serial_only(5, 1.5) == want
