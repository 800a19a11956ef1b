"""Running a compiled program (oracle.py): threads one after another, each in its own copy of
the kernel-scope variables; a thread that meets an unstable decision or an out-of-profile value
is not compared, and neither is what it could have changed (see Outcome.taint)."""
from __future__ import annotations

import numpy as np

from . import numerics as N
from .dtypes import is_float
from .oracle_exprs import const_value


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



class Runner:
    """The run half of Oracle (which provides p, W, R, _tasks)."""

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
            t = W(a.dtype)
            R.arrays[a.name] = [N.exact(float(v), t) for v in vals] if is_float(a.dtype) else [int(v) for v in vals]
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
