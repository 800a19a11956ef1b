"""Math builtins at special values, against numpy on the type (C99's Annex F, which numpy
follows): NaN in gives NaN out, odd functions keep the sign of a zero (`sin(-0.0)` is -0.0),
`atan2` gives each quadrant's angle for signed zeros and infinities (`atan2(-0.0, -17.0)` is
-pi), `asin` / `acos` outside [-1, 1] give NaN, and `pow` / `**` follow C99's special cases.
One kernel per float type over every pair of a list of special values; the same IR through
the interpreter (compiler/interp.py, the executable spec) must agree too.

Runs as-is on any adapter: `python -m pytest -q tests/test_lang_special_values.py`."""
import numpy as np
import pytest
from gfxrt.compiler.interp import execute
from gfxrt.compiler.spec import ArgSpec
from gfxrt.compiler.types import f32, f64

import gfxrt as gr
from gfxrt import compiler


def _has(feature):
    return feature in gr.device().features


need64 = pytest.mark.skipif("not _has('shader-f64') or not _has('shader-int64')")
NP = {"f32": np.float32, "f64": np.float64}
IR_T = {"f32": f32, "f64": f64}
# our f32 helpers: ~1e-6 relative (tests/test_lang_math.py); f64: a few ulp, pow's exp(b log a)
# up to (16 + 4 |b log a|) ulp; ATOL: results below it (drivers may flush subnormals) are zeros
TOL = {"f32": (1e-5, 2.0 ** -126), "f64": (1e-12, 2.0 ** -1022)}

UNARY = {"sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
         "atan": np.arctan, "tanh": np.tanh, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
         "floor": np.floor, "ceil": np.ceil, "abs": np.abs}
BINARY = {"atan2": np.arctan2, "**": np.power, "pow": np.power}
ROWS = list(UNARY) + list(BINARY)


def _kernel(t):
    dt = {"f32": gr.f32, "f64": gr.f64}[t]
    V = gr.types.ndarray(dtype=dt, ndim=1)
    M = gr.types.ndarray(dtype=dt, ndim=2)

    def special_values(a: V, b: V, o: M):
        for i in range(a.shape[0]):
            x = a[i]
            y = b[i]
            o[0, i] = gr.sin(x)
            o[1, i] = gr.cos(x)
            o[2, i] = gr.tan(x)
            o[3, i] = gr.asin(x)
            o[4, i] = gr.acos(x)
            o[5, i] = gr.atan(x)
            o[6, i] = gr.tanh(x)
            o[7, i] = gr.exp(x)
            o[8, i] = gr.log(x)
            o[9, i] = gr.sqrt(x)
            o[10, i] = gr.floor(x)
            o[11, i] = gr.ceil(x)
            o[12, i] = abs(x)
            o[13, i] = gr.atan2(x, y)
            o[14, i] = x ** y
            o[15, i] = gr.pow(x, y)
    return special_values


KERNELS = {t: gr.kernel(_kernel(t)) for t in NP}


def _values(t):
    ft = NP[t]
    one_up, one_down = np.nextafter(ft(1), ft(2)), np.nextafter(ft(1), ft(0))
    v = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, one_up, -one_up, one_down, -one_down,
         0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5, -17.0, 100.0, 1e-30, -1e-30, 1e30, -1e30]
    return np.array(v, ft)


def _grid(t):
    v = _values(t)
    return np.repeat(v, v.size), np.tile(v, v.size)


def _bad(got, want, t):
    """Indices where got is not numpy's: NaN where numpy has NaN, the sign bit of every
    non-NaN value (zeros included), and finite values within the helpers' tolerance."""
    rtol, atol = TOL[t]
    with np.errstate(all="ignore"):
        g, w = got.astype(np.float64), want.astype(np.float64)
        nan_g, nan_w = np.isnan(g), np.isnan(w)
        close = (g == w) | (np.abs(g - w) <= rtol * np.abs(w)) | ((np.abs(g) < atol) & (np.abs(w) < atol))
    sign = np.signbit(g) != np.signbit(w)
    return np.flatnonzero((nan_g != nan_w) | (~nan_w & ~nan_g & (~close | sign)))


def _reference(t, a, b):
    ft = NP[t]
    with np.errstate(all="ignore"):
        # f32: numpy in float64 rounded to float32 (a correctly rounded reference)
        wide = (lambda f, *xs: f(*(x.astype(np.float64) for x in xs)).astype(ft)) if t == "f32" else \
            (lambda f, *xs: f(*xs))
        rows = [wide(UNARY[n], a) for n in UNARY] + [wide(BINARY[n], a, b) for n in BINARY]
    return np.stack(rows)


def _report(o, want, a, b, t):
    lines = []
    for k, name in enumerate(ROWS):
        bad = _bad(o[k], want[k], t)
        if name in UNARY:  # each argument once (a holds each value n times in a row)
            bad = bad[bad % round(np.sqrt(a.size)) == 0]
        for i in bad[:4]:
            arg = f"{a[i]!r}, {b[i]!r}" if name in BINARY else f"{a[i]!r}"
            lines.append(f"{t} {name}({arg}): got {o[k, i]!r}, numpy {want[k, i]!r}")
    return lines


def _trig_is_accurate(a):
    """sin / cos / tan reduce their argument exactly only for |x| < 12000 (docs/language.md)."""
    return ~(np.abs(a) >= 12000.0) | ~np.isfinite(a)


def _mask_large_trig(o, want, a):
    far = ~_trig_is_accurate(a)
    for k in (0, 1, 2):
        o[k, far] = want[k, far]


@pytest.mark.parametrize("t", ["f32", pytest.param("f64", marks=need64)])
def test_math_builtins_at_special_values_match_numpy(t):
    a, b = _grid(t)
    o = np.zeros((len(ROWS), a.size), NP[t])
    KERNELS[t](a, b, o)
    want = _reference(t, a, b)
    _mask_large_trig(o, want, a)
    lines = _report(o, want, a, b, t)
    assert not lines, f"{len(lines)} wrong (first 4 per function):\n" + "\n".join(lines)


@pytest.mark.parametrize("t", ["f32", "f64"])
def test_the_interpreter_agrees_at_special_values(t):
    a, b = _grid(t)
    ir = compiler.lower(_kernel(t), [ArgSpec("a", "ndarray", elem=IR_T[t], ndim=1),
                                     ArgSpec("b", "ndarray", elem=IR_T[t], ndim=1),
                                     ArgSpec("o", "ndarray", elem=IR_T[t], ndim=2)])
    o = np.zeros((len(ROWS), a.size), NP[t])
    execute(ir, [a, b, o])
    want = _reference(t, a, b)
    lines = _report(o, want, a, b, t)
    assert not lines, f"{len(lines)} wrong (first 4 per function):\n" + "\n".join(lines)


def test_the_issue_examples():
    """tanh(sqrt(negative)) was 1.0 (clamp / min lose NaN); atan2(-0.0, -17.0) was +pi."""
    a = np.float32([-2.2847273349761963, -0.0, -0.0, np.nan])
    b = np.float32([1.0, -17.0, 17.0, 1.0])
    o = np.zeros((len(ROWS), a.size), np.float32)
    KERNELS["f32"](a, b, o)
    tanh, atan2 = o[ROWS.index("tanh")], o[ROWS.index("atan2")]
    assert np.isnan(tanh[3]) and tanh[1] == 0.0 and np.signbit(tanh[1])
    assert atan2[1] == np.float32(-np.pi) and atan2[2] == 0.0 and np.signbit(atan2[2])
    assert np.isnan(o[ROWS.index("sin"), 3]) and np.signbit(o[ROWS.index("sin"), 1])


@gr.kernel
def _math_of_constants(o: gr.types.ndarray(dtype=gr.f32, ndim=1), u: gr.types.ndarray(dtype=gr.u32, ndim=1)):
    s = -1000.0  # a variable holding a Python number, folded like the literals below
    o[0] = gr.asin(s)
    o[1] = gr.sqrt(-1.0)
    o[2] = gr.log(0.0)
    o[3] = gr.exp(1000.0)
    o[4] = gr.acos(2.0)
    o[5] = gr.floor(2.5) - u[0]  # floor of a float is a float (2.0 - u32 5: -3.0, not u32 arithmetic)
    o[6] = gr.ceil(-2.5) - u[0]
    o[7] = gr.round(2.5) - u[0]  # Taichi's round: halves away from zero, 3.0


def test_math_of_constants_follows_the_device_not_pythons_math():
    """Found by tools/progfuzz --extreme on lavapipe (seed 1100114, shrunk): `gr.asin(s)` with
    `s = -1000.0` was a CompileError ("constant expression fails: math domain error") where the
    same value in an array gives NaN; and `gr.floor(2.5)` folded to the int 2 (Python's
    math.floor), so `gr.floor(2.5) - x_u32` wrapped around in u32. Constants now fold to what the
    device computes (numpy's values), and a domain error is left to the device."""
    o = np.zeros(8, np.float32)
    _math_of_constants(o, np.array([5], np.uint32))
    with np.errstate(all="ignore"):
        want = [np.arcsin(np.float32(-1000)), np.sqrt(np.float32(-1)), np.log(np.float32(0)), np.exp(np.float32(1000)),
                np.arccos(np.float32(2)), -3.0, -7.0, -2.0]
    np.testing.assert_array_equal(o, np.array(want, np.float32))
