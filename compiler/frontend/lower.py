"""Python AST -> typed IR: a thin visitor with one `visit_<Node>` method per construct.

Anything without a visitor raises `CompileError` naming the construct; `visit()` wraps
every failure so the message points at the user's line, never at a compiler file.
"""
from __future__ import annotations

import ast
import builtins as _pybuiltins
import types as _pytypes
from contextlib import contextmanager

from .. import semantic as sem
from ..builtins import Builtin
from ..errors import CompileError
from ..ir import Buffer, KernelIR, Loc, Node, Op, Param, Task
from ..spec import ArgSpec
from ..types import DType, i32, scalar_of
from .source import FunctionSource
from .values import ArrayValue, Compound, ShapeValue

_BINOPS = {ast.Add: Op.ADD, ast.Sub: Op.SUB, ast.Mult: Op.MUL, ast.Div: Op.DIV,
           ast.FloorDiv: Op.FLOORDIV, ast.Mod: Op.MOD, ast.Pow: Op.POW, ast.BitAnd: Op.BITAND,
           ast.BitOr: Op.BITOR, ast.BitXor: Op.BITXOR, ast.LShift: Op.SHL, ast.RShift: Op.SHR}
_CMPOPS = {ast.Eq: Op.EQ, ast.NotEq: Op.NE, ast.Lt: Op.LT, ast.LtE: Op.LE, ast.Gt: Op.GT,
           ast.GtE: Op.GE}
_UNOPS = {ast.USub: Op.NEG, ast.Not: Op.NOT, ast.Invert: Op.BITNOT}

_CONSTRUCT_HINTS = {
    "Try": "try/except is not supported in kernels; check conditions with `if` instead",
    "Lambda": "lambdas are not supported in kernels; define a @gr.func instead",
    "ClassDef": "class definitions are not supported in kernels; define classes outside",
    "FunctionDef": "nested function definitions are not supported; use @gr.func at module level",
    "With": "`with` is not supported inside kernels",
    "ListComp": "list comprehensions are not supported in kernels; use a loop or gr.static",
    "Global": "`global` is not needed: fields are used by name",
}


class _Unsupported(Exception):
    pass


class Lowering:
    """Lowers one specialization of one Python kernel function to `KernelIR`."""

    def __init__(self, func, args: list[ArgSpec], *, name: str | None = None, debug: bool = False):
        self.src = FunctionSource.of(func)
        self.func = func
        self.name = name or func.__name__
        self.debug = debug
        self.ir = KernelIR(self.name, loc=self.src.loc(self.src.tree))
        self.scope: dict[str, object] = {}      # Python name -> Value
        self.local_names: set[str] = set()      # names bound to IR locals
        self.readonly: set[str] = set()         # loop variables
        self._blocks: list[list[Node]] = []
        self._ntemp = 0
        self._loop_depth = 0
        self._bind_args(args)

    # -- entry point -------------------------------------------------------------------
    def lower(self) -> KernelIR:
        body = self.src.tree.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]  # docstring
        serial: list[ast.stmt] = []
        for stmt in body:
            if isinstance(stmt, ast.For):
                self._flush_serial(serial)
                serial = []
                self.visit(stmt, self._lower_task)
            else:
                serial.append(stmt)
        self._flush_serial(serial)
        return self.ir

    def _flush_serial(self, stmts: list[ast.stmt]) -> None:
        if not stmts:
            return
        loc = self.src.loc(stmts[0])
        with self.block() as body:
            for s in stmts:
                self.visit(s)
        self.ir.tasks.append(Task(f"task{len(self.ir.tasks)}", "serial", tuple(body), loc=loc))

    # -- arguments ---------------------------------------------------------------------
    def _bind_args(self, args: list[ArgSpec]) -> None:
        for i, a in enumerate(args):
            if a.kind == "scalar":
                p = Param(a.name, a.dtype, ("arg", i))
                self.ir.params.append(p)
                self.scope[a.name] = Node(Op.PARAM, a.dtype, attr=a.name)
            elif a.kind == "ndarray":
                shape = []
                for d in range(a.ndim):
                    pname = f"{a.name}.shape{d}"
                    self.ir.params.append(Param(pname, i32, ("shape", i, d)))
                    shape.append(Node(Op.PARAM, i32, attr=pname))
                buf = Buffer(a.name, scalar_of(a.elem), "arg", source=i, needs_grad=a.needs_grad)
                self.ir.buffers.append(buf)
                self.scope[a.name] = ArrayValue(a.name, a.name, a.elem, tuple(shape))
            elif a.kind == "template":
                self.scope[a.name] = a.value
            else:
                raise CompileError(f"argument {a.name!r} has unknown kind {a.kind!r}")

    # -- blocks and emission -------------------------------------------------------------
    @contextmanager
    def block(self):
        b: list[Node] = []
        self._blocks.append(b)
        try:
            yield b
        finally:
            self._blocks.pop()

    def emit(self, n: Node) -> None:
        if not self._blocks:
            raise CompileError("statement outside of any block (compiler bug)", n.loc)
        self._blocks[-1].append(n)

    def temp(self, value, loc: Loc) -> Node:
        """Materialize a scalar value into a fresh local and return a read of it."""
        n = sem.as_node(value, loc)
        name = f"tmp{self._ntemp}"
        self._ntemp += 1
        self.ir.locals[name] = n.dtype
        self.emit(Node(Op.ASSIGN, attr=name, args=(n,), loc=loc))
        return Node(Op.VAR, n.dtype, attr=name, loc=loc)

    def error(self, msg: str, loc: Loc | None = None):
        raise CompileError(msg, loc, self.name)

    # -- the visit wrapper ----------------------------------------------------------------
    def visit(self, node: ast.AST, method=None):
        loc = self.src.loc(node)
        fn = method or getattr(self, f"visit_{type(node).__name__}", None)
        if fn is None:
            kind = type(node).__name__
            hint = _CONSTRUCT_HINTS.get(kind, f"the Python construct `{kind}` is not supported in kernels")
            raise CompileError(hint, loc, self.name)
        try:
            return fn(node, loc)
        except CompileError as e:
            if e.loc is None:
                raise CompileError(e.message, loc, self.name) from None
            raise
        except RecursionError:
            raise CompileError("expression or call chain too deep (recursion is not supported)",
                               loc, self.name) from None
        except Exception as e:  # a compiler bug: still point at the user's line
            raise CompileError(f"internal compiler error: {type(e).__name__}: {e}", loc,
                               self.name) from e

    # -- statements ----------------------------------------------------------------------
    def _lower_task(self, node: ast.For, loc: Loc) -> None:
        if node.orelse:
            self.error("for/else is not supported in kernels", loc)
        begin, extent, step = self._range_bounds(node.iter, loc)
        if not isinstance(node.target, ast.Name):
            self.error("a parallel loop needs a single loop variable (use gr.ndrange for several)", loc)
        var = node.target.id
        index = f"{var}.t"
        self.ir.locals[index] = i32
        with self.block() as body:
            value = sem.binary(Op.ADD, begin, sem.binary(Op.MUL, Node(Op.VAR, i32, attr=index), step, loc), loc)
            self._assign_local(var, value, loc)
            self.readonly.add(var)
            self._loop_depth += 1
            try:
                for s in node.body:
                    self.visit(s)
            finally:
                self._loop_depth -= 1
                self.readonly.discard(var)
        self.ir.tasks.append(Task(f"task{len(self.ir.tasks)}", "range", tuple(body),
                                  extent=sem.as_node(extent, loc), index_var=index, loc=loc))

    def _range_bounds(self, it: ast.expr, loc: Loc):
        """(begin, trip count, step) of a `range(...)` call."""
        if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
                and self._lookup_global("range") is _pybuiltins.range):
            self.error("a kernel loop must iterate over range(...)", loc)
        args = [self.scalar(self.visit(a), self.src.loc(a)) for a in it.args]
        if it.keywords or not 1 <= len(args) <= 3:
            self.error("range() takes 1 to 3 positional arguments", loc)
        for a in args:
            if sem.dtype_of(a).is_float:
                self.error("range() bounds must be integers", loc)
        begin, end, step = (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) == 3 else 1)
        if not sem.is_const(step):
            self.error("range() step must be a compile-time constant", loc)
        if step == 0:
            self.error("range() step must not be zero", loc)
        if step > 0:
            span = sem.binary(Op.SUB, end, begin, loc)
            count = sem.binary(Op.FLOORDIV, sem.binary(Op.ADD, span, step - 1, loc), step, loc)
        else:
            span = sem.binary(Op.SUB, begin, end, loc)
            count = sem.binary(Op.FLOORDIV, sem.binary(Op.ADD, span, -step - 1, loc), -step, loc)
        count = sem.binary(Op.MAX, count, 0, loc)
        return begin, count, step

    def visit_For(self, node: ast.For, loc: Loc) -> None:
        if node.orelse:
            self.error("for/else is not supported in kernels", loc)
        if not isinstance(node.target, ast.Name):
            self.error("loop target must be a single name here", loc)
        args = node.iter.args if isinstance(node.iter, ast.Call) else []
        self._range_bounds(node.iter, loc)  # validates
        vals = [sem.as_node(self.scalar(self.visit(a), self.src.loc(a)), loc, i32) for a in args]
        begin, end, step = (sem.as_node(0, loc, i32), vals[0], sem.as_node(1, loc, i32)) if len(vals) == 1 \
            else (vals[0], vals[1], vals[2] if len(vals) == 3 else sem.as_node(1, loc, i32))
        var = node.target.id
        self._declare_local(var, i32, loc)
        self.readonly.add(var)
        self._loop_depth += 1
        try:
            with self.block() as body:
                for s in node.body:
                    self.visit(s)
        finally:
            self._loop_depth -= 1
            self.readonly.discard(var)
        self.emit(Node(Op.FOR, attr=var, args=(begin, end, step), blocks=(tuple(body),), loc=loc))

    def visit_While(self, node: ast.While, loc: Loc) -> None:
        if node.orelse:
            self.error("while/else is not supported in kernels", loc)
        cond = sem.truth(self.scalar(self.visit(node.test), loc), loc)
        self._loop_depth += 1
        try:
            with self.block() as body:
                for s in node.body:
                    self.visit(s)
        finally:
            self._loop_depth -= 1
        self.emit(Node(Op.WHILE, args=(cond,), blocks=(tuple(body),), loc=loc))

    def visit_Break(self, node, loc):
        if not self._loop_depth:
            self.error("`break` outside a serial loop (a parallel loop cannot be broken out of)", loc)
        self.emit(Node(Op.BREAK, loc=loc))

    def visit_Continue(self, node, loc):
        if not self._loop_depth:
            self.error("`continue` outside a loop", loc)
        self.emit(Node(Op.CONTINUE, loc=loc))

    def visit_If(self, node: ast.If, loc: Loc) -> None:
        cond = self.scalar(self.visit(node.test), loc)
        if sem.is_const(cond):  # compile-time branch
            for s in (node.body if cond else node.orelse):
                self.visit(s)
            return
        with self.block() as then:
            for s in node.body:
                self.visit(s)
        with self.block() as other:
            for s in node.orelse:
                self.visit(s)
        self.emit(Node(Op.IF, args=(sem.truth(cond, loc),), blocks=(tuple(then), tuple(other)), loc=loc))

    def visit_Pass(self, node, loc):
        pass

    def visit_Expr(self, node: ast.Expr, loc: Loc) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a string statement (comment)
        self.visit(node.value)

    def visit_Assign(self, node: ast.Assign, loc: Loc) -> None:
        if len(node.targets) != 1:
            self.error("chained assignment `a = b = ...` is not supported; assign separately", loc)
        self.assign(node.targets[0], self.visit(node.value), loc)

    def visit_AnnAssign(self, node: ast.AnnAssign, loc: Loc) -> None:
        if node.value is None:
            self.error("a declaration needs a value: `x: gr.f32 = 0.0`", loc)
        t = self._eval_static(node.annotation, loc)
        value = self.visit(node.value)
        if isinstance(t, DType):
            value = sem.as_node(self.scalar(value, loc), loc, t)
        self.assign(node.target, value, loc)

    def visit_AugAssign(self, node: ast.AugAssign, loc: Loc) -> None:
        op = _BINOPS.get(type(node.op))
        if op is None:
            self.error(f"augmented operator {type(node.op).__name__} is not supported", loc)
        target = node.target
        if isinstance(target, ast.Subscript):
            arr = self.visit(target.value)
            if isinstance(arr, ArrayValue) and op in (Op.ADD, Op.SUB):
                rhs = self.visit(node.value)
                self._atomic_update(arr, target, "add" if op is Op.ADD else "sub", rhs, loc)
                return
        current = self.visit(ast.Name(target.id, ast.Load(), lineno=node.lineno, col_offset=node.col_offset)) \
            if isinstance(target, ast.Name) else self.visit(_as_load(target))
        self.assign(target, self.map_values(lambda a, b: sem.binary(op, a, b, loc),
                                            (current, self.visit(node.value)), loc), loc)

    def _atomic_update(self, arr: ArrayValue, target: ast.Subscript, op: str, rhs, loc: Loc) -> None:
        from ..ir import AtomicAttr
        idx = self.flat_index(arr, target.slice, loc)
        for k, v in self._components(arr, rhs, loc):
            value = sem.as_node(self.scalar(v, loc), loc, arr.dtype)
            index = self._offset(idx, arr, k, loc)
            self.emit(Node(Op.ATOMIC, attr=AtomicAttr(op, arr.buf), args=(index, value), loc=loc))

    # -- assignment --------------------------------------------------------------------
    def assign(self, target: ast.expr, value, loc: Loc) -> None:
        if isinstance(target, ast.Name):
            if isinstance(value, Compound):
                self.error("vector values are not supported yet", loc)
            self._assign_local(target.id, value, loc)
        elif isinstance(target, ast.Subscript):
            arr = self.visit(target.value)
            if not isinstance(arr, ArrayValue):
                self.error("only array elements can be assigned through a subscript", loc)
            idx = self.flat_index(arr, target.slice, loc)
            for k, v in self._components(arr, value, loc):
                v = sem.as_node(self.scalar(v, loc), loc, arr.dtype)
                self.emit(Node(Op.STORE, attr=arr.buf, args=(self._offset(idx, arr, k, loc), v), loc=loc))
        elif isinstance(target, ast.Tuple):
            self.error("tuple assignment is not supported yet", loc)
        else:
            self.error(f"cannot assign to {type(target).__name__}", loc)

    def _components(self, arr: ArrayValue, value, loc: Loc):
        if isinstance(scalar_of(arr.elem), DType) and arr.elem == arr.dtype:
            if isinstance(value, Compound):
                self.error(f"cannot store a vector into {arr.name}, whose elements are scalars", loc)
            return [(0, value)]
        self.error("vector and matrix arrays are not supported yet", loc)

    def _offset(self, idx: Node, arr: ArrayValue, k: int, loc: Loc) -> Node:
        return idx

    def _declare_local(self, name: str, dtype: DType, loc: Loc) -> None:
        if name in self.scope and name not in self.local_names:
            self.error(f"cannot assign to {name!r}: it names a kernel argument or a global", loc)
        if name in self.local_names:
            return
        self.local_names.add(name)
        self.ir.locals[name] = dtype
        self.scope[name] = Node(Op.VAR, dtype, attr=name)

    def _assign_local(self, name: str, value, loc: Loc) -> None:
        if name in self.readonly:
            self.error(f"cannot assign to the loop variable {name!r}", loc)
        node = sem.as_node(self.scalar(value, loc), loc)
        self._declare_local(name, node.dtype, loc)
        node = sem.cast(node, self.ir.locals[name])
        self.emit(Node(Op.ASSIGN, attr=name, args=(node,), loc=loc))

    # -- expressions ---------------------------------------------------------------------
    def visit_Constant(self, node: ast.Constant, loc: Loc):
        if isinstance(node.value, (bool, int, float)):
            return node.value
        self.error(f"constant {node.value!r} of type {type(node.value).__name__} is not a kernel value", loc)

    def visit_Name(self, node: ast.Name, loc: Loc):
        if node.id in self.scope:
            v = self.scope[node.id]
            if node.id in self.local_names:
                return Node(Op.VAR, v.dtype, attr=node.id, loc=loc)
            return v
        if node.id in _local_names_of(self.src.tree):
            self.error(f"{node.id!r} is read before it is assigned", loc)
        v = self._lookup_global(node.id)
        if v is _MISSING:
            self.error(f"name {node.id!r} is not defined", loc)
        return self.from_python(v, node.id, loc)

    def visit_Attribute(self, node: ast.Attribute, loc: Loc):
        base = self.visit(node.value)
        if isinstance(base, ArrayValue):
            if node.attr == "shape":
                return ShapeValue(base)
            self.error(f"arrays have no attribute {node.attr!r} inside kernels", loc)
        if isinstance(base, (Node, Compound, int, float, bool)):
            self.error(f"scalars have no attribute {node.attr!r}", loc)
        try:
            v = getattr(base, node.attr)
        except AttributeError:
            self.error(f"{_describe(base)} has no attribute {node.attr!r}", loc)
        return self.from_python(v, node.attr, loc)

    def visit_Subscript(self, node: ast.Subscript, loc: Loc):
        base = self.visit(node.value)
        if isinstance(base, ShapeValue):
            k = self.scalar(self.visit(node.slice), loc)
            if not isinstance(k, int) or not -base.array.ndim <= k < base.array.ndim:
                self.error(f"{base.array.name}.shape index must be a constant in range(-{base.array.ndim}, "
                           f"{base.array.ndim})", loc)
            return base.array.shape[k]
        if isinstance(base, ArrayValue):
            idx = self.flat_index(base, node.slice, loc)
            return Node(Op.LOAD, base.dtype, (idx,), attr=base.buf, loc=loc)
        if isinstance(base, tuple):
            k = self.scalar(self.visit(node.slice), loc)
            if not isinstance(k, int):
                self.error("tuples can only be indexed by constants", loc)
            return base[k]
        self.error(f"{_describe(base)} cannot be indexed", loc)

    def flat_index(self, arr: ArrayValue, sl: ast.expr, loc: Loc) -> Node:
        """The flat element index of `arr[sl]` (row-major), as an i32 node."""
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if len(items) == 1 and isinstance(items[0], ast.Constant) and items[0].value is None:
            items = []
        if len(items) != arr.ndim:
            self.error(f"{arr.name} has {arr.ndim} dimension(s) but is indexed with {len(items)} "
                       f"ind{'ex' if len(items) == 1 else 'ices'}"
                       + (" (use x[None] for a 0-d array)" if arr.ndim == 0 else ""), loc)
        idx = [self.scalar(self.visit(it), self.src.loc(it)) for it in items]
        for v in idx:
            if sem.dtype_of(v).is_float:
                self.error(f"array index into {arr.name} must be an integer, not a float "
                           "(use gr.cast(x, gr.i32))", loc)
        flat = 0
        for d, v in enumerate(idx):
            flat = v if d == 0 else sem.binary(Op.ADD, sem.binary(Op.MUL, flat, arr.shape[d], loc), v, loc)
        return sem.as_node(flat, loc, i32)

    def visit_BinOp(self, node: ast.BinOp, loc: Loc):
        op = _BINOPS.get(type(node.op))
        if op is None:
            self.error(f"operator {type(node.op).__name__} is not supported", loc)
        a, b = self.visit(node.left), self.visit(node.right)
        return self.map_values(lambda x, y: sem.binary(op, x, y, loc), (a, b), loc)

    def visit_UnaryOp(self, node: ast.UnaryOp, loc: Loc):
        v = self.visit(node.operand)
        if isinstance(node.op, ast.UAdd):
            return v
        op = _UNOPS[type(node.op)]
        return self.map_values(lambda x: sem.unary(op, x, loc), (v,), loc)

    def visit_Compare(self, node: ast.Compare, loc: Loc):
        left = self.scalar(self.visit(node.left), loc)
        result = None
        for op, right_node in zip(node.ops, node.comparators):
            cop = _CMPOPS.get(type(op))
            if cop is None:
                self.error(f"comparison {type(op).__name__} is not supported", loc)
            right = self.scalar(self.visit(right_node), loc)
            c = sem.binary(cop, left, right, loc)
            result = c if result is None else sem.binary(Op.AND, result, c, loc)
            left = right
        return result

    def visit_BoolOp(self, node: ast.BoolOp, loc: Loc):
        op = Op.AND if isinstance(node.op, ast.And) else Op.OR
        vals = [self.scalar(self.visit(v), loc) for v in node.values]
        out = vals[0]
        for v in vals[1:]:
            out = sem.binary(op, out, v, loc)
        return out

    def visit_IfExp(self, node: ast.IfExp, loc: Loc):
        c = self.scalar(self.visit(node.test), loc)
        if sem.is_const(c):
            return self.visit(node.body if c else node.orelse)
        return sem.select(c, self.scalar(self.visit(node.body), loc), self.scalar(self.visit(node.orelse), loc), loc)

    def visit_Tuple(self, node: ast.Tuple, loc: Loc):
        return tuple(self.visit(e) for e in node.elts)

    def visit_Call(self, node: ast.Call, loc: Loc):
        fn = self.visit(node.func)
        args = [self.visit(a) for a in node.args]
        kwargs = {k.arg: self.visit(k.value) for k in node.keywords}
        if isinstance(fn, Builtin):
            return fn.lower(self, args, kwargs, loc)
        if fn is _pybuiltins.range:
            self.error("range() can only be iterated by a for loop", loc)
        if fn in (_pybuiltins.min, _pybuiltins.max, _pybuiltins.abs, _pybuiltins.int, _pybuiltins.float):
            return self._python_builtin(fn, args, kwargs, loc)
        self.error(f"cannot call {_describe(fn)} inside a kernel: only gr.* builtins and @gr.func "
                   "functions can be called (a plain Python function runs on the host, not the GPU)", loc)

    def _python_builtin(self, fn, args, kwargs, loc):
        if kwargs:
            self.error(f"{fn.__name__}() takes no keyword arguments in kernels", loc)
        if fn is _pybuiltins.abs:
            return self.map_values(lambda a: sem.unary(Op.ABS, a, loc), args, loc)
        if fn in (_pybuiltins.int, _pybuiltins.float):
            t = i32 if fn is _pybuiltins.int else sem.dtype_of_const(0.0)
            if len(args) != 1:
                self.error(f"{fn.__name__}() takes one argument", loc)
            v = self.scalar(args[0], loc)
            return fn(v) if sem.is_const(v) else sem.cast(v, t)
        op = Op.MIN if fn is _pybuiltins.min else Op.MAX
        if len(args) < 2:
            self.error(f"{fn.__name__}() needs at least two arguments in kernels", loc)
        out = args[0]
        for a in args[1:]:
            out = self.map_values(lambda x, y: sem.binary(op, x, y, loc), (out, a), loc)
        return out

    # -- values --------------------------------------------------------------------------
    def scalar(self, v, loc: Loc):
        """Check that v is a scalar (node or Python number) and return it."""
        if isinstance(v, Node) or sem.is_const(v):
            return v
        self.error(f"expected a scalar here, got {_describe(v)}", loc)

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

    def from_python(self, v, name: str, loc: Loc):
        """A Python object reached by name or attribute, as a kernel value."""
        if isinstance(v, (bool, int, float)) or isinstance(v, (_pytypes.ModuleType, Builtin, DType)):
            return v
        if v is _pybuiltins.range or v in (_pybuiltins.min, _pybuiltins.max, _pybuiltins.abs,
                                           _pybuiltins.int, _pybuiltins.float):
            return v
        if hasattr(v, "__gfxrt_field__") or hasattr(v, "__gfxrt_func__"):
            self.error("fields and @gr.func are not supported yet", loc)
        if callable(v) or isinstance(v, type):
            return v  # rejected at the call with a precise message
        self.error(f"{name!r} is a {type(v).__name__}, which kernels cannot use", loc)

    def _lookup_global(self, name: str):
        closure = _closure_vars(self.func)
        if name in closure:
            return closure[name]
        g = getattr(self.func, "__globals__", {})
        if name in g:
            return g[name]
        return getattr(_pybuiltins, name, _MISSING)

    def _eval_static(self, node: ast.expr, loc: Loc):
        v = self.visit(node)
        return v


_MISSING = object()


def _as_load(target: ast.expr) -> ast.expr:
    t = _copy_node(target)
    t.ctx = ast.Load()
    return t


def _copy_node(n):
    import copy
    return copy.copy(n)


def _closure_vars(func) -> dict:
    code = getattr(func, "__code__", None)
    cells = getattr(func, "__closure__", None) or ()
    if code is None:
        return {}
    out = {}
    for name, cell in zip(code.co_freevars, cells):
        try:
            out[name] = cell.cell_contents
        except ValueError:
            pass
    return out


def _local_names_of(fdef: ast.FunctionDef) -> set[str]:
    names = set()
    for n in ast.walk(fdef):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            names.add(n.id)
    return names


def _describe(v) -> str:
    if isinstance(v, ArrayValue):
        return f"array {v.name!r}"
    if isinstance(v, Compound):
        return f"a vector/matrix of shape {v.shape}"
    if isinstance(v, _pytypes.ModuleType):
        return f"module {v.__name__!r}"
    if callable(v):
        return f"the Python function {getattr(v, '__qualname__', getattr(v, '__name__', repr(v)))!r}"
    return f"a {type(v).__name__}"
