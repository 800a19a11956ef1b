"""Reductions of 1-D arrays: sum, max, min.

    kernels.reduce.sum(x)            -> a Python number (waits for the device)
    kernels.reduce.max(x, out=r)     -> r, a 1-element gr.ndarray holding the result (no wait)

Two passes: up to MAX_BLOCKS blocks of B threads each read a strided share of `x` (coalesced),
U independent loads per step into U accumulators (one load in flight per thread left an H100
at 2.1 TB/s on 2^26 f32, four reach 2.85: experiments/bandwidth13.py), combine them in
registers, then across the block with subgroup operations (or a shared-memory tree where the
adapter has no `subgroup`) and write one partial; one block then combines the partials. No
atomics, so a float sum is the same from run to run.

`x` may be f32, i32 or u32, a gr.ndarray or a numpy array. NaNs are not propagated by max/min
(WGSL's max/min may return either operand).
"""
from __future__ import annotations

import builtins
import functools

import gfxrt as gr

from . import block
from ._util import Args, has_subgroups, scratch

B = 256              # threads per block
MAX_BLOCKS = 1024    # partials of the first pass
PER_THREAD = 8       # fewest elements a thread of the first pass reads before more blocks start
U = 4                # independent loads (and accumulators) per thread and step, on GPUs
CPU_U = 1            # on CPU adapters: lavapipe runs all 32 copies of a loop's body per pass, so a longer
#                      body costs there (2^16 f32: 0.45 ms with U = 1, 0.78 ms with U = 4)


@gr.kernel
def reduce_blocks(x: gr.types.ndarray(ndim=1), part: gr.types.ndarray(ndim=1), op: gr.template(),
                  dt: gr.template(), sg: gr.template(), acc_t: gr.template()):
    """part[b] = x[b*B + k*stride ...] combined with `op`, for the part.shape[0] blocks b;
    acc_t: a vector type of U components of dt, the per-thread accumulators."""
    gr.loop_config(block_dim=B)
    for t in range(part.shape[0] * B):
        n = x.shape[0]
        first = x[0]  # neutral for max / min (n >= 1)
        if gr.static(op == "add"):
            first = gr.cast(0, dt)
        acc = acc_t(first)
        j = t  # block start + tid, then a block-uniform stride
        stride = part.shape[0] * B
        while j + (acc_t.n - 1) * stride < n:  # u independent loads in flight
            for k in gr.static(range(acc_t.n)):
                acc[k] = block.combine(acc[k], x[j + k * stride], op)
            j += acc_t.n * stride
        while j < n:
            acc[0] = block.combine(acc[0], x[j], op)
            j += stride
        r = acc[0]
        for k in gr.static(range(1, acc_t.n)):
            r = block.combine(r, acc[k], op)
        r = block.reduce(r, op, dt, B, sg)
        if gr.simt.block.thread_idx() == 0:
            part[gr.simt.block.block_idx()] = r


@functools.cache
def _acc_type(u: int, dt):
    return gr.types.vector(u, dt)


def _blocks(n: int) -> int:
    return builtins.max(1, builtins.min(MAX_BLOCKS, -(-n // (B * PER_THREAD))))


def reduce(x, op: str, out=None):
    """x combined with op ("add", "max" or "min"). Returns a Python number, or writes a
    1-element gr.ndarray `out` (of x's dtype) without waiting for the device and returns it."""
    if op not in ("add", "max", "min"):
        raise ValueError(f"op must be 'add', 'max' or 'min', not {op!r}")
    xd = Args().dev(x, "x", ndim=1)
    if xd.element_type not in (gr.f32, gr.i32, gr.u32):
        raise TypeError(f"x: reductions take f32, i32 or u32 arrays, not {xd.element_type}")
    n = xd.shape[0]
    if n == 0:
        if op != "add":
            raise ValueError(f"{op} of an empty array has no value")
        if out is None:
            return 0.0 if xd.element_type == gr.f32 else 0
    if out is not None:
        if not isinstance(out, gr.Ndarray) or out.shape != (1,):
            raise ValueError("out must be a gr.ndarray of shape (1,)")
        if out.element_type != xd.element_type:
            raise TypeError(f"out: expected dtype {xd.element_type}, got {out.element_type}")
        if n == 0:
            out.fill(0)
            return out
    res = out if out is not None else scratch("reduce.result", xd.element_type, 1)
    sg = has_subgroups()
    g = _blocks(n)
    dt = xd.element_type
    acc_t = _acc_type(CPU_U if gr.device().is_cpu else U, dt)
    if g == 1:
        reduce_blocks(xd, res, op, dt, sg, acc_t)
    else:
        part = scratch("reduce.partials", dt, g)
        reduce_blocks(xd, part, op, dt, sg, acc_t)
        reduce_blocks(part, res, op, dt, sg, acc_t)
    if out is not None:
        return out
    rt = gr.runtime()
    if n * 4 >= rt.EARLY_SUBMIT_BYTES:  # the GPU starts while the host records the readback (docs/runtime.md)
        rt.flush()
    return res.to_numpy()[0].item()


def sum(x, out=None):  # noqa: A001 (the module's API mirrors numpy)
    """The sum of the elements of 1-D array x (see `reduce`)."""
    return reduce(x, "add", out)


def max(x, out=None):  # noqa: A001
    """The largest element of 1-D array x (see `reduce`)."""
    return reduce(x, "max", out)


def min(x, out=None):  # noqa: A001
    """The smallest element of 1-D array x (see `reduce`)."""
    return reduce(x, "min", out)
