"""Block-wide building blocks for kernels that use `gr.simt`: a reduction and an exclusive
prefix sum over the threads of one block. They use subgroup operations where the adapter has
them (`sg=True`, see `kernels.has_subgroups()`) and a shared-memory tree otherwise.

Call them from the body of a parallel loop with `gr.loop_config(block_dim=B)`, on every
thread of the block (outside branches that differ between threads), with the same
compile-time `B`:

    @gr.kernel
    def block_maxima(x: gr.types.ndarray(dtype=gr.f32, ndim=1), out: gr.types.ndarray(dtype=gr.f32, ndim=1),
                     sg: gr.template()):
        gr.loop_config(block_dim=256)
        for i in range(out.shape[0] * 256):
            v = x[min(i, x.shape[0] - 1)]
            m = kernels.block.reduce(v, "max", gr.f32, 256, sg)
            if gr.simt.block.thread_idx() == 0:
                out[i // 256] = m

Each call ends with a barrier, so calls can follow each other.
"""
from __future__ import annotations

import gfxrt as gr

# tree steps of the shared-memory fallback, for blocks of up to 256 threads
HALVES = (128, 64, 32, 16, 8, 4, 2, 1)
DOUBLINGS = (1, 2, 4, 8, 16, 32, 64, 128)


@gr.func
def combine(a, b, op: gr.template()):
    """a + b, max(a, b) or min(a, b) for op "add", "max", "min"."""
    if gr.static(op == "add"):
        return a + b
    elif gr.static(op == "max"):
        return gr.max(a, b)
    else:
        return gr.min(a, b)


@gr.func
def subgroup_reduce(v, op: gr.template()):
    """v combined over the subgroup (op "add", "max", "min"); every lane gets it."""
    if gr.static(op == "add"):
        return gr.simt.subgroup.reduce_add(v)
    elif gr.static(op == "max"):
        return gr.simt.subgroup.reduce_max(v)
    else:
        return gr.simt.subgroup.reduce_min(v)


@gr.func
def reduce(v, op: gr.template(), dt: gr.template(), B: gr.template(), sg: gr.template()):
    """v combined over the B threads of the block (op "add", "max" or "min", values of dtype
    dt); every thread gets the result."""
    sh = gr.simt.block.SharedArray((B,), dt)
    total = v
    if gr.static(sg):
        # each subgroup combines its lanes, then every subgroup combines the subgroups' results
        # (so every thread has the total without another barrier)
        lane = gr.simt.subgroup.invocation_id()
        s = subgroup_reduce(v, op)
        if lane == 0:
            sh[gr.simt.subgroup.subgroup_id()] = s
        gr.simt.block.sync()
        w = sh[0]  # a neutral start for max / min
        if gr.static(op == "add"):
            w = gr.cast(0, dt)
        k = lane
        while k < gr.simt.subgroup.num_subgroups():
            w = combine(w, sh[k], op)
            k += gr.simt.subgroup.group_size()
        total = subgroup_reduce(w, op)
    else:
        tid = gr.simt.block.thread_idx()
        sh[tid] = v
        gr.simt.block.sync()
        for s in gr.static(HALVES):
            if gr.static(s < B):
                if tid < s:
                    sh[tid] = combine(sh[tid], sh[tid + s], op)
                gr.simt.block.sync()
        total = sh[0]
    gr.simt.block.sync()  # the shared array may be reused after the call
    return total


@gr.func
def rank(sg: gr.template()):
    """This thread's position in the order `exclusive_scan` scans: subgroup by subgroup, lane by
    lane (WebGPU does not promise that this is thread_idx()), or thread_idx() without subgroups."""
    r = gr.simt.block.thread_idx()
    if gr.static(sg):
        r = gr.simt.subgroup.subgroup_id() * gr.simt.subgroup.group_size() + gr.simt.subgroup.invocation_id()
    return r


@gr.func
def exclusive_scan(v, dt: gr.template(), B: gr.template(), sg: gr.template()):
    """The sum of v over the threads of lower `rank(sg)` in the block (0 on rank 0)."""
    sh = gr.simt.block.SharedArray((B,), dt)
    out = gr.cast(0, dt)
    if gr.static(sg):
        lane = gr.simt.subgroup.invocation_id()
        w = gr.simt.subgroup.subgroup_id()
        S = gr.simt.subgroup.group_size()
        ex = gr.simt.subgroup.exclusive_add(v)
        if lane == S - 1:
            sh[w] = ex + v  # this subgroup's total
        gr.simt.block.sync()
        acc = gr.cast(0, dt)  # the totals of the subgroups before this one, spread over the lanes
        k = lane
        while k < w:
            acc += sh[k]
            k += S
        out = gr.simt.subgroup.reduce_add(acc) + ex
    else:
        tid = gr.simt.block.thread_idx()
        sh[tid] = v
        gr.simt.block.sync()
        for d in gr.static(DOUBLINGS):  # Hillis-Steele inclusive scan
            if gr.static(d < B):
                t = gr.cast(0, dt)
                if tid >= d:
                    t = sh[tid - d]
                gr.simt.block.sync()
                sh[tid] = sh[tid] + t
                gr.simt.block.sync()
        if tid > 0:
            out = sh[tid - 1]
    gr.simt.block.sync()
    return out
