"""`gr.Tape(loss, grad_check=[x, ...])` and `validation=True`, as in Taichi; and the result
types of `gr.ad.gradcheck` (gfxrt/ad/autodiff.py).

grad_check: after the tape's backward pass, each listed container's gradient is compared
with central finite differences of the loss: up to `max_points` elements are nudged by
+-eps * max(1, |x|) and the recorded launches rerun (the loss zeroed before each rerun);
every array the launches take and the loss are restored afterwards. A mismatch raises
`gr.ad.GradcheckError` listing the worst elements.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

from gfxrt.compiler.errors import GfxrtError
from gfxrt.compiler.npcompat import np

from ..data.ndarray import Ndarray
from ..engine import context


class GradcheckError(GfxrtError, AssertionError):
    """Analytic gradients disagree with finite differences (the message lists the worst)."""


@dataclass
class GradcheckResult:
    """Per-element comparison rows: (array, index, analytic, numeric, error, allowed)."""

    ok: bool
    rows: list

    @classmethod
    def of(cls, rows: list) -> GradcheckResult:
        return cls(all(r[4] <= r[5] for r in rows), rows)

    def worst(self, k: int = 5) -> list:
        return sorted(self.rows, key=lambda r: r[4] / r[5], reverse=True)[:k]

    def __str__(self) -> str:
        bad = sum(r[4] > r[5] for r in self.rows)
        head = f"gradcheck {'passed' if self.ok else 'FAILED'}: {bad} of {len(self.rows)} elements out of tolerance"
        cols = f"  {'array':>10s} {'index':>12s} {'analytic':>14s} {'numeric':>14s} {'error':>11s} {'allowed':>11s}"
        lines = [head, cols]
        for name, idx, a, n, err, allowed in self.worst():
            lines.append(f"  {name:>10s} {str(idx):>12s} {a:14.6g} {n:14.6g} {err:11.3g} {allowed:11.3g}")
        return "\n".join(lines)


def compare(name: str, start: np.ndarray, analytic: np.ndarray, loss_at, rng, max_points: int, eps: float,
            atol: float, rtol: float) -> list:
    """Rows comparing `analytic`, the gradient of the loss at `start`, with central differences:
    up to `max_points` random elements nudged by +-eps * max(1, |x|); `loss_at(values)`: the loss."""
    flat, rows = start.reshape(-1), []
    for k in sorted(rng.choice(flat.size, size=min(flat.size, max_points), replace=False)):
        h = eps * max(1.0, abs(float(flat[k])))
        plus, minus = flat.copy(), flat.copy()
        plus[k] += h
        minus[k] -= h
        numeric = (loss_at(plus.reshape(start.shape)) - loss_at(minus.reshape(start.shape))) / \
            (float(plus[k]) - float(minus[k]))
        value = float(analytic.reshape(-1)[k])
        idx = tuple(int(x) for x in np.unravel_index(k, start.shape))
        rows.append((name, idx, value, numeric, abs(value - numeric), atol + rtol * abs(numeric)))
    return rows


def check_validation(validation: bool) -> None:
    """Taichi's validation checks the global data access rule; gfxrt does that check in
    debug mode, for every kernel that takes a needs_grad array."""
    if not validation:
        return
    if not context._state["options"].debug:
        warnings.warn("gr.Tape(validation=True): the global data access rule is checked for every "
                      "differentiable kernel under gr.init(debug=True); call that first to check it",
                      stacklevel=3)


def grad_check(tape, containers, *, eps: float = 1e-2, atol: float = 1e-3, rtol: float = 1e-2,
               max_points: int = 8, seed: int = 0) -> None:
    if tape.loss is None:
        raise ValueError("gr.Tape(grad_check=...) needs a loss")
    for c in containers:
        if not isinstance(c, Ndarray) or not c.needs_grad:
            raise TypeError(f"grad_check takes fields / ndarrays with needs_grad=True, not {c!r}")
    touched: dict[int, Ndarray] = {id(tape.loss): tape.loss}
    for kernel, args, kwargs in tape.launches:
        for a in (*args, *kwargs.values()):
            if isinstance(a, Ndarray):
                touched[id(a)] = a
        for f in kernel.grad_fields(args, kwargs):
            touched[id(f)] = f
    for c in containers:
        touched[id(c)] = c
    saved = {k: a.to_numpy() for k, a in touched.items()}
    analytic = {id(c): c.grad.to_numpy().astype(np.float64) for c in containers}

    def loss_at(c, values) -> float:
        for k, a in touched.items():
            a.from_numpy(values if k == id(c) else saved[k])
        tape.loss.fill(0)
        for kernel, args, kwargs in tape.launches:
            kernel(*args, **kwargs)
        return float(np.asarray(tape.loss.to_numpy(), np.float64).reshape(-1)[0])

    rng = np.random.default_rng(seed)
    rows = []
    try:
        for n, c in enumerate(containers):
            rows += compare(f"grad_check[{n}]", saved[id(c)], analytic[id(c)], lambda v, c=c: loss_at(c, v), rng,
                            max_points, eps, atol, rtol)
    finally:
        for k, a in touched.items():
            a.from_numpy(saved[k])
    result = GradcheckResult.of(rows)
    if not result.ok:
        raise GradcheckError(str(result))
