"""What happens to a finding: shrink it while it persists, ask the IR interpreter which layer is
wrong, and write the minimized program as a standalone reproducer."""
from __future__ import annotations

import os

from .diagnose import diagnose
from .repro import reproducer
from .shrink import nodes, shrink
from .verdict import judge


def _count(p) -> int:
    return sum(1 for _ in nodes(p))



def minimize(program, verdict, workdir: str, time_limit: float, log=None):
    """(smaller program, its verdict): the same kind of finding, or the original when shrinking
    does not reproduce it."""
    sig = verdict.signature()

    def still_fails(candidate) -> bool:
        return judge(candidate, workdir).signature() == sig
    small = shrink(program, still_fails, time_limit=time_limit, log=log)
    v = judge(small, workdir)
    if v.signature() != sig:       # flaky: keep what was seen
        return program, verdict
    return small, v


def report(program, verdict, workdir: str, out_dir: str, shrink_time: float = 120.0, log=None) -> str:
    """Shrink, diagnose and write a reproducer; returns its path."""
    n0 = _count(program)
    small, v = minimize(program, verdict, workdir, shrink_time, log) if shrink_time > 0 else (program, verdict)
    diag = "n/a"
    if v.kind == "forward":
        diag = diagnose(small, v.outcome, v.device, workdir)
    os.makedirs(out_dir, exist_ok=True)
    tag = "x" if small.extreme else ""
    path = os.path.join(out_dir, f"repro_{v.kind}_{small.profile}{tag}_{small.seed}.py")
    with open(path, "w") as f:
        f.write(reproducer(small, v, diag, n0, _count(small)))
    return path
