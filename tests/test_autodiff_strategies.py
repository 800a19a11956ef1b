"""Reverse-mode strategies on the device: every loop strategy (GFXRT_AD_LOOPS) and first-level
stack layout (GFXRT_ADSTACK_SHARED) against float64 finite differences, aliased gradient
arguments (the 'grad_alias' variant), and a uniform-index gradient inside an adstack task."""
import numpy as np
import pytest
import test_autodiff_strategies_nogpu as cases
from adprograms import F1, I1, arr, oracle_gradient

import gfxrt as gr


@pytest.fixture
def env(monkeypatch):
    """gr.init() under the given GFXRT_* settings for one test; defaults after."""
    def init(**settings):
        for k, v in settings.items():
            monkeypatch.setenv(k, v)
        gr.init()
    yield init
    monkeypatch.delenv("GFXRT_AD_LOOPS", raising=False)
    monkeypatch.delenv("GFXRT_ADSTACK_SHARED", raising=False)
    gr.init()


@pytest.mark.parametrize("loops,shared", [("adstack", "0"), ("adstack", "1"), ("jacobian", "1"), ("auto", "1")])
def test_loop_strategies_and_stack_layouts_agree_with_float64(env, loops, shared, rng):
    env(GFXRT_AD_LOOPS=loops, GFXRT_ADSTACK_SHARED=shared)
    n = 40
    for func in cases.KERNELS:
        k = gr.kernel(func)
        xs, y0, w = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), rng.uniform(0.5, 1.5, n)
        cs = rng.integers(0, 40, n).astype(np.int32)  # stacks deeper than the first level: the heap too
        y_ref, gx_ref, gy_ref = oracle_gradient(func, xs, cs, y0, w)
        x, y, cnt = arr(xs.astype(np.float32)), arr(y0.astype(np.float32)), arr(cs, grad=False, dtype=gr.i32)
        k(x, cnt, y)
        y.grad.from_numpy(w.astype(np.float32))
        k.grad(x, cnt, y)
        msg = f"{func.__name__} loops={loops} shared={shared}"
        np.testing.assert_allclose(y.to_numpy(), y_ref, rtol=1e-4, atol=1e-5, err_msg=msg)
        np.testing.assert_allclose(x.grad.to_numpy(), gx_ref, rtol=2e-3, atol=2e-4, err_msg=msg)
        np.testing.assert_allclose(y.grad.to_numpy(), gy_ref, rtol=2e-3, atol=2e-4, err_msg=msg)


def test_workgroup_first_level_with_a_constant_depth_stack(env, rng):
    """A stack that fits the first level entirely: an ordinary (interleaved) task of 64-thread blocks."""
    env(GFXRT_AD_LOOPS="adstack", GFXRT_ADSTACK_SHARED="1")

    @gr.kernel
    def const_loop(x: F1, y: F1):
        for i in range(x.shape[0]):
            v = x[i]
            for _j in range(5):
                v = gr.sin(v) * 0.9 + 0.1 * v
            y[i] = v
    xs = rng.uniform(-1, 1, 1000)
    x, y = arr(xs.astype(np.float32)), arr(np.zeros(1000, np.float32))
    const_loop(x, y)
    y.grad.fill(1.0)
    const_loop.grad(x, y)
    spec = const_loop.specialize([x, y], mode="grad").spec
    assert [t.workgroup_size for t in spec.tasks] == [64] and not spec.tasks[0].capped
    assert "var<workgroup>" in spec.wgsl and "lid_)]" in spec.wgsl
    v, d = xs.copy(), np.ones_like(xs)
    for _ in range(5):
        v, d = np.sin(v) * 0.9 + 0.1 * v, d * (np.cos(v) * 0.9 + 0.1)
    np.testing.assert_allclose(x.grad.to_numpy(), d, rtol=1e-4, atol=1e-6)


def test_conditional_gradient_accesses_of_a_shorter_output(rng):
    k = gr.kernel(cases.shorter_output)
    xs, cs = rng.uniform(-1, 1, 700), rng.integers(0, 4, 700).astype(np.int32)
    y0, w = rng.uniform(-1, 1, 300), rng.uniform(0.5, 1.5, 300)
    _, gx_ref, gy_ref = oracle_gradient(cases.shorter_output, xs, cs, y0, w)
    x, y, cnt = arr(xs.astype(np.float32)), arr(y0.astype(np.float32)), arr(cs, grad=False, dtype=gr.i32)
    k(x, cnt, y)
    y.grad.from_numpy(w.astype(np.float32))
    k.grad(x, cnt, y)
    np.testing.assert_allclose(x.grad.to_numpy(), gx_ref, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(y.grad.to_numpy(), gy_ref, rtol=1e-6)


@gr.kernel
def product(x: F1, z: F1, y: F1):
    for i in range(x.shape[0]):
        y[i] = x[i] * z[i]


def test_one_array_as_two_arguments_uses_the_unhoisted_grad_kernel(rng):
    a_np = rng.uniform(-1, 1, 300).astype(np.float32)
    w = rng.uniform(0.5, 1.5, 300).astype(np.float32)
    a, b, y = arr(a_np), arr(rng.uniform(-1, 1, 300).astype(np.float32)), arr(np.zeros(300, np.float32))
    product(a, b, y)
    y.grad.from_numpy(w)
    product.grad(a, b, y)  # distinct arrays: the hoisted kernel
    np.testing.assert_allclose(a.grad.to_numpy(), w * b.to_numpy(), rtol=1e-6)
    a.grad.fill(0.0)
    product(a, a, y)
    y.grad.from_numpy(w)
    product.grad(a, a, y)  # y = a * a: both terms reach a.grad
    np.testing.assert_allclose(a.grad.to_numpy(), 2 * w * a_np, rtol=1e-6)
    assert {key[0] for key in product._cache} == {"primal", "grad", "grad_alias"}
    loss = gr.ndarray(gr.f32, (), needs_grad=True)

    @gr.kernel
    def total(y: F1, loss: gr.types.ndarray(dtype=gr.f32, ndim=0)):
        for i in range(y.shape[0]):
            loss[None] += y[i]
    with gr.Tape(loss):
        product(a, a, y)
        total(y, loss)
    np.testing.assert_allclose(a.grad.to_numpy(), 2 * a_np, rtol=1e-6)


@gr.kernel
def scaled_gather(x: F1, s: F1, cnt: I1, y: F1):
    for i in range(x.shape[0]):
        v = x[i]
        for j in range(cnt[i]):  # reads x at a per-iteration index: through the adstack
            v = gr.sin(v) * s[0] + x[(i + j) % x.shape[0]] * 0.1
        y[i] = v


def test_a_uniform_index_gradient_inside_an_adstack_task(rng):
    """s.grad[0] gets an atomic update from every iteration of a capped adstack task (block
    reductions, which need every thread of a block, do not apply there)."""
    n = 300
    xs, cs = rng.uniform(-1, 1, n), rng.integers(0, 6, n).astype(np.int32)
    x, s, cnt = arr(xs.astype(np.float32)), arr(np.array([0.8], np.float32)), arr(cs, grad=False, dtype=gr.i32)
    y = arr(np.zeros(n, np.float32))
    scaled_gather(x, s, cnt, y)
    y.grad.fill(1.0)
    scaled_gather.grad(x, s, cnt, y)
    assert any(t.capped for t in scaled_gather.specialize([x, s, cnt, y], mode="grad").spec.tasks)

    def total(sv):
        v = xs.copy()
        for j in range(int(cs.max())):
            m = j < cs
            v = np.where(m, np.sin(v) * sv + xs[(np.arange(n) + j) % n] * 0.1, v)
        return v.sum()
    fd = (total(0.8 + 1e-4) - total(0.8 - 1e-4)) / 2e-4
    assert float(s.grad.to_numpy()[0]) == pytest.approx(fd, rel=1e-3)
