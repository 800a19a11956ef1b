"""Copies and fills: x.copy_from with element offsets (overlapping, 2-byte elements at odd
offsets), x.fill on the host and device paths, gr.copy_tensors batching (one staging write
for uploads, one readback for downloads, list order), and all of them inside a capture."""
import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gfxrt as gr
from gfxrt.engine import ffi

copy_mod = importlib.import_module("gfxrt.data.copy")
ndarray_mod = importlib.import_module("gfxrt.data.ndarray")


def _dev(a, dtype=gr.f32):
    x = gr.ndarray(dtype, a.shape)
    x.from_numpy(a)
    return x


@pytest.fixture
def rt():
    r = gr.runtime()
    r.synchronize()
    return r


# -- copy_from --------------------------------------------------------------------------------
@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["f32", "i32", "f16"]), st.integers(1, 40), st.integers(1, 40), st.data())
def test_copy_from_matches_numpy_slices(dtype, n_src, n_dst, data):
    gdt, ndt = {"f32": (gr.f32, np.float32), "i32": (gr.i32, np.int32), "f16": (gr.f16, np.float16)}[dtype]
    same = data.draw(st.booleans())  # one array: overlapping ranges behave as if copied through a temporary
    if same:
        n_dst = n_src
    so = data.draw(st.integers(0, n_src - 1))
    do = data.draw(st.integers(0, n_dst - 1))
    count = data.draw(st.one_of(st.none(), st.integers(0, min(n_src - so, n_dst - do))))
    rng = np.random.default_rng(n_src * 41 + n_dst)
    a = (rng.integers(1, 1000, n_src)).astype(ndt)
    b = (rng.integers(1, 1000, n_dst)).astype(ndt)
    if same:
        b = a
    x = _dev(a, gdt)
    y = x if same else _dev(b, gdt)
    y.copy_from(x, src_offset=so, dst_offset=do, count=count)
    cnt = min(n_src - so, len(b) - do) if count is None else count
    want = b.copy()
    want[do:do + cnt] = a[so:so + cnt].copy()
    np.testing.assert_array_equal(y.to_numpy(), want)
    if not same:
        np.testing.assert_array_equal(x.to_numpy(), a)


def test_copy_from_of_vectors_and_2d_arrays_uses_flat_element_offsets(rng):
    a = rng.random((5, 3), dtype=np.float32) + 0.5
    x = gr.ndarray(gr.types.vector(3, gr.f32), 5)
    x.from_numpy(a)
    y = gr.ndarray(gr.types.vector(3, gr.f32), 5)
    y.copy_from(x, src_offset=1, dst_offset=2, count=3)
    want = np.zeros((5, 3), np.float32)
    want[2:5] = a[1:4]
    np.testing.assert_array_equal(y.to_numpy(), want)
    m = _dev(np.arange(12, dtype=np.float32).reshape(3, 4))
    m.copy_from(m, src_offset=0, dst_offset=5, count=7)
    want = np.arange(12, dtype=np.float32)
    want[5:12] = np.arange(7)
    np.testing.assert_array_equal(m.to_numpy().reshape(-1), want)


def test_copy_from_rejects_bad_arguments():
    x, y = gr.ndarray(gr.f32, 10), gr.ndarray(gr.f32, 10)
    with pytest.raises(ValueError):
        y.copy_from(x, src_offset=5, count=6)
    with pytest.raises(ValueError):
        y.copy_from(x, dst_offset=-1)
    with pytest.raises(ValueError):
        y.copy_from(x, count=2.0)
    with pytest.raises(ValueError):
        y.copy_from(x, src_offset=True)
    with pytest.raises(ValueError):
        y.copy_from(x, src_offset=11)
    with pytest.raises(TypeError):
        y.copy_from(gr.ndarray(gr.i32, 10))
    with pytest.raises(TypeError):
        y.copy_from(np.zeros(10, np.float32))


# -- fill ------------------------------------------------------------------------------------------
FILLS = [(gr.f32, np.float32, (7,), 2.5), (gr.f32, np.float32, (4, 3), -0.0), (gr.i32, np.int32, (9,), -3),
         (gr.u32, np.uint32, (5,), 7), (gr.f16, np.float16, (7,), 1.5), (gr.f16, np.float16, (6,), 0.0)]


@pytest.mark.parametrize("device_path", [False, True])
@pytest.mark.parametrize("gdt,ndt,shape,value", FILLS)
def test_fill_matches_numpy_on_both_paths(monkeypatch, device_path, gdt, ndt, shape, value):
    monkeypatch.setattr(ndarray_mod, "DEVICE_FILL_BYTES", 0 if device_path else 1 << 30)
    x = _dev(np.full(shape, 9, ndt), gdt)
    x.fill(value)
    got = x.to_numpy()
    np.testing.assert_array_equal(got, np.full(shape, value, ndt))
    assert np.array_equal(np.signbit(got), np.signbit(np.full(shape, value, ndt)))  # -0.0 stays -0.0


@pytest.mark.parametrize("device_path", [False, True])
def test_fill_vector_elements_and_whole_arrays(monkeypatch, device_path):
    monkeypatch.setattr(ndarray_mod, "DEVICE_FILL_BYTES", 0 if device_path else 1 << 30)
    v = gr.ndarray(gr.types.vector(3, gr.f16), 5)  # 6-byte elements: a 12-byte repeating pattern
    v.fill([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(v.to_numpy(), np.tile(np.float16([1, 2, 3]), (5, 1)))
    m = gr.ndarray(gr.types.matrix(2, 2, gr.f32), 3)
    m.fill(4.0)
    np.testing.assert_array_equal(m.to_numpy(), np.full((3, 2, 2), 4.0, np.float32))
    w = gr.ndarray(gr.f32, 4)
    w.fill(np.arange(4, dtype=np.float32))  # a whole array is an upload
    np.testing.assert_array_equal(w.to_numpy(), np.arange(4, dtype=np.float32))


def test_large_fill_runs_on_the_device_in_order(rt, monkeypatch):
    writes = []
    real = ffi.queue_write

    def counting(queue, buf, off, data, n):
        writes.append(n)
        real(queue, buf, off, data, n)
    monkeypatch.setattr(ffi, "queue_write", counting)
    n = ndarray_mod.DEVICE_FILL_BYTES // 4 + 3
    x = gr.ndarray(gr.f32, n)
    x.fill(1.0)
    y = gr.ndarray(gr.f32, n)
    y.copy_from(x)
    x.fill(-2.0)
    assert max(writes) < 64  # only the fill's parameters went through write_buffer, never the array
    np.testing.assert_array_equal(y.to_numpy()[[0, n // 2, n - 1]], [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(x.to_numpy()[[0, n // 2, n - 1]], [-2.0, -2.0, -2.0])


# -- copy_tensors -------------------------------------------------------------------------------------
def test_copy_tensors_packs_small_uploads_into_one_write(rt, rng, monkeypatch):
    writes = []
    real = ffi.queue_write

    def counting(queue, buf, off, data, n):
        writes.append(n)
        real(queue, buf, off, data, n)
    monkeypatch.setattr(ffi, "queue_write", counting)
    hosts = [rng.random(k + 1, dtype=np.float32) for k in range(40)]
    devs = [gr.ndarray(gr.f32, k + 1) for k in range(40)]
    h16 = np.arange(5, dtype=np.float64)  # converted to f16; 10 bytes, padded in the staging buffer
    d16 = gr.ndarray(gr.f16, 5)
    strided = np.arange(20, dtype=np.float32)[::2]
    ds = gr.ndarray(gr.f32, 10)
    gr.copy_tensors([*zip(devs, hosts), (d16, h16), (ds, strided)])
    assert len(writes) == 1
    for d, h in zip(devs, hosts):
        np.testing.assert_array_equal(d.to_numpy(), h)
    np.testing.assert_array_equal(d16.to_numpy(), h16.astype(np.float16))
    np.testing.assert_array_equal(ds.to_numpy(), strided)


def test_copy_tensors_downloads_complete_with_one_wait(rt, rng, monkeypatch):
    hosts = [rng.random(k + 3, dtype=np.float32) for k in range(20)]
    devs = [_dev(h) for h in hosts]
    big = rng.random(copy_mod.STAGED_UPLOAD_BYTES // 4 + 5, dtype=np.float32)
    dbig = _dev(big)
    gr.sync()
    outs = [np.empty(k + 3, np.float32) for k in range(20)]
    out64 = np.empty(5, np.float64)                     # converted from f32
    view = np.zeros((2, 10), np.float32)[:, ::3]         # a non-contiguous destination (2 x 4)
    dview = _dev(np.arange(8, dtype=np.float32).reshape(2, 4))
    outbig = np.empty_like(big)
    waits = rt.stats()["waits"]
    gr.copy_tensors([*zip(outs, devs), (out64, devs[2]), (view, dview), (outbig, dbig)])
    assert rt.stats()["waits"] - waits == 1
    for o, h in zip(outs, hosts):
        np.testing.assert_array_equal(o, h)
    np.testing.assert_array_equal(out64, hosts[2].astype(np.float64))
    np.testing.assert_array_equal(view, np.arange(8, dtype=np.float32).reshape(2, 4))
    np.testing.assert_array_equal(outbig, big)


def test_copy_tensors_keeps_list_order_through_numpy_arrays(rt, rng):
    a, b = rng.random(16, dtype=np.float32), rng.random(16, dtype=np.float32)
    x, y, z = _dev(a), gr.ndarray(gr.f32, 16), gr.ndarray(gr.f32, 16)
    buf = np.zeros(32, np.float32)
    lo, hi = buf[:16], buf[16:]                       # two views of one numpy array
    out = np.zeros(16, np.float64)
    gr.copy_tensors([(lo, x), (y, buf[8:24]), (x, b), (hi, x), (z, hi), (out, lo[::-1]), (lo, hi)])
    np.testing.assert_array_equal(y.to_numpy(), np.concatenate([a[8:], np.zeros(8, np.float32)]))
    np.testing.assert_array_equal(z.to_numpy(), b)
    np.testing.assert_array_equal(out, a[::-1].astype(np.float64))  # a host pair reads lo after its download
    np.testing.assert_array_equal(buf, np.concatenate([b, b]))


def test_copy_tensors_checks_everything_before_doing_anything(rt):
    x = gr.ndarray(gr.f32, 4)
    host = np.ones(4, np.float32)
    bad = [[(x, host), (x, np.zeros(5, np.float32))], [(x, host), (host, [1, 2, 3, 4])],
           [(x, host), (x, gr.ndarray(gr.i32, 4))], [(x, host), (np.ones(4, np.float32), x, 3)]]
    for pairs in bad:
        with pytest.raises((TypeError, ValueError)):
            gr.copy_tensors(pairs)
    ro = np.ones(4, np.float32)
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        gr.copy_tensors([(x, host), (ro, x)])
    np.testing.assert_array_equal(x.to_numpy(), np.zeros(4, np.float32))  # the first pair never ran
    gr.copy_tensors([])
    empty = gr.ndarray(gr.f32, 0)
    gr.copy_tensors([(empty, np.zeros(0, np.float32)), (np.zeros(0, np.float32), empty)])


# -- inside a capture -------------------------------------------------------------------------------------
def test_fills_and_copies_are_captured_and_replayed(rt, rng):
    a = rng.random(33, dtype=np.float32) + 0.5
    x, y, z = _dev(a), gr.ndarray(gr.f32, 33), gr.ndarray(gr.f16, 9)
    h = _dev(np.arange(9, dtype=np.float16), gr.f16)
    with gr.graph() as g:
        y.fill(4.0)                                     # a fill kernel, not an upload
        y.copy_from(x, src_offset=3, dst_offset=1, count=20)
        x.copy_from(x, src_offset=0, dst_offset=1, count=32)  # overlapping, through a temporary
        z.fill(-1.0)
        z.copy_from(h, src_offset=1, dst_offset=2, count=5)   # odd 2-byte offsets: a copy kernel
        h.copy_from(h, src_offset=0, dst_offset=1, count=8)   # ... within one array
        gr.copy_tensors([(x, y)])
    assert g.stats()["owned"] >= 3  # fill / copy parameters and temporaries belong to the graph
    np.testing.assert_array_equal(x.to_numpy(), a)
    g.replay()
    want_y = np.full(33, 4.0, np.float32)
    want_y[1:21] = a[3:23]
    np.testing.assert_array_equal(y.to_numpy(), want_y)
    np.testing.assert_array_equal(x.to_numpy(), want_y)
    np.testing.assert_array_equal(z.to_numpy(), np.float16([-1, -1, 1, 2, 3, 4, 5, -1, -1]))
    np.testing.assert_array_equal(h.to_numpy(), np.float16([0, 0, 1, 2, 3, 4, 5, 6, 7]))
    g.replay()
    np.testing.assert_array_equal(h.to_numpy(), np.float16([0, 0, 0, 1, 2, 3, 4, 5, 6]))
    np.testing.assert_array_equal(z.to_numpy(), np.float16([-1, -1, 0, 1, 2, 3, 4, -1, -1]))
