"""`@gr.func`: a Python function inlined into the kernels that call it.

Defined in the compiler (not in gfxrt) so the pure frontend can recognize it; gfxrt
re-exports the decorator.
"""
from __future__ import annotations

import functools


class Func:
    """A function usable inside kernels. Inside a kernel a call is inlined (funcs may call
    other funcs, but not themselves); on the host the call runs the Python function, with
    gr.* math working on Python numbers and numpy arrays."""

    __gfxrt_func__ = True

    def __init__(self, fn):
        if not callable(fn) or not hasattr(fn, "__code__"):
            raise TypeError(f"@gr.func decorates a Python function, not {type(fn).__name__}")
        self.fn = fn
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<gr.func {self.fn.__qualname__}>"

    def __get__(self, obj, owner=None):
        """`obj.f`: a func method of a @gr.data_oriented class, `obj` its first argument."""
        return self if obj is None else BoundFunc(self, obj)


class BoundFunc:
    """A @gr.func method bound to its instance; a kernel inlines it with `self` = the instance."""

    __gfxrt_func__ = True

    def __init__(self, func: Func, obj):
        self.func, self.obj, self.fn = func, obj, func.fn  # .fn: the offline cache's source hash
        self.__name__, self.__qualname__ = func.__name__, func.__qualname__

    def __call__(self, *args, **kwargs):
        return self.func.fn(self.obj, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<bound gr.func {self.func.fn.__qualname__}>"


def real_func(fn) -> Func:
    """Taichi's `@ti.real_func` (a function compiled once and called, which may recurse): WGSL
    has no calls that recurse, so gfxrt inlines it like @gr.func; recursion is a compile error."""
    f = Func(fn)
    f.real = True
    return f


def func(fn) -> Func:
    """Decorate a Python function so kernels can call it (it is inlined at each call).

    Arguments may be scalars, vectors, matrices, arrays, fields or compile-time values;
    annotations (`v: gr.f32`) convert the argument; `return` may appear anywhere. In a
    @gr.data_oriented class it may be a method (`self.f(i)` inside a kernel).
    """
    if isinstance(fn, (staticmethod, classmethod)):
        return type(fn)(Func(fn.__func__))
    return Func(fn)
