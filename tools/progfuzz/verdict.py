"""One program, checked: run it on the device and in the oracle, compare, and say what kind of
finding it is. `judge(program, workdir)` is what a worker does per seed and what the shrinker
re-asks about every candidate."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from . import numerics as N
from . import runner
from .check import compare
from .gradcheck import check_gradients
from .oracle import Oracle
from .typing import InvalidProgram

# kinds of result
OK, FORWARD, GRADIENT, ERROR, INVALID = "ok", "forward", "gradient", "error", "invalid"


@dataclass
class Verdict:
    kind: str
    detail: str = ""
    skipped: int = 0             # elements not compared (unstable decisions, out-of-profile values)
    compared: int = 0
    reasons: list = field(default_factory=list)
    error_kind: str | None = None
    seconds: float = 0.0
    mismatches: list = field(default_factory=list)
    outcome: object = None       # the oracle's Outcome (for reproducers)
    device: object = None        # the DeviceRun

    @property
    def finding(self) -> bool:
        return self.kind in (FORWARD, GRADIENT, ERROR)

    def signature(self) -> str:
        """What must stay the same while shrinking: the kind, and for errors the message's
        first line's type."""
        if self.kind == ERROR:
            last = self.detail.strip().splitlines()[-1] if self.detail.strip() else ""
            return f"error:{self.error_kind}:{last.split(':')[0]}"
        return self.kind


def oracle_outcome(program):
    N.MODE.extreme = program.extreme
    return Oracle(program).run(program.fresh_inputs())


def judge(program, workdir: str, grads: bool = True) -> Verdict:
    t0 = time.perf_counter()
    try:
        outcome = oracle_outcome(program)
    except InvalidProgram as err:
        return Verdict(INVALID, str(err), seconds=time.perf_counter() - t0)
    except Exception as err:      # an oracle bug: reported as an invalid program, never as a finding
        return Verdict(INVALID, f"the oracle failed: {type(err).__name__}: {err}", seconds=time.perf_counter() - t0)
    dev = runner.run(program, workdir)
    v = Verdict(OK, outcome=outcome, device=dev, reasons=outcome.reasons)
    if dev.error is not None:
        v.kind, v.detail, v.error_kind = ERROR, dev.error, dev.error_kind
        v.seconds = time.perf_counter() - t0
        return v
    c = compare(program, outcome, dev.arrays, dev.returns)
    v.skipped, v.compared = c.skipped, c.compared
    if not c.ok:
        v.kind = FORWARD
        v.mismatches = c.mismatches
        v.detail = f"{c.bad} of {c.compared} values differ:\n" + "\n".join(str(m) for m in c.mismatches)
    elif program.grad is not None and grads:
        g = check_gradients(program, dev.grads)
        v.skipped += g.skipped
        v.compared += g.compared
        if not g.ok:
            v.kind = GRADIENT
            v.mismatches = g.mismatches
            v.detail = f"{g.bad} of {g.compared} gradients differ:\n" + "\n".join(str(m) for m in g.mismatches)
    v.seconds = time.perf_counter() - t0
    return v
