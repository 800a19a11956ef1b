"""Taichi's user-defined gradients: `gr.ad.grad_replaced`, `gr.ad.grad_for`, `gr.ad.no_grad`,
and `gr.ad.clear_all_gradients()`.

A `@gr.ad.grad_replaced` Python function (plain or a method of a @gr.data_oriented class)
runs its kernels as usual, but a `gr.Tape` records the function, not those kernels; the
backward pass calls the function registered with `@gr.ad.grad_for(f)` with the same
arguments instead of the kernels' automatic gradients. `@gr.ad.no_grad` records a function
whose backward does nothing. The Tape still zeroes the gradients of what the function's
kernels touch before its backward pass (clear_gradients=True).
"""
from __future__ import annotations

import functools

from ..data.field import _FIELDS
from ..engine import context
from ..engine.threadstate import THREAD
from .autodiff import _grad_containers


class _Collector:
    """Stands in for the Tape while a replaced function runs: keeps its launches aside."""

    def __init__(self):
        self.launches: list[tuple] = []


class _Replaced:
    """A Tape entry for a grad_replaced / no_grad call: `.grad` runs the user's backward."""

    replaced = True

    def __init__(self, fn, inner):
        self.fn, self.inner = fn, inner
        self.__name__ = getattr(fn, "__name__", "grad_replaced")

    def __call__(self, *args, **kwargs):  # a rerun (gr.Tape(grad_check=...)): no recording
        saved, THREAD.tape = THREAD.tape, None
        try:
            self.fn.__wrapped__(*args, **kwargs)
        finally:
            THREAD.tape = saved

    def grad(self, *args, **kwargs):
        backward = self.fn.grad
        if backward is None:
            raise RuntimeError(f"{self.__name__} is @gr.ad.grad_replaced but no @gr.ad.grad_for({self.__name__}) "
                               "function was registered")
        saved, THREAD.tape = THREAD.tape, None
        try:
            backward(*args, **kwargs)
        finally:
            THREAD.tape = saved

    def grad_fields(self, args, kwargs) -> list:
        """What the function's kernels touched (the Tape clears their gradients)."""
        out = []
        for k, a, kw in self.inner:
            out.extend(_grad_containers(k, a, kw)[0])
        return out


def _recording(func, backward):
    @functools.wraps(func)
    def decorated(*args, **kwargs):
        tape = THREAD.tape
        if tape is None:
            return func(*args, **kwargs)
        collector = _Collector()
        THREAD.tape = collector
        try:
            r = func(*args, **kwargs)
        finally:
            THREAD.tape = tape
        tape.launches.append((_Replaced(decorated, collector.launches), tuple(args), dict(kwargs)))
        return r
    decorated.grad = backward
    return decorated


def grad_replaced(func):
    """Taichi's `@ti.ad.grad_replaced`: inside a gr.Tape, `func`'s backward is the function
    registered with `@gr.ad.grad_for(func)`, called with the same arguments."""
    return _recording(func, None)


def grad_for(primal):
    """Taichi's `@ti.ad.grad_for(primal)`: register the decorated function as the backward of
    the @gr.ad.grad_replaced function `primal`."""
    if not hasattr(primal, "grad"):
        raise RuntimeError(f"{getattr(primal, '__name__', primal)!r} is not a @gr.ad.grad_replaced function")
    if primal.grad is not None:  # registered already, or @gr.ad.no_grad
        raise RuntimeError(f"{primal.__name__!r} already has a gradient function")

    def decorator(func):
        @functools.wraps(func)
        def decorated(*args, **kwargs):
            func(*args, **kwargs)
        primal.grad = decorated
        return decorated
    return decorator


def _nothing(*args, **kwargs):
    return None


def no_grad(func):
    """Taichi's `@ti.ad.no_grad`: a gr.Tape runs nothing for `func` in the backward pass."""
    return _recording(func, _nothing)


def clear_all_gradients(gradient_type=None) -> None:
    """Zero the gradient of every live field with needs_grad=True (Taichi's
    `ti.ad.clear_all_gradients()`; gr.ndarrays are not global: clear those with x.grad.fill(0))."""
    rt = context._state["runtime"]
    for f in list(_FIELDS.values()):
        if getattr(f, "needs_grad", False) and f.grad is not None and f._rt is rt:
            f.grad.fill(0)


__all__ = ["grad_replaced", "grad_for", "no_grad", "clear_all_gradients"]
