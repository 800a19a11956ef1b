"""`gr.random(dtype=float)`: Taichi's `ti.random` inside kernels.

A counter-based generator: each call takes a fresh ticket with one atomic add on a counter
(one of 4096 counters, picked by the thread's id, so neighbouring threads update different
words: with 64 counters an H100 spent 1.1 ms on the atomics of 2^24 calls,
experiments/random_cost.py); the pair (ticket, counter number ^ seed) is unique to the call
and goes through pcg2d (Jarzynski & Olano 2020, a bijection of 64-bit inputs), so one seed
repeats no input before a counter has taken 2^32 tickets (2^44 calls in all). Every call of every
thread of every launch gets a different ticket, so values differ per thread, per call and
per launch (graph replays included) and the sequence depends only on the seed, not on any
host state that a launch would have to upload. `gr.init(random_seed=s)` sets the seed
(default 0) and restarts the counters.

f32: uniform in [0, 1) (23 random mantissa bits); i32 / u32: uniform over every 32-bit value.
"""
from __future__ import annotations

import numpy as np

from compiler import semantic as sem
from compiler.builtins import Builtin
from compiler.cache import fingerprint
from compiler.ir import Node, Op
from compiler.types import DType, f16, f32, f64, i32, i64, u32, u64

from . import context

SLOTS = 4096  # counters
_seed = {"value": 0}
_fields: dict = {}  # id(runtime) -> its state field


def _pcg_host(v: int) -> int:
    v = (v * 747796405 + 2891336453) & 0xFFFFFFFF
    w = (((v >> ((v >> 28) + 4)) ^ v) * 277803737) & 0xFFFFFFFF
    return (w >> 22) ^ w


def set_seed(seed: int) -> None:
    """Seed the generator (gr.init(random_seed=...)); restarts the counters."""
    if not isinstance(seed, (int, np.integer)):
        raise TypeError(f"random_seed must be an int, got {seed!r}")
    _seed["value"] = int(seed) & 0xFFFFFFFF
    _fields.clear()  # kernels recompile after gr.init() and bind a fresh state


context.ON_SEED.append(set_seed)


def __getattr__(name: str):
    # the offline cache re-resolves a kernel's state field and seed by these paths
    if name == "state":
        return _state()
    if name == "seed":
        return _seed["value"]
    raise AttributeError(name)


def _state():
    from .field import Field
    rt = context.runtime()
    f = _fields.get(id(rt))
    if f is None or f._rt is not rt:
        f = _fields[id(rt)] = Field(u32, (SLOTS,))  # zeroed counters: no upload (allowed in graph capture)
    return f


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


def _random_lower(fe, args, kwargs, loc):
    from compiler.frontend.scope import MemLV
    dt = kwargs.pop("dtype", args[0] if args else float)
    if kwargs or len(args) > 1:
        fe.error("gr.random(dtype=float) takes one optional dtype", loc)
    dt = {float: sem.DEFAULTS["fp"], int: sem.DEFAULTS["ip"]}.get(dt, dt)  # Taichi: the default dtypes
    if dt not in (f32, i32, u32, f16, f64, i64, u64):
        what = dt if isinstance(dt, DType) else fe.describe(dt)
        fe.error(f"gr.random() makes f32, f16, f64, i32, u32, i64 or u64 values, not {what}", loc)
    arr = fe.bind_field(_state(), "gr_random_state", (("mod", __name__), ("a", "state")))
    tid = sem.as_node(Node(Op.SPECIAL, i32, attr="global_thread_idx", loc=loc), loc, u32)
    slot = fe.temp(sem.binary(Op.BITAND, tid, SLOTS - 1, loc), loc)
    ticket = MemLV(arr, sem.as_node(slot, loc, i32), "gr.random's counter").atomic(fe, "add", 1, loc, want_old=True)
    fe.deps[(("mod", __name__), ("a", "seed"))] = fingerprint(_seed["value"])  # the seed is compiled in
    seed = sem.as_node(_pcg_host(_seed["value"]), loc, u32)
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


def _random_host(dtype=float):
    rng = np.random.default_rng()
    if dtype in (float, f32, f16, f64):
        return float(rng.random())
    lo, hi = {i64: (-2**63, 2**63), u64: (0, 2**64), u32: (0, 2**32)}.get(dtype, (-2**31, 2**31))
    return int(rng.integers(lo, hi, dtype=np.uint64 if dtype == u64 else np.int64))


random = Builtin("random", _random_lower, _random_host,
                 "A random number: f32 uniform in [0, 1) (the default), or i32 / u32 over every value. Differs "
                 "per thread, per call and per launch; gr.init(random_seed=s) seeds it.")
