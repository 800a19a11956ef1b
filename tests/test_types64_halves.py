"""No 64-bit comparison reaches the driver: gfxrt's helpers test the bits of f64 values and compare,
min, max and abs 64-bit integers through 32-bit words (compiler/codegen/wgsl_types.py, "64-bit
integer comparisons": on an NVIDIA H100 a 64-bit comparison beside a division gave wrong
answers). These check that the rewritten helpers keep numpy's results at the edges of the halves
and of the float classes, and that no helper compares a 64-bit literal."""
import itertools
import re

import numpy as np
import pytest
from gfxrt.compiler.codegen.wgsl_exprs import HELPERS, helper_source

import gfxrt as gr

need64 = pytest.mark.skipif("not {'shader-f64', 'shader-int64'} <= set(gr.device().features)")

L1 = gr.types.ndarray(dtype=gr.i64, ndim=1)
Q1 = gr.types.ndarray(dtype=gr.u64, ndim=1)
D1 = gr.types.ndarray(dtype=gr.f64, ndim=1)
I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)

# values on both sides of the 32-bit halves' boundaries and at the ends of the range
EDGES = np.array([0, 1, -1, 2**31, -2**31, 2**32, -2**32, 2**32 + 5, -2**32 - 5, 2**63 - 1, -2**63,
                  123456789012, -98765432101, 2**32 - 1], np.int64)
# zeros, subnormals, the smallest normal, infinities, NaN, integers and fractions of both signs
FLOATS = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 7.0, 0.1, 1e16, -3.5, 2.0, 1e308, -1e308,
                   5e-324, -5e-324, 1e-310, 2.2250738585072014e-308, np.inf, -np.inf, np.nan])


def _pairs(values):
    return [np.ascontiguousarray(v) for v in zip(*itertools.product(values, values), strict=True)]


@gr.kernel
def _int_ops(a: L1, b: L1, lo: L1, hi: L1, ab: L1, truth: I1):
    for i in range(a.shape[0]):
        lo[i] = min(a[i], b[i])
        hi[i] = max(a[i], b[i])
        ab[i] = abs(a[i])
        truth[i] = 1 if a[i] else 0


@gr.kernel
def _uint_ops(a: Q1, b: Q1, lo: Q1, hi: Q1):
    for i in range(a.shape[0]):
        lo[i] = min(a[i], b[i])
        hi[i] = max(a[i], b[i])


@gr.kernel
def _float_ops(x: D1, y: D1, m: D1, d: D1, p: D1, mx: D1):
    for i in range(x.shape[0]):
        m[i] = x[i] % y[i]
        d[i] = x[i] // y[i]
        p[i] = x[i] ** y[i]
        mx[i] = gr.max(x[i], y[i])


@need64
def test_64bit_min_max_abs_and_truth_like_numpy():
    a, b = _pairs(EDGES)
    lo, hi, ab = (np.zeros_like(a) for _ in range(3))
    truth = np.zeros(len(a), np.int32)
    _int_ops(a, b, lo, hi, ab, truth)
    np.testing.assert_array_equal(lo, np.minimum(a, b))
    np.testing.assert_array_equal(hi, np.maximum(a, b))
    np.testing.assert_array_equal(ab, np.abs(a))  # abs(-2**63) wraps, as numpy's
    np.testing.assert_array_equal(truth, a != 0)
    ua, ub = a.view(np.uint64), b.view(np.uint64)
    ulo, uhi = np.zeros_like(ua), np.zeros_like(ua)
    _uint_ops(ua, ub, ulo, uhi)
    np.testing.assert_array_equal(ulo, np.minimum(ua, ub))
    np.testing.assert_array_equal(uhi, np.maximum(ua, ub))


@need64
def test_f64_bit_tests_keep_numpy_results_at_the_class_edges():
    x, y = _pairs(FLOATS)
    got = {name: np.zeros_like(x) for name in ("mod", "floordiv", "pow", "max")}
    _float_ops(x, y, got["mod"], got["floordiv"], got["pow"], got["max"])
    with np.errstate(all="ignore"):
        want = {"mod": np.mod(x, y), "floordiv": np.floor_divide(x, y), "pow": np.power(x, y),
                "max": np.maximum(x, y)}
    for name, w in want.items():
        g = got[name]
        close = np.isclose(g, w, rtol=1e-13, atol=0) if name == "pow" else g == w
        same_sign = (np.signbit(g) == np.signbit(w)) | ((name == "max") & (g == 0))  # max(0.0, -0.0): either
        ok = (close & same_sign) | (np.isnan(g) & np.isnan(w))
        bad = np.flatnonzero(~ok)
        assert not len(bad), [(name, x[j], y[j], g[j], w[j]) for j in bad[:5]]


_WIDE_LITERAL = r"(?:0x[0-9a-f]+|\d+)l[iu]\b"
_COMPARE = r"(?:<=|>=|==|!=|(?<![<-])<(?![<=])|(?<![>-])>(?![>=]))"


@pytest.mark.parametrize("t", ["f64", "i64", "u64"])
def test_no_helper_compares_a_64bit_literal(t):
    """A comparison with a 64-bit literal (`ax < 0x10000000000000lu`) is a 64-bit comparison."""
    found = []
    for name in HELPERS:
        src = helper_source(name, t)
        if "64" not in name and "{t}" not in HELPERS[name]:
            continue
        for ln in src.splitlines():
            code = ln.split("//")[0]
            if (re.search(_COMPARE + r"\s*" + _WIDE_LITERAL, code) or re.search(_WIDE_LITERAL + r"\s*" + _COMPARE, code)
                    or re.search(r"\b(?:min|max)\([^;]*" + _WIDE_LITERAL, code)):
                found.append((name, code.strip()))
    assert not found, found


@gr.kernel
def _mod_floordiv(x: D1, y: D1, m: D1, d: D1):
    for i in range(x.shape[0]):
        m[i] = x[i] % y[i]
        d[i] = x[i] // y[i]


@need64
def test_f64_mod_is_exact_over_the_whole_exponent_range():
    """`%` and `//` on f64 are exact with the fmod's halves-based tests, subnormals and 2000-bit
    exponent gaps (about 125 reduction steps) included."""
    rng = np.random.default_rng(5)
    n = 20000

    def values():
        v = np.ldexp(rng.uniform(-1, 1, n), rng.integers(-1074, 1024, n))
        small = rng.random(n) < 0.05
        v[small] = rng.integers(-1000, 1000, small.sum())
        return v

    x, y = values(), values()
    y[y == 0] = 1.5
    m, d = np.zeros(n), np.zeros(n)
    _mod_floordiv(x, y, m, d)
    with np.errstate(all="ignore"):
        wm, wd = np.mod(x, y), np.floor_divide(x, y)
    bad = np.flatnonzero((m != wm) | (np.signbit(m) != np.signbit(wm)) | (d != wd))
    assert not len(bad), [(x[j], y[j], m[j], wm[j], d[j], wd[j]) for j in bad[:5]]
