"""`gr.Vector` / `gr.Matrix` values in Python scope: numpy arrays with Taichi's methods.

`gr.Vector([1, 2, 3])` outside a kernel, `vec3(1, 2, 3)` (a `gr.types.vector` called on the
host) and the element `x[i]` of a vector / matrix container read on the host are
`HostMatrix` objects: numpy arrays (so numpy code takes them as they are) that also have
Taichi's `.n`, `.m`, `.x`/`.y`/`.z`/`.w`, `.norm()`, `.dot()`, `.cross()`, `.to_numpy()` ...
An element read from a container writes through: `x[i][0] = 1.0` stores into `x[i]`, as in
Taichi. Kernels take them as vector / matrix arguments, and a kernel that reads one from a
module global gets its values as compile-time constants.

Where numpy cannot be imported (Pyodide in a browser tab), `HostMatrix` is
compiler/hostmatrix_list.py's `ListMatrix` instead: the same API on a list of Python numbers.
Constructors take a gfxrt dtype (`gr.f32`) for `dtype` (the numpy class also a numpy dtype).
"""
from __future__ import annotations

from . import npcompat
from .hostmatrix_list import ListMatrix, components, is_number, nest
from .npcompat import np

_SWIZZLE = ("xyzw", "rgba", "stpq")  # Taichi's (GLSL's) letter sets


def _swizzle(name: str, n: int):
    """The component indices `v.x`, `v.zyx`, `v.stp` name (one letter set, 1 to 4 letters, each
    below n), or None."""
    for letters in _SWIZZLE:
        if 0 < len(name) <= 4 and all(c in letters for c in name):
            idx = [letters.index(c) for c in name]
            return idx if max(idx) < n else None
    return None


def _define():
    """The class, defined on first use: it subclasses numpy's ndarray, so it needs numpy (a program
    without numpy has no HostMatrix values: compiler/npcompat.py)."""
    class HostMatrix(np.ndarray):
        """A vector (1-d) or matrix (2-d) value in Python scope; see the module doc."""

        __gfxrt_matrix__ = True

        def __new__(cls, data, dtype=None, owner=None):
            obj = np.array(data, dtype=getattr(dtype, "numpy", dtype)).view(cls)  # a gfxrt DType or numpy's
            if obj.ndim not in (1, 2):
                raise ValueError(f"a gr.Vector / gr.Matrix has 1 or 2 dimensions, got shape {obj.shape}")
            if obj.dtype == object or obj.dtype.kind not in "biuf":
                raise TypeError(f"a gr.Vector / gr.Matrix holds numbers, not {obj.dtype}")
            obj._owner = owner
            return obj

        def __array_finalize__(self, obj):
            self._owner = None  # results and views of a container element do not write through
            self._truth = None  # how `bool()` reads a comparison's result (see __eq__)

        def __getitem__(self, key):
            """A component is a Python number, as in Taichi (`v[0]` is a float, not a numpy scalar);
            a row or a slice stays a HostMatrix."""
            r = super().__getitem__(key)
            return r.item() if isinstance(r, np.generic) else r

        def __eq__(self, other):
            """Element-wise, as in Taichi and numpy; its truth is "all equal", so that
            `assert x[None] == [1.0, 2.0]` means what it says (numpy refuses the truth of an array;
            Taichi's is always True)."""
            return self._compared(super().__eq__(other), np.all)

        def __ne__(self, other):
            """Element-wise; its truth is "some component differs" (`not (v == w)`)."""
            return self._compared(super().__ne__(other), np.any)

        __hash__ = None

        @staticmethod
        def _compared(r, truth):
            if isinstance(r, HostMatrix):
                r._truth = truth
            return r

        def __bool__(self) -> bool:
            if self._truth is not None:
                return bool(self._truth(np.asarray(self)))
            return super().__bool__()

        def __setitem__(self, key, value):
            super().__setitem__(key, value)
            if self._owner is not None:
                container, idx = self._owner
                container[idx] = np.asarray(self)

        def __getattr__(self, name):
            idx = _swizzle(name, self.shape[0]) if self.ndim == 1 else None
            if idx is not None:  # `v.x`, `v.zyx`, `v.xxxx`: a component, or a new vector of them
                return self[idx[0]] if len(idx) == 1 else HostMatrix(np.asarray(self)[idx])
            raise AttributeError(f"gr.Vector / gr.Matrix value has no attribute {name!r}")

        def __setattr__(self, name, value):
            idx = _swizzle(name, self.shape[0]) if self.ndim == 1 and not name.startswith("_") else None
            if idx is not None:
                if len(set(idx)) != len(idx):
                    raise AttributeError(f"cannot assign to the swizzle .{name}: it repeats a component")
                self[idx[0] if len(idx) == 1 else idx] = value
                return
            super().__setattr__(name, value)

        def __repr__(self) -> str:
            kind = "Vector" if self.ndim == 1 else "Matrix"
            return f"gr.{kind}({np.asarray(self).tolist()})"

        __str__ = __repr__

        # -- Taichi's Python-scope Matrix API ----------------------------------------------------
        @property
        def n(self) -> int:
            return self.shape[0]

        @property
        def m(self) -> int:
            return self.shape[1] if self.ndim == 2 else 1

        @property
        def value(self):
            """Taichi 0.x/1.0's `x[None].value` (the element proxy's value): the value itself."""
            return self

        def to_numpy(self) -> np.ndarray:
            return np.array(self)

        def to_list(self) -> list:
            return np.asarray(self).tolist()

        def norm(self, eps=0):
            return float(np.sqrt(np.sum(np.asarray(self, np.float64) ** 2) + eps))

        def norm_sqr(self):
            return np.sum(np.asarray(self) ** 2).item()

        def norm_inv(self, eps=0):
            return 1.0 / self.norm(eps)

        def normalized(self, eps=0):  # Taichi's: v / (norm() + eps)
            return HostMatrix(np.asarray(self) / (np.sqrt(np.sum(np.asarray(self) ** 2)) + eps))

        def dot(self, other):
            return np.dot(np.asarray(self).ravel(), np.asarray(other).ravel()).item()

        def cross(self, other):
            a, b = np.asarray(self), np.asarray(other)
            if a.shape == (2,) and np.shape(b) == (2,):
                return (a[0] * b[1] - a[1] * b[0]).item()
            return HostMatrix(np.cross(a, b))

        def outer_product(self, other):
            return HostMatrix(np.outer(np.asarray(self), np.asarray(other)))

        def transpose(self, *axes):
            return HostMatrix(np.asarray(self).T) if not axes else super().transpose(*axes)

        @property
        def T(self):
            return self.transpose()

        def trace(self, *args, **kwargs):
            return np.trace(np.asarray(self), *args, **kwargs).item()

        def determinant(self):
            return np.linalg.det(np.asarray(self, np.float64)).item()

        def inverse(self):
            return HostMatrix(np.linalg.inv(np.asarray(self, np.float64)))

        def cast(self, dtype):
            return HostMatrix(np.asarray(self), dtype=dtype)

    return HostMatrix


def __getattr__(name: str):
    if name == "HostMatrix":  # the class in use: numpy's subclass, or ListMatrix where numpy is absent
        cls = globals()["HostMatrix"] = _define() if _numpy_importable() else ListMatrix
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _numpy_importable() -> bool:
    try:
        npcompat.require()
    except ImportError:
        return False
    return True


def _cls():
    return globals().get("HostMatrix") or __getattr__("HostMatrix")


def value(data, dt=None, owner=None):
    """A gr.Vector / gr.Matrix value of `data` (a nested list, or any host value components() reads),
    stored as dtype `dt` (None: numpy's default for its numbers); `owner`: (container, index) it
    writes through to."""
    return _cls()(data, dtype=dt, owner=owner)


def host_vector(items, dt=None):
    """`gr.Vector([x, y, z], dt=None)` in Python scope."""
    a = value(items, dt)
    if a.ndim != 1:
        raise ValueError("gr.Vector takes a list of numbers; use gr.Matrix for rows")
    return a


def host_matrix(rows, dt=None):
    """`gr.Matrix([[a, b], [c, d]], dt=None)` in Python scope (a flat list is a column vector)."""
    return value(rows, dt)


def typed_value(t, args: tuple):
    """`vec3(1, 2, 3)`, `vec3(0)`, `vec3(v)`, `mat2([[1, 2], [3, 4]])`, `mat2(1, 2, 3, 4)`, `vec3(v2, s)` in
    Python scope: the arguments' components in order (as in kernels, frontend/compound.py)."""
    parts = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    flat = [x for p in parts for x in components(p)[0]]
    size = t.size
    if len(flat) == 1:
        flat = flat * size
    elif len(flat) != size:
        raise ValueError(f"{t!r} needs {size} values (or one for every component), got {len(flat)}")
    return value(nest(flat, t.shape), t.dtype)


__all__ = ["components", "is_number", "nest", "value", "host_vector", "host_matrix", "typed_value"]
