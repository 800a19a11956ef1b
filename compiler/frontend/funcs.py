"""Inlining `@gr.func` calls.

A call lowers the func's body in a new frame (its own names, its module's globals). Where
every `return` is in tail position the body is lowered as is; otherwise it is wrapped in a
one-trip loop so a `return` becomes "store the result, break" (plus a flag checked after
nested loops). Recursion is rejected.
"""
from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field

from .. import semantic as sem
from ..errors import CompileError
from ..func import Func
from ..ir import Loc, Node, Op
from ..structs import StructType, StructValue
from ..types import DType, MatrixType, NdarrayType, Template, VectorType, u1
from .callables import is_python_lambda
from .constants import note_type, typed
from .scope import dynamic_names, python_names
from .source import Frame, FunctionSource, return_annotation, strip_docstring
from .values import ArrayValue, Compound, CompoundVar, ScalarVar


@dataclass
class _Return:
    mode: str                      # 'direct' (one return, the last statement) | 'var' | 'loop'
    name: str
    ann: object = None
    value: object = None           # 'direct': the returned value
    vars: list = field(default_factory=list)  # 'var'/'loop': one variable per returned item
    is_tuple: bool = False
    flag: ScalarVar | None = None  # 'loop': set when a return ran


def _returns(stmts) -> int:
    return sum(isinstance(n, ast.Return) for s in stmts for n in ast.walk(s))


def _tail(stmts) -> bool:
    """True when every return in stmts is in tail position (the last statement, or the last
    statement of both branches of a trailing if/else)."""
    if not stmts:
        return True
    if _returns(stmts[:-1]):
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    if isinstance(last, ast.If):
        if not _returns([last]):
            return True
        return bool(last.orelse) and _tail(last.body) and _tail(last.orelse) \
            and _ends_in_return(last.body) and _ends_in_return(last.orelse)
    return not _returns([last])


def _ends_in_return(stmts) -> bool:
    last = stmts[-1] if stmts else None
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _ends_in_return(last.body) and bool(last.orelse) \
        and _ends_in_return(last.orelse)


class FuncMixin:
    def inline_func(self, fn: Func, args: list, kwargs: dict, loc: Loc):
        if fn in self.call_stack:
            chain = " -> ".join(f.__name__ for f in [*self.call_stack, fn])
            real = " (gr.real_func is inlined like @gr.func: WGSL has no recursion)" if getattr(fn, "real", False) \
                else ""
            self.error(f"recursion is not supported in kernels: {chain}; rewrite it with a loop{real}", loc)
        src = FunctionSource.of(fn.fn)
        sig = inspect.signature(fn.fn)
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            self.error(f"bad call of @gr.func {fn.__name__}: {e}", loc)
        bound.apply_defaults()
        body = strip_docstring(src.tree.body)
        fpath = self.paths.get(id(fn))
        frame = Frame(src, fn.fn, None if fpath is None else fpath + (("f",),),
                      dynamic=dynamic_names(body, resolve=python_names(fn.fn)))
        if frame.path is None:
            self.cacheable = False
        nret = _returns(body)
        if not nret and return_annotation(fn.fn) is not None:
            self.error(f"Function has a return type but does not have a return statement (@gr.func "
                       f"{fn.__name__!r} is annotated `-> {return_annotation(fn.fn)!r}`)", loc)
        mode = "direct" if nret == 1 and isinstance(body[-1], ast.Return) else \
            ("var" if _tail(body) else "loop")
        frame.ret = _Return(mode, fn.__name__, return_annotation(fn.fn))

        # arguments are evaluated in the caller's frame, in order
        values, by_value, by_ref = {}, set(), set()
        for name, value in bound.arguments.items():
            p = sig.parameters[name]
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                self.error(f"@gr.func {fn.__name__}: *args/**kwargs are not supported", loc)
            ann = p.annotation
            if isinstance(ann, str):
                ann = eval(ann, fn.fn.__globals__)  # noqa: S307
            values[name] = self._func_arg(fn, name, value, ann, loc)
            if not isinstance(ann, Template) and not is_python_lambda(fn.fn):
                by_value.add(name)
            elif isinstance(ann, Template):  # by reference, as Taichi's: the caller's variable itself
                var = self._caller_var(value)
                if var is not None:
                    values[name], by_ref = var, by_ref | {name}

        saved = self.frame
        self.call_stack.append(fn)
        self.frame = frame
        try:
            for name, value in values.items():
                if name in frame.dynamic and name not in by_ref and \
                        isinstance(value, (Node, Compound, StructValue, int, float, bool)):
                    self.bind_name(name, value, loc)  # assigned in the body: give it a variable
                else:
                    frame.scope[name] = value
                    if name in by_value:  # a copy of the argument: a variable that keeps its type
                        note_type(frame.typed, name, value)
            self._lower_func_body(frame, body, loc)
        except CompileError as e:
            if "(in @gr.func" in e.message or e.loc is None:
                raise
            # headed by the func's name, as a Python traceback names the function of the line
            caller = f" in {e.kernel}" if e.kernel else ""
            raise CompileError(f"{e.message}\n(in @gr.func {fn.__name__!r}, called at {loc.file}:{loc.line}{caller}: "
                               f"`{loc.text.strip()}`)", e.loc, fn.__name__) from None
        finally:
            self.frame = saved
            self.call_stack.pop()
        return self._func_result(frame.ret, loc)

    def _caller_var(self, value):
        """The caller's variable (ScalarVar / CompoundVar) whose read `value` is, or None: a
        gr.template() argument that names a variable is that variable in the func (a name the
        func assigns through such a parameter is a variable: scope.dynamic_names)."""
        if isinstance(value, Node) and value.op is Op.VAR:
            names = (value.attr,)
        elif isinstance(value, Compound) and all(isinstance(x, Node) and x.op is Op.VAR for x in value.items):
            names = tuple(x.attr for x in value.items)
        else:
            return None
        for v in self.frame.scope.values():
            if isinstance(v, ScalarVar) and names == (v.name,) or \
                    isinstance(v, CompoundVar) and names == tuple(x.name for x in v.vars) and v.shape == value.shape:
                return v
        return None

    def _func_arg(self, fn: Func, name: str, value, ann, loc: Loc):
        if isinstance(ann, Template):
            return value
        if isinstance(ann, NdarrayType) and not isinstance(value, ArrayValue):
            self.error(f"@gr.func {fn.__name__}: argument {name!r} must be an array, got {self.describe(value)}",
                       loc)
        if isinstance(ann, (DType, VectorType, MatrixType, StructType)):
            value = self.convert_to_type(value, ann, loc)
        elif not is_python_lambda(fn.fn):  # by value into a variable, as in Taichi: a number is typed
            value = typed(value, loc)
        return self.materialize(value, loc) if isinstance(value, (Node, Compound, StructValue)) else value

    def _lower_func_body(self, frame, body, loc: Loc) -> None:
        ret = frame.ret
        if ret.mode != "loop":
            for s in body:
                self.visit(s)
            return
        ret.flag = ScalarVar(self.new_local(f"{ret.name}.returned", u1), u1)
        self.emit(Node(Op.ASSIGN, attr=ret.flag.name, args=(sem.as_node(False, loc),), loc=loc))
        with self.block() as wrapped:
            for s in body:
                self.visit(s)
            self.emit(Node(Op.BREAK, loc=loc))
        self.emit(Node(Op.WHILE, args=(sem.as_node(True, loc),), blocks=(tuple(wrapped),), loc=loc))

    def func_return(self, value, loc: Loc) -> None:
        ret = self.frame.ret
        if ret.ann is not None:
            if isinstance(ret.ann, tuple) and isinstance(value, tuple):
                value = tuple(self.convert_to_type(v, t, loc) for v, t in zip(value, ret.ann))
            elif isinstance(value, Compound) and isinstance(sem.as_dtype(ret.ann), DType):
                # Taichi's @ti.func casts a vector returned under a scalar annotation component by component
                value = self.map_values(lambda x: sem.as_node(x, loc, sem.as_dtype(ret.ann)), (value,), loc)
            elif not isinstance(ret.ann, tuple):
                value = self.convert_to_type(value, ret.ann, loc)
        if ret.mode == "direct":
            ret.value = self.materialize(value, loc)
            return
        items = list(value) if isinstance(value, tuple) else [value]
        if not ret.vars:
            ret.is_tuple = isinstance(value, tuple)
            for k, item in enumerate(items):
                if not isinstance(item, (Node, Compound, StructValue, int, float, bool)):
                    self.error("a @gr.func with several `return` statements can only return numbers, vectors "
                               "and matrices", loc)
                ret.vars.append(self.declare(f"{ret.name}.ret{k}", item, loc))
        if len(items) != len(ret.vars):
            self.error(f"@gr.func {ret.name} returns {len(ret.vars)} value(s) in one place and {len(items)} in "
                       "another", loc)
        for var, item in zip(ret.vars, items):
            self.var_lvalue(var, ret.name).store(self, item, loc)
        if ret.mode == "loop":
            self.emit(Node(Op.ASSIGN, attr=ret.flag.name, args=(sem.as_node(True, loc),), loc=loc))
            self.emit(Node(Op.BREAK, loc=loc))

    def after_loop(self, loc: Loc) -> None:
        """After a loop inside a func with early returns: leave if the loop returned."""
        ret = self.frame.ret
        if ret is not None and ret.mode == "loop":
            flag = Node(Op.VAR, u1, attr=ret.flag.name, loc=loc)
            self.emit(Node(Op.IF, args=(flag,), blocks=((Node(Op.BREAK, loc=loc),), ()), loc=loc))

    def _func_result(self, ret: _Return, loc: Loc):
        if ret.mode == "direct":
            return ret.value
        if not ret.vars:
            return None
        out = [self.load_var(var, loc) for var in ret.vars]
        return tuple(out) if ret.is_tuple else out[0]
