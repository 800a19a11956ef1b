"""Ctrl-C (SIGINT) during readbacks raises KeyboardInterrupt, never a gr.DeviceError or an
"Exception ignored from cffi callback" (a signal's handler often runs inside the map callback
of a wait), and leaves the runtime usable: staging buffers unmapped and retired, no error or
wrong result afterwards, memory bounded. Runs in a subprocess that sends itself SIGINT."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = textwrap.dedent("""
    import faulthandler, os, random, signal, sys, threading, time
    faulthandler.dump_traceback_later(240, exit=True)  # a hang prints every thread's stack and ends the run
    import numpy as np
    import gfxrt as gr

    F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)

    @gr.kernel
    def add1(x: F1):
        for i in range(x.shape[0]):
            x[i] += 1.0

    N = int(sys.argv[1])
    rng = random.Random(7)
    ref = np.arange(1 << 18, dtype=np.float32)
    x = gr.ndarray(gr.f32, ref.size)
    small = np.zeros(64, np.float32)
    rt = gr.runtime()

    def check():  # the runtime after an interrupt: launches, numpy arguments, readbacks all right
        x.from_numpy(ref)
        add1(x)
        got = x.to_numpy()
        assert np.array_equal(got, ref + 1), got[:4]
        s = np.zeros(64, np.float32)
        add1(s)
        assert (s == 1).all()
        y = gr.ndarray(gr.f32, 1000)
        assert not y.to_numpy().any()  # a new array reads zero

    check()
    gr.sync()
    base = rt.stats()["live_bytes"]
    interrupted = 0
    def interrupt(go, delay):
        go.wait()
        time.sleep(delay)
        os.kill(os.getpid(), signal.SIGINT)

    for n in range(N):
        go = threading.Event()
        timer = threading.Thread(target=interrupt, args=(go, rng.uniform(0.0005, 0.02)))
        timer.start()
        try:
            go.set()  # the signal comes after this line, inside the try
            t_end = time.monotonic() + 20  # an interrupt that never arrives is reported, not waited for
            while time.monotonic() < t_end:  # readbacks, with launches between them, until the interrupt
                add1(x)
                x.to_numpy()
                add1(small)
        except KeyboardInterrupt:
            interrupted += 1
        else:
            print("lost interrupt", n, file=sys.stderr)
        timer.join()
        check()
    gr.sync()
    grown = rt.stats()["live_bytes"] - base
    assert grown <= 8 * x.nbytes, grown  # staging buffers came back (at most a few lost to a badly placed interrupt)
    print("interrupted", interrupted, "of", N)
""")


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_during_readbacks_raises_keyboard_interrupt_and_the_runtime_goes_on(tmp_path):
    script = tmp_path / "interrupt.py"  # kernels need a source file
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    n = int(os.environ.get("GFXRT_INTERRUPTS", "40"))
    proc = subprocess.run([sys.executable, str(script), str(n)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-4000:])
    assert f"interrupted {n} of {n}" in proc.stdout, proc.stdout[-2000:]
    assert "Exception ignored" not in proc.stderr and "Error" not in proc.stderr, proc.stderr[-4000:]


# -- a KeyboardInterrupt raised as a native call returns (what a signal during that call does),
# simulated in-process at each place where the runtime's bookkeeping could come apart ----------

import threading  # noqa: E402

import numpy as np  # noqa: E402

import gfxrt as gr  # noqa: E402
from gfxrt.engine import context, ffi  # noqa: E402

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)


@gr.kernel
def inc(x: F1):
    for i in range(x.shape[0]):
        x[i] += 1.0


@gr.kernel
def dec(x: F1):
    for i in range(x.shape[0]):
        x[i] -= 1.0


def _interrupt_once(monkeypatch, module, name):
    """Make module.name run, then raise KeyboardInterrupt, on its next call only."""
    real, armed = getattr(module, name), [True]

    def call(*args):
        r = real(*args)
        if armed[0]:
            armed[0] = False
            raise KeyboardInterrupt
        return r
    monkeypatch.setattr(module, name, call)
    return armed


def _garbage_backed(n):
    """A new array whose pooled buffer held garbage (its zeroing is pending)."""
    junk = gr.ndarray(gr.f32, n)
    junk.from_numpy(np.full(n, 107.0, np.float32))
    gr.sync()
    del junk
    gr.sync()
    return gr.ndarray(gr.f32, n)


def test_interrupt_as_a_pass_begins_loses_no_encoder():
    x = gr.ndarray(gr.f32, 64)
    gr.sync()
    z = _garbage_backed(4096)
    with pytest.MonkeyPatch.context() as mp:
        _interrupt_once(mp, ffi, "begin_pass")
        with pytest.raises(KeyboardInterrupt):
            inc(x)  # the pass began, its handle was lost: the encoder is locked
    inc(x)
    np.testing.assert_array_equal(x.to_numpy(), np.ones(64, np.float32))  # no DeviceError, one inc
    assert not z.to_numpy().any()  # the zeroing recorded in the discarded encoder was recorded again


def test_interrupt_as_commands_finish_keeps_new_arrays_zero():
    x = gr.ndarray(gr.f32, 64)
    gr.sync()
    z = _garbage_backed(4096)
    inc(x)  # recorded with z's zeroing, then lost with the batch
    rt = gr.runtime()
    with pytest.MonkeyPatch.context() as mp:
        _interrupt_once(mp, ffi, "finish")
        with pytest.raises(KeyboardInterrupt):
            rt.flush()
    assert not z.to_numpy().any()
    inc(x)
    assert x.to_numpy()[0] in (1.0, 2.0)  # the interrupted batch may be lost, the runtime goes on
    gr.sync()


def test_interrupt_as_the_submit_returns_retires_the_batch_later():
    x = gr.ndarray(gr.f32, 64)
    gr.sync()
    rt = gr.runtime()
    base = rt.stats()["live_bytes"]
    inc(x)
    tmp = gr.ndarray(gr.f32, 4096)
    inc(tmp)
    del tmp  # its buffer waits in ctx_buffers for the work that uses it
    with pytest.MonkeyPatch.context() as mp:
        _interrupt_once(mp, ffi, "submit_one")
        with pytest.raises(KeyboardInterrupt):
            rt.flush()  # submitted, then interrupted before its bookkeeping
    assert rt.ctx_buffers  # not released early: retired with the next submission
    np.testing.assert_array_equal(x.to_numpy(), np.ones(64, np.float32))  # the submitted work ran
    gr.sync()
    assert rt.stats()["live_bytes"] == base and not rt.ctx_buffers


def test_interrupt_as_a_pipeline_is_set_keeps_the_pass_cache_true():
    x, y = gr.ndarray(gr.f32, 64), gr.ndarray(gr.f32, 64)
    inc(x)
    gr.sync()
    inc(x)  # the open pass has inc's pipeline bound, and the cache says so
    with pytest.MonkeyPatch.context() as mp:
        _interrupt_once(mp, ffi, "set_pipeline")
        with pytest.raises(KeyboardInterrupt):
            dec(y)  # first launch (checked path): dec's pipeline is bound, then the interrupt
    inc(x)  # must bind inc's pipeline again
    np.testing.assert_array_equal(x.to_numpy(), np.full(64, 3, np.float32))
    dec(y)
    np.testing.assert_array_equal(y.to_numpy(), np.full(64, -1, np.float32))


def test_interrupt_as_a_launch_takes_the_lock_releases_it(monkeypatch):
    kernel_mod = __import__("importlib").import_module("gfxrt.kernel")  # (gr.kernel is the decorator)
    x = gr.ndarray(gr.f32, 8)
    inc(x)
    _interrupt_once(monkeypatch, kernel_mod, "_acquire")
    with pytest.raises(KeyboardInterrupt):
        inc(x)
    got = []
    t = threading.Thread(target=lambda: got.append(context.LOCK.acquire(timeout=10) and
                                                   context.LOCK.release() is None))
    t.start()
    t.join()
    assert got == [True], "the lock stayed held after the interrupt"


def test_interrupt_as_the_pool_releases_a_buffer_reaches_the_caller():
    # Trimming releases each buffer's handle itself: left to wgpu-py's __del__, a Ctrl-C that
    # arrives during the release would be printed ("Exception ignored in ... __del__") and lost
    rt = gr.runtime()
    y = gr.ndarray(gr.f32, 12345)
    gr.sync()
    buf = y._buffer
    del y
    gr.sync()  # y's buffer is idle in the pool now
    real, calls = buf._release, []

    def release():  # the signal arrives as the native release returns, once
        calls.append(1)
        real()
        if len(calls) == 1:
            raise KeyboardInterrupt
    buf._release = release
    del buf
    with pytest.raises(KeyboardInterrupt):
        rt.pool.trim()
    assert calls == [1]
    z = gr.ndarray(gr.f32, 12345)  # the pool goes on: a new array, zero, usable
    assert not z.to_numpy().any()
    inc(z)
    np.testing.assert_array_equal(z.to_numpy(), np.ones(12345, np.float32))
