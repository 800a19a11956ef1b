"""Probe copy of kernels/scan.py as of commit 2feb3fe (branch i13-scan2's version B: subgroup 0 looks
back 32 tiles per step with subgroup reductions), its look-back loop bounded at 200,000 passes and
recording what the subgroup saw when it gave up into DBG[0] (80 words per tile). Used by
experiments/scan_hang.py only; the shipped scan is kernels/scan.py, whose constants, `publish`
and argument handling this copy imports (it always runs the single pass)."""
from __future__ import annotations

from gfxrt.kernels._util import Args, scratch
from gfxrt.kernels.scan import A1, AGG, HEAD, INC, LTILE, PER_LANE, TICKET, TILE, U1, B, publish, scan_rows  # noqa: F401

import gfxrt as gr

DONE = 4                # the head word counting blocks done (this copy's reset; kernels/scan.py has none)

REREADS = 0             # reads of a tile not ready, per pass of the look-back loop
DBG = [None]            # the u32 gr.ndarray the look-back records into when it gives up
_VEC: dict = {}


@gr.func
def first_unready(lo, hi, i):
    """The lowest lane whose tile (i) has not published both halves of a value (the subgroup's
    size if none); a lane below tile 0 (i < 0) counts as ready."""
    tag = lo >> 16
    ok = (tag != 0 and tag == hi >> 16) or i < 0
    return gr.simt.subgroup.reduce_min(gr.select(ok, gr.simt.subgroup.group_size(),
                                                 gr.simt.subgroup.invocation_id()))


@gr.func
def look_back(state, first, tile, dt: gr.template(), dbg):
    """The sum of the tiles before `tile`, from their published words (2 per tile from index
    `first`), read by a whole subgroup S tiles at a time: lane l reads tile q - l. Each step
    takes the lanes from 0 up to the first not ready, or up to the first that holds an inclusive
    prefix (then it is done); where lane 0's tile is not ready it reads again (REREADS times
    per loop pass, unrolled: an adapter that caps loop passes, lavapipe, then allows that many
    times longer waits). Every lane of the subgroup runs this in uniform control flow: every
    branch here depends on subgroup-wide values only."""
    lane = gr.simt.subgroup.invocation_id()
    S = gr.simt.subgroup.group_size()
    excl = gr.cast(0, dt)
    q = tile - 1
    spins = 0
    r = 0
    f = 0
    while q >= 0 and spins < 200000:
        spins += 1
        i = q - lane
        a = first + 2 * gr.max(i, 0)
        lo = state[a]
        hi = state[a + 1]
        r = first_unready(lo, hi, i)
        for _ in gr.static(range(REREADS)):
            if r == 0:
                lo = state[a]
                hi = state[a + 1]
                r = first_unready(lo, hi, i)
        tag = lo >> 16
        inc = (tag == INC and tag == hi >> 16) or i < 0
        f = gr.simt.subgroup.reduce_min(gr.select(inc, lane, S))   # the first inclusive prefix
        last = gr.select(f < r, f, r - 1)                           # the lanes taken: 0 .. last
        v = gr.bit_cast((hi << 16) | (lo & 0xFFFF), dt)
        excl += gr.simt.subgroup.reduce_add(gr.select(lane <= last and i >= 0, v, gr.cast(0, dt)))
        q = gr.select(f < r, -1, q - r)
    if q >= 0:  # gave up: record what the subgroup saw
        i = q - lane
        a = first + 2 * gr.max(i, 0)
        dbg[tile * 80 + lane] = state[a]
        dbg[tile * 80 + 32 + lane] = state[a + 1]
        if lane == 0:
            dbg[tile * 80 + 64] = gr.cast(q, gr.u32)
            dbg[tile * 80 + 65] = gr.cast(r, gr.u32)
            dbg[tile * 80 + 66] = gr.cast(f, gr.u32)
            dbg[tile * 80 + 67] = gr.cast(S, gr.u32)
            dbg[tile * 80 + 68] = gr.cast(first, gr.u32)
            dbg[tile * 80 + 69] = 7777
    return excl


@gr.kernel
def scan_lookback(x: A1, out: A1, state: U1, inclusive: gr.template(), dt: gr.template(), vt: gr.template(),
                  diag: gr.template(), dbg: U1):
    """Scan x into out in one pass (decoupled look-back: see the module's docstring), in tiles
    of B * V elements, V the length of vector type vt (of dtype dt). `state` holds HEAD + 4 *
    capacity words for up to `capacity` tiles, zero before the first launch.

    Subgroup operations run only where every lane of the subgroup arrives from a barrier or
    from code without branches: Vulkan does not promise that a subgroup reconverges after
    a branch (a subgroup-wide look-back right after one lane's store hung on an H100)."""
    gr.loop_config(block_dim=B)
    V = gr.static(vt.n)
    for _t in range((x.shape[0] + B * V - 1) // (B * V) * B):
        n = x.shape[0]
        tiles = (n + B * V - 1) // (B * V)
        words = (state.shape[0] - HEAD) // 2           # one region: 2 words per tile
        info = gr.simt.block.SharedArray((4,), gr.i32)
        part = gr.simt.block.SharedArray((B,), dt)      # the subgroups' sums
        pref = gr.simt.block.SharedArray((1,), dt)      # the sum of the tiles before this one
        tid = gr.simt.block.thread_idx()
        if tid == 0:
            info[0] = gr.cast(gr.atomic_add(state[TICKET], 1), gr.i32)  # the ticket: this block's tile
            g = gr.cast(state[0], gr.i32)
            info[1] = HEAD + g * words
            info[2] = HEAD + (1 - g) * words                             # the other region, to clear
            info[3] = 2 * gr.cast(state[2 - g], gr.i32)                  # the words its launch used
        gr.simt.block.sync()
        tile = info[0]
        base = info[1]

        lane = gr.simt.subgroup.invocation_id()
        w = gr.simt.subgroup.subgroup_id()
        S = gr.simt.subgroup.group_size()
        nsg = gr.simt.subgroup.num_subgroups()
        start = tile * (B * V) + w * S * V + lane    # this subgroup's V rows of S elements
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
        slot = base + 2 * tile      # lane 0 of subgroup 0 publishes the tile's values
        if w == 0 and lane == 0:    # the aggregate (tile 0: its inclusive prefix) at once
            if tile == 0 or gr.static(diag == "nolookback"):
                publish(state, slot, agg, INC)
            else:
                publish(state, slot, agg, AGG)
        gr.simt.block.sync()
        vals = scan_rows(vals, before, inclusive, V)
        if w == 0:                  # subgroup 0 looks back (its lanes together: no branch since the barrier)
            excl = gr.cast(0, dt)
            if gr.static(diag != "nolookback"):
                excl = look_back(state, base, tile, dt, dbg)
            if lane == 0:
                if tile > 0 and gr.static(diag != "nolookback"):
                    publish(state, slot, excl + agg, INC)
                pref[0] = excl
        gr.simt.block.sync()
        off = pref[0]
        for r in gr.static(range(V)):
            j = start + r * S
            if j < n and (gr.static(diag != "nowrite") or vals[r] == gr.cast(-123456789, dt)):
                out[j] = vals[r] + off
        if tid == 0:    # this block reads no more published words: the last one resets the counters
            done = gr.atomic_add(state[DONE], 1)     # and flips the region
            if done == tiles - 1:
                g2 = (base - HEAD) // words
                state[TICKET] = 0
                state[DONE] = 0
                state[1 + g2] = tiles
                state[0] = 1 - g2
        k = tile * B + tid          # clear the other region (no block of this launch reads it)
        while k < info[3]:
            state[info[2] + k] = 0
            k += tiles * B


def _lookback(x: gr.Ndarray, out: gr.Ndarray, inclusive: bool, per_lane: int | None = None, diag: str = "") -> None:
    """The single pass. per_lane and diag are for timing probes (experiments/scan_lookback.py):
    diag "nolookback" uses each tile's own sum only, "nowrite" writes nothing (wrong results)."""
    dt = x.dtype
    per_lane = per_lane or PER_LANE
    tiles = -(-x.shape[0] // (B * per_lane))
    cap = max(1024, 1 << (tiles - 1).bit_length())  # tiles a state array holds; one array per capacity
    state = scratch("scan.state", gr.u32, HEAD + 4 * cap)
    vt = _VEC.get((dt, per_lane))
    if vt is None:
        vt = _VEC[dt, per_lane] = gr.types.vector(per_lane, dt)
    scan_lookback(x, out, state, inclusive, dt, vt, diag, DBG[0])


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
        _lookback(xd, od, inclusive)
    args.finish()
    return out
