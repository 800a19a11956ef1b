"""Graph capture and replay: what is recorded, replay order and batching, pinning (the
stale-binding bug), host work inside capture, the ping-pong pitfall."""
import gc
import importlib

import numpy as np
import pytest

import gfxrt as gr

graph_mod = importlib.import_module("gfxrt.graph")  # gr.graph is the function


@gr.kernel
def axpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


@gr.kernel
def scale(x: gr.types.ndarray(dtype=gr.f32, ndim=1), k: gr.f32):
    for i in range(x.shape[0]):
        x[i] = x[i] * k


@gr.kernel
def twice(src: gr.types.ndarray(dtype=gr.f32, ndim=1), dst: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(src.shape[0]):
        dst[i] = 2.0 * src[i]


@gr.kernel
def step(src: gr.types.ndarray(dtype=gr.f32, ndim=1), dst: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(src.shape[0]):
        dst[i] = 0.5 * src[i] + 1.0


@gr.kernel
def step_in_place(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        x[i] = 0.5 * x[i] + 1.0


def _returning_launcher():
    """A launcher whose kernel returns a value (hand-written WGSL: the language's return
    values are built on another branch)."""
    from gfxrt.compiler.spec import BindingSpec
    from gfxrt.compiler.types import f32, u32
    from test_runtime import _launcher
    wgsl = """@group(0) @binding(0) var<storage, read_write> res: array<u32>;
@compute @workgroup_size(1) fn main() { res[0] = bitcast<u32>(1.5f); }"""
    b = BindingSpec(0, "result", u32, "result", None, read_only=False, written=True)
    return _launcher(wgsl, [b], {"result": 4}, returns=(f32,))


def _rand(rng, n):
    return (rng.random(n, dtype=np.float32) + 0.5).astype(np.float32)


def _dev(a):
    x = gr.ndarray(gr.f32, a.shape)
    x.from_numpy(a)
    return x


def _f(v):
    return np.float32(v)


@pytest.fixture
def rt():
    r = gr.runtime()
    r.synchronize()
    return r


# -- recording and replay ----------------------------------------------------------------------
def test_capture_runs_nothing_and_replay_runs_everything_in_order(rt, rng):
    a, b = _rand(rng, 37), _rand(rng, 37)
    x, y, z = _dev(a), _dev(b), gr.ndarray(gr.f32, 37)
    with gr.graph() as g:
        axpy(2.0, x, y)           # y = 2a + b
        scale(x, -0.5)            # x = -a/2
        z.fill(3.0)               # z = 3
        z.copy_from(y, src_offset=5, dst_offset=10, count=20)
        axpy(1.0, z, x)           # x += z
        y.fill(0)
    assert g.state == "ready" and g.stats()["launches"] == 4 and g.stats()["copies"] == 1
    np.testing.assert_array_equal(x.to_numpy(), a)  # nothing ran
    np.testing.assert_array_equal(y.to_numpy(), b)
    np.testing.assert_array_equal(z.to_numpy(), np.zeros(37, np.float32))
    xm, ym, zm = a.copy(), b.copy(), np.zeros(37, np.float32)
    for reps in (1, 3):
        g.replay(reps)
        for _ in range(reps):
            ym = _f(2) * xm + ym
            xm = xm * _f(-0.5)
            zm[:] = 3.0
            zm[10:30] = ym[5:25]
            xm = zm + xm
            ym = np.zeros_like(ym)
        np.testing.assert_allclose(x.to_numpy(), xm, rtol=1e-6)
        np.testing.assert_array_equal(y.to_numpy(), ym)
        np.testing.assert_array_equal(z.to_numpy(), zm)


def test_replay_n_is_one_submit_and_chunks_past_the_limit(rt, rng, monkeypatch):
    a = _rand(rng, 16)
    x = _dev(a)
    with gr.graph() as g:
        for _ in range(5):
            step_in_place(x)
    assert g.stats()["dispatches"] == 5
    gr.sync()
    subs = rt.stats()["submissions"]
    g.replay(40)               # 200 dispatches
    rt.flush()
    assert rt.stats()["submissions"] - subs == 1
    want = a.astype(np.float64)
    for _ in range(200):
        want = 0.5 * want + 1.0
    np.testing.assert_allclose(x.to_numpy(), want, rtol=1e-6)
    monkeypatch.setattr(graph_mod, "REPLAY_SUBMIT_DISPATCHES", 12)
    gr.sync()
    subs = rt.stats()["submissions"]
    g.replay(10)               # 50 dispatches, at most 12 (+ one graph) per submit
    rt.flush()
    assert rt.stats()["submissions"] - subs >= 4
    for _ in range(50):
        want = 0.5 * want + 1.0
    np.testing.assert_allclose(x.to_numpy(), want, rtol=1e-6)


def test_replay_keeps_program_order_with_eager_work_and_new_data(rt, rng):
    a, b, c = _rand(rng, 20), _rand(rng, 20), _rand(rng, 20)
    x, y = _dev(a), _dev(b)
    with gr.graph() as g:
        axpy(0.5, x, y)
    scale(y, 3.0)              # eager, before the replay
    g.replay()
    x.from_numpy(c)            # new data in place, in order: the replay below sees it
    g.replay()
    scale(y, -1.0)             # eager, after
    want = -(_f(0.5) * c + (_f(0.5) * a + b * _f(3)))
    np.testing.assert_allclose(y.to_numpy(), want, rtol=1e-6)


def test_scalars_are_fixed_at_capture_arrays_bound_by_identity(rt, rng):
    a, b = _rand(rng, 8), _rand(rng, 8)
    x, y = _dev(a), _dev(b)
    k = 2.0
    with gr.graph() as g:
        axpy(k, x, y)
    k = 100.0  # noqa: F841 (the graph keeps the value it was captured with)
    x2 = _dev(b)
    x = x2     # rebinding the Python name does not change what the graph binds
    g.replay()
    np.testing.assert_allclose(y.to_numpy(), _f(2) * a + b, rtol=1e-6)


def test_generated_and_checked_replays_agree(rt, rng):
    a, b = _rand(rng, 33), _rand(rng, 33)
    results = []
    for engine in ("generated", "checked"):
        x, y, t = _dev(a), _dev(b), gr.ndarray(gr.f32, 33)
        with gr.graph() as g:
            twice(x, t)
            axpy(-1.0, t, y)
            t.copy_from(y, 3, 0, 11)
            scale(t, 0.25)
            axpy(1.0, t, x)
            y.fill(0.5)
            axpy(2.0, x, y)
        for _ in range(3):
            if engine == "generated":
                g.replay()
            else:
                rt.replay_checked(g.records, g._params, g._watch)
        results.append((x.to_numpy(), y.to_numpy(), t.to_numpy()))
    for u, v in zip(*results):
        np.testing.assert_array_equal(u, v)
    src = g._encoders[0].source
    assert src.count("set_pipeline") <= 6 and src.count("dispatch(p") == 6


def test_redundant_settings_are_left_out(rt, rng):
    x = _dev(_rand(rng, 16))
    with gr.graph() as g:
        for _ in range(50):
            step_in_place(x)
    src = g._encoders[0].source
    # one kernel, one bind group, one set of scalars: each set once, then 50 bare dispatches
    assert src.count("set_pipeline") == 1 and src.count("set_bind_group") == 1
    assert src.count("set_immediates") == 1 and src.count("dispatch(p") == 50


def test_empty_graph_and_zero_sized_launches(rt):
    x = gr.ndarray(gr.f32, 0)
    with gr.graph() as g:
        step_in_place(x)  # no elements: no dispatch
    assert g.stats() == {"launches": 1, "dispatches": 0, "copies": 0, "clears": 0, "pinned": 1, "owned": 0}
    g.replay(3)
    with gr.graph() as e:
        pass
    e.replay()
    with pytest.raises(ValueError):
        e.replay(-1)


# -- pinning: the stale-binding bug -----------------------------------------------------------
def _capture_with_temporary(a):
    x, out = _dev(a), gr.ndarray(gr.f32, a.shape)
    with gr.graph() as g:
        tmp = gr.ndarray(gr.f32, a.shape)
        twice(x, tmp)
        axpy(1.0, tmp, out)
    buf = tmp._buffer
    del tmp
    gc.collect()
    gr.sync()  # the dropped temporary went back through the retirement queue
    return g, x, out, buf


def test_dropped_temporary_and_pool_churn_do_not_change_results(rt, rng):
    a = _rand(rng, 300)
    g, x, out, buf = _capture_with_temporary(a)
    churn = [gr.ndarray(gr.f32, 300) for _ in range(6)]  # same size bucket as the temporary
    for c in churn:
        c.fill(99.0)
    assert all(c._buffer is not buf for c in churn)  # the pool never hands a pinned buffer out
    rt.empty_pool()  # destroys idle buffers (and drops cached bind groups), never pinned ones
    g.replay()
    g.replay()
    np.testing.assert_allclose(out.to_numpy(), _f(4) * a, rtol=1e-6)
    for c in churn:
        np.testing.assert_array_equal(c.to_numpy(), np.full(300, 99.0, np.float32))
    g.release()
    gr.sync()
    assert any(gr.ndarray(gr.f32, 300)._buffer is buf for _ in range(8))  # unpinned: back in the pool
    with pytest.raises(gr.GfxrtError, match="released"):
        g.replay()


def test_without_pinning_the_same_sequence_reads_stale_memory(rt, rng, monkeypatch):
    """The control for the test above: with pinning disabled, the pool hands the dropped
    temporary to another array and the replay overwrites that array's data."""
    monkeypatch.setattr(rt.pool, "pin", lambda buf: None)
    a = _rand(rng, 300)
    g, x, out, buf = _capture_with_temporary(a)
    churn = [gr.ndarray(gr.f32, 300) for _ in range(6)]
    for c in churn:
        c.fill(99.0)
    victim = [c for c in churn if c._buffer is buf]
    assert victim
    g.replay()
    np.testing.assert_allclose(victim[0].to_numpy(), _f(2) * a, rtol=1e-6)  # clobbered
    g.release()


def test_garbage_collected_graph_unpins(rt, rng):
    x = _dev(_rand(rng, 10))
    pinned = rt.stats()["pinned"]
    with gr.graph() as g:
        step_in_place(x)
    assert rt.stats()["pinned"] == pinned + 1
    del g
    gc.collect()
    assert rt.stats()["pinned"] == pinned


def test_a_buffer_pinned_by_two_graphs_stays_pinned_until_both_release(rt, rng):
    a = _rand(rng, 300)
    x, out1, out2 = _dev(a), gr.ndarray(gr.f32, 300), gr.ndarray(gr.f32, 300)
    tmp = gr.ndarray(gr.f32, 300)
    with gr.graph() as g1:
        twice(x, tmp)
        axpy(1.0, tmp, out1)
    with gr.graph() as g2:
        twice(x, tmp)
        axpy(1.0, tmp, out2)
    buf = tmp._buffer
    del tmp
    gc.collect()
    g1.release()
    gr.sync()
    churn = [gr.ndarray(gr.f32, 300) for _ in range(6)]
    assert all(c._buffer is not buf for c in churn)
    g2.replay()
    np.testing.assert_allclose(out2.to_numpy(), _f(2) * a, rtol=1e-6)
    g2.release()
    gr.sync()
    assert any(gr.ndarray(gr.f32, 300)._buffer is buf for _ in range(8))


def test_a_graph_longer_than_one_generated_chunk(rt, rng):
    from gfxrt.engine.recorder import CHUNK
    x = _dev(np.zeros(4, np.float32))
    y = gr.ndarray(gr.f32, 4)
    with gr.graph() as g:
        for k in range(CHUNK + 10):
            if k % 1000 == 0:
                axpy(1.0, y, x)
            else:
                step_in_place(y)
    assert len(g._encoders) == 2
    g.replay()
    want_x, yv = np.zeros(4), np.zeros(4)
    for k in range(CHUNK + 10):
        if k % 1000 == 0:
            want_x = want_x + yv
        else:
            yv = 0.5 * yv + 1.0
    np.testing.assert_allclose(x.to_numpy(), want_x, rtol=1e-6)
    np.testing.assert_allclose(y.to_numpy(), yv, rtol=1e-6)


def test_replay_inside_an_eager_tape_raises(rt, rng):
    x = gr.ndarray(gr.f32, 4, needs_grad=True)
    loss = gr.ndarray(gr.f32, (), needs_grad=True)
    with gr.graph() as g:
        step_in_place(x)
    with pytest.raises(gr.GfxrtError, match="inside a gr.Tape"):
        with gr.Tape(loss):
            g.replay()


# -- host work inside capture ------------------------------------------------------------------
HOST_WORK = {
    "numpy argument": lambda x: step_in_place(np.ones(4, np.float32)),
    "to_numpy": lambda x: x.to_numpy(),
    "return value": lambda x: _returning_launcher().launch(()),
    "sync": lambda x: gr.sync(),
    "from_numpy": lambda x: x.from_numpy(np.ones(12, np.float32)),
    "fill with an array": lambda x: x.fill(np.arange(12, dtype=np.float32)),
    "copy_tensors upload": lambda x: gr.copy_tensors([(x, np.ones(12, np.float32))]),
    "copy_tensors download": lambda x: gr.copy_tensors([(np.ones(12, np.float32), x)]),
}


@pytest.mark.parametrize("what", sorted(HOST_WORK))
def test_host_work_inside_capture_raises_and_the_runtime_stays_usable(rt, rng, what):
    a = _rand(rng, 12)
    x = _dev(a)
    gr.sync()
    pinned = rt.stats()["pinned"]
    with pytest.raises(gr.GraphCaptureError, match="inside gr.graph"):
        with gr.graph() as g:
            step_in_place(x)
            HOST_WORK[what](x)
    assert g.state == "abandoned" and rt.capture is None and not rt._slow
    assert rt.stats()["pinned"] == pinned  # everything unpinned
    with pytest.raises(gr.GraphCaptureError, match="abandoned"):
        g.replay()
    np.testing.assert_array_equal(x.to_numpy(), a)  # the recorded launch never ran
    step_in_place(x)                                # eager work goes on
    np.testing.assert_allclose(x.to_numpy(), _f(0.5) * a + 1, rtol=1e-6)
    if what == "return value":
        assert _returning_launcher().launch(()) == 1.5


def test_work_after_a_caught_capture_error_keeps_raising_until_the_block_ends(rt, rng):
    x = _dev(_rand(rng, 4))
    gr.sync()
    live = rt.stats()["live_bytes"]
    with gr.graph() as g:
        with pytest.raises(gr.GraphCaptureError):
            x.to_numpy()
        with pytest.raises(gr.GraphCaptureError, match="abandoned"):
            step_in_place(x)
        with pytest.raises(gr.GraphCaptureError, match="abandoned"):
            x.copy_from(x, src_offset=0, dst_offset=1, count=3)  # allocates a temporary first
        with pytest.raises(gr.GraphCaptureError, match="abandoned"):
            x.fill(2.0)                                           # allocates its parameters first
    assert g.state == "abandoned"
    with pytest.raises(gr.GraphCaptureError):
        g.replay()
    gr.sync()
    assert rt.stats()["live_bytes"] == live  # nothing leaked


def test_an_exception_inside_the_block_abandons_the_capture(rt, rng):
    x = _dev(_rand(rng, 4))
    pinned = rt.stats()["pinned"]
    with pytest.raises(KeyError):
        with gr.graph() as g:
            step_in_place(x)
            raise KeyError("user error")
    assert g.state == "abandoned" and rt.stats()["pinned"] == pinned and rt.capture is None
    with pytest.raises(TypeError):  # a wrong argument inside capture raises before recording
        with gr.graph() as g2:
            step_in_place(x, 1.0)
    assert g2.state == "abandoned"


def test_captures_do_not_nest_but_replays_inside_a_capture_are_recorded(rt, rng):
    a = _rand(rng, 9)
    x, f = _dev(a), gr.ndarray(gr.f32, 9)
    with gr.graph() as inner:
        step_in_place(x)
        f.fill(3.0)  # the fill's parameters belong to the inner graph
    with gr.graph() as outer:
        inner.replay(2)
        scale(x, 2.0)
        with pytest.raises(gr.GraphCaptureError, match="nest"):
            with gr.graph():
                pass
    np.testing.assert_array_equal(x.to_numpy(), a)
    inner.release()  # the outer graph keeps what it recorded from the inner one
    gr.sync()
    churn = [gr.ndarray(gr.f32, 64) for _ in range(8)]
    for c in churn:
        c.fill(-1.0)
    outer.replay()
    want = 2 * (0.5 * (0.5 * a.astype(np.float64) + 1) + 1)
    np.testing.assert_allclose(x.to_numpy(), want, rtol=1e-6)
    np.testing.assert_array_equal(f.to_numpy(), np.full(9, 3.0, np.float32))


# -- the ping-pong pitfall -----------------------------------------------------------------------
def test_ping_pong_pitfall_and_the_in_place_fix(rt, rng):
    a0 = _rand(rng, 64)
    want = a0.astype(np.float64)
    for _ in range(3):
        want = 0.5 * want + 1.0

    # eager: swapping the Python names between steps works
    a, b = _dev(a0), gr.ndarray(gr.f32, 64)
    for _ in range(3):
        step(a, b)
        a, b = b, a
    np.testing.assert_allclose(a.to_numpy(), want, rtol=1e-6)

    # the pitfall: a replay binds the arrays it captured; the host-side swap is invisible
    a, b = _dev(a0), gr.ndarray(gr.f32, 64)
    with gr.graph() as g:
        step(a, b)
    for _ in range(3):
        g.replay()
        a, b = b, a
    got = a.to_numpy()  # after 3 swaps `a` names the captured dst: one step from a0, three times over
    np.testing.assert_allclose(got, 0.5 * a0 + 1.0, rtol=1e-6)
    assert not np.allclose(got, want)

    # fix 1: one read-write array updated in place
    x = _dev(a0)
    with gr.graph() as g1:
        step_in_place(x)
    g1.replay(3)
    np.testing.assert_allclose(x.to_numpy(), want, rtol=1e-6)

    # fix 2: keep the ping-pong, copy the new state back into the captured input on the device
    a, b = _dev(a0), gr.ndarray(gr.f32, 64)
    with gr.graph() as g2:
        step(a, b)
        a.copy_from(b)
    g2.replay(3)
    np.testing.assert_allclose(a.to_numpy(), want, rtol=1e-6)


# -- devices without immediates, profiling, device-side status, gr.init() -------------------------
def test_replay_without_immediates_uses_the_graphs_own_params(rng, monkeypatch):
    import dataclasses
    dev = gr.device()
    monkeypatch.setattr(dev, "target", dataclasses.replace(dev.target, features=dev.target.features - {"immediates"}))

    @gr.kernel
    def mad(x: gr.types.ndarray(dtype=gr.f32, ndim=1), k: gr.f32, c: gr.i32):
        for i in range(x.shape[0]):
            x[i] = x[i] * k + c

    x = gr.ndarray(gr.f32, 37)
    with gr.graph() as g:
        for k in range(1, 6):
            mad(x, 1.0 + 0.5 * (k % 3), k)
    assert next(iter(mad._cache.values())).spec.params_uniform
    with gr.graph() as g2:  # a replay inside a capture re-slots the params
        g.replay(2)
    want = np.zeros(37, np.float32)
    for _ in range(3):
        for k in range(1, 6):
            want = want * np.float32(1.0 + 0.5 * (k % 3)) + k
    g.replay()
    g2.replay()
    np.testing.assert_allclose(x.to_numpy(), want, rtol=1e-6)


def test_profile_times_replayed_launches(rt, rng):
    x, y = _dev(_rand(rng, 64)), _dev(_rand(rng, 64))
    with gr.graph() as g:
        axpy(1.0, x, y)
        scale(x, 0.5)
        y.copy_from(x)
    with gr.profile() as p:
        g.replay(3)
    names = [n for n, _ in p.records]
    assert names.count("axpy") == 3 and names.count("scale") == 3


def test_device_status_of_a_replayed_kernel_raises_at_sync(rt):
    from gfxrt.compiler.spec import STATUS_OUT_OF_BOUNDS, BindingSpec
    from gfxrt.compiler.types import u32
    from test_runtime import _launcher
    wgsl = """@group(0) @binding(0) var<storage, read_write> st: array<atomic<u32>>;
@compute @workgroup_size(1) fn main() { atomicOr(&st[0], 1u); atomicAdd(&st[1], 1u); }"""
    b = BindingSpec(0, "status", u32, "status", None, read_only=False, atomic=True)
    L = _launcher(wgsl, [b], {"status": 8}, asserts=((STATUS_OUT_OF_BOUNDS, "x[i] out of bounds at k.py:7"),))
    with gr.graph() as g:
        L.launch(())
    gr.sync()  # capturing ran nothing: no error
    g.replay(2)
    with pytest.raises(gr.OutOfBoundsError, match=r"k.py:7 \(2 time\(s\)\)"):
        gr.sync()
    gr.sync()


def test_graph_survives_a_retarget_and_is_rejected_on_a_new_device(rng, monkeypatch):
    from gfxrt.engine import context
    a = _rand(rng, 4)
    x = _dev(a)
    with gr.graph() as g:
        step_in_place(x)
    gr.init(**vars(context._state["options"]))  # same request: the device stays, kernels recompile
    g.replay()
    np.testing.assert_allclose(x.to_numpy(), _f(0.5) * a + 1, rtol=1e-6)
    # another runtime (what gr.init() on another adapter, or after gr.reset(), opens; not opened
    # here: module-level fields of other test files live on this device)
    monkeypatch.setitem(context._state, "runtime", object())
    with pytest.raises(gr.GfxrtError, match="gr.init"):
        g.replay()
