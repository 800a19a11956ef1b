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

import numpy as np

from . import numerics as N
from .dtypes import is_float, wrap
from .oracle_exprs import ExprCompiler, const_value, convert
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
REDUCE_OPS = ("+", "-", "|", "&", "^")


class Outcome:
    """What a run computed: arrays (name -> flat list of values), taint (name -> set of flat
    indices not to compare), returns (values, or None when tainted), and counts."""

    def __init__(self):
        self.arrays, self.taint, self.returns = {}, {}, None
        self.unstable = self.out_of_profile = 0
        self.reasons: list[str] = []
        self.contrib: dict = {}      # grad: thread -> float64 contribution to the loss
        self.reads: dict = {}        # grad: thread -> set of (array, flat index) read
        self.traces: dict = {}       # grad: thread -> decisions taken

    @property
    def skipped(self) -> bool:
        return bool(self.unstable or self.out_of_profile)


class _Run:
    """Mutable state of one evaluation."""

    def __init__(self):
        self.arrays, self.strides = {}, {}
        self.taint: dict[str, set] = {}
        self.all_tainted = False
        self.steps = 0
        self.acc_stats: dict = {}     # (array, flat) -> [count, sum |term|] of float atomic adds
        self.red_stats: dict = {}     # kernel variable -> [count, sum |term|]
        self.reads: set | None = None
        self.thread = None
        self.contrib = 0.0


class Oracle:
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
        has_shared = any(self.arrays[a].role in ("acc", "loss") for a in self._written(s.body)) \
            or bool(inner["reduced"])
        return dict(vars=tvars, args=args, extents=extents, body=body, shared=has_shared,
                    serialize=serialize)

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
                    R.steps += 1
                    if R.steps > LOOP_BUDGET:
                        raise InvalidProgram("loop budget exceeded")
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

        def run(env):
            flat = self._flat(name, tuple(k(env) for k in idx)) if idx else 0
            val = v(env)
            if loss:
                R.contrib += val[0] if kind == "add" else -val[0]
            arr = R.arrays[name]
            arr[flat] = self._combine(kind, arr[flat], val, t, (name, flat), R.acc_stats)
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
                R.steps += 1
                if R.steps > LOOP_BUDGET:
                    raise InvalidProgram("loop budget exceeded")
                env[var] = j
                sig = body(env)
                if sig == BREAK:
                    break
                if sig == RETURN:
                    return RETURN
            return None
        return run

    # -- running ------------------------------------------------------------------------------------
    def _thread_rows(self, tvars_values: tuple) -> list:
        """(array, flat index) of every out element a thread owns."""
        out = []
        for a in self.p.kernel.arrays:
            if a.role != "out":
                continue
            k = len(tvars_values)
            if any(not 0 <= v < n for v, n in zip(tvars_values, a.shape[:k])):
                continue
            lead = 0
            for v, n in zip(tvars_values, a.shape[:k]):
                lead = lead * n + v
            rest = 1
            for n in a.shape[k:]:
                rest *= n
            out += [(a.name, lead * rest + j) for j in range(rest)]
        return out

    def _taint_shared(self, out: Outcome):
        R = self.R
        R.all_tainted = True
        for a in self.p.kernel.arrays:
            if a.role in ("acc", "loss"):
                R.taint[a.name].update(range(len(R.arrays[a.name])))

    def _settle(self, stats: dict, store, t_of):
        """Add the reordering error of float atomic sums (any order of n additions differs from
        the oracle's by at most about 2 n u sum|terms|)."""
        for key, (count, sumabs) in stats.items():
            t = t_of(key)
            v, e = store[key]
            store[key] = (v, e + 2 * count * N.U[t] * sumabs + count * N.TINY[t])
        stats.clear()

    def run(self, inputs: dict, threads: set | None = None, grad: bool = False) -> Outcome:
        """Evaluate with these initial array contents (numpy arrays, not modified). threads:
        only these thread indices of the parallel loops (the gradient check's reruns); grad:
        record each thread's reads, decisions and contribution to the loss."""
        R = self.R
        R.__init__()
        out = Outcome()
        W = self.W
        for a in self.p.kernel.arrays:
            vals = np.asarray(inputs[a.name]).ravel().tolist()
            R.arrays[a.name] = [(float(v), 0.0) for v in vals] if is_float(a.dtype) else [int(v) for v in vals]
            R.taint[a.name] = set()
        kenv = {}
        for sc in self.p.kernel.scalars:
            kenv[sc.name] = const_value(sc.value, W(sc.dtype))
        R.kenv = kenv
        try:
            for kind, _, code in self._tasks:
                if kind == "serial":
                    code(kenv)
                    continue
                if kind == "return":
                    out.returns = [f(kenv) for f in code]
                    continue
                self._run_task(code, kenv, out, threads, grad)
        except (N.Unstable, N.OutOfProfile) as err:
            self._count(out, err)
            R.all_tainted = True
            for a in self.p.kernel.arrays:
                R.taint[a.name].update(range(len(R.arrays[a.name])))
            out.returns = None
        finally:
            N.MODE.trace = None
        if R.all_tainted:
            out.returns = None
        out.arrays, out.taint = R.arrays, R.taint
        return out

    def _count(self, out: Outcome, err: Exception):
        if isinstance(err, N.Unstable):
            out.unstable += 1
        else:
            out.out_of_profile += 1
        if len(out.reasons) < 5:
            out.reasons.append(f"{type(err).__name__}: {err}")

    def _run_task(self, task, kenv, out: Outcome, only, grad):
        R = self.R
        if task["extents"] is not None:
            ext = [f(kenv) for f in task["extents"]]
            ids = [(i, j) for i in range(ext[0]) for j in range(ext[1])]
        else:
            ids = [(i,) for i in range(*[f(kenv) for f in task["args"]])]
        tvars, body = task["vars"], task["body"]
        if task["serialize"]:
            for tid in ids:
                for v, x in zip(tvars, tid):
                    kenv[v] = x
                if body(kenv) == 1:     # BREAK
                    break
            return
        for tid in ids:
            if only is not None and tid[0] not in only:
                continue
            env = dict(kenv)
            for v, x in zip(tvars, tid):
                env[v] = x
            R.steps = 0
            if grad:
                R.reads, R.contrib = set(), 0.0
                N.MODE.trace = []
            try:
                body(env)
            except (N.Unstable, N.OutOfProfile) as err:
                self._count(out, err)
                for name, flat in self._thread_rows(tid):
                    R.taint[name].add(flat)
                if task["shared"]:
                    self._taint_shared(out)
            if grad:
                out.reads[tid[0]] = R.reads
                out.contrib[tid[0]] = R.contrib
                out.traces[tid[0]] = N.MODE.trace
                R.reads = None
                N.MODE.trace = None
        types = {a.name: self.W(a.dtype) for a in self.p.kernel.arrays}
        acc_store = _FlatStore(R.arrays)
        self._settle(R.acc_stats, acc_store, lambda key: types[key[0]])
        kinds = {}
        for name in list(R.red_stats):
            v = kenv[name]
            kinds[name] = "f32" if isinstance(v, tuple) and N.rnd(v[0], "f32") == v[0] else "f64"
        self._settle(R.red_stats, kenv, lambda key: kinds[key])


class _FlatStore:
    """(array, flat) -> value view of the run's arrays."""

    def __init__(self, arrays):
        self.arrays = arrays

    def __getitem__(self, key):
        return self.arrays[key[0]][key[1]]

    def __setitem__(self, key, v):
        self.arrays[key[0]][key[1]] = v
