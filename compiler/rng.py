"""The lowering of `gr.random(dtype=float)` (gfxrt/taichi/rng.py owns the generator's state and says how
it works): one ticket from a counter, hashed with the counter's number and the seed by pcg2d.
"""
from __future__ import annotations

from . import semantic as sem
from .frontend.deps import fingerprint
from .frontend.scope import MemLV
from .ir import Node, Op
from .types import DType, f16, f32, f64, i32, i64, u32, u64

SLOTS = 4096  # counters


def _pcg_host(v: int) -> int:
    v = (v * 747796405 + 2891336453) & 0xFFFFFFFF
    w = (((v >> ((v >> 28) + 4)) ^ v) * 277803737) & 0xFFFFFFFF
    return (w >> 22) ^ w


def _pcg2d_x(x, y, fe, loc):
    """The first word of pcg2d(x, y) (Jarzynski & Olano, "Hash Functions for GPU Rendering", 2020)."""
    b = sem.binary
    x = fe.temp(b(Op.ADD, b(Op.MUL, x, 1664525, loc), 1013904223, loc), loc)
    y = fe.temp(b(Op.ADD, b(Op.MUL, y, 1664525, loc), 1013904223, loc), loc)
    for last in (False, True):
        x = fe.temp(b(Op.ADD, x, b(Op.MUL, y, 1664525, loc), loc), loc)
        y = fe.temp(b(Op.ADD, y, b(Op.MUL, x, 1664525, loc), loc), loc)
        x = fe.temp(b(Op.BITXOR, x, b(Op.SHR, x, 16, loc), loc), loc)
        if not last:
            y = fe.temp(b(Op.BITXOR, y, b(Op.SHR, y, 16, loc), loc), loc)
    return x


def lower_random(fe, args, kwargs, loc, *, state, seed_of, module: str):
    """gr.random(dtype). The runtime owns the generator's state: `state()` is the field of counters,
    `seed_of()` the seed, `module` the module whose `state` and `seed` the offline cache re-resolves."""
    dt = kwargs.pop("dtype", args[0] if args else float)
    if kwargs or len(args) > 1:
        fe.error("gr.random(dtype=float) takes one optional dtype", loc)
    dt = sem.python_dtype(dt)  # Taichi: the default dtypes
    if dt not in (f32, i32, u32, f16, f64, i64, u64):
        what = dt if isinstance(dt, DType) else fe.describe(dt)
        fe.error(f"gr.random() makes f32, f16, f64, i32, u32, i64 or u64 values, not {what}", loc)
    arr = fe.bind_field(state(), "gr_random_state", (("mod", module), ("a", "state")))
    tid = sem.as_node(Node(Op.SPECIAL, i32, attr="global_thread_idx", loc=loc), loc, u32)
    slot = fe.temp(sem.binary(Op.BITAND, tid, SLOTS - 1, loc), loc)
    ticket = MemLV(arr, sem.as_node(slot, loc, i32), "gr.random's counter").atomic(fe, "add", 1, loc, want_old=True)
    fe.deps[(("mod", module), ("a", "seed"))] = fingerprint(seed_of())  # the seed is compiled in
    seed = sem.as_node(_pcg_host(seed_of()), loc, u32)
    h = _pcg2d_x(ticket, sem.binary(Op.BITXOR, slot, seed, loc), fe, loc)
    if dt.wide:  # 64 bits: a second hash of the same counter gives the low word
        lo = _pcg2d_x(ticket, sem.binary(Op.BITXOR, sem.binary(Op.BITXOR, slot, seed, loc), 0x9E3779B9, loc), fe, loc)
        if dt == f64:  # 53 random bits: (27 of h, 26 of lo) / 2^53, in [0, 1)
            a = sem.as_node(sem.binary(Op.SHR, h, 5, loc), loc, f64)
            b = sem.as_node(sem.binary(Op.SHR, lo, 6, loc), loc, f64)
            return sem.binary(Op.MUL, sem.binary(Op.ADD, sem.binary(Op.MUL, a, 67108864.0, loc), b, loc),
                              1.0 / 9007199254740992.0, loc)
        v = sem.binary(Op.BITOR, sem.binary(Op.SHL, sem.as_node(h, loc, u64), 32, loc), sem.as_node(lo, loc, u64), loc)
        return v if dt == u64 else sem.as_node(v, loc, i64)
    if dt == u32:
        return h
    if dt == i32:
        return Node(Op.BITCAST, i32, (h,), loc=loc)
    one_to_two = Node(Op.BITCAST, f32, (sem.binary(Op.BITOR, sem.binary(Op.SHR, h, 9, loc), 0x3F800000, loc),),
                      loc=loc)
    r = sem.binary(Op.SUB, one_to_two, 1.0, loc)  # [1, 2) - 1: exactly representable, in [0, 1)
    if dt == f16:
        r = sem.as_node(sem.binary(Op.MIN, r, 0.99951171875, loc), loc, f16)  # f16 rounding could reach 1.0
    return r
