"""Prefix sums of 1-D arrays, any length.

    kernels.scan.inclusive(x, out)   # out[i] = x[0] + ... + x[i]
    kernels.scan.exclusive(x, out)   # out[i] = x[0] + ... + x[i-1], out[0] = 0

Work-efficient and tiled (reduce, then scan): each block of 256 threads owns a tile of
TILE = 256 * PER_THREAD consecutive elements.
1. `tile_sums`: each block sums its tile (block reduction with subgroup operations).
2. The tile sums are scanned (exclusive) by the same method, recursively, in place.
3. `scan_tiles`: each block loads its tile into workgroup memory (coalesced), each thread
   sums its PER_THREAD consecutive elements, the block scans those sums (`kernels.block.
   exclusive_scan`), adds its tile's offset from step 2, and writes the tile back.
Reading x twice and writing it once is less traffic than scan-then-add-back (two reads,
two writes). A single tile (n <= TILE) is one launch.

x and out may be the same array (in place), f32, i32 or u32, gr.ndarrays or numpy arrays.
Integer sums wrap around on overflow; float sums are not in numpy's sequential order, so
they differ from np.cumsum by rounding.
"""
from __future__ import annotations

import gfxrt as gr

from . import block
from ._util import Args, has_subgroups, scratch

B = 256
PER_THREAD = 8
TILE = B * PER_THREAD

A1 = gr.types.ndarray(ndim=1)


@gr.kernel
def tile_sums(x: A1, sums: A1, dt: gr.template(), sg: gr.template()):
    """sums[b] = the sum of tile b of x."""
    gr.loop_config(block_dim=B)
    for _t in range(sums.shape[0] * B):
        tid = gr.simt.block.thread_idx()
        base = gr.simt.block.block_idx() * TILE
        acc = gr.cast(0, dt)
        for k in gr.static(range(PER_THREAD)):
            j = base + k * B + tid
            if j < x.shape[0]:
                acc += x[j]
        r = block.reduce(acc, "add", dt, B, sg)
        if tid == 0:
            sums[gr.simt.block.block_idx()] = r


@gr.kernel
def scan_tiles(x: A1, out: A1, offsets: A1, inclusive: gr.template(), dt: gr.template(), sg: gr.template(),
               has_offsets: gr.template()):
    """Scan each tile of x into out, plus offsets[tile] when has_offsets."""
    gr.loop_config(block_dim=B)
    for _t in range((x.shape[0] + TILE - 1) // TILE * B):
        n = x.shape[0]
        tile = gr.simt.block.SharedArray((TILE,), dt)
        tid = gr.simt.block.thread_idx()
        blk = gr.simt.block.block_idx()
        base = blk * TILE
        for k in gr.static(range(PER_THREAD)):  # coalesced load
            j = base + k * B + tid
            v = gr.cast(0, dt)
            if j < n:
                v = x[j]
            tile[k * B + tid] = v
        gr.simt.block.sync()
        p = block.rank(sg) * PER_THREAD  # this thread's PER_THREAD consecutive elements
        s = gr.cast(0, dt)
        for k in gr.static(range(PER_THREAD)):
            s += tile[p + k]
        run = block.exclusive_scan(s, dt, B, sg)
        if gr.static(has_offsets):
            run += offsets[blk]
        for k in gr.static(range(PER_THREAD)):
            v = tile[p + k]
            if gr.static(inclusive):
                run += v
                tile[p + k] = run
            else:
                tile[p + k] = run
                run += v
        gr.simt.block.sync()
        for k in gr.static(range(PER_THREAD)):  # coalesced store
            j = base + k * B + tid
            if j < n:
                out[j] = tile[k * B + tid]


def _scan(x: gr.Ndarray, out: gr.Ndarray, inclusive: bool, sg: bool, level: int) -> None:
    n, dt = x.shape[0], x.dtype
    tiles = -(-n // TILE)
    if tiles <= 1:
        scan_tiles(x, out, x, inclusive, dt, sg, False)
        return
    sums = scratch(f"scan.sums{level}", dt, tiles)
    tile_sums(x, sums, dt, sg)
    _scan(sums, sums, False, sg, level + 1)
    scan_tiles(x, out, sums, inclusive, dt, sg, True)


def scan(x, out=None, inclusive: bool = True):
    """Prefix sums of 1-D x into out (same shape and dtype; default: a new array of x's kind).
    Returns out. Runs without waiting for the device when x and out are gr.ndarrays."""
    args = Args()
    xd = args.dev(x, "x", ndim=1, written=out is x)
    if xd.element_type not in (gr.f32, gr.i32, gr.u32):
        raise TypeError(f"x: scans take f32, i32 or u32 arrays, not {xd.element_type}")
    if out is None:
        out = gr.ndarray(xd.element_type, xd.shape) if isinstance(x, gr.Ndarray) else x.copy()
    od = xd if out is x else args.dev(out, "out", dtype=xd.element_type, written=True, ndim=1)
    if od.shape != xd.shape:
        raise ValueError(f"out has shape {od.shape}, x has {xd.shape}")
    if xd.shape[0]:
        _scan(xd, od, inclusive, has_subgroups(), 0)
    args.finish()
    return out


def inclusive(x, out=None):
    """out[i] = x[0] + ... + x[i] (see `scan`)."""
    return scan(x, out, inclusive=True)


def exclusive(x, out=None):
    """out[i] = x[0] + ... + x[i - 1], out[0] = 0 (see `scan`)."""
    return scan(x, out, inclusive=False)
