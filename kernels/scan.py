"""Prefix sums of 1-D arrays, any length.

    kernels.scan.inclusive(x, out)   # out[i] = x[0] + ... + x[i]
    kernels.scan.exclusive(x, out)   # out[i] = x[0] + ... + x[i-1], out[0] = 0

Two algorithms, chosen per device (`uses_lookback()`):

**Single pass with decoupled look-back** (Merrill & Garland, "Single-pass Parallel Prefix Scan
with Decoupled Look-back", 2016), on GPUs with subgroup operations: one launch, reading x once
and writing out once. Each block of 256 threads takes a tile of LTILE = 256 * PER_LANE
consecutive elements, in the order blocks start: its tile index is a ticket from an atomic
counter. Each subgroup loads S * PER_LANE elements (coalesced rows of S) into registers; the
block adds them up and publishes the tile's sum (its *aggregate*) at once, then scans its
rows with subgroup operations. Then the whole block looks back over the tiles before it
(`look_back_block`): thread t < BLOCK_K reads the published words of tile q - t, and after
one barrier the block adds the aggregates up to the nearest tile that has published its
*inclusive prefix* (the sum of everything up to and including that tile), or reads again
from the nearest tile that has published nothing yet; it publishes its own inclusive prefix,
and the block writes its tile. The loop runs in the block's uniform control flow, without
subgroup operations (a subgroup-wide look-back hung on an H100: its lanes were not
converged inside the loop, see `scan_lookback`).
A published value is 32 bits carried in two 32-bit atomic words, each a 16-bit half of the
value under a 16-bit tag (1: aggregate, 2: inclusive prefix), so a reader never depends on
the order in which two memory locations become visible (WGSL's atomics are relaxed): it takes
a value when both halves carry the same tag, and reads again otherwise. The published words
live in a small state array of two regions used by alternate launches; each launch clears the
other region (what the launch before it used), and the block with the last ticket, once its
look-back is done (it has then seen every tile publish, so every block has read the head
words), resets the ticket counter and flips the region: no block clears words that a block
of the same launch may still read, nothing needs clearing between launches, and graph
replays work.

Measured on an H100 (bench/RESULTS.md, `experiments/scan_ab.py`), 2^24 int32: a tile waits
on its predecessors' aggregates, so what delays a block's aggregate or its inclusive prefix
slows every tile after it. PER_LANE = 24 with a 32-tile block look-back runs in 89 us where
one thread reading 8 tiles a step took 98-108 us; scanning the rows before publishing the
aggregate, looking back before the row scans, 64+ tiles a step, tiles of 128 threads or
per-lane halves in separate arrays were all slower.

Forward progress: a block waits only on tiles of lower tickets, which blocks that already
started hold. The scan relies on a started block being scheduled until it finishes while
another one waits, which NVIDIA, AMD and Intel GPUs do (CUB relies on the same) and WebGPU does
not promise. So the single pass runs only there (not on a CPU adapter; vendor NVIDIA, AMD or
Intel; `subgroup` available: `uses_lookback()`); elsewhere, and on lavapipe (workgroups on a
couple of worker threads, and 65,535 loop passes per invocation: a long wait would stop there
and raise), the multi-pass scan below runs.

**Reduce, then scan** (any adapter): tiles of TILE = 256 * PER_THREAD elements.
1. `tile_sums`: each block sums its tile (block reduction with subgroup operations).
2. The tile sums are scanned (exclusive) by the same method, recursively, in place.
3. `scan_tiles`: each block loads its tile into workgroup memory (coalesced), each thread
   sums its PER_THREAD consecutive elements, the block scans those sums (`kernels.block.
   exclusive_scan`), adds its tile's offset from step 2, and writes the tile back.
That reads x twice and writes it once, over three or more launches.

x and out may be the same array (in place), f32, i32 or u32, gr.ndarrays or numpy arrays.
Integer sums wrap around on overflow; float sums are not in numpy's sequential order, so
they differ from np.cumsum by rounding.
"""
from __future__ import annotations

import gfxrt as gr

from . import block
from ._util import Args, has_subgroups, scratch

B = 256
PER_THREAD = 8          # reduce-then-scan: elements per thread
TILE = B * PER_THREAD
PER_LANE = 24           # single pass: elements each thread keeps in registers
LTILE = B * PER_LANE

LOOKBACK: bool | None = None  # None: `uses_lookback()` decides; True / False force a path (tests, measurements)
LOOKBACK_VENDORS = (0x10DE, 0x1002, 0x8086)  # NVIDIA, AMD, Intel: started blocks keep running

# the single pass's state array (u32): HEAD words, then two regions of 2 words per tile
HEAD = 8                # [0] the region in use (0 / 1); [1], [2] the tiles each region last held
TICKET = 3              # the tickets handed out in this launch
AGG, INC = 1, 2         # tags of a published value: the tile's aggregate, its inclusive prefix
LOOKS = 8               # BLOCK_K = 0: tiles whose published words one thread reads at once (look_back)
BLOCK_K = 32            # > 0: the whole block looks back, BLOCK_K tiles at once (look_back_block)

A1 = gr.types.ndarray(ndim=1)
U1 = gr.types.ndarray(dtype=gr.u32, ndim=1)


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



@gr.func
def publish(state, slot, v, tag: gr.template()):
    """state[slot], state[slot + 1] = the low and high 16 bits of v's bits, each under `tag`."""
    bits = gr.bit_cast(v, gr.u32)
    state[slot] = (gr.u32(tag) << 16) | (bits & 0xFFFF)
    state[slot + 1] = (gr.u32(tag) << 16) | (bits >> 16)


@gr.func
def look_back(state, first, tile, dt: gr.template(), wt: gr.template(), stat, stats: gr.template()):
    """The sum of the tiles before `tile`, from their published words (2 per tile from index
    `first`): aggregates down to the first inclusive prefix. One thread; each step reads the
    words of K = wt.n tiles (q, q - 1, ..., q - K + 1) at once, so that K reads are in flight
    together, then takes them in order up to the first inclusive prefix (done) or the first
    tile that has published nothing yet, or only one half of a value (read again from there)."""
    K = gr.static(wt.n)
    excl = gr.cast(0, dt)
    q = tile - 1
    while q >= 0:
        lo = wt(0)
        hi = wt(0)
        if gr.static(stats):
            stat[0] += 1
        for k in gr.static(range(K)):
            a = first + 2 * gr.max(q - k, 0)
            lo[k] = state[a]
            hi[k] = state[a + 1]
        go = True
        for k in gr.static(range(K)):
            tag = lo[k] >> 16
            if go and tag != 0 and tag == hi[k] >> 16:
                excl += gr.bit_cast((hi[k] << 16) | (lo[k] & 0xFFFF), dt)
                if gr.static(stats):
                    stat[1] += 1
                q = gr.select(tag == INC, -1, q - 1)
                go = tag != INC
            else:
                go = False
    return excl


@gr.func
def look_back_block(state, first, tile, dt: gr.template(), K: gr.template(), ent, code, stat, stats: gr.template()):
    """The sum of the tiles before `tile` (see `look_back`), on thread 0, read by the whole block
    K tiles at a time: thread t < K reads tile q - t. Every thread of the block calls this, with
    the same `tile`: the loop's condition comes from workgroup memory read after a barrier, so
    the block runs it in uniform control flow (no subgroup operation: lanes need not reconverge).
    Each step: thread t stores its tile's value (0 where not ready) into ent and lowers code[p]
    (shared atomic min) to 2 t + 1 where tile q - t holds an inclusive prefix (or lies before
    tile 0) and to 2 t where it has not published a whole value; after one barrier every thread
    takes the lowest such t (2 K: none), steps q back by it (or ends) and thread 0 adds the
    first t (+1 for an inclusive prefix) values. One barrier a step: ent alternates between two
    halves and code among three words, so that a thread running a step ahead never overwrites
    what a slower one still reads (code[p + 1] is reset during step p: its last readers passed
    the barrier of step p - 1).
    ent: 2 K values of dt, code: 3 i32 with code[0] = 2 K on entry."""
    tid = gr.simt.block.thread_idx()
    excl = gr.cast(0, dt)
    q = tile - 1
    p = 0
    h = 0
    while q >= 0:
        if tid < K:
            i = q - tid
            a = first + 2 * gr.max(i, 0)
            lo = state[a]
            hi = state[a + 1]
            tag = lo >> 16
            ready = tag != 0 and tag == hi >> 16
            ent[h + tid] = gr.select(ready and i >= 0, gr.bit_cast((hi << 16) | (lo & 0xFFFF), dt), gr.cast(0, dt))
            if i < 0 or (ready and tag == INC):
                gr.atomic_min(code[p], 2 * tid + 1)
            elif not ready:
                gr.atomic_min(code[p], 2 * tid)
        if tid == 0:
            code[(p + 1) % 3] = 2 * K
        gr.simt.block.sync()
        c = code[p]
        if tid == 0:
            take = (c >> 1) + (c & 1)
            for j in gr.static(range(K)):
                excl += gr.select(j < take, ent[h + j], gr.cast(0, dt))
            if gr.static(stats):
                stat[0] += 1
                stat[1] += take
        q = gr.select((c & 1) == 1, -1, q - (c >> 1))
        p = (p + 1) % 3
        h = K - h
    return excl


@gr.func
def scan_rows(vals, carry, inclusive: gr.template(), V: gr.template()):
    """Scan one subgroup's V rows of S elements (in place), carry added to all."""
    S = gr.simt.subgroup.group_size()
    for r in gr.static(range(V)):
        v = vals[r]
        if gr.static(inclusive):
            s = gr.simt.subgroup.inclusive_add(v)
            vals[r] = s + carry
            carry += gr.simt.subgroup.shuffle(s, S - 1)
        else:
            e = gr.simt.subgroup.exclusive_add(v)
            vals[r] = e + carry
            carry += gr.simt.subgroup.shuffle(e + v, S - 1)
    return vals


@gr.kernel
def scan_lookback(x: A1, out: A1, state: U1, inclusive: gr.template(), dt: gr.template(), vt: gr.template(),
                  wt: gr.template(), block_k: gr.template(), bd: gr.template(), diag: gr.template()):
    """Scan x into out in one pass (decoupled look-back: see the module's docstring), in tiles
    of bd * V elements (bd threads a block), V the length of vector type vt (of dtype dt). The
    whole block looks back block_k tiles a step (`look_back_block`), or, with block_k = 0, one
    thread reads wt.n tiles a step (`look_back`; wt: a u32 vector type). `state` holds HEAD +
    4 * capacity words for up to `capacity` tiles, zero before the first launch. diag (timing
    probes only): "nolookback" uses each tile's own sum (wrong results), "nowrite" writes
    nothing, "stats" writes each tile's look-back steps and tiles summed to out[2 tile], out[2
    tile + 1] instead of the scan, "nobarrier" drops the barrier before the row scans.

    Subgroup operations run only where every lane of the subgroup arrives from a barrier or
    from code without branches: Vulkan does not promise that a subgroup reconverges after
    a branch. Two subgroup-wide look-backs (32 tiles per step, every branch of the loop on
    subgroup-wide values, entered after a barrier) hung on the H100 at sizes of 2-6 tiles: a
    subgroupMin inside the loop returned a value no lane supplied (experiments/scan_hang.py,
    bench/RESULTS.md), so the look-back combines its reads through workgroup memory.

    Each memory round trip a block waits on lengthens every tile's life: the ticket and the
    head words are read together, and no block waits at its end on a counter of blocks done
    (the last ticket resets the state instead): 73 -> 69 us without the look-back, H100."""
    gr.loop_config(block_dim=bd)
    V = gr.static(vt.n)
    for _t in range((x.shape[0] + bd * V - 1) // (bd * V) * bd):
        n = x.shape[0]
        tiles = (n + bd * V - 1) // (bd * V)
        words = (state.shape[0] - HEAD) // 2           # one region: 2 words per tile
        info = gr.simt.block.SharedArray((4,), gr.i32)
        part = gr.simt.block.SharedArray((bd,), dt)      # the subgroups' sums
        pref = gr.simt.block.SharedArray((1,), dt)      # the sum of the tiles before this one
        ent = gr.simt.block.SharedArray((max(2 * block_k, 1),), dt)        # block look-back
        code = gr.simt.block.SharedArray((3,), gr.i32)
        stat = gr.simt.block.SharedArray((2,), gr.i32)                      # diag "stats"
        tid = gr.simt.block.thread_idx()
        if tid == 0:                # the ticket (this block's tile) and the head words, read together
            code[0] = 2 * block_k
            t = gr.atomic_add(state[TICKET], 1)
            g = gr.cast(state[0], gr.i32)
            u1 = state[1]
            u2 = state[2]
            info[0] = gr.cast(t, gr.i32)
            info[1] = HEAD + g * words
            info[2] = HEAD + (1 - g) * words                             # the other region, to clear
            info[3] = 2 * gr.cast(gr.select(g == 0, u2, u1), gr.i32)    # the words its launch used
        gr.simt.block.sync()
        tile = info[0]
        base = info[1]

        lane = gr.simt.subgroup.invocation_id()
        w = gr.simt.subgroup.subgroup_id()
        S = gr.simt.subgroup.group_size()
        nsg = gr.simt.subgroup.num_subgroups()
        start = tile * (bd * V) + w * S * V + lane    # this subgroup's V rows of S elements
        vals = vt(0)
        own = gr.cast(0, dt)
        for r in gr.static(range(V)):
            j = start + r * S
            vals[r] = gr.select(j < n, x[gr.min(j, n - 1)], gr.cast(0, dt))   # no branch
            own += vals[r]
        own = gr.simt.subgroup.reduce_add(own)
        if lane == 0:
            part[w] = own
        gr.simt.block.sync()
        before = gr.cast(0, dt)     # the subgroups before this one
        agg = gr.cast(0, dt)        # the tile's sum
        k = 0
        while k < nsg:              # the same trip count on every thread
            p = part[k]
            agg += p
            before += gr.select(k < w, p, gr.cast(0, dt))
            k += 1
        slot = base + 2 * tile
        if tid == 0:                # publish the aggregate (tile 0: its inclusive prefix) at once
            if tile == 0 or gr.static(diag == "nolookback"):
                publish(state, slot, agg, INC)
            else:
                publish(state, slot, agg, AGG)
        if gr.static(diag != "nobarrier"):
            gr.simt.block.sync()    # the subgroups' lanes together again
        vals = scan_rows(vals, before, inclusive, V)
        excl = gr.cast(0, dt)
        if gr.static(block_k > 0 and diag != "nolookback"):
            excl = look_back_block(state, base, tile, dt, block_k, ent, code, stat, diag == "stats")
        elif tid == 0 and tile > 0 and gr.static(diag != "nolookback"):
            excl = look_back(state, base, tile, dt, wt, stat, diag == "stats")
        if tid == 0:
            if tile > 0 and gr.static(diag != "nolookback"):
                publish(state, slot, excl + agg, INC)
            pref[0] = excl
        gr.simt.block.sync()
        off = pref[0]
        for r in gr.static(range(V)):
            j = start + r * S
            if j < n and (gr.static(diag != "nowrite" and diag != "stats") or vals[r] == gr.cast(-123456789, dt)):
                out[j] = vals[r] + off
        if gr.static(diag == "stats"):
            if tid == 0:
                out[2 * tile] = gr.cast(stat[0], dt)       # look-back steps
                out[2 * tile + 1] = gr.cast(stat[1], dt)   # tiles summed (the depth reached)
        if tid == 0 and tile == tiles - 1:   # the last ticket resets the counter and flips the region: its
            g2 = (base - HEAD) // words      # look-back saw every tile publish, so every block has read
            state[TICKET] = 0                # the head words already
            state[1 + g2] = tiles
            state[0] = 1 - g2
        k = tile * bd + tid          # clear the other region (no block of this launch reads it)
        while k < info[3]:
            state[info[2] + k] = 0
            k += tiles * bd


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


def uses_lookback() -> bool:
    """Whether scans on the current device run the single pass with look-back (see the module's
    docstring): a GPU (not a CPU adapter) of NVIDIA, AMD or Intel with subgroup operations.
    `LOOKBACK = True / False` overrides the choice (True still needs subgroups)."""
    if not has_subgroups():
        return False
    if LOOKBACK is not None:
        return LOOKBACK
    dev = gr.device()
    return not dev.is_cpu and dev.adapter.info.get("vendor_id") in LOOKBACK_VENDORS


_VEC: dict = {}
_WT = gr.types.vector(LOOKS, gr.u32)


def _lookback(x: gr.Ndarray, out: gr.Ndarray, inclusive: bool, per_lane: int | None = None, diag: str = "",
              block_k: int | None = None, block_dim: int = B) -> None:
    """The single pass. per_lane and diag are for timing probes (experiments/scan_lookback.py):
    diag "nolookback" uses each tile's own sum only, "nowrite" writes nothing (wrong results)."""
    dt = x.dtype
    per_lane = per_lane or PER_LANE
    tiles = -(-x.shape[0] // (block_dim * per_lane))
    cap = max(1024, 1 << (tiles - 1).bit_length())  # tiles a state array holds; one array per capacity
    state = scratch("scan.state", gr.u32, HEAD + 4 * cap)
    vt = _VEC.get((dt, per_lane))
    if vt is None:
        vt = _VEC[dt, per_lane] = gr.types.vector(per_lane, dt)
    scan_lookback(x, out, state, inclusive, dt, vt, _WT, BLOCK_K if block_k is None else block_k,
                  block_dim, diag)


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
        if uses_lookback():
            _lookback(xd, od, inclusive)
        else:
            _scan(xd, od, inclusive, has_subgroups(), 0)
    args.finish()
    return out


def inclusive(x, out=None):
    """out[i] = x[0] + ... + x[i] (see `scan`)."""
    return scan(x, out, inclusive=True)


def exclusive(x, out=None):
    """out[i] = x[0] + ... + x[i - 1], out[0] = 0 (see `scan`)."""
    return scan(x, out, inclusive=False)
