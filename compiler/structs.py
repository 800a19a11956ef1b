"""Struct types (Taichi's `ti.types.struct` / `@ti.dataclass`) and their values.

A struct is scalarized like a vector: the IR never sees it. In kernels a struct value is a
`StructValue` (member name -> scalar node, `Compound` or nested `StructValue`), a struct
variable a `StructVar` (member name -> ScalarVar / CompoundVar / StructVar). On the host a
struct value is a `HostStruct` (attribute access, `to_dict()`), and a struct field is one
field per scalar / vector / matrix member (gfxrt/taichi/structs.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .hostmatrix import components, typed_value
from .types import DType, MatrixType, VectorType


@dataclass(frozen=True, eq=False)
class StructType:
    """`gr.types.struct(a=gr.f32, v=vec3)`: named members in declaration order. `methods`
    are the @gr.func methods of a `@gr.dataclass` (callable in kernels as `p.method()`)."""

    members: tuple  # ((name, DType | VectorType | MatrixType | StructType), ...)
    methods: tuple = ()  # ((name, function), ...)
    name: str = "struct"

    def __eq__(self, other) -> bool:
        return isinstance(other, StructType) and self.members == other.members and self.methods == other.methods

    def __hash__(self) -> int:
        return hash(("struct", self.members, tuple(n for n, _ in self.methods)))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.members)

    @property
    def types(self) -> dict:
        return dict(self.members)

    def __getattr__(self, name: str):
        """A @gr.dataclass method by name (`Sphere.area`), as on the Python class."""
        if name.startswith("__"):
            raise AttributeError(name)
        for n, f in object.__getattribute__(self, "methods"):
            if n == name:
                return f
        raise AttributeError(f"{self!r} has no member function {name!r}")

    def method(self, name: str):
        for n, f in self.methods:
            if n == name:
                return f
        return None

    def leaves(self, prefix: str = "") -> list:
        """[(dotted path, scalar / vector / matrix type)] in declaration order, nested structs
        flattened."""
        out = []
        for n, t in self.members:
            if isinstance(t, StructType):
                out += t.leaves(f"{prefix}{n}.")
            else:
                out.append((f"{prefix}{n}", t))
        return out

    @property
    def size(self) -> int:
        """Scalar components in all."""
        return sum(1 if isinstance(t, DType) else t.size for _, t in self.leaves())

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={t!r}" for n, t in self.members)
        return f"struct({inner})"

    # -- Python scope ------------------------------------------------------------------
    def __call__(self, *args, **kwargs) -> HostStruct:
        """`S(a=1.0, v=[1, 2, 3])` in Python scope: a HostStruct (missing members are 0)."""
        return HostStruct(self, bind_members(self, args, kwargs, _host_default, _host_convert))


def bind_members(st: StructType, args, kwargs, default, convert) -> dict:
    """Member name -> value from a constructor call: positional in declaration order,
    keywords, or one dict; missing members get `default(type)`. One number is positional too
    (Taichi's StructType.__call__): `S(1)` sets the first member (every component of it) and
    leaves the others 0."""
    first = st.members[0][1]
    if len(args) == 1 and not kwargs and isinstance(args[0], dict) and set(args[0]) <= set(st.names):
        kwargs, args = dict(args[0]), ()
    if len(args) == 1 and not kwargs and hasattr(args[0], "to_dict") and set(args[0].keys()) <= set(st.names) \
            and not (isinstance(first, StructType) and getattr(args[0], "type", None) == first):
        kwargs, args = args[0].to_dict(), ()  # another struct value with these members
    names = st.names
    if len(args) > len(names):
        raise TypeError(f"{st!r} takes at most {len(names)} positional values, got {len(args)}")
    vals = dict(zip(names, args))
    for k, v in kwargs.items():
        if k not in names:
            raise TypeError(f"{st!r} has no member {k!r} (members: {', '.join(names)})")
        if k in vals:
            raise TypeError(f"member {k!r} given twice")
        vals[k] = v
    types = st.types
    return {n: convert(types[n], vals[n]) if n in vals else default(types[n]) for n in names}


def _is_number(v) -> bool:
    import numbers
    return isinstance(v, numbers.Number) or (hasattr(v, "shape") and getattr(v, "shape", None) == ())


def _host_default(t):
    if isinstance(t, StructType):
        return t()
    if isinstance(t, DType):
        return 0.0 if t.is_float else (False if t.kind == "bool" else 0)
    return t(0)


def _host_convert(t, v):
    if isinstance(t, StructType):
        if _is_number(v) or isinstance(v, dict):
            return t(v)
        if isinstance(v, HostStruct):
            return t(v.to_dict())
        if hasattr(v, "to_dict"):
            return t(v.to_dict())
        return t(*v)
    if isinstance(t, DType):
        v = v.item() if hasattr(v, "item") else v  # a numpy scalar
        return float(v) if t.is_float else (bool(v) if t.kind == "bool" else int(v))
    return typed_value(t, (v,))  # a number fills every component


class HostStruct:
    """A struct value in Python scope: members as attributes (`p.a`, `p.v.x`), `p["a"]`,
    `p.to_dict()`. Passes as a struct kernel argument; a struct kernel return value is one."""

    __slots__ = ("type", "_m")

    def __init__(self, st: StructType, members: dict):
        object.__setattr__(self, "type", st)
        object.__setattr__(self, "_m", members)

    def __getattr__(self, name):
        m = object.__getattribute__(self, "_m")
        if name in m:
            return m[name]
        fn = object.__getattribute__(self, "type").method(name)
        if fn is not None:  # a @gr.dataclass method, run in Python
            import functools
            return functools.partial(getattr(fn, "fn", fn), self)
        raise AttributeError(f"struct has no member {name!r}")

    def __setattr__(self, name, value):
        if name not in self._m:
            raise AttributeError(f"struct has no member {name!r}")
        self._m[name] = _host_convert(self.type.types[name], value)

    def __getitem__(self, name):
        return self._m[name]

    def __setitem__(self, name, value):
        self.__setattr__(name, value)

    def keys(self):
        return self._m.keys()

    @property
    def entries(self) -> dict:
        return self._m

    def items(self):
        return self._m.items()

    def to_dict(self) -> dict:
        """Members as a dict (nested structs as dicts, vectors as gr.Vector values)."""
        return {k: v.to_dict() if isinstance(v, HostStruct) else v for k, v in self._m.items()}

    def __eq__(self, other) -> bool:
        if isinstance(other, HostStruct):
            other = other._m
        if not isinstance(other, dict) or set(other) != set(self._m):
            return False
        return all(components(self._m[k]) == components(other[k]) if not isinstance(self._m[k], HostStruct)
                   else self._m[k] == other[k] for k in self._m)

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in self._m.items()) + "}"


def from_leaves(st: StructType, leaves) -> HostStruct:
    """A HostStruct from its leaf values in declaration order (a kernel's return value:
    numbers, and gr.Vector / gr.Matrix values)."""
    it = iter(leaves)

    def build(t):
        return HostStruct(t, {n: build(mt) if isinstance(mt, StructType) else next(it) for n, mt in t.members})
    return build(st)


# -- kernel-side values -----------------------------------------------------------------

@dataclass(frozen=True)
class StructValue:
    """A struct value in a kernel: member name -> value (node, constant, Compound, StructValue)."""

    type: StructType
    items: Any  # dict, in declaration order


@dataclass(frozen=True)
class StructVar:
    """A struct variable: member name -> ScalarVar / CompoundVar / StructVar."""

    type: StructType
    vars: Any  # dict


def is_member_type(t) -> bool:
    return isinstance(t, (DType, VectorType, MatrixType, StructType))
