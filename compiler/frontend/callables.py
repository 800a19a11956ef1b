"""Python callables and captured data inside kernels, as Taichi treats them.

- `f = lambda x: x * 2` in a kernel, then `f(v)`: the lambda is a compile-time value; a call
  evaluates its body where it was defined, with the parameters bound to the arguments
  (evaluated once, as Python does), like an inlined @gr.func.
- A lambda captured from Python (a global, a closure variable, a template argument) is
  inlined like a @gr.func.
- A captured numpy array is a compile-time constant, snapshot when the kernel compiles:
  `A[2]` folds to the number; `A[i]` with a run-time index reads a WGSL private array
  initialized with the values (up to CONST_ARRAY_MAX elements), or else a field binding whose
  source is the data (spec.CapturedArray): gfxrt uploads it once per distinct content
  (gfxrt/kernel.py `_bind_field`).
"""
from __future__ import annotations

import ast
import hashlib
import weakref
from dataclasses import dataclass
from typing import Any

from ..func import Func
from ..ir import Buffer, Loc
from ..npcompat import np
from ..spec import CapturedArray
from ..types import from_numpy
from .values import ArrayValue

_MISSING = object()
CONST_ARRAY_MAX = 64     # captured arrays up to this many elements live in the shader itself
_NARROW = {"f": "float32", "i": "int32", "u": "uint32", "b": "int32"}  # numpy dtype names
_LAMBDA_FUNCS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


@dataclass(frozen=True, eq=False)
class ConstData:
    """The `obj` of a captured array: its (narrowed) data, as the kernel saw it, and the array as
    Python holds it (what Python-side arithmetic on it computes with: frontend/pyvalues.py)."""

    const_data: Any  # numpy arrays
    python: Any = None


@dataclass(frozen=True, eq=False)
class InlineLambda:
    """A `lambda` written inside a kernel or func: its AST and the frame it was defined in."""

    node: ast.Lambda
    frame: object

    def __eq__(self, other) -> bool:  # the same lambda expression (an unrolled loop visits it again)
        return isinstance(other, InlineLambda) and other.node is self.node and other.frame is self.frame

    def __hash__(self) -> int:
        return hash((id(self.node), id(self.frame)))


def is_python_lambda(v) -> bool:
    return callable(v) and getattr(v, "__name__", None) == "<lambda>" and hasattr(v, "__code__")


def lambda_func(v) -> Func:
    """The Func wrapper (one per lambda object) that inlines a captured Python lambda."""
    f = _LAMBDA_FUNCS.get(v)
    if f is None:
        f = _LAMBDA_FUNCS[v] = Func(v)
    return f


class CallablesMixin:
    def visit_Lambda(self, node: ast.Lambda, loc: Loc):
        a = node.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            self.error("a lambda in a kernel takes plain positional parameters only", loc)
        return InlineLambda(node, self.frame)

    def call_lambda(self, lam: InlineLambda, args: list, kwargs: dict, loc: Loc):
        a = lam.node.args
        names = [p.arg for p in a.args]
        defaults = dict(zip(names[len(names) - len(a.defaults):], a.defaults))
        if len(args) > len(names):
            self.error(f"the lambda takes {len(names)} argument(s), got {len(args)}", loc)
        bound = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names or k in bound:
                self.error(f"the lambda got an unexpected or repeated argument {k!r}", loc)
            bound[k] = v
        saved_frame = self.frame
        self.frame = lam.frame
        try:
            for n in names:
                if n not in bound:
                    if n not in defaults:
                        self.error(f"the lambda is missing the argument {n!r}", loc)
                    bound[n] = self.visit(defaults[n])
            scope = lam.frame.scope
            saved = {n: scope.get(n, _MISSING) for n in names}
            for n in names:
                scope[n] = self.materialize(bound[n], loc)
            try:
                return self.visit(lam.node.body)
            finally:
                for n, v in saved.items():
                    if v is _MISSING:
                        scope.pop(n, None)
                    else:
                        scope[n] = v
        finally:
            self.frame = saved_frame

    def captured_array(self, v: np.ndarray, name: str, loc: Loc):
        """A numpy array reached from Python: a compile-time constant."""
        if v.ndim == 0:
            return v.item()
        if v.dtype.kind not in "biuf":
            self.error(f"{name!r} is a numpy array of {v.dtype}; kernels can capture numeric arrays only", loc)
        if v.size == 0:
            self.error(f"{name!r} is an empty numpy array", loc)
        v = data = np.ascontiguousarray(v)  # (keyed by the array as Python holds it: Python-side arithmetic uses it)
        if data.dtype.itemsize != 4 or data.dtype.kind == "b":
            data = data.astype(_NARROW[data.dtype.kind])  # Taichi's defaults: f64 -> f32, i64 / bool -> i32
        if data.size <= CONST_ARRAY_MAX:  # in the shader: a private array initialized with the values
            key = ("const", v.dtype.str, data.shape, v.tobytes())
            arr = self.fields.get(key)
            if arr is None:
                buf = self.fresh_buffer_name(name)
                self.ir.buffers.append(Buffer(buf, from_numpy(data.dtype), "const",
                                              source=tuple(x.item() for x in data.reshape(-1))))
                arr = self.fields[key] = ArrayValue(name, buf, from_numpy(data.dtype), data.shape,
                                                    obj=ConstData(data, v))
            return arr
        self.cacheable = False  # its content is read at compile time
        key = ("captured", v.dtype.str, data.shape, hashlib.blake2b(v.tobytes(), digest_size=16).digest())
        arr = self.fields.get(key)
        if arr is None:  # a read-only device copy, bound as a field (the runtime uploads it)
            data, elem, buf = data.copy(), from_numpy(data.dtype), self.fresh_buffer_name(name)
            inner = data.shape[-1] if data.ndim >= 2 and data.shape[-1] > 1 else None
            self.ir.buffers.append(Buffer(buf, elem, "field", source=CapturedArray(key, data), inner=inner,
                                          elems=int(data.size)))
            arr = self.fields[key] = ArrayValue(name, buf, elem, data.shape, obj=ConstData(data, v))
        return arr

    def fold_const_index(self, arr, sl: ast.expr, loc: Loc):
        """`A[2, 1]` of a captured numpy array with constant indices: the number itself."""
        data = getattr(arr.obj, "const_data", None)
        if data is None or any(isinstance(n, ast.Call) for n in ast.walk(sl)):
            return None
        idx = self.index_items(sl, loc)
        if len(idx) != data.ndim or not all(isinstance(k, int) and 0 <= k < n for k, n in zip(idx, data.shape)):
            return None
        return np.asarray(data)[tuple(idx)].item()  # np.asarray: a HostMatrix gives Python numbers already

    def arg_grad(self, arr, loc: Loc):
        """`x.grad` of an ndarray argument allocated with needs_grad=True: its gradient buffer,
        bound beside it (the grad kernel reuses the same binding)."""
        src = next((b for b in self.ir.buffers if b.name == arr.buf and b.kind == "arg"), None)
        if src is None:
            return None
        if not src.needs_grad:
            self.error(f"{arr.name}.grad: pass a gr.ndarray allocated with needs_grad=True (a numpy array or an "
                       "array without needs_grad has no gradient)", loc)
        name = f"{src.name}.grad"
        if not any(b.name == name for b in self.ir.buffers):
            self.ir.buffers.append(Buffer(name, src.dtype, "grad", source=src.source, of=src.name, inner=src.inner))
        return ArrayValue(f"{arr.name}.grad", name, arr.elem, arr.shape, clamp=arr.clamp)
