"""The oracle's expressions: each expression of the program representation becomes a Python
closure `f(env) -> value` with its static type resolved once (typing.py), computing Python's
semantics on the fixed-width type through numerics.py. Ints are Python ints, bools Python
bools, floats (v, e) pairs (numerics.py)."""
from __future__ import annotations

from . import numerics as N
from .dtypes import is_float, is_int, promote, wrap
from .program import Bin, BoolOp, Call, Cast, Compare, Const, IfExp, Load, Math, Select, Shape, Unary, Var
from .typing import InvalidProgram, bin_types, cast_type, expr_type, operand_types


def convert(v, src: str, dst: str):
    """The language's conversion of a value of type src to type dst (assignment, arguments,
    gr.cast, operands of a promoted operation)."""
    if src == dst:
        return v
    if dst == "bool":
        if src == "bool":
            return v
        return N.fcompare("!=", v, (0.0, 0.0)) if is_float(src) else v != 0
    if src == "bool":
        return (1.0 if v else 0.0, 0.0) if is_float(dst) else int(v)
    if is_int(src):
        return wrap(v, dst) if is_int(dst) else N.i2f(v, dst)
    return N.f2f(v, src, dst) if is_float(dst) else N.f2i(v, dst)


def const_value(v, t: str):
    """A Python number in a context of type t (as the compiler converts literals)."""
    if t == "bool":
        return bool(v)
    if is_float(t):
        return N.exact(N.rnd(float(v), t), t)
    return wrap(int(v), t)


_FLOAT_BIN = {"+": N.fadd, "-": N.fsub, "*": N.fmul, "/": N.fdiv, "//": N.ffloordiv, "%": N.fmod,
              "**": N.fpow, "atan2": N.fatan2}
_INT_BIN = {"+": lambda x, y, t: wrap(x + y, t), "-": lambda x, y, t: wrap(x - y, t),
            "*": lambda x, y, t: wrap(x * y, t), "//": N.ifloordiv, "%": N.imod, "**": N.ipow,
            "&": lambda x, y, t: wrap(x & y, t), "|": lambda x, y, t: wrap(x | y, t),
            "^": lambda x, y, t: wrap(x ^ y, t), "min": lambda x, y, t: min(x, y),
            "max": lambda x, y, t: max(x, y),
            "<<": lambda x, y, t: N.ishift("<<", x, y, t), ">>": lambda x, y, t: N.ishift(">>", x, y, t)}
_ICMP = N.CMP


class ExprCompiler:
    """Compiles expressions against a static context (typing.Ctx). `W` maps a program type to
    the type the oracle computes in (f32 -> f64 for the gradient check's wide runs). `load`
    is the runtime's array read: load(name, index_tuple) -> value. `call` runs a func."""

    def __init__(self, ctx, W, load, call, shapes):
        self.ctx, self.W, self.load, self.call, self.shapes = ctx, W, load, call, shapes

    def type(self, e) -> str:
        return self.W(expr_type(e, self.ctx))

    def as_type(self, e, t: str):
        """A closure computing e converted to type t."""
        if isinstance(e, Const):
            v = const_value(e.value, t)
            return lambda env: v
        f, src = self.compile(e)
        if src == t:
            return f
        return lambda env: convert(f(env), src, t)

    def compile(self, e):
        """(closure, type)."""
        W = self.W
        if isinstance(e, Const):
            t = W(expr_type(e, self.ctx))
            v = const_value(e.value, t)
            return (lambda env: v), t
        if isinstance(e, Var):
            t = self.type(e)
            name = e.name
            return (lambda env: env[name]), t
        if isinstance(e, Load):
            t = self.type(e)
            idx = [self.as_type(k, W(expr_type(k, self.ctx))) for k in e.idx]
            name, load = e.arr, self.load
            if len(idx) == 1:
                i0 = idx[0]
                return (lambda env: load(name, (i0(env),))), t
            return (lambda env: load(name, tuple(k(env) for k in idx))), t
        if isinstance(e, Shape):
            v = self.shapes[e.arr][e.dim]
            return (lambda env: v), "i32"
        if isinstance(e, Bin):
            return self._bin(e)
        if isinstance(e, Unary):
            return self._unary(e)
        if isinstance(e, Compare):
            return self._compare(e), "bool"
        if isinstance(e, BoolOp):
            fs = [self.as_type(v, "bool") for v in e.values]
            if e.op == "and":
                def f(env):
                    for g in fs:
                        if not g(env):
                            return False
                    return True
            else:
                def f(env):
                    for g in fs:
                        if g(env):
                            return True
                    return False
            return f, "bool"
        if isinstance(e, (IfExp, Select)):
            ta, tb = operand_types(e.a, e.b, self.ctx)
            t = W(ta if ta == tb else promote(ta, tb))
            c, a, b = self.as_type(e.cond, "bool"), self.as_type(e.a, t), self.as_type(e.b, t)
            if isinstance(e, IfExp):
                return (lambda env: a(env) if c(env) else b(env)), t

            def sel(env):
                cv, av, bv = c(env), a(env), b(env)
                return av if cv else bv
            return sel, t
        if isinstance(e, Math):
            return self._math(e)
        if isinstance(e, Cast):
            t = W(cast_type(e))
            return self.as_type(e.a, t), t
        if isinstance(e, Call):
            fn = self.ctx.funcs[e.func]
            args = [self.as_type(a, W(pt)) for a, (_, pt) in zip(e.args, fn.params)]
            call, name = self.call, e.func
            return (lambda env: call(name, [a(env) for a in args])), W(fn.ret)
        raise InvalidProgram(f"unknown expression {type(e).__name__}")

    def _bin(self, e: Bin):
        ta, tb, t = (self.W(x) for x in bin_types(e, self.ctx))
        a, b = self.as_type(e.a, ta), self.as_type(e.b, tb)
        op = e.op
        if is_float(t):
            if op in ("min", "max"):
                return (lambda env: N.fminmax(op, a(env), b(env), t)), t
            if op == "**" and isinstance(e.b, Const) and e.b.value in (0.5, -0.5):  # the compiler's sqrt / rsqrt
                fn, nn = ("sqrt" if e.b.value > 0 else "rsqrt"), nonneg(e.a)
                return (lambda env: N.fmath(fn, a(env), t, nn)), t
            if op == "**" and nonneg(e.a):
                return (lambda env: N.fpow(a(env), b(env), t, True)), t
            fn = _FLOAT_BIN[op]
            return (lambda env: fn(a(env), b(env), t)), t
        if op == "/":
            raise InvalidProgram("integer true division must be float")
        fn = _INT_BIN[op]
        return (lambda env: fn(a(env), b(env), t)), t

    def _unary(self, e: Unary):
        t = self.type(e)
        if e.op == "not":
            a = self.as_type(e.a, "bool")
            return (lambda env: not a(env)), "bool"
        a = self.as_type(e.a, t)
        if e.op == "invert":
            return (lambda env: wrap(~a(env), t)), t
        if is_float(t):
            return (lambda env: N.fneg(a(env), t)), t
        return (lambda env: wrap(-a(env), t)), t

    def _compare(self, e: Compare):
        pairs = []
        ops = list(e.ops)
        operands = list(e.operands)
        # each operand is evaluated once (Python's chain); convert per pair
        fs = []
        types = []
        for x in operands:
            if isinstance(x, Const):
                fs.append(None)
                types.append(None)
            else:
                f, t = self.compile(x)
                fs.append(f)
                types.append(t)
        for k, op in enumerate(ops):
            ta, tb = operand_types(operands[k], operands[k + 1], self.ctx)
            t = self.W(promote(ta, tb))
            pairs.append((op, t))
        consts = operands

        def value(env, k, cache):
            if fs[k] is None:
                return None
            if k not in cache:
                cache[k] = fs[k](env)
            return cache[k]

        def f(env):
            cache = {}
            for k, (op, t) in enumerate(pairs):
                xa = value(env, k, cache)
                xb = value(env, k + 1, cache)
                va = const_value(consts[k].value, t) if xa is None else convert(xa, types[k], t)
                vb = const_value(consts[k + 1].value, t) if xb is None else convert(xb, types[k + 1], t)
                r = N.fcompare(op, va, vb) if is_float(t) else _ICMP[op](va, vb)
                if not r:
                    return False
            return True
        return f

    def _math(self, e: Math):
        t0 = self.type(e.a)
        if e.fn == "abs":
            a = self.as_type(e.a, t0)
            if is_float(t0):
                return (lambda env: N.fabs(a(env), t0)), t0
            return (lambda env: wrap(abs(a(env)), t0)), t0
        if e.fn in ("floor", "ceil"):
            a = self.as_type(e.a, t0)
            if not is_float(t0):
                return a, t0
            fn = e.fn
            return (lambda env: N.fstep(fn, a(env), t0)), t0
        t = self.type(e)
        a = self.as_type(e.a, t)
        fn, pos = e.fn, nonneg(e.a)
        return (lambda env: N.fmath(fn, a(env), t, pos)), t


def nonneg(e) -> bool:
    """Whether e is >= 0 whatever rounding the device does: abs(...), sqrt, exp, and sums and
    products of such with non-negative constants."""
    if isinstance(e, Math):
        return e.fn in ("abs", "sqrt", "exp", "rsqrt")
    if isinstance(e, Const):
        return isinstance(e.value, (int, float)) and not isinstance(e.value, bool) and e.value >= 0
    if isinstance(e, Bin) and e.op in ("+", "*", "min", "max"):
        return nonneg(e.a) and nonneg(e.b)
    return False
