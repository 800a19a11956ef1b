"""gr.Tape, gr.ad.FwdMode and gr.graph() capture belong to the thread that opened them; other
threads run eagerly and right (docs/runtime.md "Threads"). Threads are stepped with events, not
sleeps; the stress test at the end mixes everything for a bounded time (GFXRT_THREAD_STRESS_S
and GFXRT_THREAD_STRESS_THREADS make it longer and wider)."""
import os
import random
import threading
import time

import numpy as np
import pytest

import gfxrt as gr

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
F0 = gr.types.ndarray(dtype=gr.f32, ndim=0)
WAIT = 60  # seconds an event may take before the test fails instead of hanging


@gr.kernel
def add(x: F1, k: gr.f32):
    for i in range(x.shape[0]):
        x[i] += k


@gr.kernel
def square_sum(x: F1, loss: F0):
    for i in range(x.shape[0]):
        loss[None] += x[i] * x[i]


@gr.kernel
def scaled(x: F1, y: F1, k: gr.f32):
    for i in range(x.shape[0]):
        y[i] = k * x[i]


class Step:
    """Thread A enters its block and signals `inside`; thread B does its work there and
    signals `done`; A leaves. Exceptions of either thread are re-raised by `join`."""

    def __init__(self):
        self.inside, self.done = threading.Event(), threading.Event()
        self.errors: list = []

    def thread(self, fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001
                self.errors.append(e)
                self.inside.set()
                self.done.set()
        t = threading.Thread(target=run)
        t.start()
        return t

    def wait(self, event):
        assert event.wait(WAIT), "the other thread did not get there"

    def join(self, *threads):
        for t in threads:
            t.join(WAIT)
            assert not t.is_alive()
        if self.errors:
            raise self.errors[0]


def test_another_threads_launches_run_eagerly_during_capture():
    a, b = gr.ndarray(gr.f32, 8), gr.ndarray(gr.f32, 8)
    s, seen = Step(), {}

    def capturer():
        with gr.graph() as g:
            add(a, 1.0)
            s.inside.set()
            s.wait(s.done)
            add(a, 1.0)
        seen["graph"] = g

    def other():
        s.wait(s.inside)
        add(b, 1.0)                      # eager: not recorded into A's graph
        seen["b"] = b.to_numpy()         # a readback while A captures
        with gr.graph() as g2:           # a graph of its own meanwhile
            add(b, 10.0)
        g2.replay()
        seen["b2"] = b.to_numpy()
        s.done.set()

    s.join(s.thread(capturer), s.thread(other))
    g = seen["graph"]
    np.testing.assert_array_equal(seen["b"], np.ones(8, np.float32))
    np.testing.assert_array_equal(seen["b2"], np.full(8, 11, np.float32))
    assert g.stats()["launches"] == 2 and g.state == "ready"
    np.testing.assert_array_equal(a.to_numpy(), np.zeros(8, np.float32))  # captured, not run
    g.replay()
    np.testing.assert_array_equal(a.to_numpy(), np.full(8, 2, np.float32))
    np.testing.assert_array_equal(b.to_numpy(), np.full(8, 11, np.float32))  # A's replay leaves b alone


def test_another_threads_launches_are_not_on_the_tape_and_keep_their_grads():
    xa = gr.ndarray(gr.f32, 4, needs_grad=True)
    la = gr.ndarray(gr.f32, (), needs_grad=True)
    xb = gr.ndarray(gr.f32, 4, needs_grad=True)
    lb = gr.ndarray(gr.f32, (), needs_grad=True)
    xa.from_numpy(np.arange(4, dtype=np.float32))
    xb.from_numpy(np.full(4, 3, np.float32))
    xb.grad.from_numpy(np.full(4, 7, np.float32))
    s, seen = Step(), {}

    def taper():
        with gr.Tape(la) as tape:
            square_sum(xa, la)
            s.inside.set()
            s.wait(s.done)
        seen["tape"] = tape

    def other():
        s.wait(s.inside)
        square_sum(xb, lb)               # eager, not recorded on A's tape
        seen["lb"] = lb.to_numpy()
        s.done.set()

    s.join(s.thread(taper), s.thread(other))
    assert len(seen["tape"].launches) == 1
    assert float(seen["lb"]) == 36.0
    np.testing.assert_array_equal(xa.grad.to_numpy(), 2 * np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(xb.grad.to_numpy(), np.full(4, 7, np.float32))  # not cleared by A's exit


def test_two_threads_record_tapes_at_the_same_time():
    xs = [gr.ndarray(gr.f32, 4, needs_grad=True) for _ in range(2)]
    ls = [gr.ndarray(gr.f32, (), needs_grad=True) for _ in range(2)]
    for k, x in enumerate(xs):
        x.from_numpy(np.full(4, k + 1, np.float32))
    s = Step()

    def first():
        with gr.Tape(ls[0]):
            square_sum(xs[0], ls[0])
            s.inside.set()
            s.wait(s.done)              # B opens and closes its Tape inside A's

    def second():
        s.wait(s.inside)
        with gr.Tape(ls[1]):
            square_sum(xs[1], ls[1])
        s.done.set()

    s.join(s.thread(first), s.thread(second))
    for k, x in enumerate(xs):
        np.testing.assert_array_equal(x.grad.to_numpy(), np.full(4, 2 * (k + 1), np.float32))


def test_another_thread_runs_primal_during_fwd_mode():
    x, y = gr.ndarray(gr.f32, 4, needs_grad=True), gr.ndarray(gr.f32, 4, needs_grad=True)
    x.from_numpy(np.ones(4, np.float32))
    xb, yb = gr.ndarray(gr.f32, 4, needs_grad=True), gr.ndarray(gr.f32, 4, needs_grad=True)
    xb.from_numpy(np.full(4, 2, np.float32))
    s, seen = Step(), {}

    def forward():
        with gr.ad.FwdMode(loss=y, param=x, seed=[1.0, 0.0, 0.0, 0.0]):
            scaled(x, y, 3.0)
            s.inside.set()
            s.wait(s.done)

    def other():
        s.wait(s.inside)
        xb.dual.from_numpy(np.ones(4, np.float32))
        scaled(xb, yb, 5.0)              # primal: no tangents computed
        seen["yb"] = yb.to_numpy()
        seen["yb.dual"] = yb.dual.to_numpy()
        s.done.set()

    s.join(s.thread(forward), s.thread(other))
    np.testing.assert_array_equal(seen["yb"], np.full(4, 10, np.float32))
    np.testing.assert_array_equal(seen["yb.dual"], np.zeros(4, np.float32))
    np.testing.assert_array_equal(y.dual.to_numpy(), [3, 0, 0, 0])


def test_a_nested_tape_in_the_same_thread_still_raises():
    x = gr.ndarray(gr.f32, 4, needs_grad=True)
    loss = gr.ndarray(gr.f32, (), needs_grad=True)
    with gr.Tape(loss):
        with pytest.raises(gr.GfxrtError, match="cannot start inside a gr.Tape"):
            with gr.Tape(loss):
                pass
        square_sum(x, loss)
    with gr.graph():
        with pytest.raises(gr.GraphCaptureError, match="cannot nest"):
            with gr.graph():
                pass


def test_closing_the_runtime_abandons_every_threads_capture():
    from gfxrt.engine.runtime import GfxRuntime
    from gfxrt.graph import Graph
    rt2 = GfxRuntime(gr.device())  # what gr.init() replaces and closes (a second one on this device)
    s, seen = Step(), {}

    def capturer():
        with Graph(rt2) as g:
            assert rt2._slow and rt2.capture is g
            s.inside.set()
            s.wait(s.done)
        seen["g"] = g

    def other():
        s.wait(s.inside)
        assert rt2.capture is None       # A's, not this thread's
        rt2.close()
        s.done.set()

    s.join(s.thread(capturer), s.thread(other))
    assert seen["g"].state == "abandoned" and "closed the runtime" in seen["g"].reason


# -- stress ----------------------------------------------------------------------------------------

def _stress_worker(t: int, seconds: float, seed: int, start: threading.Barrier, report: list) -> None:
    rng = random.Random(seed)
    n = 64 + 16 * t
    x = gr.ndarray(gr.f32, n, needs_grad=True)
    loss = gr.ndarray(gr.f32, (), needs_grad=True)
    acc = gr.ndarray(gr.f32, n)
    expect = np.zeros(n, np.float32)
    start.wait()
    end = time.monotonic() + seconds
    done = 0
    while time.monotonic() < end:
        op = rng.randrange(5)
        v = np.float32(rng.randint(-4, 4))
        if op == 0:  # eager
            add(acc, v)
            expect += v
        elif op == 1:  # a Tape: forward and backward
            xs = np.array([rng.randint(-3, 3) for _ in range(n)], np.float32)
            x.from_numpy(xs)
            with gr.Tape(loss):
                square_sum(x, loss)
            got, want = x.grad.to_numpy(), 2 * xs
            if not np.array_equal(got, want) or float(loss.to_numpy()) != float((xs * xs).sum()):
                report.append(f"thread {t}: Tape gave grad {got[:4]} loss {loss.to_numpy()}, want {want[:4]}")
        elif op == 2:  # capture, then replay
            with gr.graph() as g:
                add(acc, v)
                add(acc, 1.0)
            if g.stats()["launches"] != 2:
                report.append(f"thread {t}: its graph recorded {g.stats()['launches']} launches, not 2")
            k = rng.randint(0, 3)
            g.replay(k)
            g.release()
            expect += k * (v + 1)
        elif op == 3:  # a Tape captured into a graph: one replay runs forward and backward
            xs = np.array([rng.randint(-3, 3) for _ in range(n)], np.float32)
            x.from_numpy(xs)
            with gr.graph() as g:
                with gr.Tape(loss):
                    square_sum(x, loss)
            g.replay()
            g.release()
            got = x.grad.to_numpy()
            if not np.array_equal(got, 2 * xs):
                report.append(f"thread {t}: a replayed Tape gave grad {got[:4]}, want {2 * xs[:4]}")
        else:  # a readback
            got = acc.to_numpy()
            if not np.array_equal(got, expect):
                report.append(f"thread {t}: acc {got[:4]}, want {expect[:4]}")
                expect = got
        done += 1
    got = acc.to_numpy()
    if not np.array_equal(got, expect):
        report.append(f"thread {t}: acc {got[:4]} at the end, want {expect[:4]}")
    report.append(done)


def test_threads_mixing_tapes_graphs_and_eager_work_stay_right():
    seconds = float(os.environ.get("GFXRT_THREAD_STRESS_S", "1.5"))
    threads = int(os.environ.get("GFXRT_THREAD_STRESS_THREADS", "4"))
    start = threading.Barrier(threads)
    reports = [[] for _ in range(threads)]
    errors: list = []

    def run(t):
        try:
            _stress_worker(t, seconds, 1000 + t, start, reports[t])
        except BaseException as e:  # noqa: BLE001
            errors.append(f"thread {t}: {e!r}")
            start.abort()

    ts = [threading.Thread(target=run, args=(t,)) for t in range(threads)]
    for th in ts:
        th.start()
    for th in ts:
        th.join(seconds + 10 * WAIT)
        assert not th.is_alive(), "a thread hung"
    assert not errors, errors
    wrong = [r for rep in reports for r in rep if not isinstance(r, int)]
    assert not wrong, wrong[:10]
    ops = [r for rep in reports for r in rep if isinstance(r, int)]
    assert len(ops) == threads and min(ops) > 0, ops
