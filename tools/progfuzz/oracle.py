"""The reference evaluator: runs a Program with Python's semantics on the fixed-width types
(docs/language.md, SEMANTICS.md), independently of gfxrt's compiler and IR interpreter.

Kernel structure, as the docs define it: statements at kernel scope run serially; each top-level
`for` is a parallel loop whose iterations are threads (evaluated one after another here: the
generator only writes programs whose result does not depend on the threads' order, up to the
rounding of float atomics, which the error bounds cover). Variables are block scoped.

A thread whose evaluation meets an unstable decision or an out-of-profile value
(numerics.py) is not compared: its output rows are marked tainted, and so is every shared result
(atomics, reductions, return values, later tasks) it could have changed.
"""
from __future__ import annotations

import math

from . import numerics as N
from .dtypes import is_float, wrap
from .oracle_exprs import ExprCompiler, convert
from .oracle_run import Outcome, Runner, _Run
from .program import (
    Assign,
    Atomic,
    AugAssign,
    Bin,
    Break,
    Const,
    Continue,
    For,
    If,
    Load,
    NdFor,
    Program,
    Return,
    Serialize,
    Store,
    Var,
    While,
)
from .typing import Ctx, InvalidProgram, bin_types, expr_type

BREAK, CONTINUE, RETURN = 1, 2, 3
LOOP_BUDGET = 20000          # iterations per thread: a generated loop never gets near it


def _count_pass(R) -> None:
    """One more loop pass of this thread; a program past LOOP_BUDGET is invalid."""
    R.steps += 1
    if R.steps > LOOP_BUDGET:
        raise InvalidProgram("loop budget exceeded")


REDUCE_OPS = ("+", "-", "|", "&", "^")


class Oracle(Runner):
    def __init__(self, program: Program, wide: bool = False):
        self.p = program
        self.W = (lambda t: "f64" if t == "f32" else t) if wide else (lambda t: t)
        self.arrays = {a.name: a for a in program.kernel.arrays}
        self.shapes = {a.name: a.shape for a in program.kernel.arrays}
        self.funcs = {f.name: f for f in program.funcs}
        self.R = _Run()
        self._func_code = {}
        for f in program.funcs:
            self._func_code[f.name] = self._compile_func(f)
        self._tasks = self._compile_kernel()

    # -- runtime helpers ----------------------------------------------------------------------------
    def _flat(self, name: str, idx: tuple) -> int:
        shape = self.shapes[name]
        flat = 0
        for k, n in zip(idx, shape):
            if not 0 <= k < n:
                raise InvalidProgram(f"index {idx} out of bounds of {name}{shape}")
            flat = flat * n + k
        return flat

    def _load(self, name: str, idx: tuple):
        flat = self._flat(name, idx) if idx else 0
        R = self.R
        if R.reads is not None:
            R.reads.add((name, flat))
        if flat in R.taint[name]:      # written by a thread that was not compared: unknown
            raise N.Unstable(f"a read of {name}[{flat}], which an unstable thread wrote")
        return R.arrays[name][flat]

    def _call(self, name: str, args: list):
        f = self.funcs[name]
        env = {p: a for (p, _), a in zip(f.params, args)}
        sig = self._func_code[name](env)
        if sig != RETURN:
            raise InvalidProgram(f"func {name} ended without a return")
        return env["@ret"]

    # -- compilation --------------------------------------------------------------------------------
    def _ctx(self, scopes: list) -> Ctx:
        variables = {}
        for s in scopes:
            variables.update(s)
        return Ctx(self.arrays, self.funcs, variables)

    def _ec(self, scopes):
        return ExprCompiler(self._ctx(scopes), self.W, self._load, self._call, self.shapes)

    def _compile_func(self, f):
        scopes = [dict(f.params)]
        body = self._block(f.body, scopes, dict(func=f, loops=0, parallel=False, kernel_vars=set(),
                                                 reduced=set(), loop_vars=set(), params=set()))
        return body

    def _compile_kernel(self):
        k = self.p.kernel
        kscope = {s.name: s.dtype for s in k.scalars}
        scopes = [kscope]
        info = dict(func=None, loops=0, parallel=False, kernel_vars=set(), reduced=set(), loop_vars=set(),
                    params={s.name for s in k.scalars})
        tasks = []
        serialize = False
        stmts = list(k.body)
        for n, s in enumerate(stmts):
            if isinstance(s, Serialize):
                serialize = True
                continue
            if isinstance(s, (For, NdFor)):
                tasks.append(("serial_loop" if serialize else "parallel", s, self._task(s, scopes, info, serialize)))
                serialize = False
                continue
            if serialize:
                raise InvalidProgram("loop_config(serialize=True) not followed by a loop")
            if isinstance(s, Return):
                if n != len(stmts) - 1:
                    raise InvalidProgram("a kernel return that is not the last statement")
                ec = self._ec(scopes)
                rets = [self.W(t) for t in k.ret]
                if len(rets) != len(s.values):
                    raise InvalidProgram("return arity")
                fs = [ec.as_type(v, t) for v, t in zip(s.values, rets)]
                tasks.append(("return", s, fs))
                continue
            code = self._stmt(s, scopes, info, kernel_scope=True)
            tasks.append(("serial", s, code))
        if k.ret and not (tasks and tasks[-1][0] == "return"):
            raise InvalidProgram("a kernel with a return type must end with return")
        return tasks

    def _task(self, s, scopes, info, serialize: bool):
        if isinstance(s, NdFor):
            tvars = s.vars
            ec = self._ec(scopes)
            extents = [ec.as_type(x, "i32") for x in s.extents]
            args = None
        else:
            tvars = (s.var,)
            ec = self._ec(scopes)
            args = [ec.as_type(x, "i32") for x in s.args]
            extents = None
        inner = dict(info, parallel=not serialize, loops=1 if serialize else 0,
                     loop_vars=info["loop_vars"] | set(tvars), reduced=set(),
                     thread_vars=None if serialize else tuple(tvars))
        body_scope = {v: "i32" for v in tvars}
        body = self._block(s.body, scopes + [body_scope], inner)
        written = self._written(s.body)
        if not serialize:
            self._check_races(s, written, inner)
        has_shared = any(self.arrays[a].role in ("acc", "loss") for a in written) or bool(inner["reduced"])
        return dict(vars=tvars, args=args, extents=extents, body=body, shared=has_shared,
                    serialize=serialize)

    def _check_races(self, loop, written: set, info):
        """A parallel loop may read an array it writes only at the thread's own row (an out
        array); reading an atomically updated one, or another thread's row, depends on the
        order threads run in."""
        def walk(n):
            if isinstance(n, Atomic) and isinstance(n.target, Load):   # the target is no read
                yield from (x for k in n.target.idx for x in walk(k))
                yield from walk(n.value)
                return
            yield n
            for _, _, c in n.children():
                yield from walk(c)
        for n in walk(loop):
            if isinstance(n, Load) and n.arr in written:
                role = self.arrays[n.arr].role
                if role != "out" or not self._thread_indexed(n.idx, info):
                    raise InvalidProgram(f"a parallel loop reads {n.arr}, which it also writes (a race)")

    def _written(self, body) -> set:
        """Names of the arrays a block stores into or updates."""
        out = set()
        for s in body:
            if isinstance(s, Store):
                out.add(s.arr)
            elif isinstance(s, Atomic) and isinstance(s.target, Load):
                out.add(s.target.arr)
            out |= self._written(getattr(s, "body", ())) | self._written(getattr(s, "orelse", ()))
        return out

    def _block(self, stmts, scopes, info):
        scope = {}
        codes = [self._stmt(s, scopes + [scope], info) for s in stmts]

        def run(env):
            for c in codes:
                sig = c(env)
                if sig:
                    return sig
            return None
        return run

    def _lookup(self, name, scopes):
        for s in reversed(scopes):
            if name in s:
                return s[name]
        return None

    def _stmt(self, s, scopes, info, kernel_scope: bool = False):
        W = self.W
        if isinstance(s, Assign):
            return self._assign(s, scopes, info, kernel_scope)
        if isinstance(s, AugAssign):
            return self._augassign(s, scopes, info)
        if isinstance(s, Store):
            return self._store(s, scopes, info)
        if isinstance(s, Atomic):
            return self._atomic(s, scopes, info)
        if isinstance(s, If):
            ec = self._ec(scopes)
            cond = ec.as_type(s.cond, "bool")
            then = self._block(s.body, scopes, info)
            other = self._block(s.orelse, scopes, info)
            return lambda env: then(env) if cond(env) else other(env)
        if isinstance(s, For):
            return self._for(s, scopes, info)
        if isinstance(s, While):
            ec = self._ec(scopes)
            cond = ec.as_type(s.cond, "bool")
            body = self._block(s.body, scopes, dict(info, loops=info["loops"] + 1))
            R = self.R

            def run(env):
                while cond(env):
                    _count_pass(R)
                    sig = body(env)
                    if sig == BREAK:
                        break
                    if sig == RETURN:
                        return RETURN
                return None
            return run
        if isinstance(s, (Break, Continue)):
            if info["loops"] == 0 and not (isinstance(s, Continue) and info["parallel"]):
                raise InvalidProgram("break/continue outside a loop")
            sig = BREAK if isinstance(s, Break) else CONTINUE
            return lambda env: sig
        if isinstance(s, Return):
            f = info["func"]
            if f is None:
                raise InvalidProgram("a return outside a func")
            v = self._ec(scopes).as_type(s.values[0], W(f.ret))

            def ret(env):
                env["@ret"] = v(env)
                return RETURN
            return ret
        raise InvalidProgram(f"statement {type(s).__name__} not allowed here")

    def _assign(self, s: Assign, scopes, info, kernel_scope):
        name = s.name
        t = self._lookup(name, scopes)
        if t is not None and s.ann is not None:
            raise InvalidProgram(f"{name} declared twice")
        if t is not None and (name in info["loop_vars"] or name in info["params"]):
            raise InvalidProgram(f"assignment to the loop variable or argument {name}")
        if t is not None and info["parallel"] and name in info["kernel_vars"]:
            raise InvalidProgram(f"assignment to the kernel-scope variable {name} in a parallel loop")
        ec = self._ec(scopes)
        if t is None:
            t = s.ann or expr_type(s.value, ec.ctx)
            scopes[-1][name] = t
            if kernel_scope:
                info["kernel_vars"].add(name)
        if name in info["reduced"]:
            raise InvalidProgram(f"{name} is reduced in this loop")
        v = ec.as_type(s.value, self.W(t))

        def run(env):
            env[name] = v(env)
        return run

    def _augassign(self, s: AugAssign, scopes, info):
        name = s.name
        t = self._lookup(name, scopes)
        if t is None:
            raise InvalidProgram(f"{name} is not defined")
        if name in info["loop_vars"] or name in info["params"]:
            raise InvalidProgram(f"update of the loop variable or argument {name}")
        ec = self._ec(scopes)
        W = self.W
        if info["parallel"] and name in info["kernel_vars"]:
            if s.op not in REDUCE_OPS:
                raise InvalidProgram(f"{s.op}= is no reduction")
            if expr_type(s.value, ec.ctx) != t and not isinstance(s.value, Const):
                raise InvalidProgram("a reduction of a value of another type")
            if t in ("f64", "i64", "u64"):
                raise InvalidProgram("64-bit kernel-scope reductions are not supported (docs)")
            info["reduced"].add(name)
            kind = {"+": "add", "-": "sub", "|": "or", "&": "and", "^": "xor"}[s.op]
            return self._var_atomic(kind, name, W(t), ec.as_type(s.value, W(t)))
        if name in info["reduced"]:
            raise InvalidProgram(f"{name} is reduced in this loop")
        e = Bin(s.op, Var(name), s.value)
        _, _, rt = bin_types(e, ec.ctx)
        f = ec.as_type(e, W(rt))
        src = W(rt)
        dst = W(t)
        return lambda env: env.__setitem__(name, convert(f(env), src, dst))

    def _index_codes(self, ec, idx):
        return [ec.as_type(k, self.W(expr_type(k, ec.ctx))) for k in idx]

    def _store(self, s: Store, scopes, info):
        a = self.arrays.get(s.arr)
        if a is None:
            raise InvalidProgram(f"unknown array {s.arr}")
        ec = self._ec(scopes)
        idx = self._index_codes(ec, s.idx)
        t = self.W(a.dtype)
        R = self.R
        if s.op is None:
            if a.role != "out":
                raise InvalidProgram(f"a plain store into {a.role} array {s.arr}")
            if info["parallel"] and not self._thread_indexed(s.idx, info):
                raise InvalidProgram(f"a store into {s.arr} not at the thread's row")
            v = ec.as_type(s.value, t)
            name = s.arr

            def run(env):
                flat = self._flat(name, tuple(k(env) for k in idx))
                R.arrays[name][flat] = v(env)
                if R.all_tainted:
                    R.taint[name].add(flat)
            return run
        kind = {"+": "add", "-": "sub", "|": "or", "&": "and", "^": "xor"}.get(s.op)
        if kind is None:
            raise InvalidProgram(f"{s.op}= on an array")
        if expr_type(s.value, ec.ctx) != a.dtype and not isinstance(s.value, Const):
            raise InvalidProgram("an atomic update with a value of another type")
        if a.role == "out" and info["parallel"] and not self._thread_indexed(s.idx, info):
            raise InvalidProgram("an update of an out array not at the thread's row")
        return self._array_atomic(kind, s.arr, idx, ec.as_type(s.value, t), t)

    def _thread_indexed(self, idx, info) -> bool:
        tv = info.get("thread_vars")
        if tv is None:
            return True
        return tuple(x.name if isinstance(x, Var) else None for x in idx[:len(tv)]) == tv

    def _atomic(self, s: Atomic, scopes, info):
        ec = self._ec(scopes)
        tgt = s.target
        if isinstance(tgt, Var):
            t = self._lookup(tgt.name, scopes)
            if t is None or tgt.name not in info["kernel_vars"] or not info["parallel"]:
                raise InvalidProgram("an atomic on a variable that is not kernel-scope in a parallel loop")
            if expr_type(s.value, ec.ctx) != t and not isinstance(s.value, Const):
                raise InvalidProgram("an atomic with a value of another type")
            info["reduced"].add(tgt.name)
            return self._var_atomic(s.kind, tgt.name, self.W(t), ec.as_type(s.value, self.W(t)))
        a = self.arrays[tgt.arr]
        if a.role not in ("acc", "loss"):
            raise InvalidProgram("an atomic on a non-acc array")
        if expr_type(s.value, ec.ctx) != a.dtype and not isinstance(s.value, Const):
            raise InvalidProgram("an atomic with a value of another type")
        t = self.W(a.dtype)
        return self._array_atomic(s.kind, tgt.arr, self._index_codes(ec, tgt.idx), ec.as_type(s.value, t), t)

    def _combine(self, kind, old, v, t, stats_key, stats):
        if is_float(t):
            if kind in ("add", "sub"):
                if kind == "sub":
                    v = N.fneg(v, t)
                if stats is not None and math.isfinite(v[0]) and math.isfinite(old[0]):
                    st = stats.setdefault(stats_key, [0, abs(old[0])])
                    st[0] += 1
                    st[1] += abs(v[0])
                return N.fadd(old, v, t)
            if kind in ("min", "max"):
                return N.fminmax(kind, old, v, t)
            raise InvalidProgram(f"atomic {kind} on a float")
        if kind == "add":
            return wrap(old + v, t)
        if kind == "sub":
            return wrap(old - v, t)
        if kind == "min":
            return min(old, v)
        if kind == "max":
            return max(old, v)
        if kind == "and":
            return old & v
        if kind == "or":
            return old | v
        if kind == "xor":
            return old ^ v
        raise InvalidProgram(f"atomic {kind}")

    def _array_atomic(self, kind, name, idx, v, t):
        R = self.R
        loss = self.arrays[name].role == "loss"
        shared = self.arrays[name].role in ("acc", "loss")

        def run(env):
            flat = self._flat(name, tuple(k(env) for k in idx)) if idx else 0
            val = v(env)
            if loss:
                R.contrib += val[0] if kind == "add" else -val[0]
            arr = R.arrays[name]   # (a thread's own out row is updated in order: no reordering)
            arr[flat] = self._combine(kind, arr[flat], val, t, (name, flat), R.acc_stats if shared else None)
            if R.all_tainted:
                R.taint[name].add(flat)
        return run

    def _var_atomic(self, kind, name, t, v):
        R = self.R

        def run(env):
            kenv = R.kenv
            kenv[name] = self._combine(kind, kenv[name], v(env), t, name, R.red_stats)
        return run

    def _for(self, s: For, scopes, info):
        ec = self._ec(scopes)
        args = [ec.as_type(x, "i32") for x in s.args]
        if s.var in info["params"] or (self._lookup(s.var, scopes) not in (None, "i32")):
            raise InvalidProgram(f"loop variable {s.var} clashes")
        if s.var in info["loop_vars"]:
            raise InvalidProgram(f"loop variable {s.var} reused in a nested loop")
        inner = dict(info, loops=info["loops"] + 1, loop_vars=info["loop_vars"] | {s.var})
        body = self._block(s.body, scopes + [{s.var: "i32"}], inner)
        var = s.var
        R = self.R

        def run(env):
            bounds = [a(env) for a in args]
            if len(bounds) == 3 and bounds[2] == 0:
                raise InvalidProgram("range() with a step of 0 (Python raises ValueError)")
            r = range(*bounds)
            for j in r:
                _count_pass(R)
                env[var] = j
                sig = body(env)
                if sig == BREAK:
                    break
                if sig == RETURN:
                    return RETURN
            return None
        return run


__all__ = ["Oracle", "Outcome"]
