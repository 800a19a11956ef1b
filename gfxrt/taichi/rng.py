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
(default 0) and restarts the counters: each gr.init() makes a new `context.RandomState`.

f32: uniform in [0, 1) (23 random mantissa bits); i32 / u32: uniform over every 32-bit value.
"""
from __future__ import annotations

from functools import partial

from gfxrt.compiler.builtins import Builtin
from gfxrt.compiler.npcompat import np
from gfxrt.compiler.rng import SLOTS, lower_random
from gfxrt.compiler.types import f16, f32, f64, i64, u32, u64

from ..data.field import Field
from ..engine import context


def __getattr__(name: str):
    # the offline cache re-resolves a kernel's state field and seed by these paths
    if name == "state":
        return _state()
    if name == "seed":
        return _seed()
    raise AttributeError(name)


def _seed() -> int:
    return context._state["random"].seed


def _state():
    rt = context.runtime()
    rs = context._state["random"]
    if rs.counters is None or rs.counters._rt is not rt:
        rs.counters = Field(u32, (SLOTS,))  # zeroed counters: no upload (allowed in graph capture)
    return rs.counters


def _random_host(dtype=float):
    rng = np.random.default_rng()
    if dtype in (float, f32, f16, f64):
        return float(rng.random())
    lo, hi = {i64: (-2**63, 2**63), u64: (0, 2**64), u32: (0, 2**32)}.get(dtype, (-2**31, 2**31))
    return int(rng.integers(lo, hi, dtype=np.uint64 if dtype == u64 else np.int64))


random = Builtin("random", partial(lower_random, state=_state, seed_of=_seed, module=__name__),
                 _random_host,
                 "A random number: f32 uniform in [0, 1) (the default), or i32 / u32 over every value. Differs "
                 "per thread, per call and per launch; gr.init(random_seed=s) seeds it.")
