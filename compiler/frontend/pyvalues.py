"""Operators on compile-time Python values, evaluated while tracing, as Taichi does.

Taichi's front end runs a kernel's operators on the Python objects it holds: two Python values
meet in Python, so `[n] * dim` repeats a list, `(a, b) + (c,)` concatenates, and a numpy array
captured from Python computes with numpy (`n_cube - 1`, `A * 2`); the result is again a
compile-time value (`gr.ndrange(*(n_cube - 1))`, `(A * 2)[1]`). A list or tuple meeting a vector
or matrix becomes one (Taichi's Matrix takes the list: `[v[k] >> 1 for k in range(3)] ^ v`), and so
does a 1-D or 2-D captured numpy array (`M @ v` with M a global numpy matrix).
What is left is refused with a clear error: a list meeting a scalar, or a numpy array meeting a
run-time value (Taichi has no rule for those: a Python TypeError or a crash).
"""
from __future__ import annotations

import contextlib
import operator as _operator

from .. import npcompat
from ..ir import Loc, Node, Op
from .values import ArrayValue, Compound, ListValue, seq_kind

NOT_PYTHON = object()  # python_binop's answer where the operands are kernel values
_OPERATORS = {Op.ADD: _operator.add, Op.SUB: _operator.sub, Op.MUL: _operator.mul, Op.DIV: _operator.truediv,
              Op.FLOORDIV: _operator.floordiv, Op.MOD: _operator.mod, Op.POW: _operator.pow,
              Op.BITAND: _operator.and_, Op.BITOR: _operator.or_, Op.BITXOR: _operator.xor,
              Op.SHL: _operator.lshift, Op.SHR: _operator.rshift, None: _operator.matmul}
_UNARY = {Op.NEG: _operator.neg, Op.BITNOT: _operator.invert}


def captured_numpy(v):
    """The numpy array behind a captured array value (frontend/callables.py), or None."""
    obj = getattr(v, "obj", None) if isinstance(v, ArrayValue) else None
    data = getattr(obj, "const_data", None)
    if data is None:
        return None
    return obj.python if obj.python is not None else data


class PyValueMixin:
    def python_operand(self, v):
        """v as Python computes with it: a number, a numpy array, a list / tuple of such; None
        where v holds a run-time value."""
        v = self.known(v)  # a typed constant (`n = 3` in the kernel) is its number
        if isinstance(v, bool | int | float) and not isinstance(v, Node):
            return v
        a = captured_numpy(v)
        if a is not None:
            return a
        if isinstance(v, tuple):
            items = [self.python_operand(x) for x in v]
            return None if any(x is None for x in items) else type(v)(items)
        return None

    def python_result(self, r, loc: Loc):
        """A value Python computed, back as a kernel value."""
        if npcompat.is_array(r):
            return self.captured_array(r, "array", loc) if r.ndim else r.item()
        if npcompat.is_scalar(r):
            return r.item()
        if isinstance(r, list | tuple):
            items = tuple(self.python_result(x, loc) for x in r)
            return ListValue(items) if isinstance(r, list) else items
        return r

    def python_binop(self, op, a, b, loc: Loc):
        """`a op b` where a Python sequence or a captured numpy array takes part: Python's (and
        numpy's) meaning; NOT_PYTHON where neither operand is one (the kernel's operators apply)."""
        seq_a, seq_b = isinstance(a, tuple), isinstance(b, tuple)
        np_a, np_b = captured_numpy(a) is not None, captured_numpy(b) is not None
        if not (seq_a or seq_b or np_a or np_b):
            return NOT_PYTHON
        if (seq_a or seq_b) and not (np_a or np_b):
            if seq_a and seq_b and op is Op.ADD:  # concatenation: items of any kind
                return ListValue(a + b) if isinstance(a, ListValue) and isinstance(b, ListValue) else a + b
            n = self.known(b if seq_a else a)
            if op is Op.MUL and isinstance(n, int) and not isinstance(n, bool) and not (seq_a and seq_b):
                seq = a if seq_a else b  # repetition: `[n] * dim`
                return type(seq)(tuple(seq) * n)
            other = b if seq_a else a
            if isinstance(other, Compound):  # a list meeting a vector or matrix becomes one, as in Taichi
                seq = self.make_matrix(tuple(a if seq_a else b), None, loc)
                return self.binop(op, seq, b, loc) if seq_a else self.binop(op, a, seq, loc)
        if (np_a or np_b) and not (np_a and np_b) and isinstance(b if np_a else a, Compound):
            data = captured_numpy(a if np_a else b)  # a 1-D / 2-D array meeting a vector or matrix becomes one
            if data.ndim in (1, 2):
                m = Compound(data.shape, tuple(data.ravel().tolist()))
                return self.binop(op, m, b, loc) if np_a else self.binop(op, a, m, loc)
        pa, pb = self.python_operand(a), self.python_operand(b)
        if pa is None or pb is None:
            what = "a numpy array captured from Python (a compile-time constant)" if np_a or np_b else \
                f"a {seq_kind(a if seq_a else b)}"
            self.error(f"arithmetic on {what} with {self.describe(b if pa is not None else a)} is not supported: "
                       "Python evaluates such operators while the kernel compiles, so both operands must be known "
                       "then; use gr.Vector for vectors of run-time values", loc)
        try:
            with npcompat.np.errstate(all="raise") if np_a or np_b else contextlib.nullcontext():
                r = _OPERATORS[op](pa, pb)
        except (TypeError, ValueError, ArithmeticError, FloatingPointError) as e:
            self.error(f"{type(e).__name__} evaluating this operator on compile-time values: {e}", loc)
        return self.python_result(r, loc)

    def python_unary(self, op, v, loc: Loc):
        """`-A`, `~A` of a captured numpy array (numpy's); NOT_PYTHON for anything else."""
        if op not in _UNARY or captured_numpy(v) is None:
            return NOT_PYTHON
        return self.python_result(_UNARY[op](self.python_operand(v)), loc)
