"""Sparse SNodes (pointer, bitmasked, dynamic) with Taichi's semantics. Expected values are
Taichi 1.7.4's on its CPU backend (its Vulkan backend has no sparse SNodes), run on the same
programs, or numpy where noted."""
import numpy as np
import pytest

import gfxrt as gr


def _count(field):
    @gr.kernel
    def count(x: gr.template()) -> gr.i32:
        c = 0
        for _ in gr.grouped(x):
            c += 1
        return c
    return count(field)


def test_explicit_activation_example():
    # Taichi's examples/features/sparse/explicit_activation.py with its prints as records
    x = gr.field(dtype=gr.i32)
    block1 = gr.root.pointer(gr.ij, (4, 4))
    block2 = block1.pointer(gr.ij, (2, 2))
    block2.dense(gr.ij, (2, 2)).place(x)
    out = gr.field(gr.i32, shape=64)
    n = gr.field(gr.i32, shape=())

    @gr.kernel
    def demo():
        gr.activate(block1, [0, 1])
        gr.activate(block2, [1, 2])
        for i, j in x:
            out[gr.atomic_add(n[None], 1)] = i * 100 + j
        for i, j in block2:
            out[gr.atomic_add(n[None], 1)] = 1000 + i * 10 + j
        for i, j in block1:
            out[gr.atomic_add(n[None], 1)] = 2000 + i * 10 + j
        for j in range(4):
            out[gr.atomic_add(n[None], 1)] = 3000 + gr.is_active(block2, [1, j]) * 10 + j
        gr.deactivate(block2, [1, 2])
        for i, j in block2:
            out[gr.atomic_add(n[None], 1)] = 4000 + i * 10 + j
        for i, j in block1:
            out[gr.atomic_add(n[None], 1)] = 5000 + i * 10 + j
        r = gr.rescale_index(x, block1, gr.Vector([9, 17]))
        out[gr.atomic_add(n[None], 1)] = 6000 + r[0] * 10 + r[1]
        gr.activate(block2, [1, 2])

    @gr.kernel
    def check_activity(snode: gr.template(), i: gr.i32, j: gr.i32) -> gr.i32:
        return gr.is_active(snode, [i, j])

    demo()
    assert sorted(out.to_numpy()[:n[None]].tolist()) == [204, 205, 304, 305, 1012, 2001, 3000, 3001, 3003, 3012,
                                                         5001, 6024]
    res = [check_activity(block2, 1, 2)]
    block2.deactivate_all()
    res += [check_activity(block2, 1, 2), check_activity(block1, 0, 1)]
    gr.deactivate_all_snodes()
    res += [check_activity(block1, 0, 1)]
    assert res == [1, 0, 1, 0]


def test_bitmasked_writes_activate_and_deactivated_cells_read_zero():
    x = gr.field(gr.f32)
    gr.root.bitmasked(gr.i, 8).place(x)

    @gr.kernel
    def write():
        x[3] = 5.0
        x[5] = 2.0

    @gr.kernel
    def deactivate():
        gr.deactivate(x.snode.parent(), [3])

    @gr.kernel
    def activate():
        gr.activate(x.parent(), [3])

    @gr.kernel
    def read() -> gr.f32:
        return x[3] + x[5] * 10

    write()
    assert _count(x) == 2 and x.to_numpy().tolist() == [0, 0, 0, 5, 0, 2, 0, 0]
    deactivate()
    assert _count(x) == 1 and x.to_numpy().tolist() == [0, 0, 0, 0, 0, 2, 0, 0]
    assert read() == 20.0  # an inactive cell reads 0 (Taichi's docs; its CPU backend returns the stale 5 here)
    activate()
    assert _count(x) == 2
    x.parent().deactivate_all()
    assert _count(x) == 0 and not x.to_numpy().any()


def test_host_writes_activate_fill_and_from_numpy_touch_active_cells_only():
    x = gr.field(gr.f32)
    gr.root.bitmasked(gr.i, 8).place(x)
    x[2] = 1.0
    assert _count(x) == 1
    x.fill(3)
    assert x.to_numpy().tolist() == [0, 0, 3, 0, 0, 0, 0, 0] and _count(x) == 1
    x.from_numpy(np.arange(8, dtype=np.float32))
    assert x.to_numpy().tolist() == [0, 0, 2, 0, 0, 0, 0, 0] and _count(x) == 1
    x[4] = 0
    assert _count(x) == 2
    dense = gr.field(gr.f32, shape=8)
    dense.fill(-1)
    dense.copy_from(x)  # Taichi's copy: every element (an inactive one reads 0)
    assert dense.to_numpy().tolist() == [0, 0, 2, 0, 0, 0, 0, 0]
    dense.fill(9)
    x.copy_from(dense)  # into a sparse field: every element written and activated
    assert x.to_numpy().tolist() == [9] * 8 and _count(x) == 8


def test_pointer_blocks_activate_whole_and_deactivation_zeroes_them():
    y = gr.field(gr.f32)
    blk = gr.root.pointer(gr.i, 4)
    blk.dense(gr.i, 2).place(y)

    @gr.kernel
    def write():
        y[3] = 7.0

    @gr.kernel
    def toggle():
        gr.deactivate(blk, [1])
        gr.activate(blk, [1])

    write()
    assert _count(y) == 2  # the block of 2 cells holding y[3]
    toggle()  # a pointer cell comes back empty, as Taichi's
    assert _count(y) == 2 and not y.to_numpy().any()


def test_struct_for_over_a_sparse_grid_matches_numpy():
    # mgpcg's layout: pointer blocks over dense 4x4 tiles, a stencil over the active cells
    n = 32
    u = gr.field(gr.f32)
    lap = gr.field(gr.f32)
    gr.root.pointer(gr.ij, [n // 4]).dense(gr.ij, 4).place(u, lap)
    rng = np.random.default_rng(1)
    cells = {tuple(c) for c in rng.integers(1, n - 1, size=(40, 2))}
    src = np.zeros((n, n), np.float32)
    for i, j in cells:
        src[i, j] = 1 + i * 0.25 + j
    ii = np.array([c[0] for c in cells], np.int32)
    jj = np.array([c[1] for c in cells], np.int32)
    vals = src[ii, jj]

    @gr.kernel
    def scatter(ii: gr.types.ndarray(), jj: gr.types.ndarray(), v: gr.types.ndarray()):
        for k in range(ii.shape[0]):
            u[ii[k], jj[k]] = v[k]

    @gr.kernel
    def laplace():
        for i, j in u:
            lap[i, j] = 4 * u[i, j] - u[i - 1, j] - u[i + 1, j] - u[i, j - 1] - u[i, j + 1]

    scatter(ii, jj, vals)
    laplace()
    active = np.zeros((n // 4, n // 4), bool)
    active[ii // 4, jj // 4] = True
    act = np.kron(active, np.ones((4, 4), bool))
    pad = np.pad(src, 1)
    want = 4 * src - pad[:-2, 1:-1] - pad[2:, 1:-1] - pad[1:-1, :-2] - pad[1:-1, 2:]
    np.testing.assert_allclose(lap.to_numpy(), np.where(act, want, 0), rtol=1e-6, atol=1e-5)
    assert _count(lap) == act.sum()


def test_deactivating_inside_a_struct_for():
    # comet's pattern: particles on a bitmasked leaf leave the domain and deactivate themselves
    n = 64
    x = gr.Vector.field(2, gr.f32)
    m = gr.field(gr.f32)
    gr.root.bitmasked(gr.i, n).place(x, m)

    @gr.kernel
    def spawn():
        for i in range(0, n, 3):
            x[i] = [i * 0.02, 0.5]
            m[i] = 1.0 + i

    @gr.kernel
    def step():
        gr.no_activate(x)
        for i in x:
            x[i] += gr.Vector([0.3, 0.0])
            if not all(x[i] <= 1.0):
                gr.deactivate(x.snode.parent(), [i])

    spawn()
    step()
    i = np.arange(0, n, 3)
    keep = i[i * 0.02 + 0.3 <= 1.0]
    want = np.zeros(n, np.float32)
    want[keep] = 1.0 + keep
    np.testing.assert_array_equal(m.to_numpy(), want)
    assert _count(x) == len(keep)
    np.testing.assert_allclose(x.to_numpy()[keep, 0], keep * 0.02 + 0.3, rtol=1e-6)


def test_dynamic_append_length_writes_and_deactivate():
    # Taichi's examples/features/sparse/taichi_dynamic.py, then more of Taichi's dynamic rules
    n = 16
    x = gr.field(gr.i32)
    length = gr.field(gr.i32)
    gr.root.dense(gr.i, n).dynamic(gr.j, n, chunk_size=4).place(x)
    gr.root.dense(gr.i, n).place(length)

    @gr.kernel
    def make_lists():
        for i in range(n):
            for j in range(i):
                gr.append(x.parent(), i, j * j)
            length[i] = gr.length(x.parent(), i)

    make_lists()
    assert length.to_numpy().tolist() == list(range(n))
    j = np.arange(n)
    np.testing.assert_array_equal(x.to_numpy(), np.where(j[None, :] < j[:, None], j[None, :] ** 2, 0))
    assert _count(x) == n * (n - 1) // 2

    @gr.kernel
    def more() -> gr.i32:
        x[2, 7] = 3  # a write past the end grows the list to 8
        gr.deactivate(x.parent(), [3])  # empties list 3 (its elements read 0)
        return gr.append(x.parent(), 4, 5) * 100 + gr.append(x.parent(), 4, 6)

    assert more() == 405
    assert [length_of(x, i) for i in (2, 3, 4)] == [8, 0, 6]
    assert x.to_numpy()[3].tolist() == [0] * n and x.to_numpy()[4, 4:7].tolist() == [5, 6, 0]


def length_of(x, i):
    @gr.kernel
    def k(x: gr.template(), i: gr.i32) -> gr.i32:
        return gr.length(x.parent(), i)
    return k(x, i)


def test_dynamic_field_methods_on_struct_and_nested_lists():
    # marching_squares' `edges.append(Edge(p0, p1))` / `edges.length()` / `edges.deactivate()`, and the
    # oit_renderer's per-pixel lists `c[u, v].append(h)` / `c[u, v].length()`
    Edge = gr.types.struct(p0=gr.types.vector(2, gr.f32), p1=gr.types.vector(2, gr.f32))
    edges = Edge.field()
    gr.root.dynamic(gr.i, 64, chunk_size=32).place(edges)
    c = gr.field(gr.f32)
    gr.root.dense(gr.ij, (2, 3)).dynamic(gr.k, 8).place(c)

    @gr.kernel
    def build(k: gr.i32) -> gr.i32:
        edges.deactivate()
        for i in range(k):
            edges.append(Edge(gr.Vector([i, 0.0]), gr.Vector([0.0, i * 2.0])))
        for u, v in gr.ndrange(2, 3):
            c[u, v].deactivate()
            for t in range(u + v):
                c[u, v].append(t * 0.5)
        return edges.length() * 100 + c[1, 2].length()

    assert build(10) == 1003
    assert build(4) == 403
    p0, p1 = edges.p0.to_numpy(), edges.p1.to_numpy()
    np.testing.assert_array_equal(p0[:4, 0], np.arange(4))
    np.testing.assert_array_equal(p1[:4, 1], np.arange(4) * 2.0)
    assert not p0[4:].any() and not p1[4:].any()  # the longer list of the first build was emptied
    np.testing.assert_array_equal(c.to_numpy()[1, 2, :4], [0, 0.5, 1.0, 0])


def test_sparse_errors_are_compile_errors():
    x = gr.field(gr.f32)
    gr.root.bitmasked(gr.i, 8).place(x)
    d = gr.field(gr.f32)
    gr.root.dynamic(gr.i, 8).place(d)

    @gr.kernel
    def append_to_bitmasked():
        gr.append(x.parent(), [], 1.0)

    @gr.kernel
    def is_active_on_dynamic() -> gr.i32:
        return gr.is_active(d.parent(), [0])

    @gr.kernel
    def wrong_arity() -> gr.i32:
        return gr.is_active(x.parent(), [0, 1])

    with pytest.raises(gr.CompileError, match="dynamic SNodes, not bitmasked"):
        append_to_bitmasked()
    with pytest.raises(gr.CompileError, match="pointer and bitmasked"):
        is_active_on_dynamic()
    with pytest.raises(gr.CompileError, match="1 index, got 2"):
        wrong_arity()


def test_one_bit_per_cell_across_words_and_levels():
    # 64 bitmasked cells (two u32 words of state) under 8 pointer blocks; deactivating a block
    # clears the bits of its cells and zeroes their data
    x = gr.field(gr.i32)
    blk = gr.root.pointer(gr.i, 8)
    cell = blk.bitmasked(gr.i, 8)
    cell.place(x)

    @gr.kernel
    def write():
        for i in gr.static((5, 31, 32, 33, 63)):
            x[i] = i + 100

    @gr.kernel
    def drop_block(b: gr.i32):
        gr.deactivate(blk, [b])

    @gr.kernel
    def active(i: gr.i32) -> gr.i32:
        return gr.is_active(cell, [i]) * 10 + gr.is_active(blk, [i // 8])

    write()
    assert _count(x) == 5 and [active(i) for i in (5, 6, 31, 32)] == [11, 1, 11, 11]
    drop_block(3)
    assert _count(x) == 4 and [active(i) for i in (31, 30, 32)] == [0, 0, 11]
    x[40] = 7  # a host write activates both levels
    assert _count(x) == 5 and active(40) == 11
    want = np.zeros(64, np.int32)
    want[[5, 32, 33, 63]] = [105, 132, 133, 163]
    want[40] = 7
    np.testing.assert_array_equal(x.to_numpy(), want)


def test_offline_cache_tells_sparse_fields_from_dense_ones():
    # a kernel compiled for a dense field must not be reused for a bitmasked one of the same shape
    from gfxrt.compiler.frontend.deps import fingerprint
    a, b, c = gr.field(gr.f32), gr.field(gr.f32), gr.field(gr.f32)
    gr.root.dense(gr.i, 8).place(a)
    gr.root.bitmasked(gr.i, 8).place(b)
    gr.root.pointer(gr.i, 8).place(c)
    assert len({fingerprint(a), fingerprint(b), fingerprint(c)}) == 3


def test_host_writes_grow_dynamic_lists():
    d = gr.field(gr.i32)
    gr.root.dynamic(gr.i, 16).place(d)
    z = gr.field(gr.i32)
    gr.root.dense(gr.i, 3).dynamic(gr.j, 8).place(z)

    @gr.kernel
    def lengths() -> gr.i32:
        return d.length() * 100 + z[1].length() * 10 + z[2].length()

    d[5] = 1
    z[1, 3] = 2
    z[2, 0] = 1
    assert lengths() == 641


def test_deactivating_a_2d_pointer_cell_zeroes_exactly_its_block():
    x = gr.Vector.field(2, gr.f32)
    blk = gr.root.pointer(gr.ij, (4, 3))
    blk.dense(gr.ij, (2, 3)).place(x)  # an 8 x 9 field in 2 x 3 blocks

    @gr.kernel
    def fill():
        for i, j in gr.ndrange(8, 9):
            x[i, j] = [i * 10 + j, 1.0]

    @gr.kernel
    def drop():
        gr.deactivate(blk, [1, 2])

    fill()
    drop()
    want = np.add.outer(np.arange(8) * 10, np.arange(9)).astype(np.float32)
    ones = np.ones((8, 9), np.float32)
    want[2:4, 6:9] = ones[2:4, 6:9] = 0
    np.testing.assert_array_equal(x.to_numpy(), np.stack([want, ones], -1))
    assert _count(x) == 8 * 9 - 6


def test_gradients_through_a_struct_for_over_a_sparse_field():
    x, y = gr.field(gr.f32), gr.field(gr.f32)
    loss = gr.field(gr.f32, shape=(), needs_grad=True)
    gr.root.bitmasked(gr.i, 8).place(x, y)
    gr.root.lazy_grad()

    @gr.kernel
    def forward():
        for i in x:
            y[i] = x[i] ** 2
            loss[None] += y[i]

    x[1] = 2.0
    x[4] = 3.0
    with gr.Tape(loss):
        forward()
    assert loss[None] == 13.0
    assert x.grad.to_numpy().tolist() == [0, 4, 0, 0, 6, 0, 0, 0]
