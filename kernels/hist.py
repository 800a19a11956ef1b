"""Histograms with atomics.

    kernels.histogram(keys, bins, out)               # int keys: out[k] += 1 for 0 <= k < bins
    kernels.histogram(x, bins, out, range=(lo, hi))  # f32 values: bins equal-width bins on [lo, hi]

`out` is an i32 array of `bins` counts; it is zeroed first unless accumulate=True. Float
values follow np.histogram: bin k holds lo + k w <= v < lo + (k + 1) w, the last bin includes
hi, values outside [lo, hi] (and NaN) are not counted. Keys outside [0, bins) are not counted.

The fast form for small histograms: each block of 256 threads counts into its own histogram
in workgroup memory (atomics there are cheap and rarely collide across a whole device), then
adds it to `out` with one global atomic per non-empty bin. Up to LOCAL_BINS bins; more bins
count straight into `out` with global atomics (they rarely collide then). The number of
blocks is capped (MAX_BLOCKS, and MERGE_BUDGET / bins) and each thread walks a strided
share of the input, so merging the block-local histograms stays a small part of the work.
"""
from __future__ import annotations

import builtins

import gfxrt as gr

from ._util import Args

B = 256
MAX_BLOCKS = 1024
MERGE_BUDGET = 1 << 18  # at most this many bins merged into `out` per launch: blocks <= budget / bins
LOCAL_BINS = 4096    # 16 KiB of workgroup memory: WebGPU's guaranteed minimum
PER_THREAD = 16      # fewest elements per thread before more blocks start


@gr.func
def bin_of(v, bins, lo, scale, hi, is_float: gr.template()):
    """The bin of value v, or -1 when it is not counted."""
    b = -1
    if gr.static(is_float):
        if v >= lo and v <= hi:
            b = gr.min(gr.cast(gr.floor((v - lo) * scale), gr.i32), bins - 1)  # v == hi: the last bin
    else:
        if v >= 0 and v < bins:
            b = gr.cast(v, gr.i32)
    return b


@gr.kernel
def hist_local(x: gr.types.ndarray(ndim=1), out: gr.types.ndarray(dtype=gr.i32, ndim=1), blocks: gr.i32,
               lo: gr.f32, scale: gr.f32, hi: gr.f32, NB: gr.template(), is_float: gr.template()):
    """Block-local histograms of NB (>= bins) slots, merged into out."""
    gr.loop_config(block_dim=B)
    for t in range(blocks * B):
        h = gr.simt.block.SharedArray((NB,), gr.i32)  # zeroed when the block starts
        n = x.shape[0]
        bins = out.shape[0]
        tid = gr.simt.block.thread_idx()
        j = t
        while j < n:
            b = bin_of(x[j], bins, lo, scale, hi, is_float)
            if b >= 0:
                gr.atomic_add(h[b], 1)
            j += blocks * B
        gr.simt.block.sync()
        k = tid
        while k < bins:
            c = h[k]
            if c != 0:
                gr.atomic_add(out[k], c)
            k += B


@gr.kernel
def hist_global(x: gr.types.ndarray(ndim=1), out: gr.types.ndarray(dtype=gr.i32, ndim=1), lo: gr.f32,
                scale: gr.f32, hi: gr.f32, is_float: gr.template()):
    """One global atomic per counted element."""
    gr.loop_config(block_dim=B)
    for j in range(x.shape[0]):
        b = bin_of(x[j], out.shape[0], lo, scale, hi, is_float)
        if b >= 0:
            gr.atomic_add(out[b], 1)


def _slots(bins: int) -> int:
    """Workgroup-memory slots for `bins` bins: a power of two (few specializations)."""
    return 1 << builtins.max(6, (bins - 1).bit_length())


def histogram(x, bins: int, out=None, range=None, accumulate: bool = False):  # noqa: A002 (numpy's name)
    """Count the elements of 1-D x (i32 / u32 keys, or f32 values with range=(lo, hi)) into
    the i32 array out of `bins` counts. Returns out (a new array of x's kind when not given).
    f32 values without a range use (x.min(), x.max()), as np.histogram does."""
    bins = int(bins)
    if bins <= 0:
        raise ValueError(f"bins must be positive, got {bins}")
    args = Args()
    xd = args.dev(x, "x", ndim=1)
    is_float = xd.element_type == gr.f32
    if xd.element_type not in (gr.f32, gr.i32, gr.u32):
        raise TypeError(f"x: histograms take f32 values or i32 / u32 keys, not {xd.element_type}")
    lo = hi = 0.0
    if is_float:
        if range is None:
            from . import reduce
            lo, hi = (reduce.min(xd), reduce.max(xd)) if xd.shape[0] else (0.0, 1.0)
        else:
            lo, hi = (float(v) for v in range)
        if not lo <= hi:
            raise ValueError(f"range must have lo <= hi, got {(lo, hi)}")
        if lo == hi:  # as numpy: a degenerate range becomes (lo - 0.5, hi + 0.5)
            lo, hi = lo - 0.5, hi + 0.5
    elif range is not None:
        raise ValueError("range is for f32 values; integer keys count into bins 0 .. bins - 1")
    if out is None:
        import numpy as np
        out = gr.ndarray(gr.i32, bins) if isinstance(x, gr.Ndarray) else np.zeros(bins, np.int32)
    od = args.dev(out, "out", dtype=gr.i32, ndim=1, written=True)
    if od.shape != (bins,):
        raise ValueError(f"out must have shape ({bins},), got {od.shape}")
    if not accumulate:
        od.fill(0)
    scale = bins / (hi - lo) if is_float else 0.0
    n = xd.shape[0]
    if n:
        if bins <= LOCAL_BINS:
            blocks = builtins.min(MAX_BLOCKS, MERGE_BUDGET // _slots(bins), -(-n // (B * PER_THREAD)))
            blocks = builtins.max(1, blocks)
            hist_local(xd, od, blocks, lo, scale, hi, _slots(bins), is_float)
        else:
            hist_global(xd, od, lo, scale, hi, is_float)
    args.finish()
    return out
