"""Expressions: names and globals, attributes, indexing, operators (calls: calls.py)."""
from __future__ import annotations

import ast
import builtins as _pybuiltins
import math
import operator as _operator
import types as _pytypes

from .. import npcompat
from .. import semantic as sem
from ..builtins import Builtin
from ..errors import did_you_mean
from ..ir import STMTS, Buffer, Loc, Node, Op, assigned, walk
from ..spec import OOB_PHRASE, STATUS_OUT_OF_BOUNDS
from ..structs import HostStruct, StructValue, StructVar
from ..types import DType, element_shape, i32, scalar_of, u1
from .deps import fingerprint, lookup_name
from .pyvalues import NOT_PYTHON
from .scope import reads
from .structs import StructArrayValue
from .values import (
    ArrayValue,
    Compound,
    CompoundVar,
    DictValue,
    GroupedValue,
    ListValue,
    ListVar,
    NdrangeValue,
    RangeValue,
    ScalarVar,
    ShapeValue,
    StaticValue,
    TextureValue,
    seq_kind,
)

BINOPS = {ast.Add: Op.ADD, ast.Sub: Op.SUB, ast.Mult: Op.MUL, ast.Div: Op.DIV,
           ast.FloorDiv: Op.FLOORDIV, ast.Mod: Op.MOD, ast.Pow: Op.POW, ast.BitAnd: Op.BITAND,
           ast.BitOr: Op.BITOR, ast.BitXor: Op.BITXOR, ast.LShift: Op.SHL, ast.RShift: Op.SHR,
           ast.MatMult: None}
_CMPOPS = {ast.Eq: Op.EQ, ast.NotEq: Op.NE, ast.Lt: Op.LT, ast.LtE: Op.LE, ast.Gt: Op.GT,
           ast.GtE: Op.GE}
_UNOPS = {ast.USub: Op.NEG, ast.Not: Op.NOT, ast.Invert: Op.BITNOT}
# Python's `operator` functions a kernel may call (Taichi runs them on its expressions)
_OPERATOR_BINOPS = {_operator.add: Op.ADD, _operator.sub: Op.SUB, _operator.mul: Op.MUL,
                    _operator.truediv: Op.DIV, _operator.floordiv: Op.FLOORDIV, _operator.mod: Op.MOD,
                    _operator.pow: Op.POW, _operator.and_: Op.BITAND, _operator.or_: Op.BITOR,
                    _operator.xor: Op.BITXOR, _operator.lshift: Op.SHL, _operator.rshift: Op.SHR,
                    _operator.matmul: None}
_HOST_CONSTRUCTORS = ("zero", "one", "unit", "identity")  # gr.Vector.zero(gr.f32, 3), gr.Matrix.identity(...)
_PY_FUNCS = (_pybuiltins.min, _pybuiltins.max, _pybuiltins.abs, _pybuiltins.int, _pybuiltins.float,
             _pybuiltins.bool, _pybuiltins.len, _pybuiltins.range, _pybuiltins.enumerate, _pybuiltins.zip,
             _pybuiltins.all, _pybuiltins.any, _pybuiltins.pow, _pybuiltins.sum)
_MISSING = object()

_LOCAL_ONLY = (Op.ASSIGN, Op.IF, Op.WHILE, Op.FOR, Op.BREAK, Op.CONTINUE)  # statements that write no memory


class ExprMixin:
    # -- names and Python objects ------------------------------------------------------------
    def visit_Constant(self, node: ast.Constant, loc: Loc):
        if isinstance(node.value, (bool, int, float)) or node.value is None:
            return node.value
        if isinstance(node.value, str):
            return node.value  # only meaningful as a compile-time value (messages, gr.static)
        self.error(f"constant {node.value!r} of type {type(node.value).__name__} is not a kernel value", loc)

    def visit_Name(self, node: ast.Name, loc: Loc):
        fr = self.frame
        if node.id in fr.scope:
            v = fr.scope[node.id]
            private = self.loop_private.get(node.id)
            if private is not None and private[1] is v and fr.kernel_level:
                self.error(f"{node.id!r} was assigned in the parallel loop at line {private[0].line} before any read "
                           "there, so each thread had its own copy, which ended with the loop: after the loop it "
                           f"holds no thread's value. To combine the threads' values use `{node.id} += v` (a "
                           f"reduction) or gr.atomic_max({node.id}, v) and friends in the loop; or assign it again "
                           "here, or keep the values in a field", loc)
            if isinstance(v, ScalarVar):
                return Node(Op.VAR, v.dtype, attr=v.name, loc=loc)
            if isinstance(v, CompoundVar):
                return Compound(v.shape, tuple(Node(Op.VAR, x.dtype, attr=x.name, loc=loc) for x in v.vars))
            if isinstance(v, StructVar):
                return self.load_var(v, loc)
            if isinstance(v, ListVar):
                return self.load_list(v, loc)
            return v
        if node.id in self.vanished and fr.kernel_level:
            at = self.vanished[node.id]
            self.error(f"{node.id!r} was assigned inside the parallel loop at line {at.line}; each thread has its "
                       "own copy, which ends with the loop. Assign it before the loop (a kernel-scope variable) "
                       "to use it after", loc)
        v = self.lookup_global(node.id)  # Taichi: a name the body assigns later is the global until then (`n = n`)
        if v is _MISSING and node.id in fr.src.assigned_names:
            self.error(f"{node.id!r} is read before it is assigned", loc)
        if v is _MISSING:
            hint = did_you_mean(node.id, self.names_in_scope())
            self.error(f"name {node.id!r} is not defined{hint} (kernels see the module's globals when they are "
                       "first compiled: define it before the first call, or pass it as an argument)", loc)
        return self.from_python(v, node.id, loc, path=None if fr.path is None else fr.path + (("n", node.id),))

    def lookup_global(self, name: str):
        return lookup_name(self.frame.func, name, _MISSING)

    def names_in_scope(self) -> set:
        """Every name a kernel or @gr.func body could mean here: its locals and arguments, the
        names it assigns, its closure and module globals, Python's builtins."""
        fr, func = self.frame, self.frame.func
        code = getattr(func, "__code__", None)
        return {*fr.scope, *fr.src.assigned_names, *(code.co_freevars if code else ()),
                *getattr(func, "__globals__", {}), *dir(_pybuiltins)}

    def paths_add(self, v, path) -> None:
        if not isinstance(v, (bool, int, float, str, type(None))):
            self.paths.setdefault(id(v), path)

    def from_python(self, v, name: str, loc: Loc, path=None):
        """A Python object reached by name, attribute or template argument, as a kernel value."""
        if path is None:
            self.cacheable = False  # reached in a way the offline cache cannot re-check
        else:
            if path not in self.deps:  # a path names one object during a compile: fingerprint it once
                self.deps[path] = fingerprint(v)  # (a @gr.func's reads its source: ~1 ms per use)
            self.paths_add(v, path)
        if isinstance(v, (bool, int, float)) or v is None or isinstance(v, str):
            return v
        if npcompat.is_scalar(v) and v.dtype.kind in "biuf":
            return v.item()
        if hasattr(v, "__gfxrt_field__"):
            return self.bind_field(v, name, path)
        if getattr(type(v), "__gfxrt_texture__", False):  # a gr.Texture reached as a global (Taichi's rule too)
            self.error(f"the texture {name!r} is used by name; pass it as an argument annotated "
                       "gr.types.texture(num_dimensions=...) or gr.types.rw_texture(num_dimensions=..., fmt=...)", loc)
        if hasattr(v, "__gfxrt_triplets__"):  # a gr.linalg.SparseMatrixBuilder (frontend/triplets.py)
            return self.bind_triplets(v, name)
        if hasattr(v, "__gfxrt_struct_field__"):
            return self.bind_struct_field(v, name, path)
        if isinstance(v, HostStruct):  # a struct value from Python: compile-time constants
            return self.host_struct(v)
        if isinstance(v, (tuple, list)):
            items = (self.from_python(x, f"{name}[{k}]", loc, None if path is None else path + (("i", k),))
                     for k, x in enumerate(v))
            return ListValue(items) if isinstance(v, list) else tuple(items)
        if isinstance(v, dict):  # items are read by compile-time keys (frontend/comprehensions.py)
            return DictValue(v, name, python=True, path=path)
        if getattr(type(v), "__gfxrt_matrix__", False):  # a gr.Vector / gr.Matrix from Python: constants
            return Compound(tuple(v.shape), tuple(v.ravel().tolist()))
        if npcompat.is_array(v):
            return self.captured_array(v, name, loc)  # a compile-time constant (frontend/callables.py)
        member = getattr(v, "__gfxrt_member__", None)
        if member is not None and path is not None and path[0][0] == "arg":  # self.x of a data_oriented object
            self.cacheable = False
            return self.bind_field(member(), name, None)
        if hasattr(v, "__gfxrt_ndarray__") or type(v).__name__ == "Ndarray":
            self.error(f"{name!r} is a gr.ndarray captured from Python; pass it to the kernel as an argument "
                       "(or use a gr.field, which kernels use by name)", loc)
        if type(v).__name__ == "Kernel" and hasattr(v, "func"):
            self.error(f"{name!r} is a @gr.kernel; kernels cannot call kernels. Make it a @gr.func", loc)
        return v  # modules, builtins, types, funcs, namespaces; bad calls are rejected at the call

    def host_constant(self, fn, args, kwargs, loc: Loc):
        """`gr.Vector.zero(gr.f32, 3)`, `gr.Matrix.identity(gr.f32, 3)` ...: compile-time values."""
        args = [sem.as_dtype(self.known(a)) for a in args]
        kwargs = {k: sem.as_dtype(self.known(v)) for k, v in kwargs.items()}
        if not all(isinstance(a, (int, DType)) or a is None for a in [*args, *kwargs.values()]):
            self.error(f"gr.{fn.__self__.name}.{fn.__name__}(...) needs compile-time arguments (a dtype and "
                       "integer sizes)", loc)
        try:
            v = fn(*args, **kwargs)
        except (TypeError, ValueError) as e:
            self.error(f"gr.{fn.__self__.name}.{fn.__name__}(...): {e}", loc)
        return Compound(tuple(v.shape), tuple(v.ravel().tolist()))

    def bind_field(self, obj, name: str, path):
        info = obj.__gfxrt_field__
        arr = self.fields.get(info.key)
        if arr is None:
            buf = self.fresh_buffer_name(name)
            shape = tuple(info.shape)
            inner = shape[-1] if len(shape) >= 2 and isinstance(info.elem, DType) and shape[-1] > 1 else None
            self.ir.buffers.append(Buffer(buf, scalar_of(info.elem), "field", source=info.key,
                                          needs_grad=info.needs_grad, inner=inner,
                                          elems=info.stored if info.stored is not None else
                                          math.prod(shape) * math.prod(element_shape(info.elem))))
            arr = self.fields[info.key] = ArrayValue(name, buf, info.elem, tuple(info.shape), obj=obj,
                                                     offset=tuple(info.offset))
            if path is not None:
                self.field_paths[info.key] = path
            else:
                self.cacheable = False
        return arr

    def fresh_buffer_name(self, base: str) -> str:
        names = {b.name for b in self.ir.buffers}
        name, k = base, 0
        while name in names:
            k += 1
            name = f"{base}_{k}"
        return name

    # -- attributes ---------------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute, loc: Loc):
        base = self.visit(node.value)
        attr = node.attr
        if isinstance(base, ArrayValue):
            return self.array_attribute(base, attr, loc)
        if isinstance(base, TextureValue):
            return self.texture_attribute(base, attr, loc)
        if isinstance(base, Compound):
            return self.compound_attribute(base, attr, loc)
        if isinstance(base, (StructValue, StructArrayValue)):
            return self.struct_attribute(base, attr, loc)
        if isinstance(base, ShapeValue):
            self.error(f"shape has no attribute {attr!r}", loc)
        if isinstance(base, (Node, int, float, bool)):
            self.error(f"scalars have no attribute {attr!r} in kernels", loc)
        try:
            v = getattr(base, attr)
        except AttributeError:
            self.error(f"{self.describe(base)} has no attribute {attr!r}{did_you_mean(attr, dir(base))}", loc)
        base_path = self.paths.get(id(base))
        return self.from_python(v, attr, loc, None if base_path is None else base_path + (("a", attr),))

    def array_attribute(self, arr: ArrayValue, attr: str, loc: Loc):
        if attr == "shape":
            return ShapeValue(arr)
        if attr == "grad":
            if arr.obj is not None and getattr(arr.obj, "grad", None) is not None:
                base = self.paths.get(id(arr.obj))
                return self.from_python(arr.obj.grad, f"{arr.name}.grad", loc,
                                        None if base is None else base + (("a", "grad"),))
            g = self.arg_grad(arr, loc)  # an ndarray argument's gradient (frontend/callables.py)
            if g is not None:
                return g
            self.error(f"{arr.name}.grad is not available inside the kernel: allocate the field with "
                       "needs_grad=True, or pass the gradient array as its own argument", loc)
        if attr == "ndim":
            return arr.ndim
        if attr in ("snode", "parent") and getattr(arr.obj, "snode", None) is not None:  # a field's layout node
            return arr.obj.snode if attr == "snode" else arr.obj.snode.parent  # `x.parent()`: `x.snode.parent()`
        if attr == "dtype":
            return arr.elem
        eshape = () if isinstance(arr.elem, DType) else arr.elem.shape
        if attr == "element_shape":
            return eshape
        if attr in ("n", "m") and eshape:  # Taichi's vector / matrix container sizes
            return eshape[0] if attr == "n" else (eshape[1] if len(eshape) == 2 else 1)
        self.error(f"arrays have no attribute {attr!r} inside kernels (available: shape, ndim, dtype, grad; n, m "
                   "and element_shape for vector / matrix elements)", loc)

    # -- indexing --------------------------------------------------------------------------------
    def visit_Subscript(self, node: ast.Subscript, loc: Loc):
        inner = node.value
        if isinstance(inner, ast.Subscript) and isinstance(inner.value, (ast.Name, ast.Attribute)):
            arr = self.visit(inner.value)
            nk = len(node.slice.elts) if isinstance(node.slice, ast.Tuple) else 1
            if isinstance(arr, ArrayValue) and not isinstance(arr.elem, DType) and nk == len(arr.elem.shape) \
                    and not any(isinstance(n, ast.Slice) for n in ast.walk(node.slice)):
                # x[i][j] on a vector / matrix array: load just that component (a run-time j too)
                return self.subscript_lvalue(node, loc).load(self, loc)
        base = self.visit(node.value)
        if isinstance(base, StaticValue) and isinstance(base.value, tuple):
            base = base.value  # `gr.static(offsets)[k]`: the compile-time sequence itself
        if isinstance(base, ShapeValue):
            k = self.known(self.visit(node.slice))
            if isinstance(k, slice):  # `x.shape[1:]`
                return tuple(base.array.shape)[k]
            n = base.array.ndim
            if not isinstance(k, int) or not -n <= k < n:
                self.error(f"{base.array.name}.shape index must be a constant in range(-{n}, {n})", loc)
            return base.array.shape[k]
        if isinstance(base, ArrayValue):
            folded = self.fold_const_index(base, node.slice, loc)
            if folded is not None:
                return folded
            return self.element_lvalue(base, node.slice, loc, take=False).load(self, loc)
        if isinstance(base, Compound):
            return self.compound_index(base, node.slice, loc)
        if isinstance(base, StructArrayValue):
            return self.struct_element(base, node.slice, loc, take=False).load(self, loc)
        if isinstance(base, tuple):
            k = self.known(self.visit(node.slice))
            if isinstance(k, slice):  # Python's slice of a compile-time tuple or list
                return ListValue(base[k]) if isinstance(base, ListValue) else base[k]
            if not isinstance(k, int):
                self.error(f"{seq_kind(base)}s can only be indexed by compile-time integers (use gr.static for "
                           "loops over them, or a gr.Vector / gr.field for values indexed at run time)", loc)
            if not -len(base) <= k < len(base):
                self.error(f"index {k} out of range for a {seq_kind(base)} of {len(base)}", loc)
            return base[k]
        if isinstance(base, (DictValue, dict)):
            return self.dict_item(base, self.visit(node.slice), loc)
        self.error(f"{self.describe(base)} cannot be indexed", loc)

    def visit_Slice(self, node: ast.Slice, loc: Loc) -> slice:
        """`a:b:c` with compile-time bounds: slices a vector, a matrix, a tuple or a shape (Taichi's)."""
        bounds = [None if b is None else self.known(self.visit(b)) for b in (node.lower, node.upper, node.step)]
        if not all(b is None or (isinstance(b, int) and not isinstance(b, bool)) for b in bounds):
            self.error("slice bounds in kernels must be compile-time integers", loc)
        if bounds[2] == 0:
            self.error("slice step cannot be zero", loc)
        return slice(*bounds)

    def index_items(self, sl: ast.expr, loc: Loc) -> list:
        """The scalar indices of `x[sl]`: tuples and index vectors (`x[I]`) are flattened."""
        if isinstance(sl, ast.Constant) and sl.value is None:
            return []
        if isinstance(sl, ast.Slice):
            self.error("slices are not supported in kernels; index one element at a time", loc)
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        out = []
        for it, v in zip(items, self.visit_all(items)):
            if isinstance(v, Compound) and len(v.shape) == 1:
                out.extend(v.items)
            elif isinstance(v, tuple):
                out.extend(v)
            else:
                out.append(self.known(self.scalar(v, self.frame.src.loc(it))))
        return out

    def flat_index(self, arr: ArrayValue, sl: ast.expr, loc: Loc, items: list | None = None, take: bool = True) -> Node:
        """The flat element index of `arr[sl]` (row-major), as an i32 node; in debug mode
        each index is checked against its extent. `items`: sl's indices, already visited.
        A field in a dynamic SNode's chunk pool: its storage element (frontend/pool.py), the
        chunks a write needs taken first unless `take` is False (a read)."""
        idx = self.index_items(sl, loc) if items is None else items
        if len(idx) != arr.ndim:
            n = len(idx)
            hint = f"use {arr.name}[None] for a 0-d container" if arr.ndim == 0 else \
                f"index every dimension: {arr.name}[{', '.join('ijkl'[:arr.ndim])}]"
            self.error(f"{arr.name} has {arr.ndim} dimension(s) but is indexed with {n} "
                       f"ind{'ex' if n == 1 else 'ices'}; {hint}", loc)
        for v in idx:
            if sem.dtype_of(v).is_float or sem.dtype_of(v) == u1:
                self.error(f"array index into {arr.name} must be an integer, not {sem.dtype_of(v)} "
                           "(use gr.cast(x, gr.i32) or int(x))", loc)
        offset = arr.offset or (0,) * arr.ndim  # Taichi's offset: x[offset] is the first element
        if arr.clamp:  # boundary="clamp": min(max(i, 0), n - 1) per dimension, as Taichi's ndarrays
            idx = [sem.binary(Op.MIN, sem.binary(Op.MAX, sem.as_node(v, loc, i32), 0, loc),
                              sem.binary(Op.SUB, arr.shape[d], 1, loc), loc) for d, v in enumerate(idx)]
        elif self.debug:
            idx = [self.bounds_check(arr, d, v, loc) for d, v in enumerate(idx)]
        else:
            for d, v in enumerate(idx):
                if isinstance(v, int) and isinstance(arr.shape[d], int) and not \
                        offset[d] <= v < offset[d] + arr.shape[d]:
                    self.error(f"index {v} is out of bounds for dimension {d} of {arr.name} "
                               f"({_extent_text(arr)})", loc)
        idx = [v - o if isinstance(v, int) else sem.binary(Op.SUB, v, o, loc) if o else v for v, o in zip(idx, offset)]
        sf = self.sparse_of(arr)
        if sf is not None and sf.node.pool is not None:
            return self.pool_index(sf, idx, loc, take)
        flat = 0
        for d, v in enumerate(idx):
            flat = v if d == 0 else sem.binary(Op.ADD, sem.binary(Op.MUL, flat, arr.shape[d], loc), v, loc)
        return sem.as_node(flat, loc, i32)

    def bounds_check(self, arr: ArrayValue, d: int, v, loc: Loc):
        n, o = arr.shape[d], arr.offset[d] if arr.offset else 0
        if isinstance(v, int) and isinstance(n, int):
            if not o <= v < o + n:
                self.error(f"index {v} is out of bounds for dimension {d} of {arr.name} ({_extent_text(arr)})", loc)
            return v
        v = sem.as_node(v, loc, i32)
        if v.op not in (Op.VAR, Op.CONST, Op.PARAM):
            v = self.temp(v, loc)
        ok = sem.binary(Op.AND, sem.binary(Op.GE, v, o, loc), sem.binary(Op.LT, v, o + n if o else n, loc), loc)
        if sem.is_const(ok):
            return v
        shape = f" ({_extent_text(arr)})" if all(isinstance(s, int) for s in arr.shape) else ""
        # the device records the first failing index and the extent: gfxrt/engine/status.py puts them in
        msg = (f"kernel {self.name!r}: array {arr.name!r}{shape}: {OOB_PHRASE} {d}, at "
               f"{loc.file}:{loc.line}: `{loc.text.strip()}`")
        self.emit(Node(Op.ASSERT, args=(ok, v, sem.as_node(n, loc, i32)), attr=(STATUS_OUT_OF_BOUNDS, msg), loc=loc))
        return v

    # -- operators ------------------------------------------------------------------------------
    def visit_BinOp(self, node: ast.BinOp, loc: Loc):
        op = BINOPS.get(type(node.op), _MISSING)
        if op is _MISSING:
            self.error(f"operator {type(node.op).__name__} is not supported", loc)
        a, b = self.visit_all([node.left, node.right])
        return self.binop(op, a, b, loc)

    def binop(self, op, a, b, loc: Loc):
        if isinstance(a, StructValue) or isinstance(b, StructValue):
            return self.struct_binop(op, a, b, loc)
        r = self.python_binop(op, a, b, loc)  # lists, tuples, numpy arrays: Python's operators (pyvalues.py)
        if r is not NOT_PYTHON:
            return r
        if op is None:
            return self.matmul(a, b, loc)
        return self.map_values(lambda x, y: sem.binary(op, x, y, loc), (a, b), loc)

    def visit_UnaryOp(self, node: ast.UnaryOp, loc: Loc):
        v = self.visit(node.operand)
        if isinstance(node.op, ast.UAdd):
            return v
        op = _UNOPS[type(node.op)]
        if op is Op.NOT and isinstance(v, Compound):  # Taichi: component by component, as gr.logical_not
            ip = sem.DEFAULTS["ip"]
            return self.map_values(lambda x: sem.as_node(sem.unary(Op.NOT, sem.truth(x, loc), loc), loc, ip), (v,), loc)
        if op is Op.NOT and not isinstance(v, Node) and not sem.is_const(v):
            return not v  # compile-time objects: `not None`
        r = self.python_unary(op, v, loc)  # `-A` of a captured numpy array
        if r is not NOT_PYTHON:
            return r
        return self.map_values(lambda x: sem.unary(op, x, loc), (v,), loc)

    def visit_Compare(self, node: ast.Compare, loc: Loc):
        left = self.visit(node.left)
        result = None
        for op, right_node in zip(node.ops, node.comparators):
            right = self.visit(right_node)
            if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) or self._objects_equality(op, left, right):
                c = self._python_compare(op, left, right, loc)
            else:
                cop = _CMPOPS[type(op)]
                if isinstance(left, Compound) or isinstance(right, Compound):
                    # componentwise, as in Taichi: a vector of 0 / 1 (`all(v == w)` reduces it); a chain
                    # (`lo <= v <= hi`) ands its comparisons component by component, as Taichi's does
                    left, right = (self.make_matrix(tuple(v), None, loc) if isinstance(v, (tuple, list)) else v
                                   for v in (left, right))
                    c = self.map_values(lambda x, y, cop=cop: sem.binary(cop, x, y, loc), (left, right), loc)
                else:
                    c = sem.binary(cop, self.scalar(left, loc), self.scalar(right, loc), loc)
            result = c if result is None else self.map_values(lambda x, y: sem.binary(Op.AND, x, y, loc),
                                                              (result, c), loc)
            left = right
        return result

    @staticmethod
    def _objects_equality(op, a, b) -> bool:
        """`==` / `!=` between compile-time values that are not both numbers (strings, dtypes,
        tuples, None: `gr.static(mode == "max")`): Python decides."""
        if not isinstance(op, (ast.Eq, ast.NotEq)):
            return False
        if any(isinstance(v, (Node, Compound)) for v in (a, b)):
            return False
        return not (sem.is_const(a) and sem.is_const(b))

    def _python_compare(self, op, a, b, loc: Loc):
        if isinstance(a, Node) or isinstance(b, Node) or isinstance(a, Compound) or isinstance(b, Compound):
            self.error(f"`{type(op).__name__.lower()}` only compares compile-time values in kernels", loc)
        if isinstance(op, ast.Is):
            return a is b
        if isinstance(op, ast.IsNot):
            return a is not b
        if isinstance(op, (ast.Eq, ast.NotEq)):
            return (a == b) if isinstance(op, ast.Eq) else (a != b)
        try:
            return (a in b) if isinstance(op, ast.In) else (a not in b)
        except TypeError as e:
            self.error(f"cannot test membership: {e}", loc)

    def visit_BoolOp(self, node: ast.BoolOp, loc: Loc):
        return self.bool_op(node, loc, truth_only=False)

    def bool_op(self, node: ast.BoolOp, loc: Loc, truth_only: bool):
        """`a and b`, `a or b`: short-circuit, and Python's (and Taichi's) value: `a and b` is a
        when a is false, else b (`3 and 5 == 5`, `0 or x == x`), in the operands' promoted type.
        `truth_only` (an `if` / `while` test, frontend/stmts.py): just the truth, a u1 node."""
        is_and = isinstance(node.op, ast.And)
        if all(isinstance(v, ast.Constant) and sem.is_const(v.value) for v in node.values):
            out = node.values[0].value  # literals only: Python's value (`0 or 3` is 3, not True)
            for v in node.values[1:]:
                out = (out and v.value) if is_and else (out or v.value)
            return bool(out) if truth_only else out
        operand = self.condition if truth_only else self.bool_operand
        out = operand(node.values[0], loc)
        if isinstance(out, Compound):  # Taichi: vectors combine component by component (logical_and / _or)
            return self.vector_bool_op(out, node.values[1:], is_and, loc)
        for v in node.values[1:]:
            if not isinstance(out, Node):  # known now: `False and ...` / `1 or ...` never run the rest
                if bool(out) != is_and:
                    return bool(out) if truth_only else out
                out = operand(v, loc)
                continue
            with self.block() as pre:
                r = operand(v, loc)
            if isinstance(r, Compound):
                for st in pre:
                    self.emit(st)
                return self.vector_bool_op(out, [v], is_and, loc, first_operand=r)
            if not pre and (truth_only or sem.dtype_of(r) == u1 and out.dtype == u1):
                out = sem.binary(Op.AND if is_and else Op.OR, out, r, loc)
                continue
            test = sem.truth(out, loc)
            if not pre:
                out = sem.select(test, r, out, loc) if is_and else sem.select(test, out, r, loc)
                continue
            # the right side needs statements (a func call, a debug check): run them only when Python would
            t = self.temp(sem.as_node(out, loc, sem.select(test, r, out, loc).dtype), loc)
            guard = sem.truth(t, loc) if is_and else sem.unary(Op.NOT, sem.truth(t, loc), loc)
            body = (*pre, Node(Op.ASSIGN, attr=t.attr, args=(sem.as_node(r, loc, t.dtype),), loc=loc))
            self.emit(Node(Op.IF, args=(guard,), blocks=(body, ()), loc=loc))
            out = t
        return out

    def bool_operand(self, test: ast.expr, loc: Loc):
        """An operand of `and` / `or` as a value: a scalar node, a vector, or a Python value known now."""
        v = self.known(self.visit(test))
        if isinstance(v, Compound):
            return v
        return self.scalar(v, loc) if isinstance(v, Node) or sem.is_const(v) else v

    def vector_bool_op(self, out, rest, is_and: bool, loc: Loc, first_operand=None):
        """`a and b` / `a or b` with a vector operand: every operand is evaluated and the result is
        1 / 0 per component, in the default int type, as Taichi's logical_and / logical_or."""
        ip, op = sem.DEFAULTS["ip"], Op.AND if is_and else Op.OR
        for k, v in enumerate(rest):
            r = first_operand if k == 0 and first_operand is not None else self.known(self.visit(v))
            out = self.map_values(lambda x, y: sem.as_node(sem.binary(op, sem.truth(x, loc), sem.truth(y, loc), loc),
                                                           loc, ip), (out, r), loc)
        return out

    def visit_IfExp(self, node: ast.IfExp, loc: Loc):
        if isinstance(node.test, (ast.Compare, ast.Name, ast.Subscript, ast.Attribute)):
            t = self.known(self.visit(node.test))
            if isinstance(t, Compound):  # a vector condition selects componentwise (Taichi's ti.select)
                a, b = self.visit(node.body), self.visit(node.orelse)
                return self.map_values(lambda c, x, y: sem.select(c, x, y, loc), (t, a, b), loc)
            c = sem.truth(self.scalar(t, loc), loc) if not sem.is_const(t) else bool(t)
        else:
            c = self.condition(node.test, loc)
        if sem.is_const(c):
            return self.visit(node.body if c else node.orelse)
        with self.block() as pre_a:
            a = self.visit(node.body)
        with self.block() as pre_b:
            b = self.visit(node.orelse)
        if not pre_a and not pre_b:
            return self.select_values(c, a, b, loc)
        shape_probe = self.select_values(c, a, b, loc)
        var = self.declare(self.fresh("ifexp"), shape_probe, loc)
        lv = self.var_lvalue(var, "ifexp")
        with self.block() as then:
            for s in pre_a:
                self.emit(s)
            lv.store(self, a, loc)
        with self.block() as other:
            for s in pre_b:
                self.emit(s)
            lv.store(self, b, loc)
        self.emit(Node(Op.IF, args=(c,), blocks=(tuple(then), tuple(other)), loc=loc))
        return lv.load(self, loc)

    def visit_Tuple(self, node: ast.Tuple, loc: Loc):
        return tuple(self.visit_all(node.elts))

    def visit_List(self, node: ast.List, loc: Loc):
        return ListValue(self.visit_all(node.elts))

    # -- calls -----------------------------------------------------------------------------------
    def visit_all(self, nodes) -> list:
        """Evaluate expressions left to right, as Python does (see append_in_order)."""
        out: list = []
        for n in nodes:
            self.append_in_order(out, lambda n=n: self.visit(n), self.frame.src.loc(n))
        return out

    def append_in_order(self, out: list, evaluate, loc: Loc) -> None:
        """Append `evaluate()` to the values `out` evaluated before it: when it runs statements
        (a func body, an atomic), the values before it that those statements could change are
        read into temporaries first: those that read a local the statements assign, or memory
        where they write memory (a pooled field's lookup only reads: a variable passed before
        it stays that variable, as a gr.template() parameter needs)."""
        with self.block() as pre:
            v = evaluate()
        if pre:
            names = set(assigned(pre))
            mem = any(n.op in STMTS and n.op not in _LOCAL_ONLY for n in walk(pre))  # a store, an atomic, ...
            out[:] = [self.materialize(x, loc) if reads(x, (Op.VAR,), names) or (mem and reads(x, (Op.LOAD,)))
                      else x for x in out]
            for s in pre:
                self.emit(s)
        out.append(v)

    def visit_NamedExpr(self, node: ast.NamedExpr, loc: Loc):
        """`(y := v)`: assigns y as `y = v` would, and is y's new value (Taichi's)."""
        self.assign_to(node.target, self.visit(node.value), loc)
        return self.visit(ast.copy_location(ast.Name(id=node.target.id, ctx=ast.Load()), node))

    def scalar(self, v, loc: Loc):
        """Check that v is a scalar (node or Python number) and return it."""
        if isinstance(v, Node) or sem.is_const(v):
            return v
        self.error(f"expected a scalar here, got {self.describe(v)}", loc)

    def map_values(self, fn, args, loc: Loc):
        """Apply a scalar function elementwise over vector/matrix values (scalars broadcast)."""
        shapes = {a.shape for a in args if isinstance(a, Compound)}
        if not shapes:
            return fn(*[self.scalar(a, loc) for a in args])
        if len(shapes) > 1:
            self.error(f"shape mismatch: {' vs '.join(map(str, sorted(shapes)))}", loc)
        shape = shapes.pop()
        n = len(next(a for a in args if isinstance(a, Compound)).items)
        items = tuple(fn(*[a.items[k] if isinstance(a, Compound) else self.scalar(a, loc) for a in args])
                      for k in range(n))
        return Compound(shape, items)

    def describe(self, v) -> str:
        if isinstance(v, ArrayValue):
            return f"the array {v.name!r}"
        if isinstance(v, Compound):
            return f"a vector/matrix of shape {v.shape}"
        if isinstance(v, StructValue):
            return f"a struct {v.type!r}"
        if isinstance(v, StructArrayValue):
            return f"the struct field {v.name!r}"
        if isinstance(v, (RangeValue, NdrangeValue, GroupedValue, StaticValue)):
            return "an iteration space (use it in a for loop)"
        if isinstance(v, _pytypes.ModuleType):
            return f"the module {v.__name__!r}"
        if isinstance(v, Node):
            return f"a {v.dtype} value"
        if isinstance(v, Builtin):
            return f"the builtin gr.{v.name}"
        if isinstance(v, tuple):
            return f"a {seq_kind(v)} of {len(v)}"
        if isinstance(v, DictValue):
            return f"the dict {v.name!r}" if v.name else "the dict"
        if callable(v):
            return f"the Python function {getattr(v, '__qualname__', getattr(v, '__name__', repr(v)))!r}"
        return f"a {type(v).__name__}"


def _extent_text(arr: ArrayValue) -> str:
    """`shape (8,)`, and a field's offset where it has one, for index errors."""
    return f"shape {tuple(arr.shape)}" + (f", offset {arr.offset}" if arr.offset else "")
