"""Calls inside kernels: gr builtins, @gr.func and lambdas, Python's own functions (range,
min, len, ...), `operator.*`, Taichi's method forms (`x.fill(v)`, `s.atomic_add(v)`)."""
from __future__ import annotations

import ast
import builtins as _pybuiltins
import types as _pytypes

from .. import semantic as sem
from ..builtins import BUILTINS, Builtin, HostNdrange
from ..errors import RangeStepError
from ..func import BoundFunc, Func
from ..func import func as _func_decorator
from ..func import real_func as _real_func_decorator
from ..ir import Loc, Op
from ..structs import StructType
from ..types import DType, MatrixType, NdarrayType, Template, VectorType, i32, u1
from .callables import InlineLambda, is_python_lambda, lambda_func
from .exprs import _HOST_CONSTRUCTORS, _OPERATOR_BINOPS, _PY_FUNCS
from .sparse import DYNAMIC_METHODS
from .structs import StructMethod
from .values import (
    ArrayValue,
    BoundMethod,
    Compound,
    CompoundVar,
    DictValue,
    RangeValue,
    ScalarVar,
)


class CallMixin:
    """visit_Call and what it dispatches to (mixed into the Lowering with ExprMixin)."""

    def _fill_array(self, node: ast.Call, loc: Loc):
        """`x.fill(v)` on a field or array inside a kernel (Taichi's): a loop over its elements,
        parallel at kernel scope, serial elsewhere."""
        from ..builtins import BUILTINS
        k = self.fresh("fill")
        self.frame.scope[f"__{k}_grouped"] = BUILTINS["grouped"]
        target = ast.Name(id=f"__{k}_I", ctx=ast.Store())
        loop = ast.For(
            target=target,
            iter=ast.Call(func=ast.Name(id=f"__{k}_grouped", ctx=ast.Load()), args=[node.func.value], keywords=[]),
            body=[ast.Assign(targets=[ast.Subscript(value=node.func.value, slice=ast.Name(id=target.id, ctx=ast.Load()),
                                                    ctx=ast.Store())], value=node.args[0])],
            orelse=[])
        for n in ast.walk(loop):
            ast.copy_location(n, node)
        if self.frame.kernel_level and not self.in_parallel and self._blocks[-1] is self._serial:
            self.visit(loop, self.kernel_for)
        else:
            self.visit(loop)
        return None

    def _atomic_method(self, node: ast.Call):
        """The atomic builtin when `node` is `target.atomic_<op>(value)` on a kernel value (an
        array element or a local variable), else None."""
        from ..builtins import BUILTINS
        f = node.func
        if not (isinstance(f, ast.Attribute) and f.attr.startswith("atomic_") and f.attr in BUILTINS):
            return None
        if isinstance(f.value, ast.Subscript) or (isinstance(f.value, ast.Name) and isinstance(
                self.frame.scope.get(f.value.id), (ScalarVar, CompoundVar))):
            return BUILTINS[f.attr]
        return None

    def visit_Call(self, node: ast.Call, loc: Loc):
        discard = getattr(self, "_discard", None) is node
        self._discard = None
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "fill":
            if self.fill_call(node, loc):  # `v.fill(x)`, `m[i].fill(x)`, `p.fill(x)`: every component
                return None
            if isinstance(f.value, (ast.Name, ast.Attribute)) and len(node.args) == 1 and not node.keywords \
                    and isinstance(self.visit(f.value), ArrayValue):  # `x.fill(v)`, `self.x.fill(v)` of an array
                return self._fill_array(node, loc)
        if isinstance(f, ast.Attribute) and f.attr in DYNAMIC_METHODS:  # x.append(v), x[i].length() (sparse.py)
            out = self.dynamic_method(node, loc)
            if out is not NotImplemented:
                return out
        method = self._atomic_method(node)
        if method is not None:  # Taichi's `x[i].atomic_add(v)` / `s.atomic_add(v)`: gr.atomic_add(x[i], v)
            call = ast.Call(func=node.func, args=[node.func.value, *node.args], keywords=node.keywords)
            return method.lower(self, ast.copy_location(call, node), loc, discard)
        fn = self.visit(node.func)
        if isinstance(fn, Builtin) and fn.form:
            return fn.lower(self, node, loc, discard)
        args, kwargs = self.call_arguments(node, loc)
        if isinstance(fn, Builtin):
            return fn.lower(self, args, kwargs, loc)
        if getattr(getattr(fn, "__self__", None), "__gfxrt_compile_time__", False):
            # a method of a layout object (an SNode: `x.snode.parent()`): runs while compiling
            return fn(*[self.known(a) for a in args], **{k: self.known(v) for k, v in kwargs.items()})
        if fn is _func_decorator or fn is _real_func_decorator:
            # `gr.func(f)(x)` in a kernel (Taichi allows it): decorating a Python function is
            # compile-time work, the call after it inlines
            if kwargs or len(args) != 1 or not isinstance(args[0], (_pytypes.FunctionType, Func)):
                self.error("gr.func(f) in a kernel takes one Python function", loc)
            return args[0] if isinstance(args[0], Func) else fn(args[0])
        if isinstance(fn, Func):
            return self.inline_func(fn, args, kwargs, loc)
        if isinstance(fn, BoundFunc):  # self.f(...) in a @gr.data_oriented class
            if id(fn) in self.paths:
                self.paths_add(fn.func, self.paths[id(fn)])
            return self.inline_func(fn.func, [fn.obj, *args], kwargs, loc)
        if isinstance(fn, _pytypes.MethodType) and isinstance(fn.__func__, Func):  # a @classmethod func
            return self.inline_func(fn.__func__, [fn.__self__, *args], kwargs, loc)
        if isinstance(fn, InlineLambda):
            return self.call_lambda(fn, args, kwargs, loc)
        if is_python_lambda(fn):
            return self.inline_func(lambda_func(fn), args, kwargs, loc)
        if isinstance(fn, BoundMethod):
            return self.call_method(fn, args, kwargs, loc)
        if isinstance(fn, StructMethod):
            return self.call_struct_method(fn, args, kwargs, loc)
        if isinstance(fn, StructType):
            return self.construct_struct(fn, args, kwargs, loc)
        if getattr(fn, "__gfxrt_struct_namespace__", False):  # gr.Struct(a=..., b=...) / gr.Struct({...})
            return self.anonymous_struct(args, kwargs, loc)
        if getattr(fn, "__name__", None) in ("diag", "rows", "cols") and isinstance(getattr(fn, "__self__", None),
                                                                                Builtin):
            return self.matrix_ctor(fn.__name__, args, kwargs, loc)  # gr.Matrix.diag / rows / cols
        if getattr(fn, "__name__", None) in _HOST_CONSTRUCTORS and isinstance(getattr(fn, "__self__", None), Builtin):
            return self.host_constant(fn, args, kwargs, loc)  # gr.Vector.zero(gr.f32, 3) and friends
        if isinstance(fn, (VectorType, MatrixType)):
            if kwargs:
                self.error("vector/matrix constructors take no keyword arguments", loc)
            return self.construct_typed(fn, args, loc)
        if isinstance(fn, DType):
            if len(args) != 1 or kwargs:
                self.error(f"{fn}(x) takes one argument", loc)
            x = args[0]
            if type(x) is int and fn.is_int and not fn.int_range[0] <= x <= fn.int_range[1]:
                self.error(f"integer literal {x} is out of the range of {fn} (as in Taichi); gr.cast({x}, {fn}) "
                           "wraps it", loc)
            return self.map_values(lambda x: sem.as_node(x, loc, fn), (x,), loc)  # a typed value
        if any(fn is f for f in _PY_FUNCS):
            return self.python_builtin(fn, args, kwargs, loc)
        if any(fn is f for f in _OPERATOR_BINOPS):  # operator.add(a, b) and friends
            if len(args) != 2 or kwargs:
                self.error(f"operator.{fn.__name__} takes two arguments", loc)
            return self.binop(_OPERATOR_BINOPS[fn], args[0], args[1], loc)
        if fn is _pybuiltins.print:
            return self.kernel_print(args, kwargs, loc)
        if isinstance(getattr(fn, "__self__", None), str) and getattr(fn, "__name__", None) == "format":
            return self.str_format(fn.__self__, args, kwargs, loc)  # "x = {}".format(v): an f-string
        if isinstance(fn, (NdarrayType, Template)):
            self.error(f"{fn!r} is an argument annotation, not a function", loc)
        if callable(fn):
            return self.host_call(fn, args, kwargs, loc)
        self.error(f"cannot call {self.describe(fn)} inside a kernel: it is not a function", loc)

    def host_call(self, fn, args, kwargs, loc):
        """A plain Python function (`math.exp(-dt * damping)`, a helper of the user's) on
        compile-time values: Taichi calls it while tracing, and so does gfxrt; its result is a
        compile-time constant. On run-time values it cannot run: that is the error."""
        args, kwargs = [self.known(a) for a in args], {k: self.known(v) for k, v in kwargs.items()}
        if not all(_host_value(a) for a in [*args, *kwargs.values()]):
            self.error(f"cannot call {self.describe(fn)} on run-time values inside a kernel: only gr.* builtins and "
                       "@gr.func functions can be (a plain Python function runs on the host while the kernel "
                       "compiles, on compile-time values only). Decorate it with @gr.func", loc)
        if not isinstance(fn, _pytypes.BuiltinFunctionType):
            self.cacheable = False  # Python code of the user's: what it reads is not the cache's to re-check
        try:
            out = fn(*args, **kwargs)
        except Exception as e:  # noqa: BLE001  (the user's function: its error is the compile's)
            self.error(f"{self.describe(fn)} raised {type(e).__name__} while the kernel compiled: {e}", loc)
        out = out.item() if hasattr(out, "item") and getattr(out, "shape", None) == () else out
        if isinstance(out, HostNdrange):  # `def space(): return gr.ndrange(...)`: the space, as in Taichi
            return BUILTINS["ndrange"].lower(self, list(out.args), {}, loc)
        if getattr(type(out), "__gfxrt_matrix__", False):  # a gr.Vector / gr.Matrix value: constants
            return Compound(tuple(out.shape), tuple(out.ravel().tolist()))
        if not _host_value(out) or isinstance(out, str):
            self.error(f"{self.describe(fn)} returned {type(out).__name__}: a plain Python function called in a "
                       "kernel must return numbers, bools, gr.Vector / gr.Matrix values or tuples of them", loc)
        return out

    def call_arguments(self, node: ast.Call, loc: Loc) -> tuple[list, dict]:
        """The evaluated arguments of a call, left to right. `*seq` spreads a sequence known at
        compile time (a tuple or list, a shape, a range with constant bounds; a vector or matrix
        spreads its components, as in Taichi); `**d` a dict's items (`d`: a dict with string keys)."""
        values = self.visit_all([*(a.value if isinstance(a, ast.Starred) else a for a in node.args),
                                 *(k.value for k in node.keywords)])
        args: list = []
        for a, v in zip(node.args, values):
            if not isinstance(a, ast.Starred):
                args.append(v)
            elif isinstance(v, Compound):
                args.extend(v.items)
            else:
                args.extend(self.compile_time_items(v, loc))
        kwargs: dict = {}
        for k, v in zip(node.keywords, values[len(node.args):]):
            if k.arg is not None:
                if k.arg in kwargs:
                    self.error(f"the call got the keyword argument {k.arg!r} twice", loc)
                kwargs[k.arg] = v
                continue
            keys = self.compile_time_items(v, loc) if isinstance(v, (dict, DictValue)) else None
            if keys is None or not all(isinstance(x, str) for x in keys):
                self.error(f"`**` in a call needs a dict with string keys, not {self.describe(v)}", loc)
            for x in keys:
                if x in kwargs:
                    self.error(f"the call got the keyword argument {x!r} twice", loc)
                kwargs[x] = self.dict_item(v, x, loc)
        return args, kwargs

    def python_builtin(self, fn, args, kwargs, loc):
        if kwargs:
            self.error(f"{fn.__name__}() takes no keyword arguments in kernels", loc)
        if fn is _pybuiltins.range:
            return self.make_range(args, loc)
        if fn is _pybuiltins.len:
            (v,) = args
            if isinstance(v, ArrayValue):
                if v.ndim == 0:
                    self.error("len() of a 0-d container", loc)
                return v.shape[0]
            if isinstance(v, Compound):
                return v.shape[0]
            if isinstance(v, tuple):
                return len(v)
            self.error(f"len() of {self.describe(v)}", loc)
        if fn in (_pybuiltins.enumerate, _pybuiltins.zip):
            if not all(isinstance(a, tuple) for a in args):
                self.error(f"{fn.__name__}() works on compile-time tuples only (inside gr.static loops)", loc)
            return tuple(fn(*args))
        if fn in (_pybuiltins.all, _pybuiltins.any):  # of a vector's components (or a tuple's items)
            if len(args) != 1:
                self.error(f"{fn.__name__}() takes one argument", loc)
            (v,) = args
            items = v.items if isinstance(v, Compound) else v if isinstance(v, tuple) else None
            if items is None:
                self.error(f"{fn.__name__}() takes a vector or matrix, not {self.describe(v)}", loc)
            op = Op.AND if fn is _pybuiltins.all else Op.OR
            out = fn(()) if not items else None
            for x in items:
                x = self.known(x)
                t = sem.truth(self.scalar(x, loc), loc) if not sem.is_const(x) else bool(x)
                out = t if out is None else (sem.binary(op, out, t, loc) if not (sem.is_const(out) and
                                                                                  sem.is_const(t))
                                             else (out and t if op is Op.AND else out or t))
            return out
        if fn is _pybuiltins.sum:  # Python's sum of a compile-time sequence (or a vector's components) of values
            if not 1 <= len(args) <= 2:
                self.error("sum() takes a sequence and an optional start value", loc)
            v = args[0]
            items = v.items if isinstance(v, Compound) else v if isinstance(v, tuple) else None
            if items is None:
                self.error(f"sum() takes a list, a tuple or a vector in kernels, not {self.describe(v)}", loc)
            out = args[1] if len(args) == 2 else 0
            for x in items:
                out = self.binop(Op.ADD, out, x, loc)
            return out
        if fn is _pybuiltins.pow:  # Taichi's: pow(x, y) is x ** y (no modulus)
            if len(args) != 2:
                self.error("pow() takes two arguments in kernels (x ** y)", loc)
            return self.binop(Op.POW, args[0], args[1], loc)
        if fn is _pybuiltins.abs:
            return self.map_values(lambda a: sem.unary(Op.ABS, a, loc), args, loc)
        if fn in (_pybuiltins.int, _pybuiltins.float, _pybuiltins.bool):
            if len(args) != 1:
                self.error(f"{fn.__name__}() takes one argument", loc)
            t = {int: sem.dtype_of_const(0), float: sem.dtype_of_const(0.0), bool: u1}[fn]

            def conv(v):
                if sem.is_const(v):
                    return fn(v)
                if fn is int and v.dtype.is_float:  # Python truncates toward zero, as WGSL does
                    return sem.cast(v, t)
                return sem.truth(v, loc) if fn is bool else sem.cast(v, t)
            return self.map_values(conv, args, loc)
        op = Op.MIN if fn is _pybuiltins.min else Op.MAX
        if len(args) == 1 and isinstance(args[0], Compound):
            return self.reduce_items(op, args[0], loc)
        if len(args) < 2:
            self.error(f"{fn.__name__}() needs at least two arguments in kernels", loc)
        out = args[0]
        for a in args[1:]:
            out = self.map_values(lambda x, y: sem.binary(op, x, y, loc), (out, a), loc)
        return out

    def make_range(self, args, loc: Loc) -> RangeValue:
        if not 1 <= len(args) <= 3:
            self.error("range() takes 1 to 3 arguments", loc)
        vals = []
        for a in args:
            a = self.known(self.scalar(a, loc))
            if sem.dtype_of(a).is_float:
                self.error("range() bounds must be integers (use int(x) or gr.cast(x, gr.i32))", loc)
            vals.append(a if sem.is_const(a) else sem.as_node(a, loc, i32))
        if len(vals) == 1:
            return RangeValue(0, vals[0], 1)
        step = vals[2] if len(vals) == 3 else 1
        if step == 0 and sem.is_const(step):
            raise RangeStepError("range() arg 3 must not be zero: this loop's step is 0 at compile time (Python raises "
                                 "ValueError here); give a positive step to count up, a negative one to count down",
                                 loc, self.name)
        return RangeValue(vals[0], vals[1], step)

    # -- values ----------------------------------------------------------------------------------


def _host_value(v) -> bool:
    """A compile-time value a plain Python function may take: numbers, bools, strings, None,
    dtypes, tuples of them."""
    if isinstance(v, tuple):
        return all(_host_value(x) for x in v)
    return v is None or isinstance(v, (bool, int, float, str, DType))
