"""Issue 13: a launch that binds at least GfxRuntime.EARLY_SUBMIT_BYTES is submitted at once
(the GPU starts while the host records what follows), and a readback whose maps completed
while polling skips the blocking wait. Results, program order, graph capture and the Tape
must not change."""
import numpy as np
import pytest

import gfxrt as gr
import kernels
from kernels import reduce


@gr.kernel
def axpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


@gr.kernel
def square_sum(x: gr.types.ndarray(dtype=gr.f32, ndim=1), loss: gr.types.ndarray(dtype=gr.f32, ndim=0)):
    for i in range(x.shape[0]):
        loss[None] += x[i] * x[i]


def _dev(a):
    x = gr.ndarray(gr.f32 if a.dtype == np.float32 else gr.i32, a.shape)
    x.from_numpy(a)
    return x


@pytest.fixture
def early(monkeypatch):
    """The runtime with early submits from 4 KiB of bound buffers on."""
    rt = gr.runtime()
    rt.synchronize()
    monkeypatch.setattr(rt, "EARLY_SUBMIT_BYTES", 4096)
    return rt


def test_a_large_launch_is_submitted_at_once_a_small_one_is_not(early, rng):
    rt = early
    big_x, big_y = _dev(rng.random(2048, dtype=np.float32)), _dev(np.zeros(2048, np.float32))  # 16 KiB bound
    small_x, small_y = _dev(rng.random(16, dtype=np.float32)), _dev(np.zeros(16, np.float32))
    gr.sync()
    for call in range(3):  # the first call takes the checked path, later ones the generated fast path
        subs = rt.stats()["submissions"]
        axpy(1.0, small_x, small_y)
        assert rt.stats()["submissions"] == subs and rt.has_pending_work
        axpy(1.0, big_x, big_y)
        assert rt.stats()["submissions"] == subs + 1, call
        assert not rt.has_pending_work  # the small launch recorded before went with it
    np.testing.assert_allclose(big_y.to_numpy(), 3 * big_x.to_numpy(), rtol=1e-6)
    np.testing.assert_allclose(small_y.to_numpy(), 3 * small_x.to_numpy(), rtol=1e-6)


def test_early_submits_keep_program_order_with_uploads_and_readbacks(early, rng):
    a, b = rng.random(3000, dtype=np.float32), rng.random(3000, dtype=np.float32)
    x, y = _dev(a), _dev(np.zeros(3000, np.float32))
    want = np.zeros(3000, np.float32)
    for k in range(6):  # several submitted launches pending at once, data changed between them
        axpy(2.0, x, y)
        want = 2 * a + want
        if k % 2:
            x.from_numpy(b)  # must land after the launch above and before the next
            a = b
            b = (b + 1).astype(np.float32)
    np.testing.assert_allclose(y.to_numpy(), want, rtol=1e-5)


@pytest.mark.parametrize("n", [5000, 300_001])
def test_reduction_with_early_submits_matches(early, monkeypatch, rng, n):
    x = (rng.standard_normal(n) * 10).astype(np.float32)
    xd = _dev(x)
    got = [reduce.sum(xd), reduce.max(xd), reduce.sum(xd)]
    monkeypatch.setattr(early, "EARLY_SUBMIT_BYTES", 1 << 62)
    assert got == [reduce.sum(xd), reduce.max(xd), reduce.sum(xd)]  # the same order of additions
    np.testing.assert_allclose(got[0], x.astype(np.float64).sum(), rtol=1e-4, atol=1e-2)
    assert got[1] == x.max()


def test_graph_capture_records_large_launches_and_replays_them(early, rng):
    rt = early
    a = rng.random(4096, dtype=np.float32)
    x, y = _dev(a), _dev(np.zeros(4096, np.float32))
    gr.sync()
    subs = rt.stats()["submissions"]
    with gr.graph() as g:
        axpy(1.0, x, y)
        axpy(2.0, x, y)
    assert rt.stats()["submissions"] == subs  # captured, not run
    np.testing.assert_array_equal(y.to_numpy(), 0)
    g.replay(2)
    axpy(1.0, x, y)  # eager, early-submitted after the replay
    np.testing.assert_allclose(y.to_numpy(), 7 * a, rtol=1e-5)


def test_tape_gradients_with_early_submits(early, monkeypatch, rng):
    a = rng.random(4096, dtype=np.float32)

    def grads():
        x = gr.ndarray(gr.f32, a.size, needs_grad=True)
        x.from_numpy(a)
        loss = gr.ndarray(gr.f32, (), needs_grad=True)
        with gr.Tape(loss):
            square_sum(x, loss)
        return x.grad.to_numpy()
    got = grads()
    monkeypatch.setattr(early, "EARLY_SUBMIT_BYTES", 1 << 62)
    np.testing.assert_allclose(got, grads(), rtol=1e-6)
    np.testing.assert_allclose(got, 2 * a, rtol=1e-5)


def test_polled_readback_skips_the_blocking_wait_and_drains(monkeypatch, rng):
    """With polling on (GPUs), a readback whose maps completed needs no blocking wait: the
    map callback fires once the submission (and every earlier one) has finished."""
    rt = gr.runtime()
    rt.synchronize()
    monkeypatch.setattr(rt.device, "_gfxrt_spin_s", 0.5)
    blocking = []
    real_wait = rt._wait
    monkeypatch.setattr(rt, "_wait", lambda index=None: (blocking.append(index), real_wait(index)))
    x = _dev(rng.random(100_000, dtype=np.float32))
    for _ in range(3):
        gr.runtime().free_later(gr.runtime().pool.alloc(1024))  # a transient buffer the readback must release
        waits = rt.stats()["waits"]
        s = kernels.reduce.sum(x)
        assert rt.stats()["waits"] == waits + 1
        assert not rt.pending_retirements and not rt.ctx_buffers
        np.testing.assert_allclose(s, x.to_numpy().astype(np.float64).sum(), rtol=1e-4)
    assert blocking == []
