"""GfxRuntime: the open pass, the retirement FIFO, the blitter, the memory pool, errors."""
import numpy as np
import pytest

import gfxrt as gr
from gfxrt.engine import ffi


@gr.kernel
def axpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


@gr.kernel
def copy(src: gr.types.ndarray(dtype=gr.f32, ndim=1), dst: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(src.shape[0]):
        dst[i] = src[i]


@gr.kernel
def scale_i(x: gr.types.ndarray(dtype=gr.i32, ndim=1), k: gr.i32):
    for i in range(x.shape[0]):
        x[i] = x[i] * k


def _rand(rng, n):
    return (rng.random(n, dtype=np.float32) + 0.5).astype(np.float32)


def _dev(a):
    x = gr.ndarray(gr.f32, a.shape)
    x.from_numpy(a)
    return x


@pytest.fixture
def rt():
    r = gr.runtime()
    r.synchronize()
    return r


@pytest.fixture
def waits(monkeypatch):
    """Submission indices the runtime waited for (None = wait idle)."""
    seen = []
    real = ffi.wait

    def wait(device, index=None):
        seen.append(index)
        real(device, index)
    monkeypatch.setattr(ffi, "wait", wait)
    return seen


# -- the retirement FIFO -------------------------------------------------------------------
def test_flush_waits_only_when_full_and_only_for_the_oldest(rt, rng, waits):
    x, y = _dev(_rand(rng, 64)), _dev(_rand(rng, 64))
    rt.synchronize()
    waits.clear()
    indices = []
    for k in range(rt.PENDING_RETIREMENTS_DEPTH):
        axpy(1.0, x, y)
        rt.ctx_buffers.append(rt.pool.alloc(256))  # a transient buffer of this batch
        rt.flush()
        indices.append(rt.pending_retirements[-1][0])
        assert len(rt.pending_retirements) == k + 1
    assert waits == []  # the FIFO had room: no flush waited
    assert indices == sorted(indices) and len(set(indices)) == len(indices)
    oldest = rt.pending_retirements[0]
    before = rt.stats()
    axpy(1.0, x, y)
    rt.flush()
    assert waits == [oldest[0]]  # exactly one wait, on the oldest submission
    assert len(rt.pending_retirements) == rt.PENDING_RETIREMENTS_DEPTH
    assert rt.pending_retirements[0] is not oldest and oldest not in rt.pending_retirements
    after = rt.stats()
    # the oldest batch left the live set (back to the pool, or destroyed at once if this
    # flush's trim took it: idle pooled buffers are not live, so trimming does not count here)
    assert before["live_bytes"] - after["live_bytes"] == 256


def test_fifo_never_exceeds_depth_in_a_long_loop(rt, rng, monkeypatch):
    monkeypatch.setattr(rt, "AUTO_FLUSH_DISPATCHES", 3)
    x, y = _dev(_rand(rng, 32)), _dev(_rand(rng, 32))
    depth = 0
    for _ in range(60):
        axpy(0.5, x, y)
        copy(y, x)
        depth = max(depth, len(rt.pending_retirements))
        assert len(rt.pending_retirements) <= rt.PENDING_RETIREMENTS_DEPTH
    assert depth == rt.PENDING_RETIREMENTS_DEPTH
    assert rt.stats()["submissions"] >= 120 // 3 - 1


def test_readback_drains_fifo_and_ctx_buffers(rt, rng):
    xs = _rand(rng, 100)
    x, y = _dev(xs), gr.ndarray(gr.f32, 100)
    for _ in range(2):
        copy(x, y)
        rt.ctx_buffers.append(rt.pool.alloc(512))
        rt.flush()
    copy(xs, y)  # a numpy argument: a transient buffer in ctx_buffers
    assert rt.pending_retirements and rt.ctx_buffers
    np.testing.assert_array_equal(y.to_numpy(), xs)
    assert len(rt.pending_retirements) == 0 and rt.ctx_buffers == []
    assert rt.stats()["pending_buffers"] == 0


def test_written_numpy_argument_readback_leaves_everything_idle(rt, rng):
    x = _dev(_rand(rng, 50))
    rt.ctx_buffers.append(rt.pool.alloc(256))
    rt.flush()
    out = np.zeros(50, np.float32)
    copy(x, out)
    np.testing.assert_array_equal(out, x.to_numpy())
    assert rt.pending_retirements == type(rt.pending_retirements)() and not rt.ctx_buffers
    assert not rt.has_pending_work


def test_sync_clears_everything(rt, rng):
    x, y = _dev(_rand(rng, 10)), gr.ndarray(gr.f32, 10)
    for _ in range(5):
        copy(x, y)
        copy(_rand(rng, 10), y)
        rt.flush()
    copy(x, y)
    assert rt.has_pending_work and rt.pending_retirements
    gr.sync()
    s = rt.stats()
    assert (s["ctx_buffers"], s["pending_retirements"], s["pending_buffers"], s["recorded_dispatches"]) == (0, 0, 0, 0)
    assert not rt.has_pending_work


def test_ten_thousand_numpy_launches_stay_bounded(rt, rng):
    xs = _rand(rng, 256)
    y = gr.ndarray(gr.f32, 256)
    copy(xs, y)
    gr.sync()
    base = rt.stats()["live_bytes"]
    allocs0 = rt.stats()["pool_allocations"]
    bound = rt.PENDING_RETIREMENTS_DEPTH * rt.AUTO_FLUSH_BUFFERS + rt.AUTO_FLUSH_BUFFERS
    worst, live = 0, set()
    for k in range(10_000):
        copy(xs, y)  # read-only numpy argument: no readback, no sync
        s = rt.stats()
        worst = max(worst, s["ctx_buffers"] + s["pending_buffers"])
        if k >= 1000:
            live.add(s["live_bytes"])
    assert worst <= bound
    assert max(live) - base <= bound * xs.nbytes  # device memory bounded by the FIFO, not by the loop
    assert len(live) < 1000  # and it cycles rather than grows
    assert rt.stats()["pool_allocations"] - allocs0 < bound + 16
    gr.sync()
    assert rt.stats()["live_bytes"] == base
    np.testing.assert_array_equal(y.to_numpy(), xs)


def test_written_numpy_launches_keep_memory_flat_and_reuse_bind_groups(rt, rng):
    xs, out = _rand(rng, 300), np.zeros(300, np.float32)
    axpy(1.0, xs, out)
    base = rt.stats()
    launcher = next(iter(axpy._cache.values())).launcher
    groups = len(launcher.bind_cache)
    for _ in range(200):
        axpy(1.0, xs, out)
    s = rt.stats()
    assert s["live_bytes"] == base["live_bytes"] and s["pool_allocations"] == base["pool_allocations"]
    assert len(launcher.bind_cache) == groups  # same pooled buffers -> same cached bind group
    np.testing.assert_allclose(out, 201 * xs, rtol=1e-5)


def test_auto_flush_bounds_recorded_work(rt, rng):
    x = _dev(_rand(rng, 8))
    subs = rt.stats()["submissions"]
    for _ in range(3 * rt.AUTO_FLUSH_DISPATCHES + 1):
        copy(x, x)
        assert rt.stats()["recorded_dispatches"] < rt.AUTO_FLUSH_DISPATCHES
    assert rt.stats()["submissions"] - subs == 3


# -- blitter ordering ----------------------------------------------------------------------
def test_upload_keeps_program_order_with_recorded_launches(rt, rng):
    a, b = _rand(rng, 77), _rand(rng, 77)
    x, y = _dev(a), gr.ndarray(gr.f32, 77)
    gr.sync()
    copy(x, y)        # recorded, not submitted
    x.from_numpy(b)   # must land after the copy above
    z = gr.ndarray(gr.f32, 77)
    copy(x, z)
    x.fill(3.0)
    w = gr.ndarray(gr.f32, 77)
    copy(x, w)
    x.fill(0)
    np.testing.assert_array_equal(y.to_numpy(), a)
    np.testing.assert_array_equal(z.to_numpy(), b)
    np.testing.assert_array_equal(w.to_numpy(), np.full(77, 3.0, np.float32))
    np.testing.assert_array_equal(x.to_numpy(), np.zeros(77, np.float32))


def test_non_contiguous_and_converted_numpy_arguments(rng):
    base = rng.integers(-9, 9, size=40, dtype=np.int32)
    view = base.copy()[::2]  # non-contiguous, written
    want = view * 3
    scale_i(view, 3)
    np.testing.assert_array_equal(view, want)
    xs = _rand(rng, 33)
    out = np.zeros(66, np.float32)[::2]
    copy(xs, out)
    np.testing.assert_array_equal(out, xs)


def test_odd_byte_sizes_round_trip(rng):
    a = gr.ndarray(gr.f16, 7)
    data = rng.random(7).astype(np.float16)
    a.from_numpy(data)
    np.testing.assert_array_equal(a.to_numpy(), data)


# -- memory pool ---------------------------------------------------------------------------
def test_pool_reuses_released_buffers_zeroed(rt, rng):
    x = gr.ndarray(gr.f32, 1000)
    x.fill(5.0)
    buf = x._buffer
    gr.sync()
    del x
    gr.sync()  # the freed array's buffer retires through the FIFO into the pool
    pooled = rt.stats()["pooled_bytes"]
    assert pooled >= 4000
    reuses = rt.stats()["pool_reuses"]
    y = gr.ndarray(gr.f32, 1000)
    assert y._buffer is buf and rt.stats()["pool_reuses"] == reuses + 1
    assert rt.stats()["pooled_bytes"] == pooled - buf.size
    np.testing.assert_array_equal(y.to_numpy(), np.zeros(1000, np.float32))  # reused memory comes zeroed


def test_freed_array_is_not_reused_while_recorded_work_uses_it(rt, rng):
    xs = _rand(rng, 500)
    x, y = _dev(xs), gr.ndarray(gr.f32, 500)
    gr.sync()
    copy(x, y)  # recorded, not submitted
    del x
    z = gr.ndarray(gr.f32, 500)  # must not get x's buffer (zeroing it would race the copy)
    z.from_numpy(np.ones(500, np.float32))
    np.testing.assert_array_equal(y.to_numpy(), xs)


def test_pinned_buffer_is_never_handed_out(rt):
    x = gr.ndarray(gr.f32, 2000)
    buf = x._buffer
    rt.pool.pin(buf)
    del x
    gr.sync()
    others = [gr.ndarray(gr.f32, 2000) for _ in range(3)]
    assert all(o._buffer is not buf for o in others)
    assert rt.pool.unpin(buf)  # released while pinned: back through ctx_buffers
    rt.free_later(buf)
    gr.sync()
    assert gr.ndarray(gr.f32, 2000)._buffer is buf


def test_bucket_sizes():
    from gfxrt.engine.memory import bucket_size
    assert bucket_size(1, 1 << 30) == 256
    assert bucket_size(1000, 1 << 30) == 1024
    assert bucket_size((1 << 20) + 1, 1 << 30) == (1 << 20) + (1 << 18)
    for n in (3_000_001, 77_777_777):
        assert n <= bucket_size(n, 1 << 30) <= n * 1.125 + 4
    assert bucket_size(1 << 27, 1 << 27) == 1 << 27


def test_trim_gives_memory_back_and_drops_cached_bind_groups(rt, rng):
    xs = _rand(rng, 64)
    out = np.zeros(64, np.float32)
    copy(xs, out)
    launcher = next(iter(copy._cache.values())).launcher
    assert launcher.bind_cache
    assert rt.empty_pool() > 0
    assert rt.stats()["pooled_bytes"] == 0 and not launcher.bind_cache
    copy(xs, out)
    np.testing.assert_array_equal(out, xs)


# -- errors --------------------------------------------------------------------------------
def test_allocation_over_device_limits_raises_memory_error(rt, monkeypatch):
    monkeypatch.setattr(rt.pool, "max_buffer", 1 << 20)  # (arrays past one binding are bound in windows)
    with pytest.raises(MemoryError, match="max-buffer-size"):
        gr.ndarray(gr.f32, (1 << 18) + 1)
    monkeypatch.undo()
    x = gr.ndarray(gr.f32, 4)  # still usable
    x.fill(1.0)
    assert x.to_numpy().sum() == 4


def test_device_out_of_memory_trims_retries_then_raises(rt, monkeypatch):
    import wgpu
    x = gr.ndarray(gr.f32, 5000)
    del x
    gr.sync()
    assert rt.stats()["pooled_bytes"] > 0
    calls = []

    def oom(**kw):
        calls.append(kw["size"])
        raise wgpu.GPUOutOfMemoryError("Out of memory")
    monkeypatch.setattr(rt.device, "create_buffer", oom)
    with pytest.raises(MemoryError, match="out of memory"):
        gr.ndarray(gr.f32, 100_000)
    assert len(calls) == 2 and rt.stats()["pooled_bytes"] == 0  # trimmed, then retried once
    monkeypatch.undo()
    y = gr.ndarray(gr.f32, 100_000)
    y.fill(2.0)
    assert y.to_numpy()[-1] == 2.0


def test_workgroup_counts_over_65535_are_capped_and_exact(rng, monkeypatch):
    from gfxrt.engine import launch
    monkeypatch.setattr(launch, "CPU_MAX_GROUPS", ffi.MAX_WORKGROUPS)  # lavapipe caps lower by default
    monkeypatch.setattr(launch, "SPREAD", 1)  # GPUs spread this n over fewer groups (tests/test_launch_spread.py)
    axpy._cache.clear()
    axpy._fast.clear()
    n = ffi.MAX_WORKGROUPS * gr.device().target.workgroup_size + 4099
    xs = np.arange(n, dtype=np.float32)
    x, y = _dev(xs), gr.ndarray(gr.f32, n)
    axpy(2.0, x, y)
    launcher = next(iter(axpy._cache.values())).launcher
    assert max(max(g) for g in launcher.groups_cache.values()) == ffi.MAX_WORKGROUPS
    out = y.to_numpy()
    np.testing.assert_array_equal(out[-5000:], 2 * xs[-5000:])
    np.testing.assert_array_equal(out[:100], 2 * xs[:100])


@gr.kernel
def block_ids(b: gr.types.ndarray(dtype=gr.i32, ndim=1), t: gr.types.ndarray(dtype=gr.i32, ndim=1)):
    for i in range(b.shape[0]):
        b[i] = gr.simt.block.block_idx()
        t[i] = gr.simt.block.global_thread_idx()


def test_block_and_thread_indices_in_grid_stride_loops():
    n = ffi.MAX_WORKGROUPS * gr.device().target.workgroup_size + 4099
    b, t = gr.ndarray(gr.i32, n), gr.ndarray(gr.i32, n)
    block_ids(b, t)
    wg = gr.device().target.workgroup_size
    np.testing.assert_array_equal(b.to_numpy(), np.arange(n) // wg)  # logical, not the workgroup id
    np.testing.assert_array_equal(t.to_numpy(), np.arange(n))


def test_aliased_arguments_read_only_and_writable(rng):
    xs = _rand(rng, 100)
    x = _dev(xs)
    axpy(2.0, x, x)  # x bound read-only and read_write in one dispatch: the all-read_write variant
    np.testing.assert_allclose(x.to_numpy(), 3 * xs, rtol=1e-6)
    copy(x, x)
    np.testing.assert_allclose(x.to_numpy(), 3 * xs, rtol=1e-6)


def test_destroyed_buffer_is_caught_before_the_queue(rt, rng):
    x, y = _dev(_rand(rng, 16)), gr.ndarray(gr.f32, 16)
    copy(x, y)
    gr.sync()
    x._buffer._gfxrt_destroyed = True  # as the pool marks a buffer it destroyed
    x._buffer.destroy()
    with pytest.raises(gr.GfxrtError, match="destroyed"):
        copy(x, gr.ndarray(gr.f32, 16))
    gr.sync()
    copy(y, y)  # the runtime is still usable


def test_bad_scalars_raise_on_fast_and_checked_paths(rng):
    x = gr.ndarray(gr.i32, 4)
    scale_i(x, 2)
    for _ in range(2):  # the second call takes the cached fast path first
        with pytest.raises(ValueError):
            scale_i(x, 2**40)
        with pytest.raises(TypeError):
            scale_i(x, 1.5)
    with pytest.raises(ValueError, match="read-only"):
        ro = np.zeros(4, np.int32)
        ro.flags.writeable = False
        scale_i(ro, 2)


@gr.kernel
def add_trailing_template(x: gr.types.ndarray(dtype=gr.f32, ndim=1), k: gr.template()):
    for i in range(x.shape[0]):
        x[i] += k


def test_trailing_template_argument_on_the_fast_path():
    # the generated fast launcher takes every argument, also template values that no
    # binding or immediate uses
    x = gr.ndarray(gr.f32, 8)
    for _ in range(3):
        add_trailing_template(x, 1.0)
    np.testing.assert_array_equal(x.to_numpy(), np.full(8, 3.0, np.float32))


@gr.kernel
def total_of(x: gr.types.ndarray(dtype=gr.f32, ndim=1)) -> gr.f32:
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s


def test_return_value_on_repeated_calls_with_device_arrays():
    # a repeated call shape takes the cached launcher, which must still read the result back
    x = gr.ndarray(gr.f32, 10)
    for k in range(3):
        x.fill(float(k + 1))
        assert total_of(x) == 10.0 * (k + 1)


def test_init_with_the_same_adapter_keeps_arrays(rng):
    xs = _rand(rng, 8)
    kept = _dev(xs)
    rt = gr.runtime()
    gr.init(debug=True)  # new options, same adapter: same device and runtime
    try:
        assert gr.runtime() is rt and gr.device().target.debug
        out = np.zeros(8, np.float32)
        copy(kept, out)  # recompiled for the new target, old array still valid
        np.testing.assert_array_equal(out, xs)
    finally:
        gr.init()
    assert not gr.device().target.debug


def test_init_naming_the_same_adapter_keeps_the_device_and_arrays(rng):
    """The adapter that serves the request decides, not how the request is written: naming the
    adapter gfxrt runs on, then asking for the default again, keep the device and every array on it
    (an explicit name opened a new device once, and every field of the process went stale)."""
    xs = _rand(rng, 8)
    kept = _dev(xs)
    rt = gr.runtime()
    gr.init(adapter=gr.device().name)
    try:
        assert gr.runtime() is rt
    finally:
        gr.init()
    assert gr.runtime() is rt
    out = np.zeros(8, np.float32)
    copy(kept, out)
    np.testing.assert_array_equal(out, xs)


NEW_DEVICE = """
import numpy as np, gfxrt as gr
@gr.kernel
def copy(src: gr.types.ndarray(dtype=gr.f32, ndim=1), dst: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(src.shape[0]):
        dst[i] = src[i]
old = gr.ndarray(gr.f32, 8)
copy(old, old)
gr.reset()
gr.init()  # a new device
for what in (lambda: copy(old, gr.ndarray(gr.f32, 8)), old.to_numpy):
    try:
        what()
        print("no error")
    except gr.GfxrtError as e:
        print("refused" if "gr.init" in str(e) else e)
fresh = gr.ndarray(gr.f32, 8)
fresh.from_numpy(np.arange(8, dtype=np.float32))
out = np.zeros(8, np.float32)
copy(fresh, out)  # kernels recompile for the new device
print("fresh", out.sum())
"""


def test_arrays_from_a_previous_device_are_rejected(tmp_path):
    """A process of its own: a new device in this one would leave the module-level fields of
    every other test file on the old device."""
    lines = _run_program(tmp_path, NEW_DEVICE).split()
    assert lines == ["refused", "refused", "fresh", "28.0"], lines


def _run_program(tmp_path, source: str) -> str:
    import os
    import subprocess
    import sys
    script = tmp_path / "prog.py"
    script.write_text(source)
    root = str(__import__("pathlib").Path(__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


DEVICE_LOSS = """
import numpy as np, gfxrt as gr
@gr.kernel
def copy(src: gr.types.ndarray(dtype=gr.f32, ndim=1), dst: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(src.shape[0]):
        dst[i] = src[i]
@gr.kernel
def neg(src: gr.types.ndarray(dtype=gr.f32, ndim=1), dst: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(src.shape[0]):
        dst[i] = -src[i]
x, y = gr.ndarray(gr.f32, 8), gr.ndarray(gr.f32, 8)
copy(x, y); gr.sync()
copy(x, y)                       # recorded, then the device goes away
gr.runtime().device.destroy()
copy(x, y)                       # recorded only: the loss shows at the next sync point
for what in (gr.sync, lambda: y.to_numpy(), lambda: gr.ndarray(gr.f32, 4), lambda: copy(x, y),
             lambda: neg(x, y)):  # (a first compile on a lost device: lost, not a compiler bug)
    try:
        what()
        print("no error")
    except gr.DeviceLostError:
        print("lost")
gr.init()                        # a new device: work goes on
a = gr.ndarray(gr.f32, 8); a.fill(2.0); b = np.zeros(8, np.float32); copy(a, b)
print("recovered", b.sum())
"""


def test_device_loss_raises_and_init_recovers(tmp_path):
    out = _run_program(tmp_path, DEVICE_LOSS)
    assert out.split()[:5] == ["lost"] * 5, out
    assert "recovered 16.0" in out


# -- profiler ------------------------------------------------------------------------------
def test_profile_times_every_launch_on_the_device(rng, capsys):
    n = 1 << 14
    x, y = _dev(_rand(rng, n)), gr.ndarray(gr.f32, n)
    small = gr.ndarray(gr.f32, 10)
    with gr.profile() as p:
        for _ in range(5):
            axpy(2.0, x, y)
        for _ in range(3):
            copy(small, small)
    s = p.summary()
    assert s["axpy"]["count"] == 5 and s["copy"]["count"] == 3
    for row in s.values():
        assert row["min"] <= row["mean"] <= row["max"]
        assert row["total"] == pytest.approx(row["mean"] * row["count"])
        if p.mode != "host":
            assert 0 < row["min"] < 1.0
    text = p.table()
    out = capsys.readouterr().out
    assert "axpy" in out and "copy" in out and text in out
    np.testing.assert_allclose(y.to_numpy(), 10 * x.to_numpy(), rtol=1e-5)
    assert gr.runtime().profiler is None


def test_profile_host_mode_and_capacity_split(rng, monkeypatch):
    import gfxrt.profiler as prof
    monkeypatch.setattr(prof, "CAPACITY", 4)
    x = _dev(_rand(rng, 64))
    with gr.profile() as p:
        for _ in range(10):  # more dispatches than the query set holds: flushes in between
            copy(x, x)
    assert p.summary()["copy"]["count"] == 10
    p2 = gr.profile()
    p2.mode = "host"
    with p2:
        copy(x, x)
        copy(x, x)
    assert p2.summary()["copy"]["count"] == 2 and p2.summary()["copy"]["min"] > 0


@pytest.mark.parametrize("mode", ["encoder", "span-pass", "host"])
def test_profile_whole_submissions_keeps_the_fast_path(rng, mode, capsys):
    """gr.profile(per_kernel=False): launches stay on the fast path (nothing is inserted
    between dispatches), every submission is timed, and the results are right."""
    feats = gr.runtime().dev.features
    if mode == "encoder" and "timestamp-query-inside-encoders" not in feats or \
            mode == "span-pass" and "timestamp-query" not in feats:
        pytest.skip(f"no timestamps for {mode!r} here")
    n = 1 << 12
    x, y = _dev(_rand(rng, n)), gr.ndarray(gr.f32, n)
    axpy(2.0, x, y)
    gr.sync()
    rt = gr.runtime()
    p = gr.profile(per_kernel=False)
    p.mode = mode
    with p:
        assert not rt._slow and rt.profiler is None  # the fast path records as without profiling
        with pytest.raises(RuntimeError, match="already active"):
            gr.profile().__enter__()
        for _ in range(4):
            axpy(2.0, x, y)
        rt.flush()
        y2 = gr.ndarray(gr.f32, n)
        y2.from_numpy(np.ones(n, np.float32))  # a copy between passes, then more launches
        for _ in range(3):
            axpy(1.0, x, y2)
    assert rt.span_profiler is None and not rt._slow
    np.testing.assert_allclose(y.to_numpy(), 10 * x.to_numpy(), rtol=1e-5)
    np.testing.assert_allclose(y2.to_numpy(), 1 + 3 * x.to_numpy(), rtol=1e-5)
    assert len(p.batches) >= (1 if mode == "host" else 2) and all(0 < t < 1.0 for t in p.batches)
    assert p.total_s == pytest.approx(sum(p.batches)) and p.records == [("(all kernels)", p.total_s)]
    assert p.summary()["(all kernels)"]["count"] == len(p.batches)
    assert "submission" in p.table() and "submission" in capsys.readouterr().out


def test_profile_whole_submissions_reads_out_when_the_slots_run_out(rng, monkeypatch):
    import gfxrt.profiler as prof
    if "timestamp-query" not in gr.runtime().dev.features:
        pytest.skip("no timestamp queries")
    monkeypatch.setattr(prof.SpanProfile, "CAPACITY", 3)
    x = _dev(_rand(rng, 64))
    rt = gr.runtime()
    with gr.profile(per_kernel=False) as p:
        for _ in range(7):
            copy(x, x)
            rt.flush()
    assert len(p.batches) == 7 and p.untimed == 0
    # the per-kernel profiler reports its total too
    with gr.profile() as q:
        copy(x, x)
    assert q.total_s == pytest.approx(sum(t for _, t in q.records)) and q.total_s > 0


# -- the runtime side of the status protocol and of return values (hand-written specs) ------
def _launcher(wgsl, bindings, internal, **kw):
    from gfxrt.compiler.spec import KernelSpec, TaskSpec

    from gfxrt.engine.launch import Launcher
    from gfxrt.engine.program import Program
    from gfxrt.kernel import BINDING_RESOLVERS, Compiled
    spec = KernelSpec("handmade", wgsl, tuple(bindings), (), 0, (TaskSpec("main", "serial", 1),),
                      internal=internal, **kw)
    compiled = Compiled(spec, Program(gr.device().device, spec))
    return Launcher(gr.runtime(), compiled, BINDING_RESOLVERS)


def test_status_words_raise_at_sync_then_clear():
    from gfxrt.compiler.spec import STATUS_OUT_OF_BOUNDS, BindingSpec
    from gfxrt.compiler.types import u32
    wgsl = """@group(0) @binding(0) var<storage, read_write> st: array<atomic<u32>>;
@compute @workgroup_size(1) fn main() { atomicOr(&st[0], 1u); atomicAdd(&st[2], 1u); }"""
    b = BindingSpec(0, "status", u32, "status", None, read_only=False, atomic=True)
    L = _launcher(wgsl, [b], {"status": 12}, asserts=((STATUS_OUT_OF_BOUNDS, "first site"),
                                                        (STATUS_OUT_OF_BOUNDS, "x[i] out of bounds at k.py:3")))
    L.launch(())
    L.launch(())
    with pytest.raises(gr.OutOfBoundsError, match=r"k.py:3 \(2 time\(s\)\)"):
        gr.sync()
    gr.sync()  # the words were zeroed: the next sync is clean


def test_return_values_are_read_back_and_decoded():
    from gfxrt.compiler.spec import BindingSpec
    from gfxrt.compiler.types import f32, i32, u1, u32
    wgsl = """@group(0) @binding(0) var<storage, read_write> res: array<u32>;
@compute @workgroup_size(1) fn main() { res[0] = bitcast<u32>(1.5f); res[1] = bitcast<u32>(-7i); res[2] = 1u; }"""
    b = BindingSpec(0, "result", u32, "result", None, read_only=False, written=True)
    L = _launcher(wgsl, [b], {"result": 12}, returns=(f32, i32, u1))
    assert L.launch(()) == (1.5, -7, True)
    rt = gr.runtime()
    assert not rt.pending_retirements and not rt.ctx_buffers  # a return value is a readback


# -- devices without immediates: the params ring ---------------------------------------------
def test_params_ring_without_immediates_keeps_each_launchs_scalars(rng, monkeypatch):
    import dataclasses
    dev = gr.device()
    monkeypatch.setattr(dev, "target", dataclasses.replace(dev.target, features=dev.target.features - {"immediates"}))

    @gr.kernel
    def mad(x: gr.types.ndarray(dtype=gr.f32, ndim=1), k: gr.f32, c: gr.i32):
        for i in range(x.shape[0]):
            x[i] = x[i] * k + c

    rt = gr.runtime()
    monkeypatch.setattr(rt, "UNIFORM_RING_BYTES", 4 * 256)  # a ring full after 4 launches: flushes in between
    x = gr.ndarray(gr.f32, 37)
    want = np.zeros(37, np.float32)
    for k in range(1, 11):  # ten launches, each with its own scalars, recorded without a sync
        mad(x, 1.0 + 0.5 * (k % 3), k)
        want = want * np.float32(1.0 + 0.5 * (k % 3)) + k
    spec = next(iter(mad._cache.values())).spec
    assert spec.params_uniform and "var<uniform>" in spec.wgsl and "immediates" not in spec.features
    np.testing.assert_allclose(x.to_numpy(), want, rtol=1e-6)
    out = np.ones(5, np.float32)
    mad(out, 3.0, -1)  # the checked path and numpy arguments too
    np.testing.assert_array_equal(out, np.full(5, 2.0, np.float32))


# -- copies ----------------------------------------------------------------------------------
def test_copy_from_with_offsets_in_program_order(rng):
    a, b = _rand(rng, 50), _rand(rng, 40)
    x, y = _dev(a), _dev(b)
    copy(x, y)             # recorded: y = a[:40]
    y.copy_from(x, src_offset=10, dst_offset=5, count=20)
    want = a[:40].copy()
    want[5:25] = a[10:30]
    np.testing.assert_array_equal(y.to_numpy(), want)
    h = gr.ndarray(gr.f16, 9)
    h.from_numpy(np.arange(9, dtype=np.float16))
    g = gr.ndarray(gr.f16, 9)
    g.copy_from(h, src_offset=1, dst_offset=2, count=5)  # 2-byte elements at odd offsets
    np.testing.assert_array_equal(g.to_numpy(), np.array([0, 0, 1, 2, 3, 4, 5, 0, 0], np.float16))
    with pytest.raises(ValueError):
        y.copy_from(x, src_offset=45, count=10)
    with pytest.raises(TypeError):
        y.copy_from(np.zeros(40, np.float32))


def test_copy_tensors_mixes_numpy_and_device_in_order(rt, rng):
    a, b = _rand(rng, 64), _rand(rng, 64)
    x, y = _dev(a), gr.ndarray(gr.f32, 64)
    out1, out2 = np.zeros(64, np.float32), np.zeros(64, np.float64)
    subs = rt.stats()["submissions"]
    gr.copy_tensors([(y, x), (out1, y), (x, b), (out2, x), (y, out1)])
    assert rt.stats()["submissions"] - subs == 1  # one submit for the whole batch
    np.testing.assert_array_equal(out1, a)        # y held a when it was read
    np.testing.assert_array_equal(out2, b.astype(np.float64))
    np.testing.assert_array_equal(x.to_numpy(), b)
    np.testing.assert_array_equal(y.to_numpy(), a)  # numpy source read after its own readback
    with pytest.raises(ValueError):
        gr.copy_tensors([(x, np.zeros(63, np.float32))])
    with pytest.raises(TypeError):
        gr.copy_tensors([(x, [1.0] * 64)])


def test_allocation_loop_without_launches_stays_bounded(rt):
    base = rt.stats()["live_bytes"]
    for _ in range(500):
        x = gr.ndarray(gr.f32, 100)
        x.fill(1.0)
        del x
        s = rt.stats()
        assert s["ctx_buffers"] <= rt.AUTO_FLUSH_BUFFERS + 1
        assert s["live_bytes"] - base <= (rt.PENDING_RETIREMENTS_DEPTH + 2) * rt.AUTO_FLUSH_BUFFERS * 512
    gr.sync()
    assert rt.stats()["live_bytes"] == base


def test_a_lost_device_log_line_is_confirmed_before_it_counts(rt, rng):
    x = _dev(_rand(rng, 8))
    copy(x, x)
    rt._watcher.emit(__import__("logging").makeLogRecord({"msg": "The WGPU device was lost (destroyed)"}))
    copy(x, x)  # another device's loss (e.g. one released after gr.init()) does not stop this one
    np.testing.assert_array_equal(x.to_numpy(), x.to_numpy())
    assert rt._lost is None and not rt._slow


def test_immediates_are_set_only_when_they_change_and_after_a_pipeline_change(rng, monkeypatch):
    """The fast path skips set_immediates when the open pass already holds the same bytes;
    a pipeline change or another kernel's scalars in between must set them again."""
    if "immediates" not in gr.runtime().dev.features:
        pytest.skip("no immediates on this adapter")
    calls = []
    real = ffi.set_immediates
    def counting(p, group, data, size):
        calls.append(data if type(data) is bytes else bytes(ffi.ffi.buffer(data, size)))
        return real(p, group, data, size)
    monkeypatch.setattr(ffi, "set_immediates", counting)

    @gr.kernel
    def add_s(s: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(x.shape[0]):
            x[i] = x[i] + s

    @gr.kernel
    def mul_s(s: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(x.shape[0]):
            x[i] = x[i] * s

    n = 64
    x0 = _rand(rng, n)
    x = _dev(x0)
    gr.sync()
    seq = [(add_s, 1.0)] * 3 + [(mul_s, 2.0), (add_s, 1.0), (add_s, 0.5), (mul_s, 2.0), (mul_s, 2.0)]
    want = x0.astype(np.float64)
    for k, s in seq:
        k(s, x)
        want = want + s if k is add_s else want * s
    np.testing.assert_allclose(x.to_numpy(), want, rtol=1e-6)
    # one set per change of kernel or scalar: 1.0 (add), 2.0 (mul), 1.0 (add), 0.5 (add), 2.0 (mul)
    assert len(calls) == 5, calls


def test_generated_launchers_share_code_but_not_their_names(rng):
    """Two kernels whose fast paths have the same source reuse one code object (the warm
    load's compile); each launcher still binds its own pipeline and buffers."""
    from gfxrt.engine import launch

    def make(c):
        @gr.kernel
        def addc(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
            for i in range(x.shape[0]):
                x[i] = x[i] + c
        return addc
    k1, k2 = make(1.0), make(2.0)
    x0 = _rand(rng, 32)
    x = _dev(x0)
    k1(x)
    k2(x)
    k1(x)
    np.testing.assert_allclose(x.to_numpy(), x0 + 4.0, rtol=1e-6)
    fast = [L.fast for L in gr.runtime().launchers if L.name == "addc"]
    assert len(fast) == 2 and fast[0].__code__ is fast[1].__code__ and fast[0] is not fast[1]
    assert fast[0].__globals__["L"] is not fast[1].__globals__["L"]
    assert len(launch._CODE) <= launch.CODE_CACHE_LIMIT
