"""Random typed expressions. `ExprGen.expr(t, depth)` returns an expression whose type (by
typing.py) is exactly t. Outside the extreme profile, operands are guarded so values stay
ordinary (divisors away from zero, shift counts below the width, square roots of magnitudes),
while integers still wrap freely (wrap-around is ordinary, documented behaviour)."""
from __future__ import annotations

from .dtypes import BITS, is_float, is_int, promote
from .program import Bin, BoolOp, Call, Cast, Compare, Const, Expr, IfExp, Load, Math, Select, Unary, Var
from .typing import Ctx, InvalidProgram, expr_type

FLOAT_CONSTS = (0.5, 1.5, -1.25, 2.0, 0.1, 3.0, -0.75, 0.25, 7.0, -2.5, 1e-3, 10.0, 0.3)
INT_CONSTS = (0, 1, 2, 3, -1, -2, 5, 7, 8, -9, 13, 100, 31)
EXTREME_FLOATS = (1e30, -1e30, 3.4e38, 2147483648.0, 1e-38, 0.05, 0.1, 46341.0, 2147483647.0, -2.5, -1.0, 0.0)
EXTREME_INTS = (33, 46341, -2147483648, 2147483647, 32, 64, -1, 40, 65535)
CMP_OPS = ("<", "<=", ">", ">=", "==", "!=")


class ExprGen:
    """Holds the random source, the profile, the scopes and what expressions may read.
    arrays: name -> Array (all kernel arrays); readable: names readable now; funcs: callable
    funcs (name -> Func); thread: the thread variables (or ())."""

    def __init__(self, rng, profile, scopes, arrays: dict, funcs: dict):
        self.r, self.prof, self.scopes = rng, profile, scopes
        self.arrays, self.funcs = arrays, funcs
        self.readable: list[str] = []
        self.thread: tuple = ()
        self.callable: list[str] = []
        self.extreme = profile.extreme
        self.nesting = 0                  # loads inside indices of loads

    # -- helpers ------------------------------------------------------------------------------------
    def chance(self, p: float) -> bool:
        return self.r.random() < p

    def pick(self, weights: dict):
        items = [(k, w) for k, w in weights.items() if w > 0]
        total = sum(w for _, w in items)
        x = self.r.random() * total
        for k, w in items:
            x -= w
            if x < 0:
                return k
        return items[-1][0]

    def ctx(self) -> Ctx:
        return Ctx(self.arrays, self.funcs, {v.name: v.type for v in self.scopes.visible() if v.readable})

    def type_of(self, e: Expr) -> str:
        return expr_type(e, self.ctx())

    def vars_of(self, t: str) -> list:
        return [v for v in self.scopes.visible() if v.readable and v.type == t]

    def coerce(self, e: Expr, t: str) -> Expr:
        """e converted to type t (a cast in one of the language's spellings)."""
        try:
            src = self.type_of(e)
        except InvalidProgram:
            return self.leaf(t)
        if src == t:
            return e
        if isinstance(e, Const):
            return self.leaf(t)
        if src == "bool":
            return self.leaf(t)
        e = self.fit(e, src, t)
        style = "cast"
        if t == "i32" and self.chance(0.4):
            style = "int"
        elif t == "f32" and self.chance(0.4):
            style = "float"
        elif self.chance(0.3):
            style = "ctor"
        return Cast(t, e, style)

    def fit(self, e: Expr, src: str, t: str) -> Expr:
        """A float about to become an integer, clamped into the integer's range (non-negative
        for unsigned types) outside the extreme profile: out-of-range conversions saturate,
        which SEMANTICS.md has another engineer define."""
        if self.extreme or not is_float(src) or not is_int(t):
            return e
        lo = 0.0 if t in ("u32", "u64") else -1000.0
        if self.chance(0.3) and t in ("u32", "u64"):
            return Bin("min", Math("abs", e), Const(1000.0))
        return Bin("min", Bin("max", e, Const(lo)), Const(1000.0))

    def const(self, t: str) -> Const:
        if is_float(t):
            pool = EXTREME_FLOATS if self.extreme and self.chance(0.3) else FLOAT_CONSTS
            return Const(self.r.choice(pool))
        pool = EXTREME_INTS if self.extreme and self.chance(0.3) else INT_CONSTS
        v = self.r.choice(pool)
        if t in ("u32", "u64"):
            v = abs(v)
        return Const(v)

    # -- leaves -------------------------------------------------------------------------------------
    def index(self, name: str) -> tuple:
        """A safe index of array `name`: the thread's own element, or anything wrapped with %."""
        a = self.arrays[name]
        out = []
        self.nesting += 1
        for d, n in enumerate(a.shape):
            if d < len(self.thread) and self.chance(0.65) and self._thread_fits(d, n):
                out.append(Var(self.thread[d]))
            elif self.chance(0.15):
                out.append(Const(self.r.randrange(n)))
            else:
                out.append(Bin("%", self.expr("i32", 1), Const(n)))
        self.nesting -= 1
        return tuple(out)

    def _thread_fits(self, d: int, n: int) -> bool:
        v = self.scopes.get(self.thread[d])
        return v is not None and v.hi is not None and v.lo is not None and 0 <= v.lo and v.hi < n

    def load(self, t: str):
        names = [n for n in self.readable if self.arrays[n].dtype == t]
        if not names:
            return None
        name = self.r.choice(names)
        return Load(name, self.index(name))

    def leaf(self, t: str, const: bool = False) -> Expr:
        """A variable, array element or (when `const`) a Python number of type t; never a
        number otherwise, so that callers can put it next to a number or into a builtin (an
        operation on numbers alone would be folded by Python, not computed by the kernel)."""
        if t == "bool":
            return self.compare(1)
        opts = []
        vs = self.vars_of(t)
        if vs:
            opts += [("var", 3)]
        if self.nesting < 2 and any(self.arrays[n].dtype == t for n in self.readable):
            opts += [("load", 3)]
        if const and t in ("i32", "f32"):
            opts += [("const", 1)]
        if not opts:
            other = [v for v in self.scopes.visible() if v.readable and v.type != "bool"]
            if other:
                return self.coerce(Var(self.r.choice(other).name), t)
            return Cast(t, self.leaf_any_loadable(), "cast")
        kind = self.pick(dict(opts))
        if kind == "var":
            return Var(self.r.choice(vs).name)
        if kind == "load":
            return self.load(t)
        return self.const(t)

    def leaf_any_loadable(self) -> Expr:
        for n in self.readable:
            return Load(n, self.index(n))
        raise InvalidProgram("nothing to read")

    # -- expressions --------------------------------------------------------------------------------
    def expr(self, t: str, depth: int) -> Expr:
        if depth <= 0 or self.chance(0.25):
            return self.leaf(t)
        if t == "bool":
            return self.boolean(depth)
        e = self.float_expr(t, depth) if is_float(t) else self.int_expr(t, depth)
        try:
            got = self.type_of(e)
        except InvalidProgram:
            return self.leaf(t)
        return e if got == t else self.coerce(e, t)

    def operand_pair(self, t: str, depth: int):
        """Two operands whose promotion is t: mostly both t, sometimes a narrower type or a
        Python number on one side."""
        a = self.expr(t, depth - 1)
        k = self.r.random()
        if k < 0.3:
            b = self.const(t)
        elif k < 0.45:
            narrower = [s for s in self.prof.types if s != t and promote(t, s) == t]
            b = self.expr(self.r.choice(narrower), depth - 1) if narrower else self.expr(t, depth - 1)
        else:
            b = self.expr(t, depth - 1)
        return (b, a) if self.chance(0.5) and not isinstance(b, Const) else (a, b)

    def positive(self, t: str, depth: int) -> Expr:
        """An expression of type t that is > 0 (abs(e) + c)."""
        return Bin("+", Math("abs", self.expr(t, depth)), Const(self.r.choice((0.5, 1.0, 0.25, 2.0))))

    def float_expr(self, t: str, depth: int) -> Expr:
        w = self.prof.float_ops
        kind = self.pick(w)
        d = depth - 1
        if kind == "arith":
            a, b = self.operand_pair(t, depth)
            return Bin(self.r.choice("+-*"), a, b)
        if kind == "div":
            a = self.expr(t, d)
            if self.extreme and self.chance(0.5):
                return Bin("/", a, self.expr(t, d))
            return Bin("/", a, self.positive(t, d) if self.chance(0.7) else self.const_nonzero())
        if kind == "floormod":
            a = self.expr(t, d)
            op = self.r.choice(("//", "%"))
            if self.extreme and self.chance(0.6):
                return Bin(op, a, self.expr(t, d) if self.chance(0.5) else self.const(t))
            b = self.positive(t, d) if self.chance(0.5) else self.const_nonzero()
            return Bin(op, a, b)
        if kind == "pow":
            return self.float_pow(t, d)
        if kind == "minmax":
            a, b = self.operand_pair(t, depth)
            return Bin(self.r.choice(("min", "max")), a, b)
        if kind == "math":
            return self.float_math(t, d)
        if kind == "atan2":
            return Bin("atan2", self.expr(t, d), self.expr(t, d))
        if kind == "select":
            cls = Select if self.chance(0.5) else IfExp
            return cls(self.boolean(d), self.expr(t, d), self.expr(t, d))
        if kind == "call":
            return self.call(t, d) or self.leaf(t)
        if kind == "neg":
            return Unary("neg", self.expr(t, d))
        if kind == "cast":
            src = self.r.choice([s for s in self.prof.types if s != t] or [t])
            return self.coerce(self.expr(src, d), t)
        if kind == "identity" and self.extreme:
            x = self.leaf(t)
            op = self.r.choice(("-", "*", "/", "*0"))
            if op == "*0":
                return Bin("*", x, Const(0.0))
            return Bin(op, x, x)
        return self.leaf(t)

    def const_nonzero(self) -> Const:
        return Const(self.r.choice((0.75, 1.5, 2.0, -1.25, 3.0, 0.3, -0.5)))

    def float_pow(self, t: str, d: int) -> Expr:
        k = self.r.random()
        if self.extreme and k < 0.4:
            return Bin("**", self.expr(t, d), self.r.choice((self.const(t), self.expr(t, d))))
        if k < 0.35:
            return Bin("**", self.expr(t, d), Const(self.r.choice((2, 3, 2.0, 3.0))))
        if k < 0.5:
            return Bin("**", Math("abs", self.expr(t, d)), Const(0.5))
        if k < 0.6:
            return Bin("**", self.positive(t, d), Const(-1))
        exp = self.r.choice((Const(self.r.choice((-1.5, 0.5, 1.5, 2.5, -0.5))),
                             Bin("*", Math("sin", self.expr(t, d)), Const(2.0))))
        return Bin("**", self.positive(t, d), exp)

    def float_math(self, t: str, d: int) -> Expr:
        fn = self.r.choice(("sin", "cos", "tanh", "atan", "exp", "log", "sqrt", "rsqrt", "asin", "acos", "tan",
                            "floor", "ceil", "abs"))
        a = self.expr(t, d)
        if self.extreme and self.chance(0.5):
            return Math(fn, a)
        if fn == "exp":
            return Math("exp", Bin("min", a, Const(4.0)))
        if fn == "log":
            return Math("log", Bin("+", Math("abs", a), Const(0.5)))
        if fn == "sqrt":
            return Math("sqrt", Math("abs", a))
        if fn == "rsqrt":
            return Math("rsqrt", Bin("+", Math("abs", a), Const(0.25)))
        if fn in ("asin", "acos"):
            return Math(fn, Bin("*", Math("sin", a), Const(0.9)))
        if fn == "tan":
            return Math("tan", Math("sin", a))
        return Math(fn, a)

    def int_expr(self, t: str, depth: int) -> Expr:
        kind = self.pick(self.prof.int_ops)
        d = depth - 1
        if kind == "arith":
            a, b = self.operand_pair(t, depth)
            return Bin(self.r.choice("+-*"), a, b)
        if kind == "divmod":
            a, b = self.operand_pair(t, depth)
            return Bin(self.r.choice(("//", "%")), a, b)
        if kind == "pow":
            if self.extreme and self.chance(0.3):
                return Bin("**", self.expr(t, d), self.expr(t, d))
            e = Bin("%", self.expr(t, d), Const(4)) if self.chance(0.5) else Const(self.r.randrange(0, 5))
            return Bin("**", self.expr(t, d), e)
        if kind == "bits":
            a, b = self.operand_pair(t, depth)
            return Bin(self.r.choice("&|^"), a, b)
        if kind == "shift":
            a = self.expr(t, d)
            if self.extreme and self.chance(0.6):
                n = self.expr(t, d) if self.chance(0.5) else self.const(t)
            elif self.chance(0.5):
                n = Const(self.r.randrange(0, BITS[t]))
            else:
                n = Bin("&", self.expr(t, d), Const(BITS[t] - 1))
            return Bin(self.r.choice(("<<", ">>")), a, n)
        if kind == "minmax":
            a, b = self.operand_pair(t, depth)
            return Bin(self.r.choice(("min", "max")), a, b)
        if kind == "unary":
            op = self.r.choice(("neg", "invert", "abs"))
            return Math("abs", self.expr(t, d)) if op == "abs" else Unary(op, self.expr(t, d))
        if kind == "fcast":
            src = self.r.choice([s for s in self.prof.types if is_float(s)] or ["f32"])
            x = self.fit(self.expr(src, d), src, t)
            if t == "i32" and self.chance(0.5):
                return Cast("i32", x, "int")
            return Cast(t, x, self.r.choice(("cast", "ctor")))
        if kind == "icast":
            src = self.r.choice([s for s in self.prof.types if is_int(s) and s != t] or [t])
            return self.coerce(self.expr(src, d), t)
        if kind == "select":
            cls = Select if self.chance(0.5) else IfExp
            return cls(self.boolean(d), self.expr(t, d), self.expr(t, d))
        if kind == "call":
            return self.call(t, d) or self.leaf(t)
        return self.leaf(t)

    def call(self, t: str, d: int):
        names = [n for n in self.callable if self.funcs[n].ret == t]
        if not names:
            return None
        f = self.funcs[self.r.choice(names)]
        return Call(f.name, tuple(self.expr(pt, max(d, 0)) for _, pt in f.params))

    # -- conditions ---------------------------------------------------------------------------------
    def available(self) -> list:
        """The profile's types that a variable or array of the current scope has."""
        have = {v.type for v in self.scopes.visible() if v.readable}
        have |= {self.arrays[n].dtype for n in self.readable}
        return [t for t in self.prof.types if t in have]

    def compare(self, depth: int) -> Expr:
        t = self.r.choice(self.available() or self.prof.types)
        a = self.expr(t, depth - 1)
        if isinstance(a, Const):
            a = self.leaf(t)
            if isinstance(a, Const):
                others = [v for v in self.scopes.visible() if v.readable and v.type != "bool"]
                a = self.coerce(Var(self.r.choice(others).name), t) if others else self.leaf_any_loadable()
        ops = CMP_OPS if not is_float(t) else ("<", "<=", ">", ">=", "<", ">", "!=")
        b = self.const(t) if self.chance(0.5) else self.expr(t, depth - 1)
        if self.chance(0.15):     # a chain b < a <= c: `a` is evaluated once
            c = self.const(t) if self.chance(0.5) else self.expr(t, depth - 1)
            return Compare((self.r.choice(ops[:4]), self.r.choice(ops[:4])), (b, a, c))
        return Compare((self.r.choice(ops),), (a, b) if self.chance(0.7) else (b, a))

    def boolean(self, depth: int) -> Expr:
        k = self.r.random()
        if depth <= 1 or k < 0.6:
            return self.compare(max(depth, 1))
        if k < 0.85:
            return BoolOp(self.r.choice(("and", "or")),
                          tuple(self.boolean(depth - 1) for _ in range(self.r.choice((2, 2, 3)))))
        bools = self.vars_of("bool")
        if bools and self.chance(0.5):
            return Var(self.r.choice(bools).name)
        return Unary("not", self.boolean(depth - 1))
