"""Random integer kernels of the shape that went wrong on the H100 (issue 21, item 1): a parallel loop over
i, serial loops inside whose bounds depend on i (and on loaded values), positive and negative steps, with
`break` / `continue` under conditions on i, j and loaded values. Integers stay small, so the kernel's
source, run as plain Python, is the oracle.
"""
from __future__ import annotations

import random

N = 40  # threads


def _bound(r: random.Random, outer: list[str]) -> str:
    v = r.choice(outer)
    return r.choice([f"{v}", f"{r.randint(0, 6)} - {v}", f"{v} + {r.randint(0, 4)}", f"{r.randint(2, 9)}",
                     f"a[i] % 5 + {v}", f"{r.randint(4, 9)} - {v} % 4", "a[i] % 7"])


def _cond(r: random.Random, vars_: list[str]) -> str:
    v = r.choice(vars_)
    w = r.choice(vars_)
    return r.choice([f"{v} == {r.randint(0, 3)}", f"{v} % {r.randint(2, 4)} == 0", f"{v} > {w}",
                     f"{v} + {w} >= {r.randint(2, 9)}", f"a[i] % 3 == {r.randint(0, 2)}", f"i == {r.randint(0, 4)}",
                     f"{v} < {r.randint(0, 5)}", f"i > {v}", f"{v} - i > {r.randint(0, 4)}"])


def _while(r: random.Random, depth: int, outer: list[str], lines: list[str], ind: str, names: list[str]) -> None:
    var = names[depth]
    lines.append(f"{ind}{var} = {_bound(r, outer)}")
    lines.append(f"{ind}while {var} < {_bound(r, outer)}:")
    inner = ind + "    "
    vars_ = outer + [var]
    if r.random() < 0.5:
        lines.append(f"{inner}if {_cond(r, vars_)}:")
        lines.append(f"{inner}    break")
    lines.append(f"{inner}s += {r.randint(1, 30)} * {r.choice(vars_)} + {r.randint(0, 5)}")
    lines.append(f"{inner}{var} += {r.randint(1, 3)}")


def _loop(r: random.Random, depth: int, outer: list[str], lines: list[str], ind: str, names: list[str]) -> None:
    if r.random() < 0.2:
        _while(r, depth, outer, lines, ind, names)
        return
    var = names[depth]
    lo, hi = _bound(r, outer), _bound(r, outer)
    step = r.choice([1, 1, 1, 2, -1, -1, -2, 3])
    if step < 0:
        lo, hi = hi, lo
    lines.append(f"{ind}for {var} in range({lo}, {hi}, {step}):")
    inner = ind + "    "
    vars_ = outer + [var]
    for _ in range(r.randint(1, 3)):
        k = r.random()
        if k < 0.35:
            lines.append(f"{inner}if {_cond(r, vars_)}:")
            lines.append(f"{inner}    {r.choice(['break', 'continue', 'break'])}")
        elif k < 0.55 and depth < 2:
            _loop(r, depth + 1, vars_, lines, inner, names)
        elif k < 0.7:
            lines.append(f"{inner}if {_cond(r, vars_)}:")
            lines.append(f"{inner}    s += {r.choice(vars_)} * {r.randint(1, 9)} + 1")
            lines.append(f"{inner}else:")
            lines.append(f"{inner}    s -= {r.choice(vars_)}")
        else:
            lines.append(f"{inner}s += {r.randint(1, 30)} * {r.choice(vars_)} + {r.randint(0, 5)}")
    lines.append(f"{inner}s += 1")


def program(seed: int) -> str:
    """Source of a function `prog(a, out)`: out[i] for i in range(N)."""
    r = random.Random(seed)
    lines = ["def prog(a, out):", f"    for i in range({N}):", "        s = 0"]
    for _ in range(r.randint(1, 2)):
        _loop(r, 0, ["i"], lines, "        ", ["j", "k", "m"])
    lines.append("        out[i] = s")
    return "\n".join(lines) + "\n"
