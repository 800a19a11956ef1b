"""Structs in kernels: values, variables, struct fields and their lvalues.

A struct is scalarized like a vector: `StructValue` maps member names to scalar nodes,
`Compound`s or nested `StructValue`s; a struct variable (`StructVar`) has one variable per
member; a struct field (`StructArrayValue`) is one array per member (SoA).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from .. import semantic as sem
from ..errors import CompileError
from ..func import Func
from ..ir import Loc, Node, Op
from ..structs import StructType, StructValue, StructVar
from ..types import DType
from .deps import fingerprint
from .scope import CompoundLV, VarLV
from .values import ArrayValue, Compound, CompoundVar, ScalarVar


@dataclass(frozen=True)
class StructArrayValue:
    """A struct field in a kernel: member name -> ArrayValue (or StructArrayValue)."""

    name: str
    type: StructType
    members: Any  # dict
    obj: Any = None

    def first(self) -> ArrayValue:
        m = next(iter(self.members.values()))
        return m.first() if isinstance(m, StructArrayValue) else m

    @property
    def shape(self) -> tuple:
        return self.first().shape

    @property
    def ndim(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class StructMethod:
    """`p.method` on a @gr.dataclass value, waiting for its call."""

    fn: Any
    self_value: StructValue


class StructLV:
    """A struct target: a variable or a field element, member by member."""

    def __init__(self, st: StructType, members: dict, label: str):
        self.type, self.members, self.label = st, members, label

    def load(self, fe, loc):
        return StructValue(self.type, {n: lv.load(fe, loc) for n, lv in self.members.items()})

    def store(self, fe, value, loc):
        value = fe.as_struct(value, self.type, loc)
        value = fe.materialize(value, loc)  # `p = S(a=p.b, b=p.a)`: read every member, then write
        for n, lv in self.members.items():
            lv.store(fe, value.items[n], loc)

    def atomic(self, fe, op, value, loc, want_old):
        fe.error(f"{self.label} is a struct: update its members (`{self.label}.a += v`), not the whole struct", loc)


class StructMixin:
    # -- values ---------------------------------------------------------------------------
    def bind_struct_field(self, obj, name: str, path) -> StructArrayValue:
        members = {}
        for n, t in obj.type.members:
            sub = getattr(obj, n)
            p = None if path is None else path + (("a", n),)
            if isinstance(t, StructType):
                members[n] = self.bind_struct_field(sub, f"{name}_{n}", p)
            else:
                self.paths_add(sub, p)
                members[n] = self.bind_field(sub, f"{name}_{n}", p)
        if path is not None:
            self.paths_add(obj.type, path + (("a", "type"),))
        return StructArrayValue(name, obj.type, members, obj)

    def struct_attribute(self, base, attr: str, loc: Loc):
        if isinstance(base, StructValue):
            if attr in base.items:
                return base.items[attr]
            fn = base.type.method(attr)
            if fn is not None:
                return StructMethod(fn, base)
            self.error(f"{base.type!r} has no member {attr!r} (members: {', '.join(base.type.names)})", loc)
        arr: StructArrayValue = base
        if attr in arr.members:
            return arr.members[attr]
        if attr == "shape":
            return self.array_attribute(arr.first(), "shape", loc)
        if attr == "ndim":
            return arr.ndim
        if attr == "grad" and arr.obj is not None and getattr(arr.obj, "grad", None) is not None:
            bp = self.paths.get(id(arr.obj))
            gpath = None if bp is None else bp + (("a", "grad"),)
            return self.from_python(arr.obj.grad, f"{arr.name}_grad", loc, gpath)
        self.error(f"the struct field {arr.name!r} has no attribute {attr!r} (members: {', '.join(arr.type.names)}; "
                   "shape, ndim, grad)", loc)

    def struct_element(self, arr: StructArrayValue, sl: ast.expr, loc: Loc, take: bool = True) -> StructLV:
        members = {}
        for n, m in arr.members.items():
            members[n] = self.struct_element(m, sl, loc, take) if isinstance(m, StructArrayValue) \
                else self.element_lvalue(m, sl, loc, take)
        return StructLV(arr.type, members, f"{arr.name}[...]")

    def construct_struct(self, st: StructType, args, kwargs, loc: Loc) -> StructValue:
        """`S(a=1.0, v=vec3(0))`, `S(1.0, v)`, `S()` (members default to 0), `S(other_struct)`
        (converted member by member). One number is positional, as in Taichi: `S(1)` sets the
        first member (a vector or struct member gets it in every component) and leaves the rest 0."""
        names = st.names
        if len(args) == 1 and not kwargs and isinstance(args[0], (StructValue, dict)) \
                and set(args[0].items if isinstance(args[0], StructValue) else args[0]) <= set(names) \
                and not (isinstance(args[0], StructValue) and isinstance(st.members[0][1], StructType)
                         and args[0].type == st.members[0][1]):
            return self.as_struct(args[0], st, loc)  # S(other) / S({...}); but Nested(Foo(42)) is positional
        if len(args) > len(names):
            self.error(f"{st!r} takes at most {len(names)} positional values, got {len(args)}", loc)
        vals = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                self.error(f"{st!r} has no member {k!r} (members: {', '.join(names)})", loc)
            vals[k] = v
        items = {}
        for n, t in st.members:
            v = vals.get(n, 0)
            if isinstance(t, StructType) and isinstance(v, (Node, int, float, bool)):
                items[n] = self.construct_struct(t, (v,), {}, loc)  # Taichi: a struct member from a number is T(number)
            elif isinstance(t, StructType):
                items[n] = self.as_struct(v, t, loc) if n in vals else self.construct_struct(t, (), {}, loc)
            else:
                items[n] = self.convert_to_type(v, t, loc)
        return StructValue(st, items)

    def as_struct(self, value, st: StructType, loc: Loc) -> StructValue:
        """`value` as a struct of type `st`: members converted one by one (Taichi's implicit
        casts)."""
        if isinstance(value, StructValue):
            if value.type == st:
                return value
            if not set(value.items) <= set(st.names):
                self.error(f"cannot use a {value.type!r} as a {st!r}: the members differ", loc)
            if set(value.items) != set(st.names):
                return self.construct_struct(st, (), dict(value.items), loc)  # missing members are 0
            return StructValue(st, {n: self.as_struct(value.items[n], t, loc) if isinstance(t, StructType)
                                    else self.convert_to_type(value.items[n], t, loc) for n, t in st.members})
        if isinstance(value, dict):
            return self.construct_struct(st, (), value, loc)
        if isinstance(value, (Node, int, float, bool)):  # Taichi: "Only dict or Struct can be assigned to a Struct"
            self.error(f"a number is not a struct {st!r}: give a struct or a dict (S(v) sets S's first member to v; "
                       "fill every component with x.fill(v))", loc)
        self.error(f"expected a struct {st!r}, got {self.describe(value)}", loc)

    def anonymous_struct(self, args, kwargs, loc: Loc) -> StructValue:
        """`gr.Struct(a=1, b=v)` / `gr.Struct({"a": 1, "b": v})` in a kernel: member types from the values."""
        d = dict(args[0]) if len(args) == 1 and isinstance(args[0], dict) else {}
        if args and not d or not all(isinstance(k, str) for k in d):
            self.error("gr.Struct(...) takes keyword members or one dict with string keys", loc)
        d.update(kwargs)
        items, members = {}, []
        for n, v in d.items():
            if isinstance(v, dict):
                v = self.anonymous_struct((v,), {}, loc)
            members.append((n, self.value_type(v, loc)))
            items[n] = v
        st = StructType(tuple(members))
        return StructValue(st, {n: self.as_struct(items[n], t, loc) if isinstance(t, StructType)
                                else self.convert_to_type(items[n], t, loc) for n, t in members})

    def compound_dtype(self, v: Compound, loc: Loc):
        from ..types import promote
        dt = None
        for x in v.items:
            t = sem.dtype_of(sem.as_node(self.scalar(x, loc), loc))
            dt = t if dt is None else promote(dt, t)
        return dt

    def host_struct(self, v) -> StructValue:
        """A HostStruct captured from Python: its numbers as compile-time constants."""
        items = {}
        for n, t in v.type.members:
            x = v[n]
            if isinstance(t, StructType):
                items[n] = self.host_struct(x)
            elif isinstance(t, DType):
                items[n] = x
            else:
                items[n] = Compound(tuple(t.shape), tuple(x.ravel().tolist()))
        return StructValue(v.type, items)

    def struct_binop(self, op, a, b, loc: Loc) -> StructValue:
        """`s * 2 + 1`, `s + t`: member by member (Taichi's element-wise struct arithmetic)."""
        st = a.type if isinstance(a, StructValue) else b.type
        items = {}
        for n in st.names:
            x = a.items[n] if isinstance(a, StructValue) else a
            y = b.items[n] if isinstance(b, StructValue) else b
            items[n] = self.binop(op, x, y, loc)
        members = tuple((n, self.value_type(v, loc)) for n, v in items.items())
        return StructValue(StructType(members), items)

    def value_type(self, v, loc: Loc):
        if isinstance(v, StructValue):
            return v.type
        if isinstance(v, Compound):
            from ..types import MatrixType, VectorType
            dt = self.compound_dtype(v, loc)
            return VectorType(v.shape[0], dt) if len(v.shape) == 1 else MatrixType(*v.shape, dt)
        return sem.dtype_of(sem.as_node(self.scalar(v, loc), loc))

    def select_values(self, c, a, b, loc: Loc):
        """`a if c else b` without side effects: a select per component (structs member-wise)."""
        if isinstance(a, StructValue) or isinstance(b, StructValue):
            st = a.type if isinstance(a, StructValue) else b.type
            a, b = self.as_struct(a, st, loc), self.as_struct(b, st, loc)
            return StructValue(st, {n: self.select_values(c, a.items[n], b.items[n], loc) for n in st.names})
        return self.map_values(lambda x, y: sem.select(c, x, y, loc), (a, b), loc)

    def fill_call(self, node: ast.Call, loc: Loc) -> bool:
        """`x[i].fill(v)` / `p.fill(v)` on a struct or vector target: store v in every component."""
        target = node.func.value
        if not isinstance(target, (ast.Name, ast.Subscript, ast.Attribute)) or len(node.args) != 1 or node.keywords:
            return False
        try:
            lv = self.lvalue(target, loc)
        except CompileError:
            return False
        if not isinstance(lv, (StructLV, CompoundLV)):
            return False
        value = self.visit(node.args[0])
        if isinstance(lv, StructLV) and isinstance(value, (Node, int, float, bool)):
            value = self.broadcast_struct(lv.type, value, loc)
        lv.store(self, value, loc)
        return True

    def broadcast_struct(self, st: StructType, value, loc: Loc) -> StructValue:
        """A struct with `value` in every component (`x[i].fill(v)`)."""
        return StructValue(st, {n: self.broadcast_struct(t, value, loc) if isinstance(t, StructType)
                                else self.convert_to_type(value, t, loc) for n, t in st.members})

    def call_struct_method(self, m: StructMethod, args, kwargs, loc: Loc):
        fn = m.fn if isinstance(m.fn, Func) else Func(m.fn)
        tpath = self.paths.get(id(m.self_value.type))
        if tpath is not None:  # the type was reached by name: the offline cache can re-check the method
            fpath = tpath + (("a", fn.__name__),)
            if fpath not in self.deps:
                self.deps[fpath] = fingerprint(fn)
            self.paths_add(fn, fpath)
        return self.inline_func(fn, [m.self_value, *args], kwargs, loc)

    def visit_Dict(self, node: ast.Dict, loc: Loc):
        """`{"a": 1, "b": v}`: a struct's members (gr.Struct({...}), S({...}), s[i] = {...}), or a dict
        indexed by its keys (frontend/comprehensions.py)."""
        if None in node.keys:
            self.error("`**` in a dict is not supported in kernels", loc)
        values = self.visit_all([*node.keys, *node.values])
        n = len(node.keys)
        return {self.dict_key(k, loc): v for k, v in zip(values[:n], values[n:])}

    # -- variables ------------------------------------------------------------------------
    def declare_struct(self, name: str, value: StructValue, loc: Loc) -> StructVar:
        return StructVar(value.type, {n: self.declare_member(f"{name}.{n}", v, loc) for n, v in value.items.items()})

    def declare_member(self, name: str, value, loc: Loc):
        if isinstance(value, StructValue):
            return self.declare_struct(name, value, loc)
        saved = self.frame.scope.get(name)
        var = self.declare(name, value, loc)  # registers `name` in the scope: undo that
        if saved is None:
            self.frame.scope.pop(name, None)
        else:
            self.frame.scope[name] = saved
        return var

    def var_lvalue(self, var, label: str):
        if isinstance(var, StructVar):
            return StructLV(var.type, {n: self.var_lvalue(v, f"{label}.{n}") for n, v in var.vars.items()}, label)
        if isinstance(var, CompoundVar):
            return CompoundLV(var.shape, [VarLV(x, label) for x in var.vars], label)
        return VarLV(var, label)

    def load_var(self, var, loc: Loc):
        if isinstance(var, StructVar):
            return StructValue(var.type, {n: self.load_var(v, loc) for n, v in var.vars.items()})
        if isinstance(var, CompoundVar):
            return Compound(var.shape, tuple(Node(Op.VAR, x.dtype, attr=x.name, loc=loc) for x in var.vars))
        assert isinstance(var, ScalarVar)
        return Node(Op.VAR, var.dtype, attr=var.name, loc=loc)

    # -- kernel arguments and return values -----------------------------------------------
    def bind_struct_arg(self, name: str, i: int, st: StructType):
        from ..ir import Param
        total = st.size
        k = 0

        def build(t: StructType, prefix: str):
            nonlocal k
            items = {}
            for n, mt in t.members:
                if isinstance(mt, StructType):
                    items[n] = build(mt, f"{prefix}.{n}")
                    continue
                dt = mt if isinstance(mt, DType) else mt.dtype
                comps = []
                for _ in range(1 if isinstance(mt, DType) else mt.size):
                    pname = f"{prefix}.{k}"
                    self.ir.params.append(Param(pname, dt, ("elem", i, k, total)))
                    comps.append(Node(Op.PARAM, dt, attr=pname))
                    k += 1
                items[n] = comps[0] if isinstance(mt, DType) else Compound(mt.shape, tuple(comps))
            return StructValue(t, items)
        return build(st, name)

    def flatten_struct(self, v: StructValue) -> list:
        """The struct's leaves in declaration order: scalars and Compounds."""
        out = []
        for n, _ in v.type.members:
            x = v.items[n]
            out += self.flatten_struct(x) if isinstance(x, StructValue) else [x]
        return out

