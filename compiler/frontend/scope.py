"""Names, variables and assignment targets.

A name is bound either *directly* to a value (a typed constant such as `g = 9.8`, an array,
a uniform expression of arguments and constants such as `n = x.shape[0]`, a `gr.static(...)`
value) or to a *variable* (an IR local, or one per component for vectors and matrices).
Direct bindings cost nothing and keep launch sizes computable on the host; they are only made
where re-binding is sound: for names never assigned inside control flow (`dynamic_names`).
Either way a name assigned a number has a type (frontend/constants.py), which later
assignments keep.

Assignment targets resolve to lvalues with `load`, `store` and `atomic`.
"""
from __future__ import annotations

import ast
import functools
import inspect
from itertools import islice

from .. import semantic as sem
from ..errors import CompileError, UnpackCountError, UnpackTypeError
from ..func import Func
from ..ir import LEAVES, VARYING, AtomicAttr, Loc, Node, Op, walk_node
from ..spec import OOB_PHRASE, STATUS_OUT_OF_BOUNDS
from ..structs import StructValue, StructVar
from ..types import DType, Template, f16, i32, u1
from .constants import fold, keep_type, known, note_type, typed
from .deps import lookup_name
from .source import FunctionSource, strip_docstring
from .triplets import TripletsValue
from .values import ArrayValue, Compound, CompoundVar, ListVar, ScalarVar

_STATIC_NAMES = ("static",)


def _is_static_call(e: ast.expr) -> bool:
    if not isinstance(e, ast.Call):
        return False
    f = e.func
    return (isinstance(f, ast.Attribute) and f.attr in _STATIC_NAMES) or \
        (isinstance(f, ast.Name) and f.id in _STATIC_NAMES)


def python_names(func):
    """name -> the Python object a function's global or closure variable holds (or None)."""
    return lambda name: lookup_name(func, name, None)


def _names_an_atomic(f: ast.expr, resolve) -> bool:
    """`gr.atomic_add(...)`, or a name bound to it (`op = gr.atomic_add; op(s, v)`, as Taichi's
    tests pick an atomic from a table)."""
    fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
    if fname.startswith("atomic_"):
        return True
    if resolve is None or not isinstance(f, ast.Name):
        return False
    obj = resolve(f.id)
    return type(obj).__name__ == "Builtin" and str(getattr(obj, "name", "")).startswith("atomic_")


def _template_params_assigned(f: ast.expr, resolve) -> tuple[set, set]:
    """(positions, names) of the gr.template() parameters that the @gr.func `f` names
    assigns (a variable passed there is passed by reference: the caller's must be one)."""
    obj = resolve(f.id) if resolve is not None and isinstance(f, ast.Name) else None
    if not isinstance(obj, Func):
        return set(), set()
    return _assigned_templates(obj.fn)


_VISITING: set = set()  # funcs whose parameters are being looked at (a recursive func: the frontend rejects it)


@functools.cache
def _assigned_templates(fn) -> tuple[set, set]:
    if fn in _VISITING:
        return set(), set()
    try:
        params = list(inspect.signature(fn).parameters.values())
        body = strip_docstring(FunctionSource.of(fn).tree.body)
    except (TypeError, ValueError, OSError, CompileError):
        return set(), set()
    _VISITING.add(fn)
    try:
        assigned = set(dynamic_names(body, resolve=python_names(fn)))
    finally:
        _VISITING.discard(fn)
    assigned.update(n.id for s in body if isinstance(s, ast.Assign) for t in s.targets for n in ast.walk(t)
                    if isinstance(n, ast.Name))
    tmpl = [k for k, p in enumerate(params) if p.name in assigned and (
        isinstance(p.annotation, Template) or (isinstance(p.annotation, str) and "template" in p.annotation))]
    return set(tmpl), {params[k].name for k in tmpl}


def dynamic_names(body: list[ast.stmt], kernel: bool = False, resolve=None) -> frozenset[str]:
    """Names assigned anywhere but a plain top-level assignment of this function body:
    inside if/for/while (except compile-time `gr.static` ones at kernel level), by `+=`,
    as loop targets, as the target of an atomic (`resolve`: python_names(func), to recognize
    an atomic called through a variable), passed to a gr.template() parameter that the
    @gr.func assigns (passed by reference). These always get variables."""
    out: set[str] = set()

    def names_in(target) -> list[str]:
        return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]

    def base_names(t):
        while isinstance(t, (ast.Attribute, ast.Subscript)):
            t = t.value
            if isinstance(t, ast.Name):  # `p.a = v`, `v[0] = x`: p / v must be a variable
                out.add(t.id)

    def top(stmts):  # (the bases of attribute and subscript targets, anywhere: below)
        for s in stmts:
            if isinstance(s, ast.AnnAssign):
                out.update(names_in(s.target))  # a declaration: always a variable
            elif isinstance(s, ast.Assign):
                continue
            elif isinstance(s, ast.AugAssign):
                out.update(names_in(s.target))
            elif isinstance(s, ast.For) and kernel and _is_static_call(s.iter):
                out.update(names_in(s.target))
                top(s.body)
            elif isinstance(s, ast.If) and kernel and _is_static_call(s.test):
                top(s.body)
                top(s.orelse)
            else:
                out.update(n.id for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    top(body)
    for s in body:
        for n in ast.walk(s):
            if isinstance(n, ast.Call):
                where, names = _template_params_assigned(n.func, resolve)
                out.update(a.id for k, a in enumerate(n.args) if k in where and isinstance(a, ast.Name))
                out.update(kw.value.id for kw in n.keywords if kw.arg in names and isinstance(kw.value, ast.Name))
            if isinstance(n, ast.Call) and n.args and isinstance(n.args[0], (ast.Name, ast.Attribute, ast.Subscript)):
                if _names_an_atomic(n.func, resolve):
                    if isinstance(n.args[0], ast.Name):
                        out.add(n.args[0].id)
                    else:
                        base_names(n.args[0])  # gr.atomic_add(p.a, v): p is updated in place
            # so is a local updated by its atomic method: `s.atomic_add(v)`
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) \
                    and (n.func.attr.startswith("atomic_") or n.func.attr == "fill") \
                    and isinstance(n.func.value, ast.Name):  # ... or filled: `v.fill(x)`
                out.add(n.func.value.id)
            # and a vector whose components are assigned: `v[k] = ...`, `v.x += ...`, `p.a = v`
            if isinstance(n, (ast.Subscript, ast.Attribute)) and isinstance(n.ctx, ast.Store):
                base_names(n)
    return frozenset(out)


# A direct binding is copied into every expression that uses the name, so it is kept small:
# a value of more nodes than this (a shared subtree counted once per use, as the copies count)
# gets a variable. Unbounded, `v1 = v0 * v0; v2 = v1 * v1; ...` doubled the expression per
# line (16 lines: 30 s) and a long chain `a = a * s + 1.0` built one expression as deep as
# the chain (a RecursionError in the passes).
DIRECT_NODES = 256


def _exprs(v):
    """The scalar expressions of a value: itself, or those of a vector's / matrix's items, a
    tuple's and a struct's members."""
    if isinstance(v, Node):
        yield v
    elif isinstance(v, Compound):
        for x in v.items:
            yield from _exprs(x)
    elif isinstance(v, StructValue):
        for x in v.items.values():
            yield from _exprs(x)
    elif isinstance(v, tuple):
        for x in v:
            yield from _exprs(x)


def small(v) -> bool:
    """True when no scalar expression in `v` has more than DIRECT_NODES nodes."""
    return all(sum(1 for _ in islice(walk_node(x), DIRECT_NODES + 1)) <= DIRECT_NODES for x in _exprs(v))


def uniform(v) -> bool:
    """True for a value that no later statement can change: Python values and expressions
    of constants, arguments and thread ids only."""
    return all(y.op is not Op.VAR and y.op not in VARYING for x in _exprs(v) for y in walk_node(x))


def same_everywhere(v: Node) -> bool:
    """True for an expression of constants and scalar arguments only: every thread of a
    parallel loop computes the same value (`found = 1` stored by many threads is benign)."""
    return all(y.op in (Op.CONST, Op.PARAM) or (y.op not in LEAVES and y.op not in VARYING) for y in walk_node(v))


def reads(v, ops: tuple, names: set[str] | None = None) -> bool:
    """Does a value read a local (Op.VAR) or memory (Op.LOAD), of `names` if given?"""
    return any(y.op in ops and (names is None or y.attr in names) for x in _exprs(v) for y in walk_node(x))


# -- lvalues -------------------------------------------------------------------------------

class VarLV:
    """A scalar variable."""

    def __init__(self, var: ScalarVar, label: str):
        self.var, self.label = var, label

    def load(self, fe, loc):
        return Node(Op.VAR, self.var.dtype, attr=self.var.name, loc=loc)

    def _shared(self, fe) -> bool:
        return self.var.kernel_scope and fe.in_parallel

    def store(self, fe, value, loc, chosen: bool = False):
        """chosen: a component picked by a run-time index (`v[i] = ...`), each thread its own."""
        v = sem.as_node(fe.scalar(value, loc), loc, self.var.dtype)
        if self._shared(fe) and not chosen and not same_everywhere(v):
            fe.error(f"cannot assign the kernel-scope variable {self.label!r} a value that differs between the "
                     f"threads of a parallel loop: they would all write it at once. Use `{self.label} += v` (a "
                     f"reduction), gr.atomic_max({self.label}, v) and friends, or a variable defined inside the "
                     "loop (a value every thread stores alike, `found = 1`, and a component chosen by the loop's "
                     f"index, `{self.label}[i] = v`, are allowed, as in Taichi)", loc)
        fe.emit(Node(Op.ASSIGN, attr=self.var.name, args=(v,), loc=loc))

    def atomic(self, fe, op, value, loc, want_old):
        v = sem.as_node(fe.scalar(value, loc), loc, self.var.dtype)
        if self._shared(fe):
            buf = fe.internal_buffer("temps")
            slot = fe.temp_slot(self.var.name)
            return _emit_atomic(fe, op, buf.name, sem.as_node(slot, loc, i32), v, loc, want_old)
        old = fe.temp(self.load(fe, loc), loc) if want_old else None
        new = atomic_result(op, self.load(fe, loc), v, loc)
        fe.emit(Node(Op.ASSIGN, attr=self.var.name, args=(new,), loc=loc))
        return old


class MemLV:
    """One scalar in a buffer: an array element (or one component of it)."""

    def __init__(self, arr: ArrayValue, index: Node, label: str, on_write=None):
        # on_write(fe): emitted before each write (a sparse field's activation, frontend/sparse.py)
        self.arr, self.index, self.label, self.on_write = arr, index, label, on_write

    def load(self, fe, loc):
        return Node(Op.LOAD, self.arr.dtype, (self.index,), attr=self.arr.buf, loc=loc)

    def store(self, fe, value, loc):
        v = sem.as_node(fe.scalar(value, loc), loc, self.arr.dtype)
        if self.on_write is not None:
            self.on_write(fe)
        fe.emit(Node(Op.STORE, attr=self.arr.buf, args=(self.index, v), loc=loc))

    def atomic(self, fe, op, value, loc, want_old):
        if self.arr.dtype == f16:
            fe.error(f"atomic operations on f16 arrays are not supported ({self.label}); use an f32 array", loc)
        if self.arr.dtype.is_float and op in ("and", "or", "xor"):
            fe.error(f"atomic bitwise {op} needs an integer array, {self.label} holds {self.arr.dtype}", loc)
        v = sem.as_node(fe.scalar(value, loc), loc, self.arr.dtype)
        if self.on_write is not None:
            self.on_write(fe)
        return _emit_atomic(fe, op, self.arr.buf, self.index, v, loc, want_old)


class SelectLV:
    """A component chosen by a run-time index: `v[k]` on a vector variable."""

    def __init__(self, k: Node, leaves: list, label: str):
        self.k, self.leaves, self.label = k, leaves, label

    def load(self, fe, loc):
        out = self.leaves[-1].load(fe, loc)
        for j in range(len(self.leaves) - 2, -1, -1):
            out = sem.select(sem.binary(Op.EQ, self.k, j, loc), self.leaves[j].load(fe, loc), out, loc)
        return out

    def _each(self, fe, loc, fn):
        k = fe.temp(self.k, loc) if self.k.op not in (Op.VAR, Op.CONST) else self.k
        for j, leaf in enumerate(self.leaves):
            with fe.block() as then:
                fn(leaf)
            fe.emit(Node(Op.IF, args=(sem.binary(Op.EQ, k, j, loc),), blocks=(tuple(then), ()), loc=loc))

    def store(self, fe, value, loc):
        value = fe.materialize(value, loc)
        self._each(fe, loc, lambda leaf: leaf.store(fe, value, loc, chosen=True) if isinstance(leaf, VarLV)
                   else leaf.store(fe, value, loc))

    def atomic(self, fe, op, value, loc, want_old):
        value = fe.materialize(value, loc)
        t = sem.dtype_of(self.leaves[0].load(fe, loc))
        old = Node(Op.VAR, t, attr=fe.new_local("old", t), loc=loc)

        def one(leaf):
            r = leaf.atomic(fe, op, value, loc, want_old)
            if want_old:
                fe.emit(Node(Op.ASSIGN, attr=old.attr, args=(sem.as_node(r, loc, t),), loc=loc))
        self._each(fe, loc, one)
        return old if want_old else None


class CompoundLV:
    """A vector or matrix target: a variable or an array element, component by component."""

    def __init__(self, shape: tuple[int, ...], leaves: list, label: str):
        self.shape, self.leaves, self.label = shape, leaves, label

    def load(self, fe, loc):
        return Compound(self.shape, tuple(leaf.load(fe, loc) for leaf in self.leaves))

    def _values(self, fe, value, loc) -> list:
        if isinstance(value, (tuple, list)):  # `x[i] = [a, b]`, `m = [[a, b], [c, d]]`: a list of the target's shape
            value = Compound(self.shape, tuple(fe.flatten_rows(value, self.shape, loc)))
        if isinstance(value, Compound):
            if value.shape != self.shape:
                fe.error(f"cannot assign a {_shape_name(value.shape)} to {self.label}, a {_shape_name(self.shape)}",
                         loc)
            names = {leaf.var.name for leaf in self.leaves if isinstance(leaf, VarLV)}
            bufs = {leaf.arr.buf for leaf in self.leaves if isinstance(leaf, MemLV)}
            if reads(value, (Op.VAR,), names) or reads(value, (Op.LOAD,), bufs):
                value = fe.materialize(value, loc)  # `v = v.yx`, `m[i] += m[i].T`: read all, then write
            return list(value.items)
        return [fe.scalar(value, loc)] * len(self.leaves)  # a scalar fills every component

    def store(self, fe, value, loc):
        for leaf, v in zip(self.leaves, self._values(fe, value, loc)):
            leaf.store(fe, v, loc)

    def atomic(self, fe, op, value, loc, want_old):
        olds = [leaf.atomic(fe, op, v, loc, want_old) for leaf, v in zip(self.leaves, self._values(fe, value, loc))]
        return Compound(self.shape, tuple(olds)) if want_old else None


class ArrayElemLV(CompoundLV):
    """A vector / matrix element of an array: components at `base + k`, so a run-time
    component index addresses memory directly (one load or store, not a select over all)."""

    def __init__(self, shape, leaves: list, label: str, arr: ArrayValue, base: Node):
        super().__init__(shape, leaves, label)
        self.arr, self.base = arr, base


class TupleLV:
    """`a, b = ...`: every right-hand value is computed before any target is written."""

    def __init__(self, targets: list):
        self.targets = targets

    def store(self, fe, value, loc, static: bool = False):
        items = fe.unpack(value, len(self.targets), loc)
        items = [fe.materialize(v, loc) for v in items]
        for t, v in zip(self.targets, items):
            fe.assign_to(t, v, loc, static=static)


class NameLV:
    """A name in the current frame; what assignment does depends on its binding."""

    def __init__(self, name: str):
        self.name = name


def _shape_name(shape) -> str:
    return f"vector({shape[0]})" if len(shape) == 1 else f"matrix({shape[0]}, {shape[1]})"


def atomic_result(op: str, old, v, loc: Loc):
    """The new value of a read-modify-write `op`."""
    ops = {"add": Op.ADD, "sub": Op.SUB, "min": Op.MIN, "max": Op.MAX, "and": Op.BITAND,
           "or": Op.BITOR, "xor": Op.BITXOR, "mul": Op.MUL}
    return sem.as_node(sem.binary(ops[op], old, v, loc), loc, sem.dtype_of(old))


def _emit_atomic(fe, op, buf: str, index: Node, v: Node, loc: Loc, want_old: bool):
    dest = fe.new_local("old", v.dtype) if want_old else None
    fe.emit(Node(Op.ATOMIC, attr=AtomicAttr(op, buf, dest), args=(index, v), loc=loc))
    return Node(Op.VAR, v.dtype, attr=dest, loc=loc) if want_old else None


class ScopeMixin:
    """Binding names, declaring variables, resolving assignment targets."""

    # -- variables ------------------------------------------------------------------------
    def declare(self, name: str, value, loc: Loc):
        """A new variable (scalar or compound) for `name`, typed by `value`."""
        ks = not self.in_parallel and self.frame.kernel_level
        if isinstance(value, StructValue):
            var = self.declare_struct(name, value, loc)
            self.frame.scope[name] = var
            return var
        if isinstance(value, Compound):
            vars_ = []
            for k, item in enumerate(value.items):
                t = sem.dtype_of(self.scalar(item, loc))
                vars_.append(ScalarVar(self.new_local(f"{name}.{k}", t), t, ks))
            var = CompoundVar(value.shape, tuple(vars_))
        else:
            t = sem.dtype_of(self.scalar(value, loc))
            var = ScalarVar(self.new_local(name, t), t, ks)
        for v in (var.vars if isinstance(var, CompoundVar) else (var,)):
            self.python_names[v.name] = name
            if ks:
                self.kernel_vars.add(v.name)
        self.frame.scope[name] = var
        return var

    @staticmethod
    def known(v):
        """v's Python value where it is known at compile time (frontend/constants.py)."""
        return known(v)

    def python_name(self, ir_name: str) -> str:
        return self.python_names.get(ir_name, ir_name)

    def temp_slot(self, name: str) -> int:
        """The word of the 'temps' buffer that holds a kernel-scope variable (IR name)."""
        slot = self.temp_slots.get(name)
        if slot is None:
            slot = self.temp_slots[name] = len(self.temp_slots)
        return slot

    def materialize(self, v, loc: Loc):
        """A value that later stores cannot change: non-trivial scalars go into temporaries."""
        if isinstance(v, Node):
            return v if v.op in (Op.CONST, Op.PARAM, Op.SPECIAL) else self.temp(v, loc)
        if isinstance(v, Compound):
            return Compound(v.shape, tuple(self.materialize(x, loc) for x in v.items))
        if isinstance(v, StructValue):
            return StructValue(v.type, {n: self.materialize(x, loc) for n, x in v.items.items()})
        if isinstance(v, tuple):
            return tuple(self.materialize(x, loc) for x in v)
        return v

    # -- lvalues --------------------------------------------------------------------------
    def lvalue(self, target: ast.expr, loc: Loc):
        if isinstance(target, ast.Name):
            v = self.frame.scope.get(target.id)
            if isinstance(v, ScalarVar):
                return VarLV(v, target.id)
            if isinstance(v, CompoundVar):
                return CompoundLV(v.shape, [VarLV(x, target.id) for x in v.vars], target.id)
            if isinstance(v, StructVar):
                return self.var_lvalue(v, target.id)
            return NameLV(target.id)
        if isinstance(target, (ast.Tuple, ast.List)):
            return TupleLV(list(target.elts))
        if isinstance(target, ast.Subscript):
            return self.subscript_lvalue(target, loc)
        if isinstance(target, ast.Attribute):
            return self.attribute_lvalue(target, loc)
        if isinstance(target, ast.Starred):
            self.error("`*` unpacking is not supported in kernels", loc)
        self.error(f"cannot assign to {type(target).__name__}", loc)

    def subscript_lvalue(self, target: ast.Subscript, loc: Loc):
        base_ast = target.value
        if isinstance(base_ast, (ast.Name, ast.Attribute)):
            base = self.visit(base_ast)
            if isinstance(base, ArrayValue):
                if getattr(base.obj, "const_data", None) is not None:
                    self.error(f"{base.name!r} is a numpy array captured from Python: a compile-time constant, "
                               "read-only in kernels. Pass it as an argument (or use a gr.field) to write it", loc)
                return self.element_lvalue(base, target.slice, loc)
            if type(base).__name__ == "StructArrayValue":
                return self.struct_element(base, target.slice, loc)
            if isinstance(base, TripletsValue):
                return self.triplet_lvalue(base, target.slice, loc)
        if isinstance(base_ast, ast.Subscript) and isinstance(base_ast.value, (ast.Name, ast.Attribute)) \
                and isinstance(self.visit(base_ast.value), tuple):  # `r[0][i, j] = v`: a list of fields
            base = self.visit(base_ast)
            if isinstance(base, ArrayValue):
                return self.element_lvalue(base, target.slice, loc)
            if type(base).__name__ == "StructArrayValue":
                return self.struct_element(base, target.slice, loc)
        inner = self.lvalue(base_ast, loc) if isinstance(base_ast, (ast.Name, ast.Subscript, ast.Attribute)) \
            else None
        if isinstance(inner, CompoundLV):
            if any(isinstance(n, ast.Slice) for n in ast.walk(target.slice)):
                return self.slice_lvalue(inner, target.slice, loc)
            return self.component_lvalue(inner, target.slice, loc)
        if isinstance(inner, NameLV):
            v = self.frame.scope.get(inner.name)
            if isinstance(v, ListVar):
                return self.list_item_lvalue(inner.name, v, target.slice, loc)
            if v is None:
                self.error(f"name {inner.name!r} is not defined", loc)
            self.error(f"{inner.name!r} cannot be assigned through a subscript: it is "
                       f"{self.describe(self.visit(base_ast))}, not an array or a vector variable", loc)
        self.error("only array elements and vector/matrix components can be assigned through a subscript", loc)

    def attribute_lvalue(self, target: ast.Attribute, loc: Loc):
        inner = self.lvalue(target.value, loc) if isinstance(target.value, (ast.Name, ast.Subscript,
                                                                            ast.Attribute)) else None
        if type(inner).__name__ == "StructLV":
            if target.attr not in inner.members:
                self.error(f"{inner.type!r} has no member {target.attr!r} (members: {', '.join(inner.type.names)})",
                           loc)
            return inner.members[target.attr]
        if isinstance(inner, CompoundLV) and len(inner.shape) == 1:
            idx = self.swizzle_indices(target.attr, inner.shape[0], loc)
            if idx is not None:
                if len(idx) == 1:
                    return inner.leaves[idx[0]]
                if len(set(idx)) != len(idx):
                    self.error(f"cannot assign to the swizzle .{target.attr}: it repeats a component", loc)
                return CompoundLV((len(idx),), [inner.leaves[k] for k in idx], f"{inner.label}.{target.attr}")
        self.error(f"cannot assign to the attribute .{target.attr}", loc)

    def element_lvalue(self, arr: ArrayValue, sl: ast.expr, loc: Loc, take: bool = True):
        """`x[i, j]`: a scalar, or a compound lvalue over an element's components. `take`:
        False where it is only read (a pooled dynamic field then takes no chunks)."""
        items = self.index_items(sl, loc) if self.sparse_of(arr) else None
        idx = self.flat_index(arr, sl, loc, items, take)
        label = f"{arr.name}[...]"
        hook = self.sparse_write_hook(arr, items, loc) if items is not None else None
        if isinstance(arr.elem, DType):
            return MemLV(arr, idx, label, hook)
        size = arr.elem.size
        base = sem.as_node(sem.binary(Op.MUL, idx, size, loc), loc, i32)
        leaves = [MemLV(arr, sem.as_node(sem.binary(Op.ADD, base, k, loc), loc, i32), label, hook)
                  for k in range(size)]
        return ArrayElemLV(arr.elem.shape, leaves, label, arr, base)

    def slice_lvalue(self, inner: CompoundLV, sl: ast.expr, loc: Loc) -> CompoundLV:
        """`m[:, 0] = col`, `m[i, 1:3] = v`, `m[:2, :] += rows` (Taichi's slice assignment): the
        picked components as one target; a run-time index selects among them."""
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        shape, coords = self.slice_picks(inner.shape, [self.visit(it) for it in items], loc)
        leaves = []
        for coord in coords:
            flat = self.flat_component(inner.shape, coord, loc)
            if isinstance(flat, int):
                leaves.append(inner.leaves[flat])
            elif isinstance(inner, ArrayElemLV):
                leaves.append(self.array_component(inner, [(k, n) for k, n in zip(coord, inner.shape)
                                                           if not isinstance(k, int)], flat, loc))
            else:
                leaves.append(SelectLV(flat, inner.leaves, inner.label))
        return CompoundLV(shape, leaves, f"{inner.label}[...]")

    def component_lvalue(self, inner: CompoundLV, sl: ast.expr, loc: Loc):
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        vals = [self.visit(it) for it in items]
        if len(vals) == 1 and isinstance(vals[0], Compound) and len(vals[0].shape) == 1:
            vals = list(vals[0].items)  # an index vector: `m[I]` with I from gr.grouped(...)
        if len(vals) != len(inner.shape):
            self.error(f"{inner.label} is a {_shape_name(inner.shape)}: index it with {len(inner.shape)} "
                       f"ind{'ex' if len(inner.shape) == 1 else 'ices'}", loc)
        ks = [known(self.scalar(v, loc)) for v in vals]
        if len(ks) == 2:
            r, c = ks
            if isinstance(r, int) and isinstance(c, int):
                self.check_component(r, inner.shape[0], inner.label, loc)
                self.check_component(c, inner.shape[1], inner.label, loc)
                return inner.leaves[r * inner.shape[1] + c]
            flat = sem.binary(Op.ADD, sem.binary(Op.MUL, r, inner.shape[1], loc), c, loc)
            if isinstance(inner, ArrayElemLV):
                return self.array_component(inner, [(r, inner.shape[0]), (c, inner.shape[1])], flat, loc)
            return SelectLV(sem.as_node(flat, loc, i32), inner.leaves, inner.label)
        k = ks[0]
        if isinstance(k, int):
            self.check_component(k, inner.shape[0], inner.label, loc)
            if len(inner.shape) == 2:
                m = inner.shape[1]
                return CompoundLV((m,), inner.leaves[k * m:(k + 1) * m], f"{inner.label}[{k}]")
            return inner.leaves[k]
        if len(inner.shape) == 2:
            self.error("a matrix row can only be selected by a compile-time index", loc)
        if sem.dtype_of(k).is_float:
            self.error("a vector index must be an integer", loc)
        if isinstance(inner, ArrayElemLV):
            return self.array_component(inner, [(k, inner.shape[0])], k, loc)
        return SelectLV(sem.as_node(k, loc, i32), inner.leaves, inner.label)

    def array_component(self, inner: ArrayElemLV, checks: list, flat, loc: Loc) -> MemLV:
        """Component `flat` (run-time) of an array element; checked in debug mode."""
        for k, n in checks:
            if sem.dtype_of(k).is_float or sem.dtype_of(k) == u1:
                self.error("a vector / matrix index must be an integer", loc)
            if self.debug and not isinstance(k, int):
                k = sem.as_node(k, loc, i32)
                ok = sem.binary(Op.AND, sem.binary(Op.GE, k, 0, loc), sem.binary(Op.LT, k, n, loc), loc)
                msg = (f"kernel {self.name!r}: the components of {inner.label}: {OOB_PHRASE} 0, at "
                       f"{loc.file}:{loc.line}: `{loc.text.strip()}`")
                self.emit(Node(Op.ASSERT, args=(ok, k, sem.as_node(n, loc, i32)), attr=(STATUS_OUT_OF_BOUNDS, msg),
                               loc=loc))
        index = sem.as_node(sem.binary(Op.ADD, inner.base, flat, loc), loc, i32)
        return MemLV(inner.arr, index, inner.label, inner.leaves[0].on_write)

    def check_component(self, k: int, n: int, label: str, loc: Loc) -> None:
        if not -n <= k < n:
            self.error(f"index {k} is out of range for {label}, which has {n} components", loc)

    # -- assignment -----------------------------------------------------------------------
    def assign_to(self, target, value, loc: Loc, declare_type=None, static: bool = False) -> None:
        """`target = value` where target is an AST target or an lvalue; `static`: the value is
        `gr.static(...)`, a compile-time value the names keep as it is."""
        if isinstance(target, ast.Name) and isinstance(declare_type, DType):
            prev = self.frame.scope.get(target.id)
            if isinstance(prev, ScalarVar) and prev.dtype != declare_type:
                self.error(f"{target.id!r} is already a {prev.dtype} variable and cannot be re-declared as "
                           f"{declare_type} (a variable keeps its type, as in Taichi); use a new name", loc)
        if isinstance(target, ast.Name) and not self.in_parallel:
            self.loop_private.pop(target.id, None)  # assigned again after the loop that privatized it
        if isinstance(target, ast.Name) and (static or target.id not in self.frame.dynamic):
            self.bind_name(target.id, value, loc, declare_type, static)  # top level: Python re-binding
            return
        lv = self.lvalue(target, loc) if isinstance(target, ast.AST) else target
        if isinstance(lv, NameLV):
            self.bind_name(lv.name, value, loc, declare_type, static)
        elif isinstance(lv, TupleLV):
            lv.store(self, value, loc, static)
        else:
            if static:
                self.error("`gr.static(...)` can only be assigned to names (a compile-time value has no storage)",
                           loc)
            if isinstance(lv, VarLV) and lv.var.name in self.frame.readonly:
                self.error(f"cannot assign to the loop variable {lv.label!r}", loc)
            lv.store(self, value, loc)

    def bind_name(self, name: str, value, loc: Loc, declare_type=None, static: bool = False) -> None:
        """Assignment to a name that is not (yet) a variable. A number is a typed value (Taichi's
        rule, frontend/constants.py) whose type a later assignment keeps; a `gr.static(...)`
        value and a compile-time object are bound as they are."""
        fr = self.frame
        if name in fr.readonly:
            what = "kernel argument" if isinstance(fr.scope.get(name), Node) else "loop variable"
            self.error(f"cannot assign to the {what} {name!r} here; copy it into a new variable first "
                       f"(`{name}2 = {name}`)", loc)
        if static:
            if isinstance(fr.scope.get(name), (ScalarVar, CompoundVar, StructVar)):
                self.error(f"{name!r} is a variable here; a `gr.static(...)` value needs a name of its own", loc)
            fr.typed.pop(name, None)
            fr.statics.add(name)
            fr.scope[name] = value  # a compile-time value, as in Taichi
            return
        if declare_type is None:
            value = keep_type(fr.typed.get(name), typed(value, loc), loc)
        scalar_like = isinstance(value, (Node, Compound, StructValue, bool, int, float))
        if declare_type is None and name not in fr.dynamic and small(value) and uniform(value):
            fr.scope[name] = fold(value)  # a direct binding: `n = x.shape[0]`, `g = 9.8`, `a = x`
            fr.statics.discard(name)
            note_type(fr.typed, name, value)
            return
        if not scalar_like and self.bind_list(name, value, loc):  # a list whose items are assigned (listvars.py)
            return
        if not scalar_like:
            current = fr.scope.get(name, value)
            if current is not value and current != value:
                self.error(f"{name!r} is assigned {self.describe(value)} here but {self.describe(current)} "
                           "elsewhere; inside loops and branches a name may hold one array / compile-time "
                           "value only", loc)
            fr.scope[name] = value  # a compile-time object: the same on every path
            fr.typed.pop(name, None)
            return
        if name in fr.statics:  # a variable now would start where this assignment is, inside a branch or loop
            self.error(f"{name!r} holds a gr.static(...) value, so it cannot be assigned a run-time value inside "
                       "a loop or branch; use another name for the variable", loc)
        if declare_type is not None:
            value = self.convert_to_type(value, declare_type, loc)
        var = self.declare(name, value, loc)
        note_type(fr.typed, name, value)
        self.var_lvalue(var, name).store(self, value, loc)

    def unpack(self, value, n: int, loc: Loc) -> list:
        from .values import ShapeValue
        if isinstance(value, ShapeValue):
            value = tuple(value.array.shape)
        if isinstance(value, Compound):
            if len(value.shape) != 1:
                self.error("only vectors can be unpacked into names", loc)
            value = value.items
        if not isinstance(value, (tuple, list)):
            raise UnpackTypeError(f"cannot unpack {self.describe(value)} into {n} names", loc, self.name)
        if len(value) != n:
            raise UnpackCountError(f"cannot unpack {len(value)} values into {n} names", loc, self.name)
        return list(value)

