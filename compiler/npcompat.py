"""numpy as an input format, never a dependency of the compiler (docs/design.md, "The compiler").

gfxrt.compiler imports and compiles kernels without numpy (Pyodide in a browser has none): its
rules (constant folding, the op table, typing) compute on Python numbers (compiler/opsem.py).
numpy takes part only where a numpy value comes in (a captured array, a numpy scalar as a
constant, a numpy dtype) or where a host function is asked to compute on arrays (`gr.sin(a)`
outside kernels). This module is the one place that reaches numpy:

- `loaded()`: the numpy module if the program has imported it, else None. A numpy value can only
  exist once numpy is imported, so tests of a value's type never import it themselves.
- `is_array(v)`, `is_scalar(v)`, `is_value(v)`: the tests, by `loaded()`.
- `np`: numpy, imported on first use, for code that computes on numpy values (host functions,
  the IR interpreter, HostMatrix); without numpy it raises ImportError naming what needed it.
- `fn(name)`: a host function `numpy.<name>` resolved when called (a row of the op table can
  name numpy's function without importing numpy).
- `or_python(host, py)`: a builtin's host function that, where numpy is not installed, computes
  on Python numbers by the op row's own rule (`py`: `gr.sin(0.5)` is `math.sin(0.5)` there).
"""
from __future__ import annotations

import importlib
import sys


def loaded():
    """The numpy module if it is imported (so values of it may exist), else None."""
    return sys.modules.get("numpy")


def is_array(v) -> bool:
    """v is a numpy ndarray (or a subclass: HostMatrix)."""
    m = loaded()
    return m is not None and isinstance(v, m.ndarray)


def is_scalar(v) -> bool:
    """v is a numpy scalar (np.float32(1), np.int64(2), np.bool_(True), ...)."""
    m = loaded()
    return m is not None and isinstance(v, m.generic)


def scalar_kind(v) -> str:
    """The dtype kind of a numpy scalar ('b', 'i', 'u', 'f', 'c', ...); '' for anything else."""
    return v.dtype.kind if is_scalar(v) else ""


def is_plain_array(v) -> bool:
    """v is exactly a numpy ndarray (not a subclass)."""
    m = loaded()
    return m is not None and type(v) is m.ndarray


def is_value(v) -> bool:
    """v is a numpy array or scalar."""
    return is_array(v) or is_scalar(v)


def require(what: str = "this"):
    """numpy, imported now; ImportError saying what needs it where it is not installed."""
    try:
        return importlib.import_module("numpy")
    except ImportError as e:
        raise ImportError(f"{what} needs numpy, which is not installed (kernels compile without it)") from e


class _Lazy:
    """numpy's namespace, imported on the first attribute read; each attribute read once is kept
    (later reads are plain attribute lookups, as on the module)."""

    def __getattr__(self, name):
        m = sys.modules.get("numpy") or require(f"numpy.{name}")
        value = getattr(m, name)
        self.__dict__[name] = value
        return value

    def __repr__(self) -> str:
        return "<numpy, imported on first use (gfxrt.compiler.npcompat)>"


np = _Lazy()


def fn(name: str):
    """The host function numpy.<name> (dots for submodules: 'linalg.norm'), resolved when called."""
    def call(*args, **kwargs):
        f = require(f"gr.{name.rpartition('.')[2]} outside kernels")
        for part in name.split("."):
            f = getattr(f, part)
        return f(*args, **kwargs)
    call.__name__ = call.__qualname__ = name.rpartition(".")[2]
    return call


_installed: bool | None = None


def installed() -> bool:
    """numpy can be imported (it is imported by this test, once)."""
    global _installed
    if loaded() is not None:
        return True
    if _installed is None:
        try:
            require()
            _installed = True
        except ImportError:
            _installed = False
    return _installed


def or_python(host, py):
    """host (numpy's function: numpy values, sequences, and Python numbers where numpy is
    installed, as Taichi's ti.sin(0.5) gives numpy's value) or, without numpy, `py` on Python numbers."""
    def call(*args, **kwargs):
        if kwargs or installed() or not all(isinstance(a, int | float) for a in args):
            return host(*args, **kwargs)
        return py(*args)
    call.__name__ = call.__qualname__ = getattr(host, "__name__", "host")
    return call


__all__ = ["loaded", "is_array", "is_scalar", "is_value", "require", "np", "fn", "installed", "or_python"]
