"""Struct fields and types: `gr.types.struct`, `gr.Struct.field`, `@gr.dataclass`.

A struct field is stored member by member (SoA): one `gr.field` per scalar / vector /
matrix member, a nested `StructField` per struct member. `s.a` is the member field (as in
Taichi); `s[i]` from the host is a write-through view of element i (`s[i].a = 1.0`,
`s[i].v.x`); `s[i] = S(...)` or a dict writes every member; `to_numpy()` returns a dict of
arrays. Kernels see the members as separate arrays (compiler/frontend/structs.py).
"""
from __future__ import annotations

from gfxrt.compiler.func import Func
from gfxrt.compiler.npcompat import np
from gfxrt.compiler.structs import HostStruct, StructType, is_member_type
from gfxrt.compiler.types import DType

from ..data.field import _member_type, field, struct  # noqa: F401  (gr.types.struct; below, in field.py)
from ..data.hostaccess import element_index
from ..data.ndarray import as_element_type, as_shape, not_picklable
from ..errors import CompileError
from ..types import matrix, vector


class StructField:
    """A field of structs; see the module docstring."""

    __gfxrt_struct_field__ = True

    def __init__(self, st: StructType, members: dict):
        object.__setattr__(self, "type", st)
        object.__setattr__(self, "_members", members)

    @classmethod
    def make(cls, st: StructType, shape, needs_grad: bool = False, offset=None) -> StructField:
        if shape is not None:
            shape = as_shape(shape, "gr.field shape")  # checked once, before any member is allocated
        members = {}
        for n, t in st.members:
            if isinstance(t, StructType):
                members[n] = cls.make(t, shape, needs_grad, offset)
            else:
                grad = needs_grad and (t if isinstance(t, DType) else t.dtype).is_float
                members[n] = field(t, shape=None if shape is None else shape, needs_grad=grad, offset=offset)
        return cls(st, members)

    # -- Taichi's attributes ---------------------------------------------------------------
    def __getattr__(self, name):
        m = object.__getattribute__(self, "_members")
        if name in m:
            return m[name]
        raise AttributeError(f"struct field has no member or attribute {name!r}")

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot set {name!r} on a struct field; write elements (s[i].{name} = v) instead")

    @property
    def members(self) -> dict:
        return self._members

    def _first(self):
        m = next(iter(self._members.values()))
        return m._first() if isinstance(m, StructField) else m

    @property
    def shape(self) -> tuple:
        return self._first().shape

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def keys(self) -> list:
        return list(self._members)

    @property
    def grad(self):
        """The gradients of the float members (needs_grad=True), as a struct field."""
        grads = {n: f.grad for n, f in self._members.items()}
        out = {n: g for n, g in grads.items() if g is not None}
        if not out:
            return None
        return StructField(StructType(tuple((n, t) for n, t in self.type.members if n in out), name=self.type.name),
                           out)

    # -- element access ----------------------------------------------------------------
    def __getitem__(self, idx) -> _Element:
        return _Element(self, element_index(self._first(), idx))

    def __setitem__(self, idx, value) -> None:
        self[idx]._assign(value)

    def __iter__(self):
        return iter(np.ndindex(*self.shape))

    # -- bulk ---------------------------------------------------------------------------
    def to_numpy(self) -> dict:
        """A dict: member name -> numpy array of shape `shape + member element shape`
        (nested structs as dicts)."""
        return {n: f.to_numpy() for n, f in self._members.items()}

    def from_numpy(self, d: dict) -> None:
        for n, v in d.items():
            if n not in self._members:
                raise KeyError(f"struct field has no member {n!r} (members: {', '.join(self._members)})")
            self._members[n].from_numpy(v)

    def to_torch(self, device=None) -> dict:
        return {n: f.to_torch(device) for n, f in self._members.items()}

    def from_torch(self, d: dict) -> None:
        for n, v in d.items():
            self._members[n].from_torch(v)

    def fill(self, value) -> None:
        """A number fills every member; a struct value / dict fills member by member."""
        if isinstance(value, (HostStruct, dict)):
            value = self.type(value)
            for n, f in self._members.items():
                f.fill(value[n])
            return
        for f in self._members.values():
            f.fill(value)

    def copy_from(self, other: StructField) -> None:
        for n, f in self._members.items():
            f.copy_from(other._members[n])

    def __repr__(self) -> str:
        return f"gr.Struct.field({self.type!r}, shape={self.shape})"

    __reduce_ex__ = not_picklable


class _Element:
    """`s[i]` from the host: reads and writes go straight to the member fields."""

    __slots__ = ("_f", "_idx")

    def __init__(self, f: StructField, idx: tuple):
        object.__setattr__(self, "_f", f)
        object.__setattr__(self, "_idx", idx)

    def _member(self, name):
        m = self._f._members
        if name not in m:
            raise AttributeError(f"struct has no member {name!r} (members: {', '.join(m)})")
        return m[name]

    def __getattr__(self, name):
        return self._member(name)[self._idx]

    def __setattr__(self, name, value):
        f = self._member(name)
        if isinstance(f, StructField):
            f[self._idx]._assign(value)
        else:
            f[self._idx] = value

    __getitem__ = __getattr__
    __setitem__ = __setattr__

    def keys(self):
        return self._f._members.keys()

    def _assign(self, value) -> None:
        if isinstance(value, _Element):
            value = value.value()
        if not isinstance(value, (HostStruct, dict)):
            raise TypeError(f"assign a struct value or a dict to a struct field element, not {type(value).__name__}")
        for n, v in (value.items()):
            self.__setattr__(n, v)

    def value(self) -> HostStruct:
        """A copy of the element as a struct value."""
        return HostStruct(self._f.type, {n: (self.__getattr__(n).value() if isinstance(f, StructField)
                                             else self.__getattr__(n)) for n, f in self._f._members.items()})

    def to_dict(self) -> dict:
        return self.value().to_dict()

    def __eq__(self, other) -> bool:
        return self.value() == other

    def __repr__(self) -> str:
        return repr(self.value())


class _StructNamespace:
    """`gr.Struct`: Taichi's `ti.Struct` (`gr.Struct.field({...}, shape=)`, `gr.Struct(a=1, ...)`)."""

    __gfxrt_struct_namespace__ = True

    def field(self, members: dict, shape=None, needs_grad: bool = False, **kwargs) -> StructField:
        return struct(**members).field(shape=shape, needs_grad=needs_grad, **kwargs)

    def __call__(self, *args, **kwargs) -> HostStruct:
        d = dict(args[0]) if args else {}
        d.update(kwargs)
        types = {}
        for k, v in d.items():
            if isinstance(v, dict):
                v = d[k] = self(v)
            if isinstance(v, HostStruct):
                types[k] = v.type
            elif isinstance(v, (bool, int, np.integer)):
                types[k] = as_element_type(int)
            elif isinstance(v, (float, np.floating)):
                types[k] = as_element_type(float)
            else:
                a = np.asarray(v)
                types[k] = as_element_type(a.dtype)
                types[k] = vector(a.shape[0], types[k]) if a.ndim == 1 else matrix(*a.shape, types[k])
        return StructType(tuple(types.items()))(d)


Struct = _StructNamespace()


def dataclass(cls) -> StructType:
    """`@gr.dataclass`: a struct type from a class's annotations (Taichi's `@ti.dataclass`);
    its functions become methods callable in kernels (`p.area()`), decorated with @gr.func or not."""
    import inspect
    anns = inspect.get_annotations(cls, eval_str=True)
    defaults = [n for n in anns if n in vars(cls)]
    if defaults:
        raise CompileError(f"Default values in @dataclass is not supported (as in Taichi): {cls.__name__}."
                           f"{defaults[0]}; set the member after constructing the value")
    members = tuple((n, _member_type(t)) for n, t in anns.items())
    if not members:
        raise ValueError(f"@gr.dataclass {cls.__name__} has no annotated members")
    methods = []
    for n, v in vars(cls).items():
        if isinstance(v, Func) or (callable(v) and hasattr(v, "__code__") and not n.startswith("__")):
            methods.append((n, v if isinstance(v, Func) else Func(v)))
    for n, t in members:
        if not is_member_type(t):
            raise TypeError(f"member {n!r} of {cls.__name__}: {t!r} is not a gfxrt type")
    return StructType(members, tuple(methods), cls.__name__)


struct_class = dataclass  # Taichi's older name


class Layout:
    """Taichi's `ti.Layout.AOS / SOA` (`S.field(shape, layout=...)`, `Matrix.field(..., layout=)`):
    accepted; it only moves memory, and gfxrt stores a struct field member by member anyway."""

    AOS = "aos"
    SOA = "soa"


def _type_field(self: StructType, shape=None, needs_grad: bool = False, offset=None, **kwargs) -> StructField:
    """`S.field(shape=(n,))`: a struct field of this type (`layout=` is accepted: members are
    separate fields either way; `offset=` as for gr.field, on every member)."""
    for k in ("layout", "needs_dual", "name"):
        kwargs.pop(k, None)
    if kwargs:
        raise TypeError(f"unexpected argument(s) {', '.join(map(repr, kwargs))}")
    return StructField.make(self, shape, needs_grad, offset)


def _type_ndarray(self: StructType, shape=None, needs_grad: bool = False, **_ignored):
    raise TypeError(f"{self!r}: gfxrt has no ndarray of structs (a WebGPU buffer holds one scalar type); use "
                    f"{self.name}.field(shape=...) (one field per member), or one gr.ndarray per member")


StructType.field = _type_field
StructType.ndarray = _type_ndarray
