"""Block and subgroup primitives: shared arrays, barriers, thread ids, subgroup operations."""
import numpy as np
import pytest
from gfxrt.compiler import ArgSpec, Target, compile_kernel
from gfxrt.compiler.types import i32

import gfxrt as gr

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)
BLOCK = 128


@gr.kernel
def block_sums(x: F1, out: F1):
    gr.loop_config(block_dim=BLOCK)
    for i in range(x.shape[0]):
        pad = gr.simt.block.SharedArray((BLOCK,), gr.f32)
        tid = gr.simt.block.thread_idx()
        v = 0.0
        if i < x.shape[0]:  # convergent loop: every thread of the last block runs the body
            v = x[i]
        pad[tid] = v
        gr.simt.block.sync()
        s = BLOCK // 2
        while s > 0:
            if tid < s:
                pad[tid] += pad[tid + s]
            gr.simt.block.sync()
            s //= 2
        if tid == 0:
            out[i // BLOCK] = pad[0]


def test_shared_array_tree_sum_per_block(rng):
    n = 1000
    x = rng.random(n, dtype=np.float32)
    out = np.zeros(-(-n // BLOCK), np.float32)
    block_sums(x, out)
    padded = np.zeros(len(out) * BLOCK, np.float32)
    padded[:n] = x
    np.testing.assert_allclose(out, padded.reshape(-1, BLOCK).sum(1), rtol=1e-5)


@gr.kernel
def ids(tid: I1, gid: I1, bid: I1, dim: I1):
    gr.loop_config(block_dim=32)
    for i in range(tid.shape[0]):
        if i < tid.shape[0]:
            tid[i] = gr.simt.block.thread_idx()
            gid[i] = gr.simt.block.global_thread_idx()
            bid[i] = gr.simt.block.block_idx()
            dim[i] = gr.simt.block.block_dim()
        gr.simt.block.sync()


def test_thread_and_block_indices():
    n = 100
    tid, gid, bid, dim = (np.zeros(n, np.int32) for _ in range(4))
    ids(tid, gid, bid, dim)
    np.testing.assert_array_equal(tid, np.arange(n) % 32)
    np.testing.assert_array_equal(gid, np.arange(n))
    np.testing.assert_array_equal(bid, np.arange(n) // 32)
    assert (dim == 32).all()


@gr.kernel
def subgroup_ops(x: I1, red: I1, inc: I1, exc: I1, lane: I1, size: I1, mx: I1, first: I1, shuf: I1):
    for i in range(x.shape[0]):
        v = 0
        if i < x.shape[0]:
            v = x[i]
        r = gr.simt.subgroup.reduce_add(v)
        c = gr.simt.subgroup.inclusive_add(v)
        e = gr.simt.subgroup.exclusive_add(v)
        m = gr.simt.subgroup.reduce_max(v)
        f = gr.simt.subgroup.broadcast_first(v)
        ln = gr.simt.subgroup.invocation_id()
        s = gr.simt.subgroup.shuffle_xor(v, 1)
        if i < x.shape[0]:
            red[i], inc[i], exc[i], mx[i], first[i], shuf[i] = r, c, e, m, f, s
            lane[i] = ln
            size[i] = gr.simt.subgroup.group_size()


def test_subgroup_operations(rng):
    if "subgroup" not in gr.device().features:
        pytest.skip("adapter has no subgroup feature")
    n = 256
    x = rng.integers(0, 100, n).astype(np.int32)
    outs = [np.zeros(n, np.int32) for _ in range(8)]
    subgroup_ops(x, *outs)
    red, inc, exc, lane, size, mx, first, shuf = outs
    S = int(size[0])
    assert S >= 1 and (size == S).all() and n % S == 0
    np.testing.assert_array_equal(lane, np.arange(n) % S)
    g = x.reshape(-1, S)
    np.testing.assert_array_equal(red, np.repeat(g.sum(1), S))
    np.testing.assert_array_equal(inc, np.cumsum(g, 1).ravel())
    np.testing.assert_array_equal(exc, (np.cumsum(g, 1) - g).ravel())
    np.testing.assert_array_equal(mx, np.repeat(g.max(1), S))
    np.testing.assert_array_equal(first, np.repeat(g[:, 0], S))
    if S > 1:
        np.testing.assert_array_equal(shuf, x[np.arange(n) ^ 1])


@gr.kernel
def subgroup_ids(sid: I1, nsg: I1, lane: I1, size: I1):
    gr.loop_config(block_dim=128)
    for i in range(sid.shape[0]):
        a, b = gr.simt.subgroup.subgroup_id(), gr.simt.subgroup.num_subgroups()
        c, d = gr.simt.subgroup.invocation_id(), gr.simt.subgroup.group_size()
        if i < sid.shape[0]:
            sid[i], nsg[i], lane[i], size[i] = a, b, c, d


def test_subgroup_id_and_count_cover_each_block_once():
    if "subgroup" not in gr.device().features:
        pytest.skip("adapter has no subgroup feature")
    n = 3 * 128
    sid, nsg, lane, size = (np.zeros(n, np.int32) for _ in range(4))
    subgroup_ids(sid, nsg, lane, size)
    S = int(size[0])
    assert (nsg == 128 // S).all()
    for blk in range(3):  # every (subgroup, lane) pair exactly once per block
        pos = (sid * S + lane)[blk * 128:(blk + 1) * 128]
        np.testing.assert_array_equal(np.sort(pos), np.arange(128))


@gr.kernel
def pair_sums(x: I1, out: I1, bid: I1, gtid: I1):
    gr.loop_config(block_dim=2)
    for i in range(x.shape[0]):
        pad = gr.simt.block.SharedArray((2,), gr.i32)
        tid = gr.simt.block.thread_idx()
        pad[tid] = x[i] if i < x.shape[0] else 0
        gr.simt.block.sync()
        if i < x.shape[0]:
            out[i] = pad[0] + pad[1]
            bid[i] = gr.simt.block.block_idx()
            gtid[i] = gr.simt.block.global_thread_idx()


def test_convergent_loop_over_more_than_65535_blocks(rng):
    # a convergent task runs each block once, with no grid-stride loop: past 65535 blocks
    # the launcher dispatches a 2-D grid and block_idx() counts blocks across it
    n = 2 * 65535 * 2 + 7
    x = rng.integers(-1000, 1000, n).astype(np.int32)
    out, bid, gtid = (np.zeros(n, np.int32) for _ in range(3))
    pair_sums(x, out, bid, gtid)
    launcher = next(iter(pair_sums._cache.values())).launcher
    assert launcher.spec.tasks[0].one_pass
    assert max(g[0] for g in launcher.groups_cache.values()) == -(-n // 2)
    padded = np.append(x, 0)
    np.testing.assert_array_equal(out, np.repeat(padded.reshape(-1, 2).sum(1), 2)[:n])
    np.testing.assert_array_equal(bid, np.arange(n) // 2)
    np.testing.assert_array_equal(gtid, np.arange(n))


@gr.kernel
def count_in_shared(x: I1, out: I1):
    gr.loop_config(block_dim=64)
    for i in range(x.shape[0]):
        h = gr.simt.block.SharedArray((8,), gr.i32)
        if i < x.shape[0]:
            gr.atomic_add(h[x[i] % 8], 1)
        gr.simt.block.sync()
        if gr.simt.block.thread_idx() < 8:
            out[gr.simt.block.block_idx() * 8 + gr.simt.block.thread_idx()] = h[gr.simt.block.thread_idx()]


def test_shared_arrays_start_zeroed_in_every_block_and_launch(rng):
    # lavapipe keeps workgroup memory from the previous dispatch: the compiler zeroes it
    n = 64 * 5 - 3
    x = rng.integers(0, 1000, n).astype(np.int32)
    want = np.zeros((5, 8), np.int32)
    for i, v in enumerate(x):
        want[i // 64, v % 8] += 1
    for _ in range(3):
        out = np.zeros(5 * 8, np.int32)
        count_in_shared(x, out)
        np.testing.assert_array_equal(out.reshape(5, 8), want)


def _uses_subgroup(x):
    for i in range(x.shape[0]):
        x[i] = gr.simt.subgroup.reduce_add(x[i])


def test_subgroup_op_without_the_feature_is_a_compile_error():
    target = Target(frozenset({"immediates"}), 128)
    with pytest.raises(gr.CompileError) as e:
        compile_kernel(_uses_subgroup, [ArgSpec("x", "ndarray", elem=i32, ndim=1)], target)
    assert "subgroup" in str(e.value) and "reduce_add(x[i])" in str(e.value)
    assert "SharedArray" in str(e.value)


def test_block_dim_must_be_a_power_of_two():
    @gr.kernel
    def bad(x: F1):
        gr.loop_config(block_dim=100)
        for i in range(x.shape[0]):
            x[i] = 0.0

    with pytest.raises(gr.CompileError, match="power of two"):
        bad(np.zeros(4, np.float32))
