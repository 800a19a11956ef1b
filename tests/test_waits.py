"""Issue 13: waits that poll before they block (gfxrt/engine/ffi.py wait / spin_until, the blitter's
readbacks) and the low byte of wgpuDevicePoll's answer. CPU adapters block at once by default,
so these tests switch polling on: a sync or a readback must still wait for the work."""
import numpy as np
import pytest

import gfxrt as gr
from gfxrt.engine import ffi


@gr.kernel
def slow(y: gr.types.ndarray(dtype=gr.f32, ndim=1), k: gr.i32):
    for i in range(y.shape[0]):
        v = y[i]
        for _ in range(k):
            v = v * 0.5 + 1.0
        y[i] = v


@gr.kernel
def bump(c: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1), k: gr.i32):
    for i in range(y.shape[0]):
        v = y[i]
        for _ in range(k):
            v = v * 0.5 + 1.0
        y[i] = v
        if i == 0:
            c[0] = c[0] + 1.0


def test_poll_reads_only_the_low_byte():
    """wgpuDevicePoll returns a Rust bool through a 32-bit WGPUBool: the upper bytes are
    garbage (nonzero while work ran on lavapipe), so a poll right after a long launch must say
    'busy', and one after gr.sync() 'idle'."""
    rt = gr.runtime()
    y = gr.ndarray(gr.f32, 1 << 16)
    slow(y, 1)
    gr.sync()
    slow(y, 4000)
    rt.flush()
    assert ffi.poll(rt.device) is False
    gr.sync()
    assert ffi.poll(rt.device) is True


@pytest.fixture
def spinning():
    dev = gr.runtime().device
    old = dev._gfxrt_spin_s
    dev._gfxrt_spin_s = 0.5  # poll up to 0.5 s before blocking (GPUs: 2 ms)
    yield
    dev._gfxrt_spin_s = old


def test_spinning_sync_and_readback_wait_for_the_work(spinning):
    rt = gr.runtime()
    y = gr.ndarray(gr.f32, 1 << 16)
    c = gr.ndarray(gr.f32, 1)
    slow(y, 4000)
    gr.sync()
    assert ffi.poll(rt.device) is True
    for k in range(1, 4):
        bump(c, y, 2000)
        assert c.to_numpy()[0] == k  # the readback saw the launch's write
    assert np.all(y.to_numpy() == pytest.approx(2.0))  # v -> 2 (the fixed point)


def test_spin_wait_setting(monkeypatch):
    monkeypatch.setenv("GFXRT_SPIN_WAIT_US", "-1")
    with pytest.raises(ValueError, match="GFXRT_SPIN_WAIT_US"):
        gr.init()
    monkeypatch.setenv("GFXRT_SPIN_WAIT_US", "150")
    gr.init()
    assert gr.runtime().device._gfxrt_spin_s == pytest.approx(150e-6)
    monkeypatch.delenv("GFXRT_SPIN_WAIT_US")
    gr.init()
    want = 0.0 if gr.runtime().dev.is_cpu else 2e-3
    assert gr.runtime().device._gfxrt_spin_s == pytest.approx(want)
