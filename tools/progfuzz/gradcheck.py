"""Gradients of grad-profile programs against central differences of the oracle, in float64.

The loss is L = sum_i w_i y_i + loss (kernel.grad with seeds w and 1) or L = loss (gr.Tape).
Threads do not interact (each writes its own y[i] and adds into loss), so L is a sum of
per-thread terms and the derivative by one input element only needs the threads that read it:
those are re-run with the element nudged by +-h. A coordinate whose perturbed runs decide any
float comparison, min/max, abs, floor differently from the unperturbed run sits on a kink or
discontinuity, and is skipped (counted as unstable), as is one where two step sizes disagree.
"""
from __future__ import annotations

import random

import numpy as np

from . import numerics as N
from .check import Comparison, Mismatch
from .oracle import Oracle

MAX_COORDS = 16        # coordinates checked per array (a deterministic sample)


class _Loss:
    """L restricted to some threads, from the wide oracle."""

    def __init__(self, program):
        self.p = program
        self.oracle = Oracle(program, wide=True)
        g = program.grad
        n = program.array("y").shape[0]
        if g.mode == "grad":
            self.w = np.asarray(g.seeds.get("y", np.zeros(n)), np.float64)
        else:
            self.w = np.zeros(n)

    def run(self, inputs, threads=None):
        N.MODE.extreme = False
        return self.oracle.run(inputs, threads=threads, grad=True)

    def parts(self, out, threads) -> list:
        """The terms of L that these threads make (kept apart: a difference of two runs is
        taken term by term, so that a large unrelated term does not swamp it)."""
        y = out.arrays["y"]
        return [x for t in sorted(threads) for x in (out.contrib.get(t, 0.0), self.w[t] * y[t][0])]


def _wide_inputs(program) -> dict:
    out = {}
    for a in program.kernel.arrays:
        v = np.asarray(program.inputs[a.name])
        out[a.name] = v.astype(np.float64) if a.dtype in ("f32", "f64") else v.copy()
    return out


def _tol(ft: str):
    return (1e-6, 1e-8) if ft == "f64" else (3e-3, 3e-4)


def check_gradients(program, device_grads: dict) -> Comparison:
    c = Comparison()
    L = _Loss(program)
    base_inputs = _wide_inputs(program)
    base = L.run(base_inputs)
    # a thread that met an unstable decision stopped early: what else it would have read is
    # unknown, so only the coordinates that belong to other threads' own rows are checked
    tainted = _tainted_threads(base)
    rtol, atol = _tol(program.float_type)
    rng = random.Random(program.seed)
    for a in program.kernel.arrays:
        if not a.needs_grad:
            continue
        got = np.asarray(device_grads[a.name], np.float64).ravel()
        size = got.size
        coords = list(range(size))
        if size > MAX_COORDS:
            coords = sorted(rng.sample(coords, MAX_COORDS))
        for k in coords:
            if a.role == "loss":
                want = 1.0
            else:
                if a.role == "out":
                    deps = {k}
                else:
                    deps = {t for t, reads in base.reads.items() if (a.name, k) in reads}
                if deps & tainted or (tainted and a.role != "out"):
                    c.skipped += 1
                    continue
                want = _derivative(L, base, base_inputs, a.name, k, deps, lambda e: atol + rtol * abs(e))
                if want is None:
                    c.skipped += 1
                    continue
            c.compared += 1
            g = got[k]
            if not abs(g - want) <= atol + rtol * abs(want) or np.isnan(g):
                idx = "[None]" if not a.shape else f"[{k}]"
                c.add(Mismatch(f"{a.name}.grad{idx}", (want, atol + rtol * abs(want)), float(g)), 8)
    return c


def _tainted_threads(out) -> set:
    y = out.taint.get("y", set())
    return set(y)


def _derivative(L: _Loss, base, inputs, name: str, k: int, deps: set, tol):
    """Central differences of L by inputs[name].flat[k] at steps h and h/2, extrapolated
    (Richardson: error O(h^4)); None when unstable: a decision changed within +-h, or the two
    steps disagree by more than the tolerance `tol(estimate)` the comparison will use."""
    if not deps:
        return 0.0
    flat = inputs[name].reshape(-1)
    x0 = float(flat[k])
    estimates, noise = [], []
    for h in (1e-4 * max(1.0, abs(x0)), 0.5e-4 * max(1.0, abs(x0))):
        vals = []
        for s in (1, -1):
            flat[k] = x0 + s * h
            try:
                out = L.run(inputs, threads=deps)
            finally:
                flat[k] = x0
            if out.skipped or any(out.traces.get(t) != base.traces.get(t) for t in deps):
                return None
            vals.append(L.parts(out, deps))
        plus, minus = vals
        estimates.append(sum(p - m for p, m in zip(plus, minus)) / (2 * h))
        noise.append(4 * 2.0 ** -52 * sum(abs(p) + abs(m) for p, m in zip(plus, minus)) / (2 * h))
    a, b = estimates
    est = (4 * b - a) / 3
    if not abs(a - b) <= tol(est) or max(noise) > tol(est) / 4:    # truncation or rounding too large
        return None
    return est
