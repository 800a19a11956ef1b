"""Reverse mode on the device (lavapipe in CI): the standard cases of the peers' suites,
loops of every kind through the adstack, against analytic formulas and float64 references."""
import adprograms
import numpy as np
import pytest
from adprograms import F0, F1, I1, arr, sin_loop_reference, while_break_continue, while_break_continue_reference

import gfxrt as gr


# -- elementwise derivatives ------------------------------------------------------------------------
@gr.kernel
def unary(f: gr.template(), x: F1, y: F1):
    for i in range(x.shape[0]):
        y[i] = f(x[i])


UNARY = {
    "sin": (np.cos, (-2, 2)), "cos": (lambda x: -np.sin(x), (-2, 2)), "tan": (lambda x: 1 / np.cos(x) ** 2, (-1, 1)),
    "asin": (lambda x: 1 / np.sqrt(1 - x * x), (-0.9, 0.9)), "acos": (lambda x: -1 / np.sqrt(1 - x * x), (-0.9, 0.9)),
    "tanh": (lambda x: 1 - np.tanh(x) ** 2, (-2, 2)), "exp": (np.exp, (-2, 2)), "log": (lambda x: 1 / x, (0.2, 3)),
    "sqrt": (lambda x: 0.5 / np.sqrt(x), (0.2, 3)), "rsqrt": (lambda x: -0.5 * x ** -1.5, (0.2, 3)),
    "abs": (np.sign, (-2, 2)), "floor": (np.zeros_like, (-2, 2)), "ceil": (np.zeros_like, (-2, 2)),
}


@gr.kernel
def branch_not_taken(x: F1, k: I1, loss: F0):
    for i in range(x.shape[0]):
        loss[None] += (x[i] ** 0.5) if k[i] >= 31 else 0.0


def test_a_branch_not_taken_gets_a_zero_gradient_even_where_its_derivative_is_not_finite():
    """Found by tools/progfuzz on lavapipe (grad seed 700767): the adjoint of `sqrt(x) if c else 0`
    with c false was 0 * (0.5 / sqrt(x)), NaN at x = -0.0 (and for x < 0). The zero of the
    branch not taken now multiplies nothing (compiler/autodiff/build.py `mul`)."""
    x = gr.ndarray(gr.f32, 4, needs_grad=True)
    x.from_numpy(np.array([-0.0, -1.0, 0.0, 4.0], np.float32))
    k = np.array([0, 0, 0, 40], np.int32)
    loss = gr.ndarray(gr.f32, (), needs_grad=True)
    with gr.Tape(loss):
        branch_not_taken(x, k, loss)
    np.testing.assert_array_equal(x.grad.to_numpy(), [0.0, 0.0, 0.0, 0.25])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_derivatives(name, rng):
    deriv, (lo, hi) = UNARY[name]
    xs = rng.uniform(lo, hi, 64).astype(np.float32)
    xs[np.abs(xs - np.round(xs)) < 0.02] += 0.05  # away from the kinks of abs/floor/ceil
    x, y = arr(xs), arr(np.zeros(64, np.float32))
    unary(getattr(gr, name), x, y)
    w = rng.uniform(0.5, 1.5, 64).astype(np.float32)
    y.grad.from_numpy(w)
    unary.grad(getattr(gr, name), x, y)
    np.testing.assert_allclose(x.grad.to_numpy(), w * deriv(xs.astype(np.float64)), rtol=1e-4, atol=1e-5)
    assert not y.grad.to_numpy().any()


@gr.kernel
def powers(x: F1, z: F1, y: F1):
    for i in range(x.shape[0]):
        y[i] = x[i] ** 3 + gr.pow(x[i], z[i]) + gr.atan2(x[i], z[i]) + gr.max(x[i], z[i]) - gr.min(x[i], 1.0)


def test_binary_derivatives(rng):
    xs, zs = rng.uniform(0.2, 2, 50).astype(np.float32), rng.uniform(0.2, 2, 50).astype(np.float32)
    x, z, y = arr(xs), arr(zs), arr(np.zeros(50, np.float32))
    powers(x, z, y)
    y.grad.fill(1.0)
    powers.grad(x, z, y)
    X, Z = xs.astype(np.float64), zs.astype(np.float64)
    np.testing.assert_allclose(x.grad.to_numpy(), 3 * X ** 2 + Z * X ** (Z - 1) + Z / (X * X + Z * Z)
                               + (X >= Z) - (X <= 1.0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(z.grad.to_numpy(), X ** Z * np.log(X) - X / (X * X + Z * Z) + (X < Z),
                               rtol=1e-4, atol=1e-5)


# -- the Tape ---------------------------------------------------------------------------------------
@gr.kernel
def sum_squares(x: F1, loss: F0):
    for i in range(x.shape[0]):
        loss[None] += x[i] ** 2


@gr.kernel
def double(x: F1, y: F1):
    for i in range(x.shape[0]):
        y[i] = 2.0 * x[i]


@gr.kernel
def sine(x: F1, y: F1):
    for i in range(x.shape[0]):
        y[i] = gr.sin(x[i])


def test_reduce_under_tape(rng):
    xs = rng.uniform(-1, 1, 1000).astype(np.float32)
    x, loss = arr(xs), gr.ndarray(gr.f32, (), needs_grad=True)
    loss.fill(123.0)  # the tape zeroes it
    x.grad.fill(5.0)  # and the gradients
    with gr.Tape(loss):
        sum_squares(x, loss)
    assert loss.to_numpy() == pytest.approx(float((xs.astype(np.float64) ** 2).sum()), rel=1e-5)
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * xs, rtol=1e-6)
    assert loss.grad.to_numpy() == 1.0


def test_store_chain_under_tape(rng):
    xs = rng.uniform(-1, 1, 300).astype(np.float32)
    x, y, z = arr(xs), arr(np.zeros(300, np.float32)), arr(np.zeros(300, np.float32))
    loss = gr.ndarray(gr.f32, (), needs_grad=True)
    with gr.Tape(loss) as tape:
        double(x, y)
        sine(y, z)
        sum_squares(z, loss)
        unary(gr.floor, x, gr.ndarray(gr.f32, 300))  # no needs_grad array written: not recorded
    assert [k for k, _, _ in tape.launches] == [double, sine, sum_squares, unary]
    X = xs.astype(np.float64)
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * np.sin(2 * X) * np.cos(2 * X) * 2, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(y.grad.to_numpy(), 0, atol=0)  # zeroed by the store in `double`'s grad


def test_tape_without_clearing_accumulates(rng):
    xs = rng.uniform(-1, 1, 10).astype(np.float32)
    x, loss = arr(xs), gr.ndarray(gr.f32, (), needs_grad=True)
    for _ in range(2):
        with gr.Tape(loss, clear_gradients=False):
            sum_squares(x, loss)
    np.testing.assert_allclose(x.grad.to_numpy(), 4 * xs, rtol=1e-6)


@gr.kernel
def decay_step(x: gr.types.ndarray(dtype=gr.f32, ndim=2), t: gr.i32):
    for i in range(x.shape[1]):
        x[t + 1, i] = 0.9 * x[t, i] + 0.05 * gr.sin(x[t, i])


@gr.kernel
def last_row_sum(x: gr.types.ndarray(dtype=gr.f32, ndim=2), loss: F0):
    for i in range(x.shape[1]):
        loss[None] += x[x.shape[0] - 1, i]


def test_long_tape_submits_while_recording_the_backward(rng):
    """A tape of 70 launches submits the forward before recording the backward, then every
    gr.ad FLUSH_EVERY gradient launches; the gradient is that of the whole chain."""
    from gfxrt.ad.autodiff import FLUSH_EVERY
    steps, n = 69, 40
    x0 = rng.uniform(-1, 1, n).astype(np.float32)
    xs = np.zeros((steps + 1, n), np.float32)
    xs[0] = x0
    x, loss = arr(xs), gr.ndarray(gr.f32, (), needs_grad=True)
    rt = gr.runtime()
    gr.sync()
    with gr.Tape(loss):
        for t in range(steps):
            decay_step(x, t)
        last_row_sum(x, loss)
        before = rt.stats()["submissions"]
    assert rt.stats()["submissions"] - before >= 1 + (steps + 1) // FLUSH_EVERY
    v, d = x0.astype(np.float64), np.ones(n)
    for _ in range(steps):
        d *= 0.9 + 0.05 * np.cos(v)
        v = 0.9 * v + 0.05 * np.sin(v)
    np.testing.assert_allclose(x.grad.to_numpy()[0], d, rtol=1e-4, atol=1e-6)


# -- control flow -------------------------------------------------------------------------------------
@gr.kernel
def branches(x: F1, y: F1):
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            y[i] = x[i] * x[i]
        elif x[i] > -0.5:
            y[i] = gr.sin(x[i])
        else:
            y[i] = 3.0 * x[i]


def test_if_else(rng):
    xs = rng.uniform(-1, 1, 200).astype(np.float32)
    x, y = arr(xs), arr(np.zeros(200, np.float32))
    branches(x, y)
    y.grad.fill(1.0)
    branches.grad(x, y)
    X = xs.astype(np.float64)
    want = np.where(X > 0, 2 * X, np.where(X > -0.5, np.cos(X), 3.0))
    np.testing.assert_allclose(x.grad.to_numpy(), want, rtol=1e-5)


@gr.kernel
def sum_and_power(x: F1, n: I1, s: F1, p: F1):
    for i in range(x.shape[0]):
        acc = 0.0
        prod = 1.0
        for _j in range(n[i]):
            acc += x[i]
            prod *= x[i]
        s[i] = acc
        p[i] = prod


def test_dynamic_sum_and_power_loops(rng):
    xs = rng.uniform(0.5, 1.5, 256).astype(np.float32)
    ns = rng.integers(0, 9, 256).astype(np.int32)
    x, n = arr(xs), arr(ns, grad=False, dtype=gr.i32)
    s, p = arr(np.zeros(256, np.float32)), arr(np.zeros(256, np.float32))
    sum_and_power(x, n, s, p)
    s.grad.fill(1.0)
    p.grad.fill(1.0)
    sum_and_power.grad(x, n, s, p)
    X = xs.astype(np.float64)
    np.testing.assert_allclose(p.to_numpy(), X ** ns, rtol=1e-5)
    np.testing.assert_allclose(x.grad.to_numpy(), ns + ns * X ** np.maximum(ns - 1, 0), rtol=1e-4)


@gr.kernel
def fibonacci(x: F1, n: I1, y: F1):
    for i in range(x.shape[0]):
        a = 0.0
        b = x[i]
        for _j in range(n[i]):
            t = a + b
            a = b
            b = t
        y[i] = b


def test_fibonacci_through_a_loop(rng):
    ns = np.arange(12, dtype=np.int32)
    xs = rng.uniform(0.5, 1.5, 12).astype(np.float32)
    x, n, y = arr(xs), arr(ns, grad=False, dtype=gr.i32), arr(np.zeros(12, np.float32))
    fibonacci(x, n, y)
    y.grad.fill(1.0)
    fibonacci.grad(x, n, y)
    fib = [1, 1]
    while len(fib) < 13:
        fib.append(fib[-1] + fib[-2])
    np.testing.assert_allclose(x.grad.to_numpy(), fib[:12], rtol=1e-6)  # y = F(n+1) * x


@gr.kernel
def int_carried(x: F1, n: I1, y: F1):
    for i in range(x.shape[0]):
        k = i % 4
        v = 0.0
        for _j in range(n[i]):
            k = (k * 3 + 1) % 7
            v = v * 0.5 + x[i] * k
        y[i] = v


def test_integer_loop_carried_values(rng):
    xs = rng.uniform(-1, 1, 64).astype(np.float32)
    ns = rng.integers(0, 10, 64).astype(np.int32)
    x, n, y = arr(xs), arr(ns, grad=False, dtype=gr.i32), arr(np.zeros(64, np.float32))
    int_carried(x, n, y)
    y.grad.fill(1.0)
    int_carried.grad(x, n, y)
    want = []
    for i in range(64):
        k, dv = i % 4, 0.0
        for _ in range(ns[i]):
            k = (k * 3 + 1) % 7
            dv = dv * 0.5 + k
        want.append(dv)
    np.testing.assert_allclose(x.grad.to_numpy(), want, rtol=1e-5)


@gr.kernel
def two_loops_and_if(x: F1, n: I1, m: I1, y: F1):
    for i in range(x.shape[0]):
        v = x[i]
        for _j in range(n[i]):
            v = gr.sin(v) + 0.5 * v
        if m[i] > 2:
            for _k in range(m[i]):
                v = v * v * 0.5 + 0.1
        for _j in range(n[i]):
            v = gr.tanh(v)
        y[i] = v


def test_two_loops_in_sequence_and_runtime_if_around_a_loop(rng):
    N = 128
    xs = rng.uniform(-1, 1, N).astype(np.float32)
    ns, ms = rng.integers(0, 5, N).astype(np.int32), rng.integers(0, 6, N).astype(np.int32)
    x, y = arr(xs), arr(np.zeros(N, np.float32))
    n, m = arr(ns, grad=False, dtype=gr.i32), arr(ms, grad=False, dtype=gr.i32)
    two_loops_and_if(x, n, m, y)
    y.grad.fill(1.0)
    two_loops_and_if.grad(x, n, m, y)
    want = []
    for i in range(N):
        v, d = float(xs[i]), 1.0
        for _ in range(ns[i]):
            v, d = np.sin(v) + 0.5 * v, d * (np.cos(v) + 0.5)
        if ms[i] > 2:
            for _ in range(ms[i]):
                v, d = v * v * 0.5 + 0.1, d * v
        for _ in range(ns[i]):
            v, d = np.tanh(v), d * (1 - np.tanh(v) ** 2)
        want.append(d)
    np.testing.assert_allclose(x.grad.to_numpy(), want, rtol=1e-4, atol=1e-6)


@gr.kernel
def bounds_from_arrays(x: F1, lo: I1, hi: I1, y: F1):
    for i in range(y.shape[0]):
        s = 0.0
        for j in range(lo[i], hi[i]):
            s = s * 0.9 + x[j] * x[j]
        y[i] = s


def test_loop_bounds_read_from_an_array(rng):
    xs = rng.uniform(-1, 1, 40).astype(np.float32)
    los = rng.integers(0, 20, 30).astype(np.int32)
    his = (los + rng.integers(-2, 12, 30)).astype(np.int32)
    x, y = arr(xs), arr(np.zeros(30, np.float32))
    lo, hi = arr(los, grad=False, dtype=gr.i32), arr(his, grad=False, dtype=gr.i32)
    bounds_from_arrays(x, lo, hi, y)
    w = rng.uniform(0.5, 1.5, 30).astype(np.float32)
    y.grad.from_numpy(w)
    bounds_from_arrays.grad(x, lo, hi, y)
    want = np.zeros(40)
    for i in range(30):
        js = range(los[i], his[i])
        for pos, j in enumerate(js):
            want[j] += w[i] * 2 * xs[j] * 0.9 ** (len(js) - 1 - pos)  # several items read x[j]: atomics
    np.testing.assert_allclose(x.grad.to_numpy(), want, rtol=1e-4, atol=1e-6)


collatz_like = gr.kernel(while_break_continue)


def test_while_break_continue(rng):
    xs = rng.uniform(0.01, 5.0, 100).astype(np.float32)
    x, y = arr(xs), arr(np.zeros(100, np.float32))
    collatz_like(x, y)
    y.grad.fill(1.0)
    collatz_like.grad(x, y)
    want = [while_break_continue_reference(x0)[1] for x0 in xs.astype(np.float64)]
    np.testing.assert_allclose(x.grad.to_numpy(), want, rtol=1e-4)


@gr.kernel
def gather(x: F1, idx: I1, y: F1):
    for i in range(y.shape[0]):
        y[i] = x[idx[i]] * x[idx[i]]


def test_gather_scatters_gradients_atomically(rng):
    xs = rng.uniform(-1, 1, 8).astype(np.float32)
    ids = rng.integers(0, 8, 500).astype(np.int32)
    x, y, idx = arr(xs), arr(np.zeros(500, np.float32)), arr(ids, grad=False, dtype=gr.i32)
    gather(x, idx, y)
    y.grad.fill(1.0)
    gather.grad(x, idx, y)
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * xs * np.bincount(ids, minlength=8), rtol=1e-5)


# -- large run-time loops --------------------------------------------------------------------------
sin_loop = gr.kernel(adprograms.sin_loop)


def test_runtime_loop_2_pow_20_elements(rng):
    n = 1 << 20
    xs = rng.uniform(-1, 1, n).astype(np.float32)
    cs = rng.integers(0, 32, n).astype(np.int32)
    x, y, cnt = arr(xs), arr(np.zeros(n, np.float32)), arr(cs, grad=False, dtype=gr.i32)
    sin_loop(x, cnt, y)
    y.grad.fill(1.0)
    sin_loop.grad(x, cnt, y)
    v, d = sin_loop_reference(xs, cs)
    assert np.abs(y.to_numpy() - v).max() < 1e-5
    assert np.abs(x.grad.to_numpy() - d).max() < 1e-4


def test_tape_with_fields_used_by_name(rng):
    """Taichi style: no kernel arguments, everything in fields, a 0-d field as the loss."""
    xs = rng.uniform(-1, 1, 64).astype(np.float32)
    x = gr.field(gr.f32, shape=(64,), needs_grad=True)
    y = gr.field(gr.f32, shape=(64,), needs_grad=True)
    loss = gr.field(gr.f32, shape=(), needs_grad=True)
    x.from_numpy(xs)

    @gr.kernel
    def square():
        for i in range(64):
            y[i] = x[i] * x[i]

    @gr.kernel
    def total():
        for i in range(64):
            loss[None] += gr.sin(y[i])

    for _ in range(2):  # the second run checks that gradients were cleared, not accumulated
        with gr.Tape(loss):
            square()
            total()
    X = xs.astype(np.float64)
    assert loss[None] == pytest.approx(np.sin(X * X).sum(), rel=1e-5)
    np.testing.assert_allclose(x.grad.to_numpy(), np.cos(X * X) * 2 * X, rtol=1e-4, atol=1e-6)


@gr.kernel
def sum_squared(x: F1, loss: gr.types.ndarray(dtype=gr.f32, ndim=0)):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    loss[None] = s * s


@gr.kernel
def mean_of_positive(x: F1, loss: gr.types.ndarray(dtype=gr.f32, ndim=0)):
    s = 0.0
    n = 0
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            s += x[i]
            n += 1
    loss[None] = s / gr.max(n, 1)


def test_reduction_into_a_kernel_scope_local_differentiates(rng):
    """The reduction's cross-task local (an internal word buffer) carries the gradient."""
    xs = rng.uniform(-0.5, 0.5, 1000).astype(np.float32)
    x = arr(xs)
    loss = gr.ndarray(gr.f32, (), needs_grad=True)
    with gr.Tape(loss):
        sum_squared(x, loss)
    X = xs.astype(np.float64)
    t = (X * X).sum()
    assert float(loss.to_numpy()) == pytest.approx(t * t, rel=1e-4)
    np.testing.assert_allclose(x.grad.to_numpy(), 4 * t * X, rtol=1e-3, atol=1e-6)


def test_reduction_with_an_integer_counter_differentiates_only_the_float(rng):
    xs = rng.uniform(-1, 1, 777).astype(np.float32)
    x = arr(xs)
    loss = gr.ndarray(gr.f32, (), needs_grad=True)
    with gr.Tape(loss):
        mean_of_positive(x, loss)
    pos = xs > 0
    np.testing.assert_allclose(x.grad.to_numpy(), np.where(pos, 1.0 / pos.sum(), 0.0), rtol=1e-5)


def test_forward_mode_through_a_reduction(rng):
    xs = rng.uniform(-0.5, 0.5, 300).astype(np.float32)
    x = arr(xs)
    loss = gr.ndarray(gr.f32, (), needs_grad=True)
    seed = rng.uniform(-1, 1, 300).astype(np.float32)
    with gr.ad.FwdMode(loss=loss, param=x, seed=seed):
        sum_squared(x, loss)
    X = xs.astype(np.float64)
    t = (X * X).sum()
    assert float(loss.dual.to_numpy()) == pytest.approx(float(4 * t * X @ seed), rel=1e-3)


@gr.kernel
def scaled_sin(x: F1, y: F1):
    for i in range(x.shape[0]):
        y[i] = gr.sin(x[i]) * 3.0


def test_repeated_grad_launches_take_the_fast_path_and_stay_right(rng):
    xs = rng.uniform(-1, 1, 300).astype(np.float32)
    x, y = arr(xs), arr(np.zeros(300, np.float32))
    scaled_sin(x, y)
    for _ in range(3):  # the first call is checked; later ones reuse the cached launcher
        x.grad.fill(0.0)
        y.grad.fill(1.0)
        scaled_sin.grad(x, y)
        np.testing.assert_allclose(x.grad.to_numpy(), 3 * np.cos(xs), rtol=1e-5, atol=1e-6)
    assert scaled_sin._fast_grad  # the cache the later calls used
    with pytest.raises(ValueError, match="grad array"):
        scaled_sin.grad(x.grad, y)  # still refused with a cached call shape


@gr.kernel
def power_by_last_index(x: F1, n: I1, y: F1):
    for i in range(x.shape[0]):
        v = x[i]
        j = 0
        for j in range(n[i]):  # noqa: B007 (read after the loop)
            v = v * x[i]
        y[i] = v * gr.cast(j, gr.f32)   # the loop variable after its loop: Python's last value


def test_gradient_through_a_loop_whose_variable_is_read_after_it(rng):
    xs = rng.uniform(0.5, 1.5, 64).astype(np.float32)
    ns = rng.integers(1, 6, 64).astype(np.int32)
    x, n, y = arr(xs), arr(ns, grad=False, dtype=gr.i32), arr(np.zeros(64, np.float32))
    power_by_last_index(x, n, y)
    y.grad.fill(1.0)
    power_by_last_index.grad(x, n, y)
    X = xs.astype(np.float64)
    np.testing.assert_allclose(y.to_numpy(), X ** (ns + 1) * (ns - 1), rtol=1e-4)
    np.testing.assert_allclose(x.grad.to_numpy(), (ns + 1) * X ** ns * (ns - 1), rtol=1e-4)


@gr.kernel
def runtime_steps(x: F1, lo: I1, hi: I1, st: I1, stop: I1, y: F1):
    for i in range(y.shape[0]):
        v = 0.0
        for j in range(lo[i], hi[i], st[i]):          # a step read from memory, of either sign
            v = gr.sin(v) * 0.8 + x[j] * x[(j + 1) % 9]
            if j == stop[i]:
                break
        y[i] = v


def runtime_steps_reference(xs, lo, hi, st, stop):
    """float64 (y, dy/dx) of runtime_steps, by forward mode over the 9 elements of x."""
    ys, grads = [], []
    for a, b, s, e in zip(lo, hi, st, stop):
        v, dv = 0.0, np.zeros(9)
        for j in range(a, b, s):
            k = (j + 1) % 9
            dp = np.zeros(9)
            dp[j] += xs[k]
            dp[k] += xs[j]
            v, dv = np.sin(v) * 0.8 + xs[j] * xs[k], np.cos(v) * 0.8 * dv + dp
            if j == e:
                break
        ys.append(v)
        grads.append(dv)
    return np.array(ys), np.array(grads)


def test_loops_with_a_run_time_step_differentiate(rng):
    """Found by tools/progfuzz (grad seeds 111, 1035): `range(a, b, s)` with a step known only
    at run time raised "a differentiated range() loop needs a constant step" (docs/autodiff.md
    promises every kind of loop), and with a `break` the compiler failed on the step's sign."""
    n = 64
    xs = rng.uniform(-1, 1, 9).astype(np.float32)
    st = rng.choice([-3, -2, -1, 1, 2, 3], n).astype(np.int32)
    lo = np.where(st > 0, rng.integers(0, 4, n), rng.integers(5, 9, n)).astype(np.int32)
    hi = np.where(st > 0, rng.integers(3, 10, n), rng.integers(-1, 5, n)).astype(np.int32)
    stop = rng.integers(-1, 9, n).astype(np.int32)     # -1: never breaks
    x, y = arr(xs), arr(np.zeros(n, np.float32))
    ints = [arr(v, grad=False, dtype=gr.i32) for v in (lo, hi, st, stop)]
    runtime_steps(x, *ints, y)
    w = rng.uniform(0.5, 1.5, n).astype(np.float32)
    y.grad.from_numpy(w)
    runtime_steps.grad(x, *ints, y)
    want_y, dydx = runtime_steps_reference(xs.astype(np.float64), lo, hi, st, stop)
    np.testing.assert_allclose(y.to_numpy(), want_y, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.to_numpy(), w.astype(np.float64) @ dydx, rtol=1e-4, atol=1e-5)


@gr.kernel
def negative_start(x: F1, y: F1):
    for i in range(y.shape[0]):
        v = x[i]
        for j in range(-3, 0):
            v = gr.tanh(v * 1.5 + x[(i - j) % x.shape[0]] * 0.1)
        y[i] = v


def test_loop_from_a_negative_constant_differentiates(rng):
    """Found by tools/progfuzz (grad seed 5): the trip count of range(-3, 0) was emitted as
    `max((--3i), 0i)`, which WGSL reads as a decrement (an InternalCompilerError)."""
    n = 40
    xs = rng.uniform(-1, 1, n).astype(np.float32)
    x, y = arr(xs), arr(np.zeros(n, np.float32))
    negative_start(x, y)
    y.grad.fill(1.0)
    negative_start.grad(x, y)

    def f(xv):
        out = np.zeros(n)
        for i in range(n):
            v = xv[i]
            for j in range(-3, 0):
                v = np.tanh(v * 1.5 + xv[(i - j) % n] * 0.1)
            out[i] = v
        return out
    X, h = xs.astype(np.float64), 1e-6
    fd = np.array([(f(X + h * e).sum() - f(X - h * e).sum()) / (2 * h) for e in np.eye(n)])
    np.testing.assert_allclose(y.to_numpy(), f(X), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.to_numpy(), fd, rtol=1e-4, atol=1e-5)
