"""Helpers of the autodiff tests: random differentiable kernels (hypothesis strategies),
shared kernels, references and device-array construction.

A program is Python source of a kernel `prog(x, cnt, y)` over per-item float locals a, b
and an int local k, built from nested run-time and constant `range` loops, `while` loops,
`if/else`, `break` and `continue` (conditions on integers only, so finite differences stay
away from discontinuities); inside loops also reads of x at an index that changes per
iteration and `y[i] +=` updates (loops that reverse mode cannot preaccumulate). Every
float assignment is bounded and about 1-Lipschitz, so values and derivatives stay small
over any number of iterations and finite differences stay accurate.

The same source runs three ways: as plain Python on float64 numpy arrays (the oracle,
through finite differences), through the IR interpreter, and compiled on the device.
"""
from __future__ import annotations

import importlib.util
import itertools
import sys

import numpy as np
from hypothesis import strategies as st

import gfxrt as gr

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)
F0 = gr.types.ndarray(dtype=gr.f32, ndim=0)


def arr(values, grad=True, dtype=gr.f32):
    """A device array holding `values` (with a gradient unless grad=False)."""
    a = gr.ndarray(dtype, np.shape(values), needs_grad=grad)
    a.from_numpy(np.asarray(values))
    return a


def sin_loop(x: F1, cnt: I1, y: F1):
    """The run-time loop of the benchmark (a plain function; device tests wrap it)."""
    for i in range(x.shape[0]):
        v = x[i]
        for _j in range(cnt[i]):
            v = gr.sin(v) * 0.95 + 0.01
        y[i] = v


def while_break_continue(x: F1, y: F1):
    """A float-controlled `while` with `continue` and `break` (as a plain function: the
    interpreter tests lower it, the device tests wrap it in gr.kernel)."""
    for i in range(x.shape[0]):
        v = x[i]
        s = 0.0
        n = 0
        while v < 4.0:
            n += 1
            v = v * 1.5 + 0.1
            if n % 3 == 0:
                continue
            s = s + v * v
            if n > 6:
                break
        y[i] = s + v


def while_break_continue_reference(x: float) -> tuple[float, float]:
    """float64 (y, dy/dx) of while_break_continue for one element."""
    v, s, n = float(x), 0.0, 0
    dv, ds = 1.0, 0.0
    while v < 4.0:
        n += 1
        v, dv = v * 1.5 + 0.1, dv * 1.5
        if n % 3 == 0:
            continue
        s, ds = s + v * v, ds + 2 * v * dv
        if n > 6:
            break
    return s + v, ds + dv

OPERANDS = ["a", "b", "x[i]"]
ASSIGNS = [
    "{t} = gr.sin({u} * 0.7 + {v} * 0.2)",
    "{t} = gr.tanh({u} * {v} + 0.2)",
    "{t} = {u} * 0.8 + gr.cos({v}) * 0.1",
    "{t} = gr.sqrt({u} * {u} + 0.5) - 0.7",
    "{t} = gr.max({u}, {v} * 0.5 + 0.3) * 0.9",
    "{t} = gr.exp(-{u} * {u}) * {v}",
    "{t} = {u} / (1.5 + {v} * {v})",
    "{t} = gr.log(1.0 + {u} * {u}) - {v} * 0.3",
    "{t} = gr.atan2({u}, 1.0 + {v} * {v})",
    "{t} = ({u} ** 2) * 0.5 - {v} * 0.2",
    "{t} = gr.tanh({u} + 0.05 * k)",
    "{t} = gr.sin({u}) * gr.cos({v}) * 0.9",
]
INT_UPDATES = ["k = (k + 1) % 5", "k = k + {j}", "k = k * 2 % 7"]


@st.composite
def statements(draw, depth: int, loop_var: str | None, level: int) -> list[str]:
    """A block of source lines (unindented) at nesting `level`."""
    out: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        kinds = (["for_rt", "while", "if", "for_const"] if depth > 0 else []) + ["assign", "assign", "int"]
        if loop_var:  # inside a loop: data that changes per iteration, an output updated per iteration
            kinds += ["gather", "accumulate"]
        kind = draw(st.sampled_from(kinds + ["jump", "jump"]))
        if kind == "gather":
            t = draw(st.sampled_from(["a", "b"]))
            out.append(f"{t} = {t} * 0.6 + x[(i + {loop_var}) % x.shape[0]] * 0.3")
        elif kind == "accumulate":
            out.append(f"y[i] += {draw(st.sampled_from(['a', 'b']))} * 0.1")
        elif kind == "assign":
            t = draw(st.sampled_from(["a", "b"]))
            u, v = draw(st.sampled_from(OPERANDS)), draw(st.sampled_from(OPERANDS))
            out.append(draw(st.sampled_from(ASSIGNS)).format(t=t, u=u, v=v))
        elif kind == "int":
            out.append(draw(st.sampled_from(INT_UPDATES)).format(j=loop_var or "i"))
        elif kind in ("for_rt", "for_const", "while"):
            j = f"j{level}"
            body = draw(statements(depth - 1, j, level + 1))
            if kind == "while":
                out += [f"{j} = 0", f"while {j} < cnt[i]:", f"    {j} = {j} + 1"]
            else:
                out.append(f"for {j} in range({'cnt[i]' if kind == 'for_rt' else '3'}):")
            out += ["    " + line for line in body]
        elif kind == "if":
            cond = draw(st.sampled_from(["i % 2 == 0", "k > 1", f"{loop_var} % 2 == 1" if loop_var else "i > 3"]))
            then = draw(statements(depth - 1, loop_var, level + 1))
            other = draw(statements(depth - 1, loop_var, level + 1))
            out += [f"if {cond}:", *("    " + x for x in then), "else:", *("    " + x for x in other)]
        elif kind == "jump" and not loop_var:  # in the parallel loop's body: skip the item's rest
            out += ["if i % 3 == 1:", "    continue"]
        elif kind == "jump":
            word = draw(st.sampled_from(["break", "continue"]))
            cond = draw(st.sampled_from([f"{loop_var} == 2", f"{loop_var} % 2 == 0", "k == 3"]))
            out += [f"if {cond}:", f"    {word}"]
    return out or ["a = a * 0.5"]


@st.composite
def programs(draw, depth: int = 2) -> str:
    """Source text of a random kernel `prog(x, cnt, y)`."""
    body = draw(statements(depth, None, 1))
    out = draw(st.sampled_from(["y[i] = a + 0.5 * b", "y[i] = a * b + 0.1 * a", "y[i] += gr.sin(a) + b"]))
    lines = ["a = x[i]", "b = 0.5", "k = i % 3", *body, out]
    return "\n".join(["import gfxrt as gr", "", "", "F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)", "",
                      "def prog(x: F1, cnt: gr.types.ndarray(dtype=gr.i32, ndim=1), y: F1):",
                      "    for i in range(x.shape[0]):",
                      *("        " + line for line in lines), ""])


_counter = itertools.count()


def load(source: str, directory) -> object:
    """The function `prog` of a program, from a file (kernels need their source on disk)."""
    path = directory / f"adprog_{next(_counter)}.py"
    path.write_text(source)
    name = path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod.prog


def oracle_gradient(prog, xs, cs, y0, w, eps=1e-6):
    """d/dx and d/dy0 of sum(w * y) for the program run as float64 numpy code."""
    def loss(x, y):
        y = y.copy()
        prog(x, cs, y)
        return float((w * y).sum()), y
    value, y = loss(xs, y0)
    gx, gy = np.zeros_like(xs), np.zeros_like(y0)
    for g, which in ((gx, 0), (gy, 1)):
        for k in range(len(g)):
            args = [xs.copy(), y0.copy()]
            args[which][k] += eps
            plus = loss(*args)[0]
            args[which][k] -= 2 * eps
            minus = loss(*args)[0]
            g[k] = (plus - minus) / (2 * eps)
    return y, gx, gy


def sin_loop_reference(xs, cs):
    """float64 values and dv/dx of `v = x; repeat cnt times: v = sin(v) * 0.95 + 0.01`,
    the run-time loop the autodiff tests and benchmark use."""
    v, d = np.asarray(xs, np.float64).copy(), np.ones(len(xs))
    for j in range(int(np.max(cs, initial=0))):
        m = j < cs
        d[m] *= np.cos(v[m]) * 0.95
        v[m] = np.sin(v[m]) * 0.95 + 0.01
    return v, d
