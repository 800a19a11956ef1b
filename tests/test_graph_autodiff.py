"""Capturing gradients: `kernel.grad` launches and a whole `gr.Tape` (its loss zeroing, grad
clearing and seeding included) in one graph, so one replay runs forward and backward."""
import adprograms
import numpy as np
import pytest
from adprograms import F0, F1, arr, sin_loop_reference

import gfxrt as gr


@gr.kernel
def wave(x: F1, y: F1):
    for i in range(x.shape[0]):
        y[i] = gr.sin(x[i]) * x[i]


@gr.kernel
def reduce_sq(y: F1, loss: F0):
    for i in range(y.shape[0]):
        loss[None] += y[i] * y[i]


def _wave_ref(x):
    x = x.astype(np.float64)
    y = np.sin(x) * x
    return y, np.cos(x) * x + np.sin(x)


def test_kernel_grad_is_captured_and_follows_new_data(rng):
    xs = rng.uniform(-1, 1, 50).astype(np.float32)
    x, y = arr(xs), arr(np.zeros(50, np.float32))
    with gr.graph() as g:
        wave(x, y)
        x.grad.fill(0)
        y.grad.fill(1.0)
        wave.grad(x, y)
    np.testing.assert_array_equal(x.grad.to_numpy(), np.zeros(50, np.float32))  # nothing ran
    for k in range(2):
        if k:
            xs = rng.uniform(-1, 1, 50).astype(np.float32)
            x.from_numpy(xs)  # new data in place between replays
        g.replay()
        want_y, want_dx = _wave_ref(xs)
        np.testing.assert_allclose(y.to_numpy(), want_y, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(x.grad.to_numpy(), want_dx, rtol=1e-5, atol=1e-6)


def test_a_whole_tape_is_captured_forward_and_backward(rng):
    xs = rng.uniform(-1, 1, 40).astype(np.float32)
    x, y = arr(xs), arr(np.zeros(40, np.float32))
    loss = gr.ndarray(gr.f32, (), needs_grad=True)
    loss.from_numpy(np.float32(123.0))       # stale values the Tape's zeroing must reset at each replay
    x.grad.from_numpy(np.full(40, 5.0, np.float32))
    with gr.graph() as g:
        with gr.Tape(loss):
            wave(x, y)
            reduce_sq(y, loss)
    assert loss.to_numpy() == 123.0  # capture ran nothing
    s = g.stats()
    assert s["launches"] >= 4 and s["clears"] >= 3  # forward, backward, loss / grads zeroed
    for k in range(3):
        if k == 2:
            xs = rng.uniform(-1, 1, 40).astype(np.float32)
            x.from_numpy(xs)
        g.replay()
        want_y, dy = _wave_ref(xs)
        assert float(loss.to_numpy()) == pytest.approx((want_y ** 2).sum(), rel=1e-5)
        np.testing.assert_allclose(x.grad.to_numpy(), 2 * want_y * dy, rtol=1e-4, atol=1e-6)
    # the same Tape run eagerly agrees with the replay
    xe, ye = arr(xs), arr(np.zeros(40, np.float32))
    le = gr.ndarray(gr.f32, (), needs_grad=True)
    with gr.Tape(le):
        wave(xe, ye)
        reduce_sq(ye, le)
    np.testing.assert_allclose(x.grad.to_numpy(), xe.grad.to_numpy(), rtol=1e-6)


def test_tape_over_a_run_time_loop_with_adstack_is_captured(rng):
    """A specialization never launched before: its counting pre-pass runs during capture (on
    the data as it is then); replays with deeper loops stay correct."""
    loop = gr.kernel(adprograms.sin_loop)  # a new Kernel: no specialization probed yet

    @gr.kernel
    def total(y: F1, loss: F0):
        for i in range(y.shape[0]):
            loss[None] += y[i]

    n = 64
    xs = rng.uniform(0.2, 1.2, n).astype(np.float32)
    cs = rng.integers(0, 4, n).astype(np.int32)
    x, y = arr(xs), arr(np.zeros(n, np.float32))
    cnt = arr(cs, grad=False, dtype=gr.i32)
    loss = gr.ndarray(gr.f32, (), needs_grad=True)
    with gr.graph() as g:
        with gr.Tape(loss):
            loop(x, cnt, y)
            total(y, loss)
    for k in range(2):
        if k:
            cs = rng.integers(100, 300, n).astype(np.int32)  # far deeper than the capture saw: fewer threads
            cnt.from_numpy(cs)
        g.replay()
        v, dv = sin_loop_reference(xs, cs)
        assert float(loss.to_numpy()) == pytest.approx(v.sum(), rel=1e-4)
        np.testing.assert_allclose(x.grad.to_numpy(), dv, rtol=1e-4, atol=1e-6)


def test_per_launch_gradient_scratch_is_zeroed_at_each_replay():
    """A grad kernel's per-launch scratch (the adjoints of cross-task locals) is zeroed when
    allocated; a replay must zero it again. A hand-made kernel that counts into its scratch
    and copies the count out shows it: 1 at every replay, never 2, 3, ..."""
    from gfxrt.compiler.spec import BindingSpec
    from gfxrt.compiler.types import u32
    from test_runtime import _launcher
    wgsl = """@group(0) @binding(0) var<storage, read_write> scratch: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1) fn main() { scratch[0] = scratch[0] + 1u; out[0] = scratch[0]; }"""
    bindings = [BindingSpec(0, "temps.grad", u32, "grad", None, read_only=False, grad_of=("temps", None)),
                BindingSpec(1, "out", u32, "arg", 0, read_only=False, written=True)]
    L = _launcher(wgsl, bindings, {})
    L.compiled.primal = _launcher(wgsl, bindings, {"temps": 4}).compiled
    out = gr.ndarray(gr.u32, 1)
    L.launch((out,))
    L.launch((out,))
    assert out.to_numpy()[0] == 1  # eager: a fresh scratch per launch
    with gr.graph() as g:
        L.launch((out,))
        L.launch((out,))
    for _ in range(3):
        g.replay()
        assert out.to_numpy()[0] == 1


def test_fwd_mode_seed_upload_is_host_work(rng):
    x, y = arr(rng.uniform(-1, 1, 8).astype(np.float32)), arr(np.zeros(8, np.float32))
    with pytest.raises(gr.GraphCaptureError, match="host data"):
        with gr.graph():
            with gr.ad.FwdMode(loss=y, param=x, seed=np.ones(8)):
                wave(x, y)
    wave(x, y)  # the runtime goes on
    assert gr.ad.THREAD.fwd is None  # the failed enter left no FwdMode block open
