"""Loops of any trip count on adapters that cap loop passes (Target.loop_cap: llvmpipe ends
every loop of an invocation after 65535 passes, all loops together): 10^5 and 10^6
iterations forward and in reverse mode (preaccumulated and through the adstack), and a loop
the cap still stops is reported instead of returning wrong values.

Each test runs on the adapter as it is and, where the adapter has no cap (GPUs), once more
with GFXRT_LOOP_CAP=65535 so the capped code path is checked there too."""
import numpy as np
import pytest

import gfxrt as gr

N5, N6 = 100_000, 1_000_000
CAP = 65535


@pytest.fixture(params=["adapter", "forced"])
def capped(request, monkeypatch):
    """gr.init() with the adapter's loop cap ('adapter') or a forced one ('forced', only
    where the adapter has none); `capped(GFXRT_AD_LOOPS=...)` re-inits with more settings."""
    def init(**settings):
        for k, v in settings.items():
            monkeypatch.setenv(k, v)
        gr.init()
    if request.param == "forced":
        gr.init()
        if gr.runtime().dev.loop_cap:
            pytest.skip("the adapter has a loop cap of its own")
        monkeypatch.setenv("GFXRT_LOOP_CAP", str(CAP))
    init()
    yield init
    monkeypatch.delenv("GFXRT_LOOP_CAP", raising=False)
    monkeypatch.delenv("GFXRT_AD_LOOPS", raising=False)
    gr.init()


Out = gr.types.ndarray(dtype=gr.i32, ndim=1)
F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)


@gr.kernel
def count_range(n: gr.i32, out: Out):
    for i in range(out.shape[0]):
        c = 0
        for _ in range(n):
            c += 1
        out[i] = c + i


@gr.kernel
def count_const(out: Out):
    for i in range(out.shape[0]):
        c = 0
        for _ in range(100_000):
            c += 1
        for _ in range(1_000_000):
            c += 1
        out[i] = c


@gr.kernel
def count_while(n: gr.i32, out: Out):
    for i in range(out.shape[0]):
        k = 0
        while k < n + i:
            k += 1
        out[i] = k


@gr.kernel
def count_nested(n: gr.i32, out: Out):
    for i in range(out.shape[0]):
        c = 0
        for _ in range(n // 1000):
            for _ in range(1000):
                c += 1
        out[i] = c


@gr.kernel
def count_jumps(n: gr.i32, out: Out):
    for i in range(out.shape[0]):
        c = 0
        for k in range(n + 1000):
            if k >= n:
                break
            if k % 2 == 1:
                continue
            c += 1
        out[i] = c


@gr.kernel
def count_array(cnt: Out, out: Out):
    for i in range(out.shape[0]):
        c = 0
        for _ in range(cnt[i]):  # bounds from memory: fewer copies per pass (short in practice)
            c += 1
        out[i] = c


@gr.kernel
def count_serial(n: gr.i32, out: Out):
    k = 0
    while k < n:
        k += 1
    out[0] = k


@gr.kernel
def power(x: F1, n: gr.i32, y: F1):
    for i in range(x.shape[0]):
        p = 1.0
        for _ in range(n):
            p *= x[i]
        y[i] = p


@gr.kernel
def power_while(x: F1, n: gr.i32, y: F1):
    """A `while` with a break: no Jacobian preaccumulation, the adstack whatever GFXRT_AD_LOOPS says."""
    for i in range(x.shape[0]):
        p = 1.0
        k = 0
        while True:
            if k >= n:
                break
            p *= x[i]
            k += 1
        y[i] = p


@pytest.mark.parametrize("n", [N5, N6])
def test_forward_loops_of_any_trip_count(capped, n):
    out = gr.ndarray(gr.i32, shape=(5,))
    count_range(n, out)
    np.testing.assert_array_equal(out.to_numpy(), n + np.arange(5))
    count_while(n, out)
    np.testing.assert_array_equal(out.to_numpy(), n + np.arange(5))
    count_nested(n, out)
    np.testing.assert_array_equal(out.to_numpy(), n)
    count_jumps(n, out)
    np.testing.assert_array_equal(out.to_numpy(), n // 2)
    count_serial(n, out)
    assert out.to_numpy()[0] == n


def test_bounds_read_from_memory(capped):
    """4 copies per pass: 10^5 iterations fit one launch on llvmpipe, 10^6 are reported there."""
    cnt, out = gr.ndarray(gr.i32, shape=(4,)), gr.ndarray(gr.i32, shape=(4,))
    cnt.from_numpy(np.array([N5, 7, 0, N5 - 1], np.int32))
    count_array(cnt, out)
    np.testing.assert_array_equal(out.to_numpy(), cnt.to_numpy())
    cnt.fill(N6)
    count_array(cnt, out)
    if gr.runtime().dev.loop_cap:
        with pytest.raises(gr.GfxrtError, match="loop limit"):
            gr.sync()
    else:
        np.testing.assert_array_equal(out.to_numpy(), N6)


def test_constant_bounds(capped):
    out = gr.ndarray(gr.i32, shape=(3,))
    count_const(out)
    np.testing.assert_array_equal(out.to_numpy(), N5 + N6)


@pytest.mark.parametrize("kernel,loops,n", [(power, "auto", N5), (power, "auto", N6), (power, "adstack", N5),
                                             (power, "adstack", N6), (power_while, "adstack", N5)])
def test_gradient_through_long_loops(capped, kernel, loops, n):
    """y = x^n through a loop of n iterations, dy/dx = n x^(n-1), against float64 with x = 1 + 1/n
    rounded to f32 (y ~ e); f32 products drift by ~n * 2^-24 at worst. 'auto' preaccumulates
    the loop's Jacobian; 'adstack' replays the loop pushing p, then walks it back popping. (The
    break of power_while makes its adstack loop bodies ~5x larger: fewer copies per pass, so
    on llvmpipe about 4 * 10^5 iterations fit one launch; past that the launch is reported.)"""
    capped(GFXRT_AD_LOOPS=loops)
    xs = np.float32(1 + 1 / n) * np.ones(3, np.float32)
    x = gr.ndarray(gr.f32, shape=(3,), needs_grad=True)
    y = gr.ndarray(gr.f32, shape=(3,), needs_grad=True)
    x.from_numpy(xs)
    kernel(x, n, y)
    y.grad.fill(1.0)
    x.grad.fill(0.0)
    kernel.grad(x, n, y)
    x64 = xs.astype(np.float64)
    np.testing.assert_allclose(y.to_numpy(), x64 ** n, rtol=2e-2)
    np.testing.assert_allclose(x.grad.to_numpy(), n * x64 ** (n - 1), rtol=2e-2)


@gr.kernel
def nested_jump(n: gr.i32, out: Out):
    for i in range(out.shape[0]):
        c = 0
        for _ in range(n):
            for k in range(2):
                if k == 1:
                    break
                c += 1
        out[i] = c


def test_a_loop_the_cap_still_stops_is_reported(capped):
    """Past cap * copies passes the results would be wrong: the next sync raises instead."""
    out = gr.ndarray(gr.i32, shape=(2,))
    nested_jump(1000, out)
    np.testing.assert_array_equal(out.to_numpy(), 1000)
    if not gr.runtime().dev.loop_cap:  # a GPU under GFXRT_LOOP_CAP: the real adapter stops nothing
        return
    nested_jump(CAP * 40, out)
    with pytest.raises(gr.GfxrtError, match="loop limit"):
        gr.sync()
    nested_jump(1000, out)  # the runtime stays usable
    np.testing.assert_array_equal(out.to_numpy(), 1000)
