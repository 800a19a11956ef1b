"""Random statements: declarations, assignments (with the language's implicit conversions),
nested if/elif/else, serial `range` loops whose bounds depend on the thread index, enclosing
loop variables and loaded values (positive and negative steps, empty ranges), bounded `while`
loops, break/continue at any depth, per-thread stores, atomics, kernel-scope reductions and
`@gr.func`s with early returns.

Loop bounds are built from expressions with a static interval (`small_int`), so every loop's
trip count is bounded by construction and the product of nested trip counts stays within the
profile's budget."""
from __future__ import annotations

from dataclasses import dataclass

from .dtypes import BITS, is_float, is_int
from .gen_exprs import ExprGen
from .program import (
    Assign,
    Atomic,
    AugAssign,
    Bin,
    BoolOp,
    Break,
    Compare,
    Const,
    Continue,
    For,
    Func,
    If,
    Load,
    Math,
    Return,
    Store,
    Unary,
    Var,
    While,
)
from .scope import Scopes, VarInfo


@dataclass
class Block:
    """Where a block is generated: serial loop depth (inside the thread or func), the product
    of the enclosing loops' trip bounds, and what the block may do."""
    depth: int                 # statement nesting left
    loops: int = 0             # serial loops around (break/continue allowed when > 0)
    trips: int = 1
    parallel: bool = False     # inside a parallel loop's body (continue allowed)
    func_ret: str | None = None
    serial_kernel: bool = False
    top: bool = False          # the kernel's top level: a `for` there would be a parallel loop


class StmtGen(ExprGen):
    def __init__(self, rng, profile, scopes, arrays, funcs):
        super().__init__(rng, profile, scopes, arrays, funcs)
        self.stores: list[str] = []        # out arrays the current task writes at the thread's row
        self.rows: list[str] = []          # 2-d out arrays (row per thread)
        self.accs: dict = {}               # acc array -> op class ('add', 'max', 'min', 'or', 'xor', 'and')
        self.reducible: dict = {}          # kernel variable -> op class
        self.grad = profile.grad

    # -- small bounded integers ---------------------------------------------------------------------
    def small_int(self, lo: int = -4, hi: int = 12, stable: bool = False):
        """(expr of type i32, lo, hi): a value certainly within [lo', hi'] (a sub-range of what
        the parts give), built from the thread index, loop variables, loaded counts, locals."""
        k = self.r.random()
        ints = [v for v in self.scopes.visible() if v.readable and v.type == "i32"]
        bounded = [v for v in ints if v.lo is not None and v.hi - v.lo <= 40 and (v.kind != "local" or not stable)]
        if k < 0.2 or not ints:
            c = self.r.randint(lo, hi)
            return Const(c), c, c
        if k < 0.45 and bounded:
            v = self.r.choice(bounded)
            e, a, b = Var(v.name), v.lo, v.hi
            if self.chance(0.4):
                c = self.r.randint(-3, 6)
                return (Bin("+", e, Const(c)), a + c, b + c) if self.chance(0.5) else (Bin("-", Const(c), e), c - b,
                                                                                          c - a)
            return e, a, b
        if k < 0.6 and self.thread:
            i = Var(self.thread[0])
            m = self.r.randint(2, 9)
            form = self.r.random()
            if form < 0.4:
                return Bin("%", i, Const(m)), 0, m - 1
            if form < 0.7:
                return Bin("-", Const(m), Bin("%", i, Const(m))), 1, m
            tv = self.scopes.get(self.thread[0])
            if form < 0.85:
                return i, tv.lo, tv.hi
            return Bin("-", Const(m), i), m - tv.hi, m - tv.lo
        cnts = [n for n in self.readable if self.arrays[n].role == "in" and getattr(self, "cnt_range", {}).get(n)]
        if k < 0.8 and cnts:
            name = self.r.choice(cnts)
            a, b = self.cnt_range[name]
            return Load(name, self.index(name)), a, b
        m = self.r.randint(2, 9)
        base = self.expr("i32", 1)
        if self.chance(0.6):
            c = self.r.randint(-2, 3)
            return Bin("+", Bin("%", base, Const(m)), Const(c)), c, c + m - 1
        a = self.r.randint(-3, 2)
        b = a + self.r.randint(0, 8)
        return Bin("min", Bin("max", base, Const(a)), Const(b)), a, b

    def range_args(self, limit: int):
        """(args, var_lo, var_hi, trips): a range whose trip count is at most `limit`."""
        for _ in range(12):
            s0, slo, shi = self.small_int()
            e0, elo, ehi = self.small_int()
            k = self.r.random()
            if k < 0.55:
                step, smin = None, 1
            elif k < 0.8:
                st = self.r.choice((2, 3, -1, -1, -2))
                step, smin = Const(st), st
            else:
                step, smin = self._run_time_step()
            if smin > 0:
                trips = max(0, -(-(ehi - slo) // smin))
                vlo, vhi = slo, ehi - 1
            else:
                trips = max(0, -(-(shi - elo) // -smin))
                vlo, vhi = elo + 1, shi
            if trips > limit:
                continue
            if step is None and isinstance(s0, Const) and s0.value == 0 and self.chance(0.5):
                return (e0,), vlo, vhi, trips
            return ((s0, e0) if step is None else (s0, e0, step)), vlo, vhi, trips
        c = self.r.randint(0, min(limit, 6))
        return (Const(c),), 0, max(c - 1, 0), c

    def _run_time_step(self):
        e = self.expr("i32", 1)
        if self.chance(0.5):
            return Bin("+", Bin("%", e, Const(3)), Const(1)), 1       # 1..3
        return Unary("neg", Bin("+", Bin("%", e, Const(2)), Const(1))), -1   # -2..-1: at least 1 step of 1

    # -- blocks -------------------------------------------------------------------------------------
    def block(self, b: Block, n: int | None = None) -> list:
        lo, hi = self.prof.block
        n = self.r.randint(lo, hi) if n is None else n
        out = []
        self.scopes.push()
        for _ in range(n):
            out += self.statement(b)
        self.scopes.pop()
        return out

    def statement(self, b: Block) -> list:
        w = dict(self.prof.stmts)
        if b.depth <= 0:
            for k in ("if", "for", "while"):
                w[k] = 0
        if b.loops == 0 and not b.parallel:
            w["jump"] = 0
        if b.top:
            w["for"] = w["while"] = 0
        if b.func_ret is None:
            w["ret"] = 0
        if not b.parallel:
            for k in ("store", "atomic", "reduce", "row", "gather", "accumulate"):
                w[k] = 0
        if not self.stores:
            w["store"] = 0
        if not self.rows:
            w["row"] = 0
        if not self.accs:
            w["atomic"] = 0
        if not self.reducible:
            w["reduce"] = 0
        kind = self.pick(w)
        return getattr(self, "s_" + kind)(b)

    def assignable(self, b: Block) -> list:
        kinds = ("local", "kernel") if b.serial_kernel else ("local",)
        return [v for v in self.scopes.visible() if v.kind in kinds and v.type != "bool"]

    def s_declare(self, b: Block) -> list:
        t = self.r.choice(self.prof.types)
        name = self.scopes.fresh("v")
        ann = None
        if self.chance(0.15):
            src = self.r.choice(self.prof.types)
            value = self.fit(self.expr(src, self.prof.expr_depth), src, t)
            ann = t
        elif t == "i32" and self.chance(0.3):
            value, lo, hi = self.small_int()
            self.scopes.declare(VarInfo(name, t, "local"))
            return [Assign(name, value)]
        else:
            value = self.value(t, b, None) if self.chance(0.9) else self.leaf(t, const=True)
        if ann is None and isinstance(value, Const) and t not in ("i32", "f32"):
            ann = t
        stmt = Assign(name, value, ann)
        try:
            typ = ann or self.type_of(value)
        except Exception:
            return []
        self.scopes.declare(VarInfo(name, typ, "local"))
        return [stmt]

    def value(self, t: str, b: Block, target: str | None):
        """A value for a float assignment inside loops stays bounded (a squashing function, or
        a contraction of the old value); elsewhere anything."""
        if not is_float(t) or (b.loops == 0 and not self.grad):
            return self.expr(t, self.prof.expr_depth)
        inner = self.expr(t, self.prof.expr_depth - 1)
        squash = self.r.choice(("sin", "tanh", "cos", "atan", "div"))
        s = Bin("/", inner, Bin("+", Math("abs", inner), Const(1.0))) if squash == "div" else Math(squash, inner)
        if target is not None and self.chance(0.5):
            return Bin("+", Bin("*", Var(target), Const(self.r.choice((0.5, 0.7, -0.6, 0.9)))), s)
        return s

    def s_assign(self, b: Block) -> list:
        vs = self.assignable(b)
        if not vs:
            return self.s_declare(b)
        v = self.r.choice(vs)
        t = v.type
        if not self.grad and self.chance(0.15):   # an implicit conversion into the variable's type
            t = self.r.choice(self.prof.types)
        value = self.fit(self.value(t, b, v.name if t == v.type else None), t, v.type)
        v.lo = v.hi = None
        return [Assign(v.name, value)]

    def s_aug(self, b: Block) -> list:
        vs = self.assignable(b)
        if not vs:
            return self.s_declare(b)
        v = self.r.choice(vs)
        v.lo = v.hi = None
        if is_float(v.type):
            if b.loops or self.grad:
                return [Assign(v.name, self.value(v.type, b, v.name))]
            op = self.r.choice("+-*")
            return [AugAssign(v.name, op, self.expr(v.type, self.prof.expr_depth - 1))]
        op = self.r.choice(("+", "-", "*", "//", "%", "&", "|", "^", "<<", ">>"))
        if op in ("<<", ">>"):
            return [AugAssign(v.name, op, Const(self.r.randrange(BITS[v.type])))]
        return [AugAssign(v.name, op, self.expr(v.type, self.prof.expr_depth - 1))]

    def s_if(self, b: Block) -> list:
        inner = Block(b.depth - 1, b.loops, b.trips, b.parallel, b.func_ret, b.serial_kernel)
        cond = self.cond_for(b)
        body = self.block(inner)
        orelse = ()
        k = self.r.random()
        if k < 0.3:
            orelse = tuple(self.s_if(b)) if b.depth > 1 else tuple(self.block(inner))   # elif
        elif k < 0.65:
            orelse = tuple(self.block(inner))
        return [If(cond, tuple(body), orelse)]

    def cond_for(self, b: Block):
        """A branch condition: often on the thread index alone (as in Taichi's
        test_for_break3), else anything."""
        if self.thread and self.chance(0.3):
            i = Var(self.thread[0])
            m = self.r.randint(2, 5)
            op = self.r.choice(("==", "!=", "<", ">"))
            return Compare((op,), (Bin("%", i, Const(m)), Const(self.r.randrange(m))))
        return self.boolean(2)

    def s_for(self, b: Block) -> list:
        limit = max(1, min(self.prof.trip, self.prof.budget // b.trips))
        args, vlo, vhi, trips = self.range_args(limit)
        out = []
        name = None
        if self.chance(0.15):     # the loop variable is declared before and read after the loop
            name = self.scopes.fresh("j")
            out.append(Assign(name, Const(self.r.randint(-9, 9))))
        name = name or self.scopes.fresh("j")
        self.scopes.push()
        self.scopes.declare(VarInfo(name, "i32", "loop", vlo, vhi))
        inner = Block(b.depth - 1, b.loops + 1, b.trips * max(trips, 1), b.parallel, b.func_ret, b.serial_kernel)
        body = self.block(inner)
        self.scopes.pop()
        out.append(For(name, args, tuple(body)))
        if out[0] is not out[-1]:
            self.scopes.declare(VarInfo(name, "i32", "loop", min(vlo, -9), max(vhi, 9)))
        return out

    def s_while(self, b: Block) -> list:
        limit = max(1, min(self.prof.trip, self.prof.budget // b.trips))
        name = self.scopes.fresh("w")
        bound, blo, bhi = self.small_int(0, limit, stable=True)
        init, ilo, ihi = self.small_int(-2, 3)
        if bhi - ilo > limit:
            bound, _blo, bhi = Const(min(limit, 6)), min(limit, 6), min(limit, 6)
            init, ilo, ihi = Const(0), 0, 0
        trips = max(0, bhi - ilo)
        out = [Assign(name, init)]
        self.scopes.declare(VarInfo(name, "i32", "counter", ilo, max(ihi, bhi)))
        cond = Compare(("<",), (Var(name), bound))
        if self.chance(0.3):
            cond = BoolOp("and", (cond, self.boolean(1)))
        inner = Block(b.depth - 1, b.loops + 1, b.trips * max(trips, 1), b.parallel, b.func_ret, b.serial_kernel)
        body = [AugAssign(name, "+", Const(1))] + self.block(inner)
        out.append(While(cond, tuple(body)))
        return out

    def s_jump(self, b: Block) -> list:
        word = Break() if b.loops and self.chance(0.55) else Continue()
        if self.chance(0.15):
            return [word]
        return [If(self.cond_for(b), (word,))]

    def s_ret(self, b: Block) -> list:
        return [If(self.boolean(2), (Return((self.expr(b.func_ret, self.prof.expr_depth),)),))]

    def s_store(self, b: Block) -> list:
        name = self.r.choice(self.stores)
        a = self.arrays[name]
        idx = tuple(Var(v) for v in self.thread[:len(a.shape)])
        value = self.expr(a.dtype, self.prof.expr_depth)
        if self.chance(0.2) and (is_int(a.dtype) or is_float(a.dtype)):
            return [Store(name, idx, value, "+")]
        return [Store(name, idx, value)]

    def s_row(self, b: Block) -> list:
        name = self.r.choice(self.rows)
        a = self.arrays[name]
        m = a.shape[1]
        loops = [v for v in self.scopes.visible() if v.kind == "loop" and v.lo is not None and 0 <= v.lo and v.hi < m
                 and v.name not in self.thread]
        col = Var(self.r.choice(loops).name) if loops and self.chance(0.7) else Bin("%", self.expr("i32", 1), Const(m))
        return [Store(name, (Var(self.thread[0]), col), self.expr(a.dtype, self.prof.expr_depth))]

    def s_atomic(self, b: Block) -> list:
        name = self.r.choice(list(self.accs))
        a = self.arrays[name]
        op = self.accs[name]
        idx = tuple(Bin("%", self.expr("i32", 1), Const(n)) for n in a.shape)
        value = self.expr(a.dtype, self.prof.expr_depth - 1)
        if op == "add" and self.chance(0.5):
            return [Store(name, idx, value, self.r.choice("+-"))]
        kind = op if op != "add" else self.r.choice(("add", "sub"))
        return [Atomic(kind, Load(name, idx), value)]

    def s_reduce(self, b: Block) -> list:
        name = self.r.choice(list(self.reducible))
        op = self.reducible[name]
        t = self.scopes.get(name).type
        value = self.expr(t, self.prof.expr_depth - 1)
        if op == "add":
            return [AugAssign(name, self.r.choice("+-"), value)]
        if op in ("or", "xor", "and") and self.chance(0.5):
            return [AugAssign(name, {"or": "|", "xor": "^", "and": "&"}[op], value)]
        return [Atomic(op, Var(name), value)]

    # -- funcs --------------------------------------------------------------------------------------
    def func(self, name: str) -> Func:
        types = self.prof.func_types
        params = tuple((f"p{k}", self.r.choice(types)) for k in range(self.r.randint(1, 3)))
        ret = self.r.choice(types)
        saved = (self.readable, self.thread, self.scopes)
        self.scopes = Scopes()
        self.scopes.names = 1000 * (len(self.funcs) + 1)
        for p, t in params:
            self.scopes.declare(VarInfo(p, t, "param"))
        self.readable, self.thread = [], ()
        b = Block(max(self.prof.depth - 1, 1), func_ret=ret)
        body = self.block(b)
        body.append(Return((self.expr(ret, self.prof.expr_depth),)))
        self.readable, self.thread, self.scopes = saved
        return Func(name, params, ret, tuple(body))
