"""Python's operators on finite inputs, as numpy computes them on numpy scalars of the type
(docs/language.md, "Arithmetic follows Python"; the reference is compiler/opsem.py): float `%`
exact, float `//` by numpy's divmod algorithm, numpy's shifts, `**` of negative bases, IEEE NaN
in comparisons / min / max / folding, saturating float -> int casts; the same answers from the
device, the IR interpreter, the constant folder and the host. The random element-wise kernels
(checked against numpy) live in test_lang_opsem_fuzz.py.

Runs as-is on any adapter: `python -m pytest -q tests/test_lang_opsem.py tests/test_lang_opsem_fuzz.py`."""
import math

import numpy as np
import pytest
from gfxrt.compiler import opsem
from gfxrt.compiler.interp import execute
from gfxrt.compiler.spec import ArgSpec
from gfxrt.compiler.target import Target
from gfxrt.compiler.types import f32, f64, i32

import gfxrt as gr
from gfxrt import compiler


def _has(feature):
    return feature in gr.device().features


need64 = pytest.mark.skipif("not _has('shader-f64') or not _has('shader-int64')")
F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
D1 = gr.types.ndarray(dtype=gr.f64, ndim=1)
I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)
NP = {"f32": np.float32, "f64": np.float64}


def assert_same(got, want):
    """Bit-for-bit, NaN equal to NaN, and the sign of a zero counts."""
    got, want = np.asarray(got), np.asarray(want, dtype=np.asarray(got).dtype)
    np.testing.assert_array_equal(got, want)
    zero = (got == 0) & (want == 0)
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))


# -- float % and // ----------------------------------------------------------------------------------
@gr.kernel
def divmod32(a: F1, b: F1, q: F1, r: F1):
    for i in range(a.shape[0]):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


@gr.kernel
def divmod64(a: D1, b: D1, q: D1, r: D1):
    for i in range(a.shape[0]):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]


ISSUE_PAIRS = [(1e30, 100.0), (2147483648.0, 46341.0), (1e-38, -1e30), (2.5, 0.05), (1.0, 0.1), (3.4e38, 1e30)]


def _pairs(t, rng):
    """The issue's pairs, signs and edge cases, and random pairs of every magnitude (normal
    numbers only: drivers may flush subnormals)."""
    a = [x for p, q in ISSUE_PAIRS for x in (p, -p, p, -p)] + [0.0, -0.0, 5.0, -5.0, 7.5, -7.5, 1.0, 1.0]
    b = [y for p, q in ISSUE_PAIRS for y in (q, q, -q, -q)] + [3.0, 3.0, 0.0, -0.0, 2.0, -2.0, 1e-30, 3.0]
    big = 3e37 if t == np.float32 else 1e300
    mag = rng.uniform(-30, math.log10(big), (2, 300))
    sa, sb = rng.choice([-1.0, 1.0], (2, 300))
    a += list(sa * 10.0 ** mag[0]) + list(rng.uniform(-100, 100, 100))
    b += list(sb * 10.0 ** mag[1]) + list(rng.integers(-9, 10, 100) * 0.5 + 0.25)
    return np.array(a, t), np.array(b, t)


@pytest.mark.parametrize("t", ["f32", pytest.param("f64", marks=need64)])
def test_float_mod_is_exact_and_floordiv_is_numpys(t, rng):
    a, b = _pairs(NP[t], rng)
    q, r = np.zeros_like(a), np.zeros_like(a)
    (divmod32 if t == "f32" else divmod64)(a, b, q, r)
    with np.errstate(all="ignore"):
        want_q, want_r = np.floor_divide(a, b), np.remainder(a, b)
    assert_same(r, want_r)
    # a // b divides (a - a % b) by b with the device's `/` (Vulkan: within 2.5 ulp): exact where the
    # quotient is below 2**20, within one rounding of numpy's beyond
    small = ~(np.abs(want_q) >= 2.0 ** 20)
    assert_same(q[small], want_q[small])
    np.testing.assert_allclose(q[~small], want_q[~small], rtol=4 * np.finfo(NP[t]).eps)
    if t == "f32":  # the issue's values
        assert r[0] == 40.0 and r[4] == 41708.0 and r[8] == np.float32(-1e30) and q[16] == 9.0
    else:
        assert r[12] == np.remainder(2.5, 0.05) and q[16] == 9.0 and q[20] == 339999999.0


@pytest.mark.parametrize("t", ["f32", pytest.param("f64", marks=need64)])
def test_float_mod_of_any_bit_patterns_is_fmod_exactly(t, rng):
    """Positive operands of every exponent, subnormals included (no sign fix-up, so no float
    operation touches the result): C's fmod bit for bit, however large the quotient."""
    ut, bits = (np.uint32, 31) if t == "f32" else (np.uint64, 63)
    a, b = (rng.integers(1, 2**bits, 20000, dtype=np.uint64).astype(ut).view(NP[t]) for _ in range(2))
    with np.errstate(all="ignore"):
        b[:5000] = (a[:5000] * rng.uniform(0.01, 1.5, 5000)).astype(NP[t])  # small quotients too
    ok = np.isfinite(a) & np.isfinite(b) & (b > 0)
    a, b = a[ok], b[ok]
    q, r = np.zeros_like(a), np.zeros_like(a)
    (divmod32 if t == "f32" else divmod64)(a, b, q, r)
    np.testing.assert_array_equal(r.view(ut), np.fmod(a, b).view(ut))


@gr.kernel
def mod_consts(a: F1, out: F1):
    for i in range(a.shape[0]):
        out[i * 6 + 0] = a[i] % 1.0      # 2**k divisors: a short exact path
        out[i * 6 + 1] = a[i] // 4.0
        out[i * 6 + 2] = a[i] % -8.0
        out[i * 6 + 3] = a[i] // -2.0
        out[i * 6 + 4] = a[i] % 0.1      # any other constant: the general path
        out[i * 6 + 5] = a[i] // 0.1


def test_float_mod_by_constants(rng):
    a = np.concatenate([[1e30, -1e30, 1e-38, -1e-38, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 3.4e38, -2.5e-39],
                        rng.uniform(-1e4, 1e4, 200), rng.uniform(-3, 3, 100)]).astype(np.float32)
    a[np.abs(a) < 1.2e-38] = 0.0  # no subnormal inputs (drivers may flush them)
    out = np.zeros(6 * len(a), np.float32)
    mod_consts(a, out)
    f = np.float32
    with np.errstate(all="ignore"):
        want = np.stack([np.remainder(a, f(1)), np.floor_divide(a, f(4)), np.remainder(a, f(-8)),
                         np.floor_divide(a, f(-2)), np.remainder(a, f(0.1)), np.floor_divide(a, f(0.1))], 1)
    assert_same(out.reshape(-1, 6), want)
    assert "% 1.0" not in compiler_wgsl(mod_consts, [F1, F1])


# -- shifts ---------------------------------------------------------------------------------------
def _shift_kernel(t):
    a1 = gr.types.ndarray(dtype=t, ndim=1)

    @gr.kernel
    def shifts(a: a1, n: I1, left: a1, right: a1):
        for i in range(a.shape[0]):
            left[i] = a[i] << n[i]
            right[i] = a[i] >> n[i]
    return shifts


@pytest.mark.parametrize("name", ["i32", "u32", pytest.param("i64", marks=need64), pytest.param("u64", marks=need64)])
def test_shifts_follow_numpy_outside_the_width(name, rng):
    t = getattr(gr, name)
    npt = t.numpy.type
    vals = np.array([1, 100, -5, 7, -1, 2**31 - 1, -(2**31), 12345], np.int64)
    counts = np.array([33, 46341, 40, -1, 0, 31, 32, 63, 64, 65, 1, 2**31 - 1, -(2**31), 7], np.int64)
    a = np.repeat(vals, len(counts)).astype(npt)  # wraps negative values of an unsigned type
    n = np.tile(counts, len(vals)).astype(np.int32)
    left, right = np.zeros_like(a), np.zeros_like(a)
    _shift_kernel(t)(a, n, left, right)
    # a << n computes on promote(t, i32) (t itself here) with the count read as u32 (-1 is huge)
    rt = compiler.types.promote(t, i32)
    want = {d: [opsem.shift(int(x), int(c) & 0xFFFFFFFF, rt, d) for x, c in zip(a, n)] for d in (True, False)}
    np.testing.assert_array_equal(left, np.array(want[True], dtype=object).astype(npt))
    np.testing.assert_array_equal(right, np.array(want[False], dtype=object).astype(npt))
    with np.errstate(all="ignore"):  # numpy itself agrees where the count is a valid count of its type
        ok = n >= 0
        np.testing.assert_array_equal(left[ok], np.left_shift(a[ok], n[ok].astype(npt)))
        np.testing.assert_array_equal(right[ok], np.right_shift(a[ok], n[ok].astype(npt)))
    if name == "i32":  # the issue's values
        assert left[0 * 14 + 0] == 0 and right[1 * 14 + 1] == 0 and right[2 * 14 + 2] == -1


@pytest.mark.parametrize("name", ["i32", pytest.param("i64", marks=need64)])
def test_shifts_by_constant_counts_outside_the_width(name):
    t = getattr(gr, name)
    a1 = gr.types.ndarray(dtype=t, ndim=1)

    @gr.kernel
    def shifts(a: a1, o: a1, f: F1):
        for i in range(a.shape[0]):
            o[i * 4 + 0] = a[i] << 33
            o[i * 4 + 1] = a[i] >> 70
            o[i * 4 + 2] = a[i] << (-1)  # a negative count is huge (numpy's rule on the fixed-width type)
            o[i * 4 + 3] = (a[i] << 64) + (a[i] >> 64)
            f[i] = gr.cast(a[i] << 65, gr.f32) + 0.5  # a folded shift inside a conversion
    a = np.array([1, -5, 100, 7], t.numpy)
    o, f = np.zeros(16, t.numpy), np.zeros(4, np.float32)
    shifts(a, o, f)
    sh = opsem.shift
    want = [[sh(int(x), 33, t, True), sh(int(x), 70, t, False), sh(int(x), 2**32 - 1, t, True),
             sh(int(x), 64, t, True) + sh(int(x), 64, t, False)] for x in a]
    np.testing.assert_array_equal(o.reshape(4, 4), want)
    np.testing.assert_array_equal(f, 0.5)


# -- ** ------------------------------------------------------------------------------------------
def _pow_kernel(a: D1, b: D1, o: D1, c: D1):
    for i in range(a.shape[0]):
        o[i] = a[i] ** b[i]
        c[i] = a[i] ** 2147483647.0


@need64
def test_pow_of_a_negative_base_takes_the_sign_of_a_huge_exponent():
    a = np.array([-1.0, -2.5, -2.0, -1.0, -0.5, -1.0, -3.0, 2.0])
    b = np.array([2147483647.0, 2147483647.0, 1e300, 2.0**53 - 1, 2.0**52 + 1, 4503599627370497.0, 3.0, 0.5])
    with np.errstate(all="ignore"):
        want_o, want_c = np.power(a, b), np.power(a, 2147483647.0)
    o, c = np.zeros_like(a), np.zeros_like(a)
    gr.kernel(_pow_kernel)(a, b, o, c)
    ir = compiler.lower(_pow_kernel, [ArgSpec(x, "ndarray", elem=f64, ndim=1) for x in "aboc"])
    o2, c2 = np.zeros_like(a), np.zeros_like(a)
    execute(ir, [a, b, o2, c2])  # the IR interpreter computes f64 in f64 (it rounded 2147483647.0 to f32)
    for got in (o, o2):
        np.testing.assert_allclose(got, want_o, rtol=1e-13)
        assert got[0] == -1.0 and got[1] == -np.inf and got[2] == np.inf
    for got in (c, c2):
        np.testing.assert_allclose(got, want_c, rtol=1e-13)


# -- NaN ------------------------------------------------------------------------------------------
@gr.kernel
def nan_ops(x: F1, y: F1, flags: I1, vals: F1):
    for i in range(x.shape[0]):
        a, b = x[i], y[i]
        f = 0
        if a != a:
            f |= 1
        if not (a < b):
            f |= 2
        if a == b:
            f |= 4
        if a >= b:
            f |= 8
        if a:
            f |= 16
        f |= gr.select(a <= 3.0, 32, 0) | gr.select(a > b, 64, 0) | gr.select(a != b, 128, 0)
        flags[i] = f
        n = x.shape[0]
        vals[i] = max(a, 3.0)
        vals[n + i] = gr.min(b, a)
        vals[2 * n + i] = a - a
        vals[3 * n + i] = 0.0 * a
        vals[4 * n + i] = a / a
        vals[5 * n + i] = gr.max(a, b)
        vals[6 * n + i] = a * 0.0 + b
        vals[7 * n + i] = a / 0.0
        vals[8 * n + i] = 0.0 / b


def test_nan_in_comparisons_min_max_and_identities():
    x = np.array([np.nan, 1.0, np.inf, -np.inf, 5.0, np.nan, 2.0, 0.0], np.float32)
    y = np.array([3.0, np.nan, np.inf, 1.0, 5.0, np.nan, -1.0, -0.0], np.float32)
    flags, vals = np.zeros(8, np.int32), np.zeros(72, np.float32)
    nan_ops(x, y, flags, vals)
    want = (np.isnan(x) * 1 | ~(x < y) * 2 | (x == y) * 4 | (x >= y) * 8 | (x != 0) * 16 | (x <= 3) * 32
            | (x > y) * 64 | (x != y) * 128)
    np.testing.assert_array_equal(flags, want)
    with np.errstate(all="ignore"):
        want = np.concatenate([np.maximum(x, 3), np.minimum(y, x), x - x, 0 * x, x / x, np.maximum(x, y),
                               x * 0 + y, x / np.float32(0), 0 / y])
    n = len(x)
    both_zero = np.zeros(len(want), bool)   # min / max of 0.0 and -0.0: either zero (docs/language.md)
    both_zero[n:2 * n] = both_zero[5 * n:6 * n] = (x == 0) & (y == 0)
    np.testing.assert_array_equal(vals[both_zero], 0.0)
    assert_same(vals[~both_zero], want[~both_zero])


# -- float -> int casts ---------------------------------------------------------------------------
CAST_VALUES = [1e10, -1e10, np.nan, 3e9, -3e9, 2147483647.5, -2147483648.5, 4294967296.0, -0.5, 0.99, -2.5,
               1e20, -1e20, 9.3e18, -9.3e18, 255.9, 256.0, -129.0, np.inf, -np.inf, 65535.0, 40000.0]


def _cast_kernel(src, dst):
    s1, d1 = gr.types.ndarray(dtype=src, ndim=1), gr.types.ndarray(dtype=dst, ndim=1)

    @gr.kernel
    def cast(x: s1, a: d1, b: d1):
        for i in range(x.shape[0]):
            a[i] = gr.cast(x[i], dst)
            b[i] = int(x[i]) if dst == gr.i32 else gr.cast(x[i] * 1.0, dst)
    return cast


@pytest.mark.parametrize("src", ["f32", pytest.param("f64", marks=need64)])
@pytest.mark.parametrize("dst", ["i32", "u32", "i8", "u16", pytest.param("i64", marks=need64),
                                 pytest.param("u64", marks=need64)])
def test_float_to_int_casts_saturate_and_nan_is_zero(src, dst):
    s, d = getattr(gr, src), getattr(gr, dst)
    x = np.array(CAST_VALUES, NP[src])
    a, b = np.zeros(len(x), d.numpy), np.zeros(len(x), d.numpy)
    _cast_kernel(s, d)(x, a, b)
    want = np.array([opsem.to_int(float(v), d) for v in x], dtype=object).astype(d.numpy)
    np.testing.assert_array_equal(a, want)
    np.testing.assert_array_equal(b, want)
    np.testing.assert_array_equal(gr.cast(x, d), want)  # the host's gr.cast agrees
    if dst == "i32":
        assert list(a[:3]) == [2**31 - 1, -(2**31), 0]


# -- one semantics: device, interpreter, constant folding ---------------------------------------------
def _ops_kernel(a: F1, b: F1, n: I1, o: F1, k: I1):
    for i in range(a.shape[0]):
        o[i * 5 + 0] = a[i] % b[i]
        o[i * 5 + 1] = a[i] // b[i]
        o[i * 5 + 2] = max(a[i], b[i])
        o[i * 5 + 3] = gr.min(a[i] - a[i], b[i])
        o[i * 5 + 4] = a[i] ** b[i]
        k[i * 3 + 0] = n[i] << (n[i] % 40)
        k[i * 3 + 1] = int(a[i] * 1e9)
        k[i * 3 + 2] = gr.select(a[i] != a[i], 1, 0) + (n[i] >> 35)


def test_device_interpreter_and_folding_agree(rng):
    a = np.concatenate([[1e30, 2147483648.0, 1e-38, 1.0, np.nan, np.inf, -7.5, 3.0], rng.uniform(-50, 50, 24)])
    b = np.concatenate([[100.0, 46341.0, -1e30, 0.1, 2.0, 3.0, 2.0, -2.0], rng.uniform(-5, 5, 24)])
    a, b = a.astype(np.float32), b.astype(np.float32)
    n = rng.integers(-2**31, 2**31, len(a)).astype(np.int32)
    o, k = np.zeros(5 * len(a), np.float32), np.zeros(3 * len(a), np.int32)
    gr.kernel(_ops_kernel)(a, b, n, o, k)
    ir = compiler.lower(_ops_kernel, [ArgSpec(x, "ndarray", elem=t, ndim=1)
                                      for x, t in zip("abnok", (f32, f32, i32, f32, i32))])
    o2, k2 = np.zeros_like(o), np.zeros_like(k)
    execute(ir, [a, b, n, o2, k2])
    np.testing.assert_array_equal(k, k2)
    exact = np.ones((len(a), 5), bool)
    exact[:, 4] = False  # ** is the device's approximation
    # documented latitude (docs/language.md): `//` is exact below a quotient of 2**20, beyond it the
    # division's last bit is the device's; a subnormal may be flushed to zero (an H100 does)
    got, want = o.reshape(-1, 5), o2.reshape(-1, 5)
    big_q = np.abs(want[:, 1]) >= 2.0**20
    np.testing.assert_allclose(got[big_q, 1], want[big_q, 1], rtol=2.0**-22)
    exact[big_q, 1] = False
    tiny = (want != 0) & (np.abs(want) < np.finfo(np.float32).tiny)
    flushed = exact & tiny & (got == 0)
    assert_same(got[exact & ~flushed], want[exact & ~flushed])
    np.testing.assert_allclose(o.reshape(-1, 5)[:, 4], o2.reshape(-1, 5)[:, 4], rtol=1e-5, equal_nan=True)

    @gr.kernel
    def folded(o: F1, k: I1):  # the same operations on constants, folded by the compiler
        o[0] = gr.f32(1e30) % gr.f32(100.0)
        o[1] = gr.f32(1.0) // gr.f32(0.1)
        o[2] = max(gr.f32(math.nan), gr.f32(3.0))
        o[3] = gr.f32(math.inf) - gr.f32(math.inf)
        k[0] = gr.i32(1) << gr.i32(33)
        k[1] = gr.cast(gr.f32(1e10), gr.i32)
        k[2] = gr.i32(-5) >> gr.i32(40)
    fo, fk = np.zeros(4, np.float32), np.zeros(3, np.int32)
    folded(fo, fk)
    assert_same(fo, np.array([40.0, 9.0, np.nan, np.nan], np.float32))
    np.testing.assert_array_equal(fk, [0, 2**31 - 1, -1])


def compiler_wgsl(kernel, types):
    fn = kernel.__wrapped__
    names = fn.__code__.co_varnames[:fn.__code__.co_argcount]
    args = [ArgSpec(n, "ndarray", elem=t.dtype, ndim=t.ndim) for n, t in zip(names, types)]
    return compiler.compile_kernel(fn, args, Target(frozenset({"immediates"}), 128)).wgsl


# -- f32 / f64 mixes: each operation in its own type, inline or through locals --------------------------
@gr.func
def _mix(a, b, c):
    s = c + b  # intermediates in locals (each call of the func has its own, of its arguments' types)
    t = s - a
    u = t - 0.1
    return ((c + b) - a - 0.1) * (c + b), u * s


def _mix_kernel(a32: F1, a64: D1, b32: F1, b64: D1, c32: F1, c64: D1, inline: D1, stored: D1):
    for i in range(a32.shape[0]):
        for k in gr.static(range(8)):
            inline[i * 8 + k], stored[i * 8 + k] = _mix(a64[i] if gr.static(k & 1) else a32[i],
                                                        b64[i] if gr.static(k & 2) else b32[i],
                                                        c64[i] if gr.static(k & 4) else c32[i])


@need64
def test_f32_f64_mixes_round_each_operation_to_its_type(rng):
    """`((c + b) - a - 0.1) * (c + b)` for every f32 / f64 assignment of a, b, c, inline and with
    the intermediates in locals, on the device and in the IR interpreter (which computed f64 in f32:
    0.1 off by 1.5e-9), against numpy on numpy scalars of each operation's type."""
    n = 64
    args = []
    for _ in "abc":
        v = rng.uniform(-3, 3, n).astype(np.float32)
        args += [v, v.astype(np.float64)]
    inline, stored = np.zeros(8 * n), np.zeros(8 * n)
    gr.kernel(_mix_kernel)(*args, inline, stored)
    ir = compiler.lower(_mix_kernel, [ArgSpec(x, "ndarray", elem=t, ndim=1) for x, t in
                                      zip(["a32", "a64", "b32", "b64", "c32", "c64", "inline", "stored"],
                                          [f32, f64, f32, f64, f32, f64, f64, f64])])
    inline2, stored2 = np.zeros(8 * n), np.zeros(8 * n)
    execute(ir, [*args, inline2, stored2])
    for k in range(8):
        a, b, c = (args[2 * j + 1] if k & (1 << j) else args[2 * j] for j in range(3))
        s = c + b  # numpy 2: f32 + f32 stays f32, a Python float takes the other operand's type
        want = (s - a - 0.1) * s
        eps = np.finfo(want.dtype).eps if s.dtype == want.dtype else np.finfo(np.float32).eps
        scale = (np.abs(s) + np.abs(a) + 0.1) * np.abs(s)
        for got in (inline, stored, inline2, stored2):
            err = np.abs(got.reshape(n, 8)[:, k] - want) / scale
            assert err.max() <= 4 * eps, (k, err.max())
