"""Hypothesis-generated expression programs, compiled and run on the device, compared with a
numpy evaluation of the same expressions (same typing rules: int op float -> f32, Python
floor division and modulo, i32 wrap-around)."""
import os

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import gfxrt as gr

N = 64
EXAMPLES = int(os.environ.get("GFXRT_HYPOTHESIS_EXAMPLES", 30))  # CI: 30; a deeper local run: 1000
F = gr.types.ndarray(dtype=gr.f32, ndim=1)
I = gr.types.ndarray(dtype=gr.i32, ndim=1)  # noqa: E741

# expression trees: (kind, ...) with kind in leaf / const / bin / un / sel; every node typed 'f' or 'i'
F_BIN = ["+", "-", "*", "/", "min", "max"]
I_BIN = ["+", "-", "*", "//", "%", "min", "max", "&", "|", "^"]
F_UN = ["sin", "cos", "tanh", "sqrtabs", "neg", "abs", "sq", "expc"]
I_UN = ["neg", "abs", "sq", "cube", "shl", "shr"]


@st.composite
def expr(draw, t: str, depth: int):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            return ("leaf", t, draw(st.sampled_from(["x", "y"] if t == "f" else ["m", "n"])))
        v = draw(st.sampled_from([0.5, 2.0, -1.25, 3.0]) if t == "f" else st.integers(-5, 5))
        return ("const", t, v)
    kind = draw(st.sampled_from(["bin", "bin", "un", "sel", "mix"]))
    if kind == "bin":
        op = draw(st.sampled_from(F_BIN if t == "f" else I_BIN))
        return ("bin", t, op, draw(expr(t, depth - 1)), draw(expr(t, depth - 1)))
    if kind == "un":
        return ("un", t, draw(st.sampled_from(F_UN if t == "f" else I_UN)), draw(expr(t, depth - 1)))
    if kind == "sel":  # conditions compare integers (exact on both sides)
        cmp = draw(st.sampled_from(["<", ">=", "==", "!="]))
        return ("sel", t, cmp, draw(expr("i", depth - 1)), draw(expr("i", depth - 1)),
                draw(expr(t, depth - 1)), draw(expr(t, depth - 1)))
    if t == "f":  # an int subexpression promoted into float arithmetic
        return ("bin", "f", draw(st.sampled_from(["+", "*", "/"])), draw(expr("f", depth - 1)),
                draw(expr("i", depth - 1)))
    return ("trunc", "i", draw(st.sampled_from(["x", "y"])))  # int(leaf): exact truncation


def src(e) -> str:
    """The expression as kernel source."""
    k = e[0]
    if k == "leaf":
        return f"{e[2]}[i]"
    if k == "const":
        return repr(e[2])
    if k == "trunc":
        return f"int({e[2]}[i])"
    if k == "bin":
        op, a, b = e[2], src(e[3]), src(e[4])
        if op in ("min", "max"):
            return f"gr.{op}({a}, {b})"
        if op == "/":
            return f"({a} / (abs({b}) + 1.0))"
        if op in ("//", "%"):
            return f"({a} {op} (abs({b}) % 5 + 1))"
        return f"({a} {op} {b})"
    if k == "un":
        op, a = e[2], src(e[3])
        return {"sin": f"gr.sin({a})", "cos": f"gr.cos({a})", "tanh": f"gr.tanh({a})",
                "sqrtabs": f"gr.sqrt(abs({a}))", "neg": f"(-{a})", "abs": f"abs({a})", "sq": f"({a}) ** 2",
                "cube": f"({a}) ** 3", "expc": f"gr.exp(gr.min({a}, 3.0))", "shl": f"({a} << 2)",
                "shr": f"({a} >> 1)"}[op]
    _, _, cmp, c1, c2, a, b = e
    return f"({src(a)} if {src(c1)} {cmp} {src(c2)} else {src(b)})"


def evaluate(e, env, wide: bool):
    """numpy value of e (float32 / int32 like the kernel; float64 floats when `wide`), and the
    largest magnitude of any float intermediate (for the tolerance)."""
    ft = np.float64 if wide else np.float32
    k, t = e[0], e[1]
    if k == "leaf":
        v = env[e[2]]
        return (v.astype(ft) if t == "f" else v), np.abs(v.astype(np.float64))
    if k == "const":
        v = np.full(N, e[2], ft if t == "f" else np.int32)
        return v, np.abs(v.astype(np.float64))
    if k == "trunc":
        return np.trunc(env[e[2]]).astype(np.int32), np.zeros(N)
    if k == "bin":
        op = e[2]
        (a, ma), (b, mb) = evaluate(e[3], env, wide), evaluate(e[4], env, wide)
        if t == "f":
            a, b = a.astype(ft), b.astype(ft)
        with np.errstate(all="ignore"):
            v = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "min": lambda: np.minimum(a, b),
                 "max": lambda: np.maximum(a, b), "/": lambda: a / (np.abs(b) + ft(1.0)),
                 "//": lambda: a // (np.abs(b) % 5 + 1), "%": lambda: a % (np.abs(b) % 5 + 1),
                 "&": lambda: a & b, "|": lambda: a | b, "^": lambda: a ^ b}[op]()
        return v, np.maximum(np.maximum(ma, mb), np.abs(v.astype(np.float64)))
    if k == "un":
        op = e[2]
        a, ma = evaluate(e[3], env, wide)
        with np.errstate(all="ignore"):
            v = {"sin": np.sin, "cos": np.cos, "tanh": np.tanh, "sqrtabs": lambda x: np.sqrt(np.abs(x)),
                 "neg": np.negative, "abs": np.abs, "sq": lambda x: x * x, "cube": lambda x: x * x * x,
                 "expc": lambda x: np.exp(np.minimum(x, ft(3.0))), "shl": lambda x: x << 2,
                 "shr": lambda x: x >> 1}[op](a)
        return v, np.maximum(ma, np.abs(v.astype(np.float64)))
    _, _, cmp, c1, c2, a, b = e
    (x1, _), (x2, _) = evaluate(c1, env, wide), evaluate(c2, env, wide)
    cond = {"<": x1 < x2, ">=": x1 >= x2, "==": x1 == x2, "!=": x1 != x2}[cmp]
    (va, ma), (vb, mb) = evaluate(a, env, wide), evaluate(b, env, wide)
    return np.where(cond, va, vb), np.maximum(ma, mb)


def const_ints(e, out: list) -> int | None:
    """The Python value of an integer subtree made of constants only (None if it reads an array),
    collecting every such value into `out`. gfxrt folds those as Taichi does, in Python's unbounded
    ints (`0.5 + ((3*4)**3)**3` is 5159780352.5, no i32 wrap-around), which `evaluate` does not
    model: the test keeps them within i32."""
    k, t = e[0], e[1]
    if k == "const":
        v = e[2] if t == "i" else None
    elif k in ("leaf", "trunc"):
        v = None
    elif k == "bin":
        a, b = const_ints(e[3], out), const_ints(e[4], out)
        if t != "i" or a is None or b is None:
            v = None
        else:
            d = abs(b) % 5 + 1
            v = {"+": a + b, "-": a - b, "*": a * b, "min": min(a, b), "max": max(a, b), "//": a // d,
                 "%": a % d, "&": a & b, "|": a | b, "^": a ^ b}[e[2]]
    elif k == "un":
        a = const_ints(e[3], out)
        v = None if t != "i" or a is None else {"neg": -a, "abs": abs(a), "sq": a * a, "cube": a * a * a,
                                                 "shl": a << 2, "shr": a >> 1}[e[2]]
    else:
        _, _, cmp, c1, c2, a, b = e
        x1, x2, va, vb = (const_ints(x, out) for x in (c1, c2, a, b))
        known = None not in (x1, x2, va, vb) and t == "i"
        v = (va if {"<": x1 < x2, ">=": x1 >= x2, "==": x1 == x2, "!=": x1 != x2}[cmp] else vb) if known else None
    if v is not None:
        out.append(v)
    return v


KERNEL = """import gfxrt as gr


@gr.kernel
def k(x: F, y: F, m: I, n: I, out_f: F, out_i: I):
    for i in range(x.shape[0]):
        out_f[i] = {f}
        out_i[i] = {i}
"""


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fe=expr("f", 4), ie=expr("i", 4), seed=st.integers(0, 2**16))
def test_random_expression_programs_match_numpy(tmp_path_factory, fe, ie, seed):
    folded = []
    const_ints(fe, folded), const_ints(ie, folded)
    assume(all(-2**31 <= v < 2**31 for v in folded))
    rng = np.random.default_rng(seed)
    env = {"x": rng.uniform(-3, 3, N).astype(np.float32), "y": rng.uniform(-3, 3, N).astype(np.float32),
           "m": rng.integers(-20, 20, N).astype(np.int32), "n": rng.integers(-20, 20, N).astype(np.int32)}
    env["y"][: N // 4] = np.round(env["y"][: N // 4])  # some exact integers too
    code = KERNEL.format(f=src(fe), i=src(ie))
    path = tmp_path_factory.mktemp("rand") / "prog.py"
    path.write_text(code)
    ns = {"F": F, "I": I}
    exec(compile(code, str(path), "exec"), ns)  # noqa: S102 - inspect.getsource reads the file
    out_f, out_i = np.zeros(N, np.float32), np.zeros(N, np.int32)
    ns["k"](env["x"], env["y"], env["m"], env["n"], out_f, out_i)
    want_i, _ = evaluate(ie, env, wide=False)
    np.testing.assert_array_equal(out_i, want_i.astype(np.int32), err_msg=code)
    want_f, mag = evaluate(fe, env, wide=True)
    finite = np.isfinite(want_f) & (mag < 1e30)
    assert (np.isfinite(out_f) | ~finite).all(), code
    err = np.abs(out_f[finite].astype(np.float64) - want_f[finite])
    assert (err <= 1e-4 * (1.0 + mag[finite])).all(), f"{code}\nmax error {err.max()} at scale {mag.max()}"


# -- random control flow: the same function run as a kernel and as plain Python ---------------
VARS = ("a", "b", "c")


@st.composite
def int_expr(draw, depth: int = 2):
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(["a", "b", "c", "i", "x[i]", "3", "-2", "7"]))
    kind = draw(st.sampled_from(["+", "-", "*k", "//", "%", "min", "max", "abs", "neg", "ifexp"]))
    a, b = draw(int_expr(depth - 1)), draw(int_expr(depth - 1))
    if kind in ("+", "-"):
        return f"({a} {kind} {b})"
    if kind == "*k":
        return f"({a} * {draw(st.integers(-3, 3))})"
    if kind in ("//", "%"):
        return f"({a} {kind} (abs({b}) % 7 + 1))"
    if kind in ("min", "max"):
        return f"{kind}({a}, {b})"
    if kind == "abs":
        return f"abs({a})"
    if kind == "neg":
        return f"(-{a})"
    return f"({a} if {draw(cond(depth - 1))} else {b})"


@st.composite
def cond(draw, depth: int = 1):
    kind = draw(st.sampled_from(["cmp", "cmp", "and", "or", "not"])) if depth > 0 else "cmp"
    if kind == "cmp":
        return f"{draw(int_expr(1))} {draw(st.sampled_from(['<', '<=', '==', '!=', '>']))} {draw(int_expr(1))}"
    if kind == "not":
        return f"not ({draw(cond(depth - 1))})"
    return f"({draw(cond(depth - 1))}) {kind} ({draw(cond(depth - 1))})"


@st.composite
def block(draw, depth: int, ind: str, in_loop: bool, counter: list):
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["assign", "assign", "if", "for", "while", "jump"] if depth else ["assign"]))
        if kind == "jump" and not in_loop:
            kind = "assign"
        if kind == "assign":
            lines.append(f"{ind}{draw(st.sampled_from(VARS))} = max(min({draw(int_expr())}, 1000), -1000)")
        elif kind == "if":
            lines.append(f"{ind}if {draw(cond())}:")
            lines += draw(block(depth - 1, ind + "    ", in_loop, counter))
            if draw(st.booleans()):
                lines.append(f"{ind}else:")
                lines += draw(block(depth - 1, ind + "    ", in_loop, counter))
        elif kind == "for":
            counter[0] += 1
            lines.append(f"{ind}for k{counter[0]} in range(abs({draw(int_expr(1))}) % 4):")
            lines += draw(block(depth - 1, ind + "    ", True, counter))
        elif kind == "while":
            counter[0] += 1
            w = f"w{counter[0]}"
            lines.append(f"{ind}{w} = 0")
            lines.append(f"{ind}while {w} < abs({draw(int_expr(1))}) % 4:")
            lines.append(f"{ind}    {w} += 1")
            lines += draw(block(depth - 1, ind + "    ", True, counter))
        else:
            lines.append(f"{ind}if {draw(cond())}:")
            lines.append(f"{ind}    {draw(st.sampled_from(['break', 'continue']))}")
    return lines


CONTROL = """import gfxrt as gr


def k(x: I, oa: I, ob: I, oc: I):
    for i in range(x.shape[0]):
        a = x[i]
        b = i
        c = 1
{body}
        oa[i] = a
        ob[i] = b
        oc[i] = c
"""


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=block(3, " " * 8, False, [0]), seed=st.integers(0, 2**16))
def test_random_control_flow_matches_python(tmp_path_factory, body, seed):
    code = CONTROL.format(body="\n".join(body))
    path = tmp_path_factory.mktemp("ctl") / "prog.py"
    path.write_text(code)
    ns = {"I": I}
    exec(compile(code, str(path), "exec"), ns)  # noqa: S102
    x = np.random.default_rng(seed).integers(-50, 50, 16).astype(np.int32)
    out = [np.zeros(16, np.int32) for _ in range(3)]
    gr.kernel(ns["k"])(x, *out)
    want = [np.zeros(16, dtype=object) for _ in range(3)]
    ns["k"](np.array([int(v) for v in x], dtype=object), *want)  # the same function as plain Python
    for got, w in zip(out, want):
        np.testing.assert_array_equal(got, w.astype(np.int64), err_msg=code)
