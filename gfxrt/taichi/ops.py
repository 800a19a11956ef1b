"""Taichi's smaller `ti.*` functions (their lowerings: compiler/taichi_ops.py), and `randn(dt=None)`:
a standard normal by Box-Muller on gr.random."""
from __future__ import annotations

import math as _m

from gfxrt.compiler import semantic as sem
from gfxrt.compiler.builtins import BUILTINS as _B
from gfxrt.compiler.builtins import Builtin, inline_module_func
from gfxrt.compiler.func import func
from gfxrt.compiler.npcompat import np
from gfxrt.compiler.taichi_ops import BUILTINS as _OPS
from gfxrt.compiler.taichi_ops import StaticAssertionError, dtype_arg, pyfunc  # noqa: F401
from gfxrt.compiler.types import f32

from .rng import random

cos, log, sqrt = _B["cos"], _B["log"], _B["sqrt"]


@func
def _randn():
    u1 = 1.0 - random(f32)  # (0, 1]: log is finite
    u2 = random(f32)
    return sqrt(-2.0 * log(u1)) * cos(2.0 * _m.pi * u2)


def _randn_lower(fe, args, kwargs, loc):
    dt = dtype_arg(fe, dict(kwargs), args, 0, "randn", loc, key="dt")
    r = inline_module_func(fe, _randn, (), {}, loc)
    return r if dt is None or dt == f32 else sem.as_node(r, loc, dt)


def _randn_host(dt=None):
    return float(np.random.default_rng().standard_normal())


randn = Builtin("randn", _randn_lower, _randn_host, "A standard normal random number (Box-Muller on gr.random).")
BUILTINS = {**_OPS, "randn": randn}

__all__ = [*BUILTINS, "StaticAssertionError", "pyfunc"]
