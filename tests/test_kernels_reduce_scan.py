"""kernels.reduce, kernels.scan, kernels.block, and the bandwidth kernels, against numpy on
random data, through the subgroup path and the shared-memory path."""
import numpy as np
import pytest
from gfxrt.kernels import block, reduce, scan
from hypothesis import given, settings
from hypothesis import strategies as st

import gfxrt as gr
from gfxrt import kernels

PATHS = [pytest.param(True, id="subgroups"), pytest.param(False, id="shared-memory")]


@pytest.fixture(params=PATHS)
def sg(request, monkeypatch):
    """Run the kernels with subgroup operations (where the adapter has them) or without."""
    if request.param and not kernels.has_subgroups():
        pytest.skip("adapter has no subgroup feature")
    for mod in (reduce, scan):
        monkeypatch.setattr(mod, "has_subgroups", lambda v=request.param: v)
    return request.param


def _data(rng, n, dtype):
    if dtype == np.float32:
        return rng.standard_normal(n).astype(np.float32) + 0.5
    if dtype == np.uint32:
        return rng.integers(0, 1000, n).astype(np.uint32)
    return rng.integers(-1000, 1000, n).astype(np.int32)


# -- reductions -------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 5, 257, 2048 * 3 + 1, 300_007])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
def test_reductions_match_numpy(rng, sg, n, dtype):
    x = _data(rng, n, dtype)
    if dtype == np.float32:
        assert reduce.sum(x) == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-5, abs=1e-3)
    else:
        assert reduce.sum(x) == int(x.astype(np.int64).sum())
    assert reduce.max(x) == x.max()
    assert reduce.min(x) == x.min()


@pytest.mark.parametrize("u", [3, 4])
@pytest.mark.parametrize("max_blocks", [7, 1024])
@pytest.mark.parametrize("n", [1, 3, 4, 5, 1023, 256 * 8 * 4 + 3, 2**20 + 7])
def test_reductions_with_several_accumulators(rng, sg, monkeypatch, u, max_blocks, n):
    """The GPU path (U independent loads per thread and step, then a tail loop) on any adapter;
    7 blocks: many steps per thread, 1024: few or none (only the tail loop)."""
    monkeypatch.setattr(reduce, "U", u)
    monkeypatch.setattr(reduce, "CPU_U", u)
    monkeypatch.setattr(reduce, "MAX_BLOCKS", max_blocks)
    for dtype in (np.float32, np.int32, np.uint32):
        x = _data(rng, n, dtype)
        if dtype == np.float32:
            assert reduce.sum(x) == pytest.approx(float(x.astype(np.float64).sum()), rel=1e-5, abs=1e-3)
        else:
            assert reduce.sum(x) == int(x.astype(np.int64).sum())
        assert reduce.max(x) == x.max()
        assert reduce.min(x) == x.min()


def test_large_and_empty_reductions(rng):
    x = rng.integers(0, 8, 2**22 + 1).astype(np.int32)
    x[123_457] = -5
    x[2**22] = 99
    xd = gr.ndarray(gr.i32, x.size)
    xd.from_numpy(x)
    assert reduce.sum(xd) == int(x.astype(np.int64).sum())
    assert (reduce.max(xd), reduce.min(xd)) == (99, -5)
    e = gr.ndarray(gr.i32, 0)
    assert reduce.sum(e) == 0 and isinstance(reduce.sum(e), int)
    out = gr.ndarray(gr.i32, 1)
    out.fill(7)
    assert reduce.sum(e, out=out) is out and out.to_numpy()[0] == 0
    with pytest.raises(ValueError, match="empty"):
        reduce.min(e)


def test_reduction_into_a_device_result_without_waiting(rng):
    n = 100_003
    x = rng.standard_normal(n).astype(np.float32)
    xd = gr.ndarray(gr.f32, n)
    xd.from_numpy(x)
    out = gr.ndarray(gr.f32, 1)
    waits = gr.runtime().stats()["waits"]
    assert reduce.max(xd, out=out) is out
    assert gr.runtime().stats()["waits"] == waits  # recorded, not read back
    assert out.to_numpy()[0] == x.max()


def test_float_sum_is_the_same_every_run(rng):
    x = (rng.standard_normal(200_001) * 1e3).astype(np.float32)
    xd = gr.ndarray(gr.f32, x.size)
    xd.from_numpy(x)
    first = reduce.sum(xd)
    assert all(reduce.sum(xd) == first for _ in range(3))  # no atomics: a fixed order


def test_reduction_errors():
    with pytest.raises(ValueError, match="empty"):
        reduce.max(np.zeros(0, np.float32))
    assert reduce.sum(np.zeros(0, np.float32)) == 0.0
    with pytest.raises(TypeError, match="f32, i32 or u32"):
        reduce.sum(gr.ndarray(gr.types.vector(2, gr.f32), 4))
    with pytest.raises(ValueError, match="shape"):
        reduce.sum(np.ones(4, np.float32), out=gr.ndarray(gr.f32, 2))
    with pytest.raises(ValueError, match="1 dimension"):
        reduce.sum(np.ones((2, 2), np.float32))


# -- scans --------------------------------------------------------------------------------------
SCAN_PATHS = [pytest.param("lookback", id="single-pass"), pytest.param("multipass", id="multi-pass"),
              pytest.param("shared", id="multi-pass-shared-memory")]


@pytest.fixture(params=SCAN_PATHS)
def scan_path(request, monkeypatch):
    """Run kernels.scan through the single pass with look-back (forced: on lavapipe it is not
    the default, see uses_lookback), the multi-pass scan with subgroups, or without them."""
    if request.param != "shared" and not kernels.has_subgroups():
        pytest.skip("adapter has no subgroup feature")
    monkeypatch.setattr(scan, "LOOKBACK", request.param == "lookback")
    if request.param == "shared":
        monkeypatch.setattr(scan, "has_subgroups", lambda: False)
    return request.param


def _scan_want(x, inclusive):
    if x.dtype == np.float32:
        c = np.cumsum(x.astype(np.float64))
        return c if inclusive else c - x
    wide = np.uint64 if x.dtype == np.uint32 else np.int64
    c = np.cumsum(x, dtype=wide)
    return (c if inclusive else c - x.astype(wide)).astype(x.dtype)


def _scan_check(got, x, inclusive):
    want = _scan_want(x, inclusive)
    if x.dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-3)
    else:
        np.testing.assert_array_equal(got, want)


L = scan.LTILE
SCAN_SIZES = [1, 2, 3, 31, 33, 255, 257, scan.TILE - 1, scan.TILE + 1, L - 1, L, L + 1, 2 * L - 1, 2 * L + 1,
              5 * L + 77]


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.float32])
def test_scan_sizes_match_cumsum(rng, scan_path, dtype):
    for n in SCAN_SIZES:
        if dtype == np.float32:
            x = rng.standard_normal(n).astype(np.float32)
        elif dtype == np.uint32:
            x = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)   # sums wrap around
        else:
            x = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
        for inclusive in (True, False):
            _scan_check(scan.scan(x, inclusive=inclusive), x, inclusive)


@settings(max_examples=12, deadline=None)
@given(n=st.integers(1, 5 * scan.LTILE), inclusive=st.booleans(), seed=st.integers(0, 2**31),
       path=st.sampled_from(["lookback", "multipass"]))
def test_scan_any_length_matches_cumsum(n, inclusive, seed, path):
    x = np.random.default_rng(seed).integers(-50, 50, n).astype(np.int32)
    out = np.zeros_like(x)
    old = scan.LOOKBACK
    scan.LOOKBACK = path == "lookback"
    try:
        scan.scan(x, out, inclusive=inclusive)
    finally:
        scan.LOOKBACK = old
    _scan_check(out, x, inclusive)


def test_scan_launches_in_a_row_and_replayed(rng, scan_path):
    """The single pass's state array is reused: it must be clean after every launch, whatever
    the sizes before (more tiles, fewer tiles), and after every replay of a graph."""
    xs = [rng.integers(-1000, 1000, n).astype(np.int32) for n in (5 * L + 5, 2 * L, 1, 4 * L - 3, 5 * L + 5)]
    ds = []
    for x in xs:
        xd, yd, zd = gr.ndarray(gr.i32, x.size), gr.ndarray(gr.i32, x.size), gr.ndarray(gr.i32, x.size)
        xd.from_numpy(x)
        ds.append((xd, yd, zd))
    for _ in range(2):
        for xd, yd, zd in ds:           # no sync between the launches
            scan.inclusive(xd, yd)
            scan.exclusive(xd, zd)
    for x, (_, yd, zd) in zip(xs, ds):
        np.testing.assert_array_equal(yd.to_numpy(), _scan_want(x, True))
        np.testing.assert_array_equal(zd.to_numpy(), _scan_want(x, False))
    x = xs[1]
    xd, yd, zd = gr.ndarray(gr.i32, x.size), gr.ndarray(gr.i32, x.size), gr.ndarray(gr.i32, x.size)
    xd.from_numpy(x)
    with gr.graph() as g:
        scan.inclusive(xd, yd)
        scan.exclusive(yd, zd)
    for _ in range(3):
        zd.fill(7)
        g.replay()
        np.testing.assert_array_equal(zd.to_numpy(), _scan_want(_scan_want(x, True), False))


@pytest.mark.parametrize("n", [scan.TILE, scan.TILE * scan.TILE + 3])  # one tile; three levels
def test_scan_levels(rng, sg, n):
    x = rng.integers(0, 4, n).astype(np.int32)
    np.testing.assert_array_equal(scan.inclusive(x), np.cumsum(x))
    np.testing.assert_array_equal(scan.exclusive(x), np.cumsum(x) - x)


def test_scan_in_place_on_device_and_numpy(rng, scan_path):
    n = 2 * scan.LTILE + 3
    x = rng.integers(-9, 9, n).astype(np.int32)
    xd = gr.ndarray(gr.i32, n)
    xd.from_numpy(x)
    assert scan.inclusive(xd, xd) is xd
    np.testing.assert_array_equal(xd.to_numpy(), np.cumsum(x))
    y = x.copy()
    scan.exclusive(y, y)
    np.testing.assert_array_equal(y, np.cumsum(x) - x)


def test_scan_path_choice(monkeypatch):
    """The single pass needs subgroups and is the default on NVIDIA / AMD / Intel GPUs only: never
    on a CPU adapter, where blocks run on a few worker threads and loops are capped."""
    dev = gr.runtime().dev
    expect = (kernels.has_subgroups() and not dev.is_cpu
              and dev.adapter.info.get("vendor_id") in scan.LOOKBACK_VENDORS)
    assert scan.uses_lookback() == expect
    if dev.is_cpu:
        assert not scan.uses_lookback()
    monkeypatch.setattr(scan, "LOOKBACK", True)
    monkeypatch.setattr(scan, "has_subgroups", lambda: False)
    assert not scan.uses_lookback()      # forcing it still needs subgroups


def test_scan_errors():
    with pytest.raises(ValueError, match="shape"):
        scan.inclusive(np.ones(4, np.int32), np.ones(5, np.int32))
    with pytest.raises(TypeError, match="dtype"):
        scan.inclusive(np.ones(4, np.int32), np.ones(4, np.float32))
    with pytest.raises(TypeError, match="f32, i32 or u32"):
        scan.inclusive(np.ones(4, np.int64))
    assert scan.inclusive(np.zeros(0, np.int32)).shape == (0,)


# -- block building blocks --------------------------------------------------------------------
BD = 128


@gr.kernel
def block_ops(x: gr.types.ndarray(dtype=gr.f32, ndim=1), red: gr.types.ndarray(dtype=gr.f32, ndim=1),
              ex: gr.types.ndarray(dtype=gr.f32, ndim=1), rank: gr.types.ndarray(dtype=gr.i32, ndim=1),
              sg: gr.template()):
    gr.loop_config(block_dim=BD)
    for i in range(x.shape[0]):
        v = 0.0
        if i < x.shape[0]:
            v = x[i]
        s = block.reduce(v, "add", gr.f32, BD, sg)
        m = block.reduce(v, "max", gr.f32, BD, sg)   # two calls in a row share nothing
        e = block.exclusive_scan(v, gr.f32, BD, sg)
        r = block.rank(sg)
        if i < x.shape[0]:
            red[i] = s + m
            ex[i] = e
            rank[i] = r


def test_block_reduce_and_scan(rng, sg):
    n = 3 * BD
    x = rng.integers(0, 50, n).astype(np.float32)  # integral: exact sums in any order
    red, ex = np.zeros(n, np.float32), np.zeros(n, np.float32)
    rank = np.zeros(n, np.int32)
    block_ops(x, red, ex, rank, sg)
    g = x.reshape(-1, BD)
    np.testing.assert_array_equal(red, np.repeat(g.sum(1) + g.max(1), BD))
    for b in range(3):
        r = rank[b * BD:(b + 1) * BD]
        np.testing.assert_array_equal(np.sort(r), np.arange(BD))   # a permutation of the block
        order = np.argsort(r)                                        # threads in scan order
        vals = g[b][order]
        np.testing.assert_array_equal(ex[b * BD:(b + 1) * BD][order], np.cumsum(vals) - vals)


# -- bandwidth kernels ------------------------------------------------------------------------
def test_fill_memcpy_saxpy(rng):
    n = 70_001  # more than one block of 256, not a power of two
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    xd, yd = gr.ndarray(gr.f32, n), gr.ndarray(gr.f32, n)
    xd.from_numpy(x)
    yd.from_numpy(y)
    kernels.saxpy(2.5, xd, yd)
    np.testing.assert_allclose(yd.to_numpy(), 2.5 * x + y, rtol=1e-6, atol=1e-6)
    kernels.memcpy(yd, xd)
    np.testing.assert_array_equal(yd.to_numpy(), x)
    kernels.fill(xd, -1.25)
    assert (xd.to_numpy() == -1.25).all()
    m = rng.integers(0, 9, (33, 70)).astype(np.uint32)  # 2-D, unsigned, numpy in and out
    kernels.fill(m, 2**32 - 7)
    assert (m == 2**32 - 7).all()
    a, b = rng.integers(-5, 5, (33, 70)).astype(np.int32), np.zeros((33, 70), np.int32)
    kernels.memcpy(b, a)
    np.testing.assert_array_equal(a, b)


def test_bandwidth_kernel_errors():
    with pytest.raises(ValueError, match="fit"):
        kernels.fill(np.zeros(3, np.int32), 2**31)
    with pytest.raises(ValueError, match="same shape"):
        kernels.memcpy(np.zeros(3, np.float32), np.zeros(4, np.float32))
    with pytest.raises(TypeError, match="f32"):
        kernels.saxpy(1.0, np.zeros(3, np.int32), np.zeros(3, np.int32))
