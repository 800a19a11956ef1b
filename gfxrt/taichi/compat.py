"""Taichi names that programs ported by renaming `ti` to `gr` still use.

* `gr.var(dt, shape=None)`: Taichi's pre-1.0 name of `gr.field`.
* `@gr.layout`: Taichi's pre-0.6 layout function (it runs, placing the fields, at once).
(Taichi's exception names are in gfxrt/taichi/errors.py.)
"""
from __future__ import annotations

import warnings
from types import SimpleNamespace

from .. import types
from ..data.field import field

__all__ = ["var", "layout", "core"]


def _core():
    return SimpleNamespace(is_signed=types.is_signed, is_integral=types.is_integral, is_real=types.is_real)


# `ti.core.is_signed(dt)` & co.: the type predicates of Taichi's C++ module that older programs call
core = _core()


def var(dt, shape=None, needs_grad: bool = False, name: str = ""):
    """Taichi's old `ti.var(dt, shape=None)`: a `gr.field`."""
    warnings.warn("gr.var is Taichi's pre-1.0 name; use gr.field", DeprecationWarning, stacklevel=2)
    return field(dt, shape=shape, needs_grad=needs_grad, name=name)


def layout(fn):
    """Taichi's old `@ti.layout`: the decorated function places fields; it runs now."""
    warnings.warn("@gr.layout is Taichi's pre-0.6 API; call gr.root.dense(...).place(...) directly",
                  DeprecationWarning, stacklevel=2)
    fn()
    return fn
