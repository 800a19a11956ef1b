"""Writes a finding as a standalone reproducer: the kernel's source, its inputs and the
expected values (the oracle's, with their tolerances), checked by a `test_*` function that
pytest collects as it is and that `python file.py` runs (exit status 1 while the bug is there).
Copying the file into tests/ (and renaming the test) makes it a regression test."""
from __future__ import annotations

import textwrap

import numpy as np

from .dtypes import NUMPY, is_float
from .printer import KERNEL_NAME, source


def _array_literal(a: np.ndarray, t: str) -> str:
    if a.size and not a.any() and not (is_float(t) and np.signbit(a).any()):  # -0.0 is written out
        return f"np.zeros({a.shape!r}, dtype=np.{NUMPY[t].__name__})"
    if a.shape == ():
        return f"np.array({a.item()!r}, dtype=np.{NUMPY[t].__name__})"
    return f"np.array({a.tolist()!r}, dtype=np.{NUMPY[t].__name__})"


def _expected(program, verdict) -> list[str]:
    """EXPECTED: name -> (flat indices, values, tolerances) of the elements the kernel changes
    (by the oracle) and of those that differ."""
    outcome = verdict.outcome
    bad = {(m.array, m.flat) for m in verdict.mismatches if m.array is not None}
    lines = ["EXPECTED = {"]
    for a in program.kernel.arrays:
        if a.role == "in":
            continue
        init = np.asarray(program.inputs[a.name]).ravel()
        idx, want, tol = [], [], []
        for k, v in enumerate(outcome.arrays[a.name]):
            if k in outcome.taint[a.name]:
                continue
            w, e = (v if is_float(a.dtype) else (v, 0))
            if (a.name, k) in bad or w != init[k].item():
                idx.append(k)
                want.append(w)
                tol.append(e)
        if idx:
            lines.append(f"    {a.name!r}: ({idx!r}, {want!r}, {tol!r}),")
    lines.append("}")
    rets = None
    if program.kernel.ret and outcome.returns is not None:
        rets = [(v[0], v[1]) if isinstance(v, tuple) else (v, 0) for v in outcome.returns]
    lines.append(f"RETURNS = {rets!r}")
    return lines


def _grad_expected(verdict) -> list[str]:
    rows = [(m.where, m.want[0], m.want[1]) for m in verdict.mismatches]
    return [f"GRADIENTS = {rows!r}  # (array.grad[index], central difference of the oracle, tolerance)"]


BODY_FORWARD = '''

def test_progfuzz_{seed}():
    arrays = {{name: np.array(v, copy=True) for name, v in INPUTS.items()}}
    got_ret = {kernel}(*[arrays[name] for name in ORDER], *SCALARS)
    bad = []
    for name, (idx, want, tol) in EXPECTED.items():
        got = arrays[name].ravel()
        for k, w, t in zip(idx, want, tol):
            g = got[k].item()
            if not (abs(g - w) <= t if t else g == w or (g != g and w != w)):
                bad.append(f"{{name}} flat[{{k}}]: expected {{w!r}} (+- {{t:.3g}}), got {{g!r}}")
    if RETURNS is not None:
        got_ret = got_ret if isinstance(got_ret, tuple) else (got_ret,)
        for k, ((w, t), g) in enumerate(zip(RETURNS, got_ret)):
            if not (abs(g - w) <= t if t else g == w):
                bad.append(f"return[{{k}}]: expected {{w!r}} (+- {{t:.3g}}), got {{g!r}}")
    assert not bad, "\\n".join(bad[:10])
'''

BODY_GRAD = '''

def test_progfuzz_{seed}():
    dev = {{}}
    for name, v in INPUTS.items():
        d = gr.ndarray(DTYPES[name], np.shape(v), needs_grad=name in NEEDS_GRAD)
        d.from_numpy(v)
        dev[name] = d
    args = [dev[name] for name in ORDER] + list(SCALARS)
    if MODE == "tape":
        with gr.Tape(dev[LOSS]):
            {kernel}(*args)
    else:
        {kernel}(*args)
        for name, seed in SEEDS.items():
            dev[name].grad.from_numpy(seed)
        {kernel}.grad(*args)
    bad = []
    for where, want, tol in GRADIENTS:
        name, idx = where.split(".grad")
        k = 0 if idx == "[None]" else int(idx.strip("[]"))
        g = dev[name].grad.to_numpy().ravel()[k].item()
        if not abs(g - want) <= tol:
            bad.append(f"{{where}}: expected {{want!r}} (+- {{tol:.3g}}), got {{g!r}}")
    assert not bad, "\\n".join(bad)
'''


def reproducer(program, verdict, diagnosis: str, original_nodes: int, nodes: int) -> str:
    k = program.kernel
    head = [f"seed {program.seed}, profile {program.profile}{' (extreme values)' if program.extreme else ''}; "
            f"shrunk from {original_nodes} to {nodes} nodes",
            f"finding: {verdict.kind}" + (f" ({verdict.error_kind} error)" if verdict.error_kind else ""),
            *textwrap.indent(verdict.detail.strip(), "  ").splitlines()[:24],
            f"diagnosis: {diagnosis}",
            "run: python <this file> (exit status 1 while the bug is there), or pytest <this file>"]
    doc = '"""progfuzz reproducer.\n\n' + "\n".join(h.replace('"""', "'''") for h in head) + '\n"""'
    src = source(program).replace("import gfxrt as gr\n", "")
    lines = [doc, "from math import inf, nan  # noqa: F401 - the values below may hold them", "",
             "import numpy as np", "", "import gfxrt as gr", "", "", src.strip("\n"), "", ""]
    lines.append("INPUTS = {")
    for a in k.arrays:
        lines.append(f"    {a.name!r}: {_array_literal(np.asarray(program.inputs[a.name]), a.dtype)},")
    lines.append("}")
    lines.append(f"ORDER = {[a.name for a in k.arrays]!r}")
    lines.append(f"SCALARS = {[s.value for s in k.scalars]!r}")
    if verdict.kind != "gradient":
        if verdict.kind == "error":
            lines += ["EXPECTED = {}", "RETURNS = None"]
        else:
            lines += _expected(program, verdict)
        lines.append(BODY_FORWARD.format(seed=program.seed, kernel=KERNEL_NAME))
    else:
        g = program.grad
        lines.append(f"DTYPES = {{{', '.join(f'{a.name!r}: gr.{a.dtype}' for a in k.arrays)}}}")
        lines.append(f"NEEDS_GRAD = {[a.name for a in k.arrays if a.needs_grad]!r}")
        lines.append(f"MODE, LOSS = {g.mode!r}, {g.loss!r}")
        seeds = ", ".join(f"{n!r}: {_array_literal(np.asarray(v), program.array(n).dtype)}" for n, v in g.seeds.items())
        lines.append(f"SEEDS = {{{seeds}}}")
        lines += _grad_expected(verdict)
        lines.append(BODY_GRAD.format(seed=program.seed, kernel=KERNEL_NAME))
    lines += ["", "if __name__ == \"__main__\":", f"    test_progfuzz_{program.seed}()", "    print(\"ok\")", ""]
    return "\n".join(lines)
