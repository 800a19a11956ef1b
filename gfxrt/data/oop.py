"""`@gr.data_oriented`: classes whose methods are kernels (Taichi's `@ti.data_oriented`).

A kernel or func defined in a class takes `self` (or `cls`) as a template argument: inside,
`self.x` reaches the instance's fields, ndarrays and Python constants, each instance
compiling its own specialization. Taichi allows kernels as methods only on data_oriented
classes, and so does gfxrt (`Kernel.__get__` checks). Python numbers read through `self`
are compile-time constants: changing one after the first call does not recompile (as in
Taichi); re-assigning a field or ndarray member does.
"""
from __future__ import annotations

from ..engine.context import user_facing
from ..errors import CompileError
from .ndarray import Ndarray


def data_oriented(cls):
    """Mark a class whose methods may be @gr.kernel / @gr.func (subclasses inherit the mark)."""
    if not isinstance(cls, type):
        raise TypeError(f"@gr.data_oriented decorates a class, not {type(cls).__name__}")
    cls._data_oriented = True
    return cls


def is_data_oriented(obj) -> bool:
    return getattr(type(obj), "_data_oriented", False)


class BoundKernel:
    """`obj.kernel`: the kernel with `obj` as its first (template) argument."""

    __slots__ = ("kernel", "obj", "__weakref__")

    def __init__(self, kernel, obj):
        self.kernel, self.obj = kernel, obj

    @user_facing
    def __call__(self, *args, **kwargs):
        self._check()
        return self.kernel(self.obj, *args, **kwargs)

    @user_facing
    def grad(self, *args, **kwargs):
        self._check()
        return self.kernel.grad(self.obj, *args, **kwargs)

    def _check(self) -> None:
        if not isinstance(self.obj, type) and not is_data_oriented(self.obj):
            raise CompileError(f"kernel {self.kernel.__name__!r} is a method of {type(self.obj).__name__!r}: decorate "
                               "the class with @gr.data_oriented (Taichi allows kernels as methods only there)")

    def __getattr__(self, name):
        return getattr(self.kernel, name)

    def __repr__(self):
        return f"<bound gr.kernel {self.kernel.__name__} of {self.obj!r}>"


def bind(kernel, obj, owner):
    """Kernel.__get__: a method kernel bound to its instance (or class, for a classmethod)."""
    return kernel if obj is None else BoundKernel(kernel, obj)  # a plain class's instance: refused when called


def member_salt(values) -> tuple:
    """The identities of the field / ndarray members of each data_oriented template argument:
    part of the specialization key, so re-assigning `self.x = other` recompiles."""
    out = ()
    for v in values:
        if is_data_oriented(v):
            d = getattr(v, "__dict__", {})
            out += tuple((k, id(x)) for k, x in d.items() if isinstance(x, Ndarray))
    return out


def template_key(v):
    """A template argument's part of the launch fast path's key."""
    return (v, member_salt((v,))) if getattr(type(v), "_data_oriented", False) else v


__all__ = ["data_oriented", "BoundKernel"]
