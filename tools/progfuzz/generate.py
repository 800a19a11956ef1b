"""Random programs: `generate(seed, profile, caps)` is a pure function of its arguments.

Forward programs: kernel-scope reduction variables and scalar arguments; one or two parallel
loops over n threads (n not a multiple of 64, so the last block has a tail; sometimes a range
that starts above 0, runs backwards, is 2-d or serialized) whose bodies are random blocks
(gen_stmts.py) reading per-thread inputs, writing per-thread outputs at the thread's row,
updating shared arrays atomically and reducing into kernel-scope variables; serial code between
the loops; a return value. Grad programs (profile `grad`): float arrays with gradients, one
parallel loop with run-time loops, while/break/continue, funcs and gathers, stores and
accumulations into y and a 0-d loss.
"""
from __future__ import annotations

import random
from dataclasses import replace

import numpy as np

from .dtypes import NUMPY, is_float, is_int
from .gen_stmts import Block, StmtGen
from .profiles import profile_for
from .program import (
    Array,
    Assign,
    Bin,
    Const,
    For,
    GradSpec,
    Kernel,
    Load,
    Math,
    NdFor,
    Program,
    Return,
    Scalar,
    Serialize,
    Shape,
    Store,
    Var,
)
from .scope import Scopes, VarInfo

CNT_RANGE = (-3, 11)
REDUCE_INIT = {"add": 0, "max": -1000, "min": 1000, "or": 0, "xor": 0, "and": -1}


def default_caps() -> dict:
    return {"f64": True, "i64": True, "atomic64": True}


def generate(seed: int, profile: str = "all", caps: dict | None = None, extreme: bool = False) -> Program:
    caps = caps or default_caps()
    prof = profile_for(profile, seed, caps, extreme)
    rng = random.Random(f"progfuzz:{seed}:{profile}:{int(extreme)}")
    if prof.grad:
        return _Grad(rng, prof, seed).program()
    return _Forward(rng, prof, seed, caps).program()


class _Builder(StmtGen):
    def __init__(self, rng, prof, seed):
        super().__init__(rng, prof, Scopes(), {}, {})
        self.seed = seed
        self.cnt_range: dict = {}
        self.inputs: dict = {}
        self.array_list: list = []

    def add_array(self, name, dtype, shape, role, grad=False, values=None):
        a = Array(name, dtype, tuple(shape), role, grad)
        self.arrays[name] = a
        self.array_list.append(a)
        self.inputs[name] = values if values is not None else self.values(dtype, shape, role)
        return a

    def values(self, t: str, shape, role: str, lo=None, hi=None) -> np.ndarray:
        r = np.random.default_rng(self.r.getrandbits(32))
        size = int(np.prod(shape)) if shape else 1
        if lo is not None:
            v = r.integers(lo, hi + 1, size)
        elif is_float(t):
            v = r.uniform(-3, 3, size)
            k = r.random(size)
            v[k < 0.15] = np.round(v[k < 0.15])            # exact integers
            v[(k >= 0.15) & (k < 0.25)] = np.round(v[(k >= 0.15) & (k < 0.25)] * 2) / 2
            if self.prof.extreme:
                big = r.random(size) < 0.2
                v[big] = r.choice([1e30, -1e30, 3.4e38, 2147483648.0, 1e-38, -2.5, 0.05, 46341.0, 1e10], big.sum())
        else:
            bits = 32 if t in ("i32", "u32") else 64
            lo_, hi_ = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if t[0] == "i" else (0, (1 << bits) - 1)
            v = np.array([self._int_value(r, lo_, hi_) for _ in range(size)], dtype=object)
        return np.asarray(v).astype(NUMPY[t]).reshape(shape)

    def _int_value(self, r, lo: int, hi: int) -> int:
        k = r.random()
        if k < 0.75:
            return int(min(max(r.integers(-20, 41), lo), hi))
        if k < 0.9:
            return int(min(max(r.integers(-70000, 70000), lo), hi))
        return int(lo + int(r.integers(0, 1 << 62)) % (hi - lo + 1))


class _Forward(_Builder):
    def __init__(self, rng, prof, seed, caps):
        super().__init__(rng, prof, seed)
        self.caps = caps

    def program(self) -> Program:
        r, prof = self.r, self.prof
        n = r.randint(*prof.n)
        if n % 64 == 0:
            n += 1
        nd = r.random() < prof.ndrange
        shape = (r.randint(5, 17), r.randint(9, 23)) if nd else (n,)
        if nd and (shape[0] * shape[1]) % 64 == 0:
            shape = (shape[0], shape[1] + 1)
        self.shape = shape
        ins = sorted(set(prof.types) | {"i32", "f32"})
        for t in ins:
            if r.random() < 0.8 or t in ("i32", "f32"):
                self.add_array(f"x_{t}", t, shape, "in")
        self.add_array("cnt", "i32", shape, "in", values=self.values("i32", shape, "in", *CNT_RANGE))
        self.cnt_range["cnt"] = CNT_RANGE
        scalars = [Scalar("q", "i32", r.randint(-5, 9))]
        if r.random() < 0.5:
            scalars.append(Scalar("h", "f32", r.choice((0.5, -1.25, 2.0, 0.1))))
        for s in scalars:
            self.scopes.declare(VarInfo(s.name, s.dtype, "param"))
        self.make_funcs()
        self.make_accs()
        body = self.kernel_vars()
        ntasks = 1 if nd else r.randint(*prof.tasks)
        for k in range(ntasks):
            body += self.task(k, nd and k == 0)
            if k + 1 < ntasks:
                body += self.serial_code()
        rets = ()
        if r.random() < prof.returns:
            ret_stmt, rets = self.returns()
            body.append(ret_stmt)
        kernel = Kernel(tuple(self.array_list), tuple(scalars), tuple(body), rets)
        return Program(self.seed, prof.name, tuple(self.funcs.values()), kernel, self.inputs, None, prof.extreme)

    def make_funcs(self):
        for k in range(self.r.randint(*self.prof.funcs)):
            name = f"f{k}"
            self.callable = list(self.funcs)
            self.funcs[name] = self.func(name)
        self.callable = list(self.funcs)

    def make_accs(self):
        kinds = [("i32", "add"), ("i32", "max"), ("u32", "xor"), ("f32", "add"), ("i32", "min"), ("u32", "or"),
                 ("f32", "max")]
        if self.caps.get("atomic64"):
            kinds += [("i64", "add"), ("f64", "add")]
        for k in range(self.r.randint(0, 2)):
            t, op = self.r.choice(kinds)
            if t not in self.prof.types and t not in ("i32", "f32"):
                continue
            name = f"acc{k}"
            self.add_array(name, t, (self.r.choice((1, 3, 5, 8)),), "acc")
            self.accs[name] = op
            if op in ("max", "min") and is_int(t):
                self.inputs[name][:] = REDUCE_INIT[op] if t == "i32" else (0 if op == "max" else 1000)

    def kernel_vars(self) -> list:
        out = []
        for k in range(self.r.randint(0, 3)):
            t = self.r.choice(("i32", "f32", "u32"))
            op = self.r.choice(("add", "add", "max", "min") if t == "f32" else ("add", "max", "min", "or", "xor"))
            if t == "u32" and op == "min":
                op = "max"
            name = f"s{k}"
            init = REDUCE_INIT[op]
            if t == "u32":
                init = 0 if op != "min" else 1000
            value = Const(float(init) if t == "f32" else init)
            out.append(Assign(name, value, None if t in ("i32", "f32") else t))
            self.scopes.declare(VarInfo(name, t, "kernel"))
            self.reducible[name] = op
        return out

    def thread_loop(self, k: int, nd: bool):
        r = self.r
        if nd:
            a, b = self.shape
            tv = ("i", "j")
            self.scopes.declare(VarInfo("i", "i32", "loop", 0, a - 1))
            self.scopes.declare(VarInfo("j", "i32", "loop", 0, b - 1))
            return tv, lambda body: NdFor(tv, (Const(a), Const(b)), body)
        n = self.shape[0]
        name = "i"
        kind = r.random()
        start = 0
        if kind < 0.25:
            args = (Shape("x_i32", 0),)
        elif kind < 0.4:
            start = r.randint(1, 9)
            args = (Const(start), Const(n))
        elif kind < 0.5:
            args = (Const(n - 1), Const(-1), Const(-1))
        else:
            args = (Const(n),)
        self.scopes.declare(VarInfo(name, "i32", "loop", start, n - 1))
        return (name,), lambda body: For(name, args, body)

    def task(self, k: int, nd: bool) -> list:
        r, prof = self.r, self.prof
        for v in self.scopes.visible():    # kernel-scope variables: read-only inside the loop
            if v.kind == "local":
                v.kind = "kernel"
        self.scopes.push()
        tv, make = self.thread_loop(k, nd)
        self.thread = tv
        outs = []
        for t in sorted(set(prof.types)):
            if r.random() < 0.5 or t == "i32":
                a = self.add_array(f"o{k}_{t}", t, self.shape, "out")
                outs.append(a.name)
        self.stores = outs
        self.rows = []
        if not nd and r.random() < 0.6 * (prof.stmts.get("row", 0) > 0):
            t = r.choice(("i32", "f32"))
            self.rows = [self.add_array(f"r{k}_{t}", t, (self.shape[0], r.randint(3, 9)), "out").name]
        saved = {}
        for name in self.reducible:
            v = self.scopes.get(name)
            saved[name] = v.kind
            v.kind = "reduced"
        serial = r.random() < prof.serialize and not nd
        all_accs = self.accs
        if k > 0:        # later loops read the shared arrays; updating them too would race
            self.accs = {}
        self.readable = [a.name for a in self.array_list if a.role == "in" or (a.role in ("acc",) and k > 0)
                         or (a.role == "out" and not a.name.startswith(f"o{k}_") and not a.name.startswith(f"r{k}_"))]
        if serial:
            self.thread = ()
        body = []
        self.scopes.push()
        for t in sorted({self.arrays[n].dtype for n in self.readable if self.arrays[n].role == "in"}):
            if r.random() < 0.7:
                name = self.scopes.fresh("v")
                body.append(Assign(name, self.load(t)))
                self.scopes.declare(VarInfo(name, t, "local"))
        if serial:
            self.thread = tv
            self.stores, self.rows = outs, []
            accs, red = self.accs, self.reducible
            self.accs, self.reducible = {}, {}
        blk = Block(prof.depth, 0, 1, parallel=True)
        body += self.block(blk)
        for name in outs + self.rows:     # every output gets a value at the end
            if r.random() < 0.8:
                body += self.s_row(blk) if name in self.rows else [
                    Store(name, tuple(Var(v) for v in tv), self.expr(self.arrays[name].dtype, prof.expr_depth))]
        if not serial:
            for name in self.reducible:
                if r.random() < 0.5:
                    body += self.s_reduce_var(name)
        else:
            self.accs, self.reducible = accs, red
        self.scopes.pop()
        self.scopes.pop()
        for name, kind in saved.items():
            self.scopes.get(name).kind = kind
        self.accs = all_accs
        self.thread, self.stores, self.rows = (), [], []
        loop = make(tuple(body))
        return [Serialize(), loop] if serial else [loop]

    def s_reduce_var(self, name: str) -> list:
        saved = dict(self.reducible)
        self.reducible = {name: saved[name]}
        out = self.s_reduce(None)
        self.reducible = saved
        return out

    def serial_code(self) -> list:
        """Statements between two parallel loops. Kernel-scope variables that later loops read
        are 32-bit (docs: they live in 4-byte words)."""
        self.readable = [a.name for a in self.array_list]
        self.thread = ()
        saved = self.prof
        self.prof = replace(saved, types=tuple(t for t in saved.types if t in ("i32", "u32", "f32")))
        out = []
        for _ in range(self.r.randint(0, 2)):
            out += self.statement(Block(2, 0, 1, parallel=False, serial_kernel=True, top=True))
        self.prof = saved
        return out

    def returns(self):
        self.readable = [a.name for a in self.array_list]
        self.thread = ()
        k = self.r.randint(1, 2)
        vals, types = [], []
        cand = [v for v in self.scopes.visible() if v.type in ("i32", "f32", "u32", "f64", "i64")]
        for _ in range(k):
            if cand and self.r.random() < 0.7:
                v = self.r.choice(cand)
                vals.append(Var(v.name))
                types.append(v.type)
            else:
                t = self.r.choice(("i32", "f32"))
                vals.append(self.expr(t, 2))
                types.append(t)
        return Return(tuple(vals)), tuple(types)


class _Grad(_Builder):
    """A differentiable program: y[i] (and loss[None]) from x, z through loops and branches."""

    def program(self) -> Program:
        r, prof = self.r, self.prof
        ft = prof.types[0]
        n = r.randint(*prof.n)
        if n % 64 == 0:
            n += 1
        n2 = r.choice((n, n + 3, 7))
        x = self.add_array("x", ft, (n,), "in", grad=True)
        z = self.add_array("z", ft, (n2,), "in", grad=True)
        self.add_array("cnt", "i32", (n,), "in", values=self.values("i32", (n,), "in", 0, 5))
        self.cnt_range["cnt"] = (0, 5)
        self.add_array("y", ft, (n,), "out", grad=True)
        self.add_array("loss", ft, (), "loss", grad=True, values=np.zeros((), NUMPY[ft]))
        self.make_funcs_grad()
        self.scopes.push()
        self.scopes.declare(VarInfo("i", "i32", "loop", 0, n - 1))
        self.thread = ("i",)
        self.readable = ["x", "z", "cnt"]
        self.stores = []
        self.gather_arrays = [x.name, z.name]
        body = [Assign("a", Load("x", (Var("i"),))), Assign("b", self.load(ft)),
                Assign("k", Load("cnt", (Var("i"),)))]
        self.scopes.declare(VarInfo("a", ft, "local"))
        self.scopes.declare(VarInfo("b", ft, "local"))
        self.scopes.declare(VarInfo("k", "i32", "local", 0, 5))
        body += self.block(Block(prof.depth, 0, 1, parallel=True))
        final = self.value(ft, Block(0, 0, 1, parallel=True), None)
        body.append(Store("y", (Var("i"),), final, "+" if r.random() < 0.4 else None))
        if r.random() < 0.8:
            body.append(Store("loss", (), Bin("*", self.expr(ft, 2), Const(0.5)), "+"))
        self.scopes.pop()
        kernel = Kernel(tuple(self.array_list), (), (For("i", (Const(n),), tuple(body)),))
        if r.random() < 0.5:
            g = GradSpec("tape", "loss")
        else:
            w = np.random.default_rng(self.r.getrandbits(32)).uniform(0.5, 1.5, n).astype(NUMPY[ft])
            g = GradSpec("grad", "loss", {"y": w, "loss": np.ones((), NUMPY[ft])})
        return Program(self.seed, prof.name, tuple(self.funcs.values()), kernel, self.inputs, g, prof.extreme)

    def make_funcs_grad(self):
        for k in range(self.r.randint(*self.prof.funcs)):
            name = f"f{k}"
            self.callable = list(self.funcs)
            self.funcs[name] = self.func(name)
        self.callable = list(self.funcs)

    def s_gather(self, b: Block) -> list:
        fl = [v for v in self.assignable(b) if is_float(v.type)]
        loops = [v for v in self.scopes.visible() if v.kind in ("loop", "counter") and v.name != "i"]
        if not fl or not loops:
            return self.s_assign(b)
        v, j = self.r.choice(fl), self.r.choice(loops)
        name = self.r.choice(self.gather_arrays)
        m = self.arrays[name].shape[0]
        idx = Bin("%", Bin("+", Var("i"), Var(j.name)), Const(m))
        return [Assign(v.name, Bin("+", Bin("*", Var(v.name), Const(0.6)),
                                   Bin("*", Load(name, (idx,)), Const(0.3))))]

    def s_accumulate(self, b: Block) -> list:
        ft = self.arrays["y"].dtype
        return [Store("y", (Var("i"),), Bin("*", Math("sin", self.expr(ft, 2)), Const(0.25)), "+")]
