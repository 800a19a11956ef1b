"""Issue 13: a reduction over at least GfxRuntime.EARLY_SUBMIT_BYTES submits its launches
before recording its readback (the GPU starts while the host records the copy), ordinary
launches are not submitted early, and a readback whose maps completed while polling skips the
blocking wait. Results must not change."""
import numpy as np
import pytest
from gfxrt.kernels import reduce

import gfxrt as gr
from gfxrt import kernels


@gr.kernel
def axpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


def _dev(a):
    x = gr.ndarray(gr.f32 if a.dtype == np.float32 else gr.i32, a.shape)
    x.from_numpy(a)
    return x


@pytest.fixture
def early(monkeypatch):
    """The runtime with early submits from 4 KiB of reduced data on."""
    rt = gr.runtime()
    rt.synchronize()
    monkeypatch.setattr(rt, "EARLY_SUBMIT_BYTES", 4096)
    return rt


def test_a_large_reduction_submits_before_its_readback(early, rng):
    rt = early
    big, small = _dev(rng.random(2048, dtype=np.float32)), _dev(rng.random(16, dtype=np.float32))  # 8 KiB / 64 B
    gr.sync()
    for xd in (small, big, small, big):
        subs = rt.stats()["submissions"]
        s = reduce.sum(xd)
        assert rt.stats()["submissions"] == subs + (2 if xd is big else 1)  # the launches, then the readback
        np.testing.assert_allclose(s, xd.to_numpy().astype(np.float64).sum(), rtol=1e-5)


def test_ordinary_launches_are_not_submitted_early(early, rng):
    """However many bytes a launch binds (a Tape step binds whole trajectories), it waits for
    the batch: an extra submit per launch would make loops of small launches host-bound."""
    rt = early
    x, y = _dev(rng.random(4096, dtype=np.float32)), _dev(np.zeros(4096, np.float32))
    gr.sync()
    subs = rt.stats()["submissions"]
    for _ in range(3):
        axpy(1.0, x, y)
    assert rt.stats()["submissions"] == subs and rt.has_pending_work
    np.testing.assert_allclose(y.to_numpy(), 3 * x.to_numpy(), rtol=1e-6)


@pytest.mark.parametrize("n", [5000, 300_001])
def test_reduction_with_early_submits_matches(early, monkeypatch, rng, n):
    x = (rng.standard_normal(n) * 10).astype(np.float32)
    xd = _dev(x)
    got = [reduce.sum(xd), reduce.max(xd), reduce.sum(xd)]
    monkeypatch.setattr(early, "EARLY_SUBMIT_BYTES", 1 << 62)
    assert got == [reduce.sum(xd), reduce.max(xd), reduce.sum(xd)]  # the same order of additions
    np.testing.assert_allclose(got[0], x.astype(np.float64).sum(), rtol=1e-4, atol=1e-2)
    assert got[1] == x.max()


def test_polled_readback_skips_the_blocking_wait_and_drains(monkeypatch, rng):
    """With polling on (GPUs), a readback whose maps completed needs no blocking wait: the
    map callback fires once the submission (and every earlier one) has finished."""
    rt = gr.runtime()
    rt.synchronize()
    monkeypatch.setattr(rt.device, "_gfxrt_spin_s", 0.5)
    blocking = []
    real_wait = rt.wait
    monkeypatch.setattr(rt, "wait", lambda index=None: (blocking.append(index), real_wait(index)))
    x = _dev(rng.random(100_000, dtype=np.float32))
    for _ in range(3):
        gr.runtime().free_later(gr.runtime().pool.alloc(1024))  # a transient buffer the readback must release
        waits = rt.stats()["waits"]
        s = kernels.reduce.sum(x)
        assert rt.stats()["waits"] == waits + 1
        assert not rt.pending_retirements and not rt.ctx_buffers
        np.testing.assert_allclose(s, x.to_numpy().astype(np.float64).sum(), rtol=1e-4)
    assert blocking == []
