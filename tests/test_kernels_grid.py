"""kernels.stencil, kernels.linalg and kernels.histogram against numpy on random data."""
import dataclasses

import numpy as np
import pytest
from gfxrt.kernels import hist, linalg, stencil
from hypothesis import given, settings
from hypothesis import strategies as st

import gfxrt as gr
from gfxrt import kernels


# -- stencils -----------------------------------------------------------------------------------
def _neighbours(a):
    return a[:-2, 1:-1] + a[2:, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]


@pytest.mark.parametrize("shape", [(3, 3), (37, 300), (129, 65)])
def test_stencils_write_the_interior_only(rng, shape):
    a = rng.standard_normal(shape).astype(np.float32)
    border = rng.standard_normal(shape).astype(np.float32)
    d = border.copy()
    stencil.laplace5(a, d, h=0.5)
    want = (_neighbours(a.astype(np.float64)) - 4 * a[1:-1, 1:-1]) / 0.25
    np.testing.assert_allclose(d[1:-1, 1:-1], want, rtol=1e-5, atol=1e-4)
    for edge in (np.s_[0, :], np.s_[-1, :], np.s_[:, 0], np.s_[:, -1]):
        np.testing.assert_array_equal(d[edge], border[edge])
    stencil.jacobi5(a, d)
    np.testing.assert_allclose(d[1:-1, 1:-1], 0.2 * (_neighbours(a) + a[1:-1, 1:-1]), rtol=1e-5, atol=1e-6)


def test_stencil_sweeps_on_device(rng):
    n = 100
    a0 = rng.standard_normal((n, n)).astype(np.float32)
    a, b = gr.ndarray(gr.f32, (n, n)), gr.ndarray(gr.f32, (n, n))
    a.from_numpy(a0)
    b.from_numpy(a0)
    want = a0.astype(np.float64)
    for _ in range(4):  # ping-pong: the borders stay fixed
        stencil.jacobi5(a, b)
        a, b = b, a
        nxt = want.copy()
        nxt[1:-1, 1:-1] = 0.2 * (_neighbours(want) + want[1:-1, 1:-1])
        want = nxt
    np.testing.assert_allclose(a.to_numpy(), want, rtol=1e-5, atol=1e-5)


def test_stencil_errors():
    a = np.zeros((4, 4), np.float32)
    with pytest.raises(ValueError, match="different arrays"):
        stencil.laplace5(a, a)
    with pytest.raises(ValueError, match="same shape"):
        stencil.laplace5(a, np.zeros((4, 5), np.float32))
    with pytest.raises(ValueError, match="2 dimension"):
        stencil.laplace5(np.zeros(4, np.float32), np.zeros(4, np.float32))


# -- matrix multiply --------------------------------------------------------------------------
@settings(max_examples=12, deadline=None)
@given(m=st.integers(1, 150), k=st.integers(1, 80), n=st.integers(1, 150), seed=st.integers(0, 2**31))
def test_matmul_any_shape(m, k, n, seed):
    r = np.random.default_rng(seed)
    a = r.uniform(-1, 1, (m, k)).astype(np.float32)
    b = r.uniform(-1, 1, (k, n)).astype(np.float32)
    c = linalg.matmul(a, b)
    np.testing.assert_allclose(c, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-5 * k)


def test_matmul_several_tiles_on_device(rng):
    m, k, n = 200, 133, 190  # 4 x 3 tiles of 64, 17 slices of 8 with ragged edges
    a, b = rng.standard_normal((m, k)).astype(np.float32), rng.standard_normal((k, n)).astype(np.float32)
    ad, bd, cd = gr.ndarray(gr.f32, (m, k)), gr.ndarray(gr.f32, (k, n)), gr.ndarray(gr.f32, (m, n))
    ad.from_numpy(a)
    bd.from_numpy(b)
    cd.fill(7.0)
    assert linalg.matmul(ad, bd, cd) is cd
    np.testing.assert_allclose(cd.to_numpy(), a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


# every tile shape, double-buffered or not, at its edges: one row / column / slice past a tile, one
# short of it, a single slice shorter than TK, an odd number of slices (the buffers alternate)
_EDGES = [(1, 1, 1), (129, 9, 127), (127, 17, 129), (65, 7, 63), (63, 133, 65), (130, 8, 258), (257, 24, 3)]


# (each shape is a kernel of its own: about 1 s of cold compile on lavapipe, 2 s for slices of 16;
# single buffering differs only by one barrier, tested once)
@pytest.mark.parametrize("cfg", [linalg.Tiles(128, 128, 16), linalg.Tiles(128, 128),
                                 linalg.Tiles(128, 128, double=False), linalg.Tiles(64, 128), linalg.Tiles(64, 64)],
                         ids=str)
def test_matmul_tile_edges(rng, cfg):
    kernel = linalg.tiled(cfg)
    for m, k, n in _EDGES:
        a, b = rng.uniform(-1, 1, (m, k)).astype(np.float32), rng.uniform(-1, 1, (k, n)).astype(np.float32)
        ad, bd, cd = gr.ndarray(gr.f32, (m, k)), gr.ndarray(gr.f32, (k, n)), gr.ndarray(gr.f32, (m, n))
        ad.from_numpy(a)
        bd.from_numpy(b)
        cd.fill(np.nan)  # every element must be written
        kernel(ad, bd, cd)
        np.testing.assert_allclose(cd.to_numpy(), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5 * k,
                                   err_msg=f"{cfg} {m}x{k} @ {k}x{n}")


def test_matmul_tile_choice(monkeypatch):
    dev = gr.device()
    shapes = linalg.CPU_SHAPES if dev.is_cpu else linalg.GPU_SHAPES
    assert linalg.tiles_for(1, 1) == shapes[-1]    # too few blocks for any shape: the smallest
    big = 2048 if not dev.is_cpu else 512
    assert (linalg.tiles_for(big, big).bm, linalg.tiles_for(big, big).bn) == (128, 128)
    monkeypatch.setenv("GFXRT_MATMUL_TILES", "64x128/16")
    assert linalg.tiles_for(10, 10) == linalg.Tiles(64, 128, 16, False)
    monkeypatch.setenv("GFXRT_MATMUL_TILES", "128x128/8/db")
    assert linalg.tiles_for(10, 10) == linalg.Tiles(128, 128, 8, True)
    # what the adapter's workgroup memory holds: 128x128/16 double-buffered 33280 bytes, single
    # 16640, 128x128/8 double-buffered 16640, single 8320
    assert [t.shared_bytes for t in (linalg.Tiles(128, 128, 16), linalg.Tiles(128, 128, 16, False),
                                     linalg.Tiles(128, 128, 8), linalg.Tiles(128, 128, 8, False))] == \
        [33280, 16640, 16640, 8320]
    monkeypatch.setenv("GFXRT_MATMUL_TILES", "128x128/16/db")
    for limit, want in ((49152, linalg.Tiles(128, 128, 16)), (32768, linalg.Tiles(128, 128, 16, False)),
                        (16384, linalg.Tiles(128, 128, 8, False))):
        monkeypatch.setattr(dev, "target", dataclasses.replace(dev.target, max_workgroup_storage=limit))
        assert linalg.tiles_for(10, 10) == want, limit


def test_matmul_errors():
    with pytest.raises(ValueError, match="a.shape"):
        linalg.matmul(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="c has shape"):
        linalg.matmul(np.ones((2, 3), np.float32), np.ones((3, 4), np.float32), np.ones((2, 3), np.float32))
    assert (linalg.matmul(np.ones((2, 0), np.float32), np.ones((0, 3), np.float32)) == 0).all()


# -- histogram ------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,bins", [(1000, 1), (300_001, 64), (100_003, 3000), (50_000, 20_000)])
def test_histogram_of_keys(rng, n, bins):
    # local histograms in workgroup memory up to LOCAL_BINS bins, global atomics beyond
    keys = rng.integers(-5, bins + 5, n).astype(np.int32)   # some out of range: not counted
    want = np.bincount(keys[(keys >= 0) & (keys < bins)], minlength=bins)
    np.testing.assert_array_equal(kernels.histogram(keys, bins), want)
    u = np.abs(keys).astype(np.uint32)
    np.testing.assert_array_equal(kernels.histogram(u, bins), np.bincount(u[u < bins], minlength=bins))


def test_histogram_of_values_follows_numpy(rng):
    bins, lo, hi = 50, -1.0, 3.0
    k = rng.integers(-3, bins + 3, 200_000)
    x = (lo + (k + rng.uniform(0.05, 0.95, k.size)) * (hi - lo) / bins).astype(np.float32)  # off the edges
    x[:3] = (hi, lo, np.nan)  # hi goes to the last bin, as in numpy; NaN is not counted
    want, _ = np.histogram(x[~np.isnan(x)], bins, range=(lo, hi))
    np.testing.assert_array_equal(kernels.histogram(x, bins, range=(lo, hi)), want)
    y = rng.random(1000).astype(np.float32)  # no range: (min, max), both ends counted
    assert kernels.histogram(y, 10).sum() == 1000


def test_histogram_accumulates_on_device(rng):
    keys = rng.integers(0, 16, 5000).astype(np.int32)
    kd, out = gr.ndarray(gr.i32, keys.size), gr.ndarray(gr.i32, 16)
    kd.from_numpy(keys)
    kernels.histogram(kd, 16, out)
    kernels.histogram(kd, 16, out, accumulate=True)
    np.testing.assert_array_equal(out.to_numpy(), 2 * np.bincount(keys, minlength=16))
    kernels.histogram(kd, 16, out)  # zeroed first by default
    np.testing.assert_array_equal(out.to_numpy(), np.bincount(keys, minlength=16))


def test_histogram_errors():
    with pytest.raises(ValueError, match="bins"):
        kernels.histogram(np.zeros(3, np.int32), 0)
    with pytest.raises(ValueError, match="range"):
        kernels.histogram(np.zeros(3, np.int32), 4, range=(0, 1))
    with pytest.raises(ValueError, match="shape"):
        kernels.histogram(np.zeros(3, np.int32), 4, np.zeros(5, np.int32))
    assert hist._slots(3) == 64 and hist._slots(65) == 128  # few specializations
