"""Dynamic SNodes backed by a chunk pool (gfxrt/data/pool.py, compiler/frontend/pool.py):
the same results as dense backing and numpy, with memory for the live elements only."""
import numpy as np
import pytest

import gfxrt as gr
from gfxrt.data import pool


@pytest.fixture
def pooled(monkeypatch):
    """Every dynamic node placed in the test is pooled; `initial` bytes of storage at first."""
    monkeypatch.setattr(pool, "POOL_THRESHOLD_BYTES", 0)

    def initial(nbytes):
        monkeypatch.setattr(pool, "INITIAL_BYTES", nbytes)
    return initial


def _lists(dtype=gr.i32, n=6, cap=40, chunk=4):
    x = gr.field(dtype)
    node = gr.root.dense(gr.i, n).dynamic(gr.j, cap, chunk_size=chunk)
    node.place(x)
    return x, node


def _program(x, node):
    """Appends from many threads at once, a write by index past the end, a deactivated list."""
    @gr.kernel
    def grow():
        for t in range(60):  # threads race for the same lists and chunks
            i = t % 5
            if t // 5 < i * 3:
                x[i].append(t)
        x[5, 9] = 77  # a write by index: the list's length becomes 10, elements 0..8 read 0

    @gr.kernel
    def shrink():
        x[2].deactivate()

    @gr.kernel
    def total() -> gr.i32:
        s = 0
        for i, j in x:  # the struct-for visits active elements only
            s += x[i, j] + 1
        return s
    grow()
    shrink()
    return total()


def _canonical(a):
    return np.sort(a, axis=1)


def test_pooled_lists_match_dense_and_numpy(pooled):
    pooled(0)  # the smallest table to start: the pool grows between launches
    x, node = _lists()
    assert x._pool is not None
    s = _program(x, node)
    got = x.to_numpy()
    expect = np.zeros((6, 40), np.int32)
    for i in (1, 3, 4):
        vals = [t for t in range(60) if t % 5 == i and t // 5 < i * 3]
        expect[i, :len(vals)] = vals
    expect[5, 9] = 77
    assert (_canonical(got) == _canonical(expect)).all()
    assert s == int(expect.sum()) + 3 + 9 + 12 + 10
    assert x[5, 9] == 77 and x[5, 3] == 0 and x[2, 0] == 0


def test_pool_and_dense_agree(pooled, monkeypatch):
    pooled(1 << 20)
    xp, np_ = _lists(gr.f32)
    sp = _program(xp, np_)
    monkeypatch.setattr(pool, "POOL_THRESHOLD_BYTES", 1 << 40)
    xd, nd = _lists(gr.f32)
    assert xd._pool is None
    sd = _program(xd, nd)
    assert sp == sd
    assert (_canonical(xp.to_numpy()) == _canonical(xd.to_numpy())).all()


def test_one_list_many_threads_take_chunks_once(pooled):
    """The compare-exchange race: 3000 threads append to one list of chunks of 8."""
    pooled(1 << 16)
    x = gr.field(gr.i32)
    gr.root.dynamic(gr.i, 4096, chunk_size=8).place(x)

    @gr.kernel
    def fill():
        for t in range(3000):
            x.append(t)
    fill()
    assert sorted(x.to_numpy()[:3000].tolist()) == list(range(3000))
    assert (x.to_numpy()[3000:] == 0).all()
    assert int(x._pool.read_count()[0]) == 3000 // x._pool.chunk  # racing threads agree on each chunk


def test_deactivate_keeps_chunks_and_deactivate_all_frees_them(pooled):
    pooled(1 << 16)
    x, node = _lists(cap=64, chunk=8)

    @gr.kernel
    def fill(k: gr.i32):
        for i in range(6):
            for j in range(k):
                x[i].append(i + j * 10)

    @gr.kernel
    def empty():
        for i in range(6):
            x[i].deactivate()
    fill(20)
    used = int(x._pool.read_count()[0])
    assert used == 6 * -(-20 // x._pool.chunk)
    empty()
    assert (x.to_numpy() == 0).all()
    fill(20)
    assert int(x._pool.read_count()[0]) == used  # the lists' chunks are reused
    assert (_canonical(x.to_numpy())[:, -20:] == np.sort(np.arange(6)[:, None] + np.arange(20) * 10, 1)).all()
    node.deactivate_all()
    assert int(x._pool.read_count()[0]) == 0 and (x.to_numpy() == 0).all()
    fill(3)
    assert (_canonical(x.to_numpy())[:, -3:] == np.arange(6)[:, None] + np.arange(3) * 10).all()
    gr.deactivate_all_snodes()
    assert (x.to_numpy() == 0).all()


def test_growth_between_launches_and_overflow_in_one(pooled):
    pooled(0)  # the smallest table: 2 * MAX_PROBES chunks
    x, _ = _lists(cap=400, chunk=1)
    assert x._pool.capacity == 2 * pool.MAX_PROBES and x._pool.chunk == 1

    @gr.kernel
    def add(n: gr.i32):
        for i in range(6):
            for _ in range(n):
                x[i].append(i * 1000 + x[i].length())
    for _ in range(6):
        add(5)  # 30 chunks a launch: each starts with room for it (the table rehashed as it grows)
    assert x._pool.grown >= 2
    assert (x.to_numpy()[:, :30] == np.arange(6)[:, None] * 1000 + np.arange(30)).all()
    cap = x._pool.capacity
    with pytest.raises(gr.GfxrtError, match="ran out of room"):
        add(300)  # far more than the free half in one launch
        x.to_numpy()
    assert x._pool.capacity > cap


def test_vectors_and_structs_in_a_pool(pooled):
    """The corpus's oit_renderer layout: a struct of a vec4 and an f32 per list element."""
    pooled(1 << 16)
    S = gr.types.struct(color=gr.types.vector(4, gr.f32), depth=gr.f32)
    c = S.field()
    gr.root.dense(gr.ij, (4, 3)).dynamic(gr.k, 32, chunk_size=4).place(c)

    @gr.kernel
    def fill():
        for u, v in gr.ndrange(4, 3):
            for t in range(u + v):
                c[u, v].append(S(gr.Vector([u, v, t, 1.0]), float(t) * 0.5))

    @gr.kernel
    def swap(u: gr.i32, v: gr.i32):
        tmp = c[u, v, 0]
        c[u, v, 0] = c[u, v, 1]
        c[u, v, 1] = tmp
    fill()
    swap(3, 2)
    colors, depths = c.color.to_numpy(), c.depth.to_numpy()
    for u in range(4):
        for v in range(3):
            order = np.argsort(depths[u, v, :u + v])
            assert (depths[u, v, :u + v][order] == np.arange(u + v) * 0.5).all()
            assert (colors[u, v, :u + v, 2][order] == np.arange(u + v)).all()
            assert (colors[u, v, u + v:] == 0).all()
    assert c.depth[3, 2, 0] == depths[3, 2, 0]


def test_host_writes_take_chunks(pooled):
    pooled(1 << 16)
    x, _ = _lists(gr.f32, cap=40, chunk=4)
    x[4, 13] = 2.5
    x.fill(1.0)  # active elements only: list 4's first 14

    @gr.kernel
    def length(i: gr.i32) -> gr.i32:
        return x[i].length()
    assert length(4) == 14 and length(0) == 0
    expect = np.zeros((6, 40), np.float32)
    expect[4, :14] = 1
    assert (x.to_numpy() == expect).all()
    a = np.arange(240, dtype=np.float32).reshape(6, 40)
    x.from_numpy(a)
    assert (x.to_numpy() == np.where(expect > 0, a, 0)).all()


def test_live_data_small_dense_backing_too_large(monkeypatch):
    monkeypatch.setattr(pool, "INITIAL_BYTES", 1 << 20)
    """1000 x 1000 lists of 2048 f32 (8 GB dense, past every storage binding): pooled by the
    default threshold, in 1 MiB here (INITIAL_BYTES); a few appends take a few chunks."""
    x = gr.field(gr.f32)
    gr.root.dense(gr.ij, (1000, 1000)).dynamic(gr.k, 2048, chunk_size=64).place(x)
    assert x._pool is not None and x.nbytes <= pool.INITIAL_BYTES

    @gr.kernel
    def hit():
        for t in range(300):
            x[t * 3, 999 - t].append(float(t))
            x[t * 3, 999 - t].append(float(-t))
        x[999, 999, 2000] = 5.0

    @gr.kernel
    def length(i: gr.i32, j: gr.i32) -> gr.i32:
        return x[i, j].length()
    hit()
    assert length(30, 989) == 2 and length(31, 989) == 0 and length(999, 999) == 2001
    assert sorted([x[30, 989, 0], x[30, 989, 1]]) == [-10.0, 10.0]
    assert x[999, 999, 2000] == 5.0 and x[999, 999, 1999] == 0.0
    assert int(x._pool.read_count()[0]) == 300 + 1  # one chunk per list written
    with pytest.raises(gr.GfxrtError, match="dense form"):
        x.to_numpy()


def test_append_value_is_computed_before_the_append():
    """`x[i].append(x[i].length())` appends the length before the append (dense backing too)."""
    x = gr.field(gr.i32)
    gr.root.dense(gr.i, 2).dynamic(gr.j, 8).place(x)
    assert x._pool is None

    @gr.kernel
    def fill():
        for i in range(2):
            for _ in range(3):
                x[i].append(x[i].length() * 10 + i)
    fill()
    assert (x.to_numpy()[:, :4] == [[0, 10, 20, 0], [1, 11, 21, 0]]).all()


def test_a_list_on_axis_j_alone_is_emptied():
    """oit_renderer's `gr.root.dynamic(gr.j, 1024)` of structs: deactivate() on a list whose only
    axis is axis 1 (the node's extents are indexed by position, not by axis number)."""
    S = gr.types.struct(center=gr.types.vector(3, gr.f32), radius=gr.f32)
    s = S.field()
    gr.root.dynamic(gr.j, 64, chunk_size=8).place(s)

    @gr.kernel
    def run() -> gr.i32:
        for t in range(5):
            s.append(S(gr.Vector([t, 0.0, 0.0]), 1.0))
        n = s.length()
        s.deactivate()
        return n * 10 + s.length()
    assert run() == 50
    assert (s.radius.to_numpy() == 0).all()


def test_a_pooled_read_passed_after_a_variable_to_a_template_func(pooled):
    """oit_renderer's `blend(color, colors_in_pixel[u, v, i].color)`: the pooled read runs a
    lookup (statements) after `color` is evaluated; `color` must stay the caller's variable
    (the lookup writes nothing) for blend to change it."""
    pooled(1 << 16)
    C = gr.types.struct(color=gr.types.vector(4, gr.f32), depth=gr.f32)
    cs = C.field()
    gr.root.dense(gr.ij, (4, 3)).dynamic(gr.k, 2048, chunk_size=64).place(cs)
    out = gr.Vector.field(4, gr.f32, shape=4)

    @gr.func
    def blend(color: gr.template(), base: gr.template()):
        color.rgb += (1 - color.a) * base.rgb * base.a
        color.a += (1 - color.a) * base.a

    @gr.kernel
    def run():
        for u in range(4):
            for i in range(u * 5 + 1):
                cs[u, 1].append(C(gr.Vector([0.1 * i, 0.5, 0.3, 0.4]), 1.0))
        for u in range(4):
            color = gr.Vector([0.0, 0.0, 0.0, 0.0])
            for i in range(cs[u, 1].length()):
                blend(color, cs[u, 1, i].color)
            out[u] = color
    run()
    for u in range(4):
        c = np.zeros(4)
        for i in range(u * 5 + 1):
            b = np.array([0.1 * i, 0.5, 0.3, 0.4])
            c[:3] += (1 - c[3]) * b[:3] * b[3]
            c[3] += (1 - c[3]) * b[3]
        assert np.allclose(out.to_numpy()[u], c, atol=1e-5)


def test_a_graph_checks_its_pools_at_replay(pooled):
    pooled(0)
    x, _ = _lists(cap=400, chunk=1)

    @gr.kernel
    def add():
        for i in range(6):
            x[i].append(i)
    with gr.graph() as g:
        add()
    for _ in range(5):
        g.replay()  # 6 chunks a replay, 128 slots: no growth
    a = x.to_numpy()
    assert (a[:, :5] == np.arange(6)[:, None]).all() and (a[:, 5:] == 0).all()
    with pytest.raises(gr.GfxrtError, match="capture the graph again"):
        for _ in range(20):
            g.replay()
