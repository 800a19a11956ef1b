"""64-bit and narrow types, as Taichi has them: f64 / i64 / u64 (adapter features shader-f64 /
shader-int64), i8 / i16 / u8 / u16 storage, scalar arguments, return values, promotion,
gr.cast wrapping, gr.init(default_fp=, default_ip=), and the errors where WebGPU has no way."""
import numpy as np
import pytest
from gfxrt.compiler.spec import ArgSpec
from gfxrt.compiler.target import Target

import gfxrt as gr
from gfxrt import compiler


def _has(feature):
    return feature in gr.device().features


need64 = pytest.mark.skipif("not _has('shader-f64') or not _has('shader-int64')")

D1 = gr.types.ndarray(dtype=gr.f64, ndim=1)
L1 = gr.types.ndarray(dtype=gr.i64, ndim=1)
Q1 = gr.types.ndarray(dtype=gr.u64, ndim=1)


@gr.kernel
def axpy64(a: gr.f64, x: D1, y: D1):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i] / 3.0 + gr.sqrt(x[i]) - gr.floor(x[i] * 7.0)


@need64
def test_f64_arithmetic_is_double_precision(rng):
    x = rng.random(1000)
    y = rng.random(1000)
    a = 1.0 + 2.0**-40  # not representable in f32
    want = a * x + y / 3.0 + np.sqrt(x) - np.floor(x * 7.0)
    axpy64(a, x, y)
    np.testing.assert_allclose(y, want, rtol=1e-15, atol=1e-15)


@need64
def test_f64_math_is_double_precision(rng):
    # SPIR-V has 32-bit transcendentals only: gfxrt computes these itself in f64
    @gr.kernel
    def m(x: D1, y: D1, o: gr.types.ndarray(dtype=gr.f64, ndim=2)):
        for i in range(x.shape[0]):
            a = x[i]
            o[0, i] = gr.sin(a)
            o[1, i] = gr.cos(a)
            o[2, i] = gr.tan(a)
            o[3, i] = gr.exp(a)
            o[4, i] = gr.log(abs(a))
            o[5, i] = gr.atan(a)
            o[6, i] = gr.atan2(a, y[i])
            o[7, i] = gr.tanh(a)
            o[8, i] = gr.asin(y[i] / 3.0)
            o[9, i] = gr.acos(y[i] / 3.0)
            o[10, i] = abs(a) ** y[i]

    x = np.concatenate([rng.uniform(-10, 10, 200), rng.uniform(-700, 700, 30), [1e-300, -1e-5, 0.5, 1e5]])
    y = rng.uniform(-3, 3, len(x))
    o = np.zeros((11, len(x)))
    m(x, y, o)
    with np.errstate(over="ignore"):
        want = [np.sin(x), np.cos(x), np.tan(x), np.exp(x), np.log(abs(x)), np.arctan(x), np.arctan2(x, y),
                np.tanh(x), np.arcsin(y / 3), np.arccos(y / 3), np.abs(x) ** y]
    # A driver may fold a multi-part constant of an argument reduction (pi/2 for sin / cos / tan,
    # ln 2 for exp / tanh / pow) into one double (an H100 does): the reduced argument is then off
    # by up to |arg| * 2^-53. That is an absolute error of sin / cos, amplified by tan' = 1 + tan^2
    # for tan, and a relative error of exp. pow: exp(b log a), about |b log a| ulps.
    scale = np.abs(x) * 2.0**-52
    # asin / acos of y / 3: the device's f64 division may be 1 ulp off (an H100's is), and
    # asin' = 1 / sqrt(1 - a^2) amplifies that near |a| = 1
    a = y / 3
    amplified = 2.0**-51 * np.abs(a) / np.sqrt(np.maximum(1 - a * a, 1e-300))
    bounds = {0: (5e-15, scale), 1: (5e-15, scale), 2: (5e-15, scale * (1.0 + want[2] ** 2)),
              3: (np.maximum(5e-15, scale), 0.0), 7: (np.maximum(5e-15, 2 * scale), 0.0),
              8: (5e-15, amplified), 9: (5e-15, amplified),
              10: (np.maximum(1e-13, np.abs(y * np.log(np.abs(x))) * 2.0**-50), 0.0)}
    failures = []
    for k, w in enumerate(want):
        rtol, atol = bounds.get(k, (5e-15, 0.0))
        with np.errstate(invalid="ignore"):
            ok = (o[k] == w) | (np.isnan(o[k]) & np.isnan(w)) | (np.abs(o[k] - w) <= rtol * np.abs(w) + atol + 1e-300)
        bad = np.flatnonzero(~ok)
        if bad.size:
            failures.append((k, x[bad[:3]], o[k][bad[:3]], w[bad[:3]]))
    assert not failures, failures


@need64
def test_f64_numpy_arrays_upload_byte_for_byte():
    x = np.array([1.0 + 2.0**-52, 1e-300, -1e300, np.pi], np.float64)
    y = np.zeros(4)

    @gr.kernel
    def copy(src: D1, dst: D1):
        for i in range(src.shape[0]):
            dst[i] = src[i]
    copy(x, y)
    assert y.tobytes() == x.tobytes()
    d = gr.ndarray(gr.f64, shape=4)
    d.from_numpy(x)
    assert d.to_numpy().tobytes() == x.tobytes()
    assert d.dtype == gr.f64 and d.to_numpy().dtype == np.float64


@need64
def test_i64_u64_arithmetic_like_numpy(rng):
    @gr.kernel
    def ops(a: gr.i64, x: L1, fd: L1, md: L1, sh: Q1, mx: L1):
        for i in range(x.shape[0]):
            fd[i] = x[i] * a // 7
            md[i] = x[i] % 1000003
            sh[i] = (gr.cast(x[i], gr.u64) << 3) ^ (gr.cast(x[i], gr.u64) >> 60)
            mx[i] = max(x[i], -x[i]) + min(x[i], 5)

    x = rng.integers(-2**45, 2**45, 500, dtype=np.int64)
    fd, md, mx = (np.zeros_like(x) for _ in range(3))
    sh = np.zeros(500, np.uint64)
    ops(2**15 + 1, x, fd, md, sh, mx)
    np.testing.assert_array_equal(fd, x * (2**15 + 1) // 7)
    np.testing.assert_array_equal(md, x % 1000003)
    u = x.astype(np.uint64)
    np.testing.assert_array_equal(sh, (u << np.uint64(3)) ^ (u >> np.uint64(60)))
    np.testing.assert_array_equal(mx, np.abs(x) + np.minimum(x, 5))


I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)
U1 = gr.types.ndarray(dtype=gr.u32, ndim=1)


@need64
def test_32_to_64_bit_conversions_keep_the_value_like_numpy():
    """Found by tools/progfuzz (seeds 31, 109 of profile arith): i32 -> u64 zero-extended the bits
    (-1 became 4294967295) and u32 -> i64 sign-extended them (4294967295 became -1); numpy and C
    extend by the source's signedness (value modulo 2^64), in stores, gr.cast and arithmetic."""
    @gr.kernel
    def widen(x: I1, u: U1, xq: Q1, ul: L1, mixed: Q1):
        for i in range(x.shape[0]):
            xq[i] = x[i]                             # an implicit conversion in the store
            ul[i] = gr.cast(u[i], gr.i64)
            mixed[i] = gr.cast(x[i], gr.u64) + gr.cast(u[i], gr.u64)

    x = np.array([-1, -20, 5, -2**31, 2**31 - 1, 0], np.int32)
    u = np.array([2**32 - 1, 2**31, 7, 0, 2**31 - 1, 1], np.uint32)
    xq, mixed = np.zeros(6, np.uint64), np.zeros(6, np.uint64)
    ul = np.zeros(6, np.int64)
    widen(x, u, xq, ul, mixed)
    np.testing.assert_array_equal(xq, x.astype(np.uint64))
    np.testing.assert_array_equal(ul, u.astype(np.int64))
    np.testing.assert_array_equal(mixed, x.astype(np.uint64) + u.astype(np.uint64))


@need64
def test_sign_extended_values_compare_right():
    """Found by tools/progfuzz (arith seed 1159): `x_i64 % x_i32` gave 10 % -11 == 10. Mesa's
    lavapipe (22.3) compares an i32 sign-extended to i64 with a constant wrongly
    (`i64(a) < 0` is false for a = -11, so the floor modulo took the wrong sign); the cast is
    emitted through its bits there."""
    @gr.kernel
    def signs(a: I1, b: L1, m: L1, neg: I1, big: Q1):
        for i in range(a.shape[0]):
            t = gr.cast(a[i], gr.i64)
            m[i] = b[i] % a[i]
            neg[i] = gr.select(t < 0, 1, 0) + gr.select(t <= -3, 10, 0) + gr.select(t > 2, 100, 0)
            big[i] = gr.cast(a[i], gr.u64) // gr.cast(3, gr.u64)

    a = np.array([-11, 11, -3, 5, -2**31, 1], np.int32)
    b = np.array([10, -10, 7, -7, 2**40, 9], np.int64)
    m, neg, big = np.zeros(6, np.int64), np.zeros(6, np.int32), np.zeros(6, np.uint64)
    signs(a, b, m, neg, big)
    np.testing.assert_array_equal(m, b % a)
    np.testing.assert_array_equal(neg, (a < 0) + 10 * (a <= -3) + 100 * (a > 2))
    np.testing.assert_array_equal(big, a.astype(np.uint64) // np.uint64(3))


@need64
@pytest.mark.parametrize("base", [0, 7])
def test_u64_power_with_a_computed_exponent(base):
    """Found by tools/progfuzz on the H100 (arith seed 955, shrunk): `b ** ((c ** 3) % 4)` with the
    exponent 0 gave 0 (0 ** 0 is 1) there, right on lavapipe and right in isolation; the squaring
    loop of gr_ipow now starts from an opaque copy of the exponent (compiler/codegen/wgsl_loops.py:
    the NVIDIA driver's loop analysis)."""
    @gr.kernel
    def kern(x_f32: gr.types.ndarray(dtype=gr.f32, ndim=1), x_i32: I1, x_u64: Q1, cnt: I1, o0_i32: I1, o0_u64: Q1,
             q: gr.i32):
        s0 = 0
        for i in range(2, 3):
            v1 = x_f32[(i % 104)]
            o0_i32[i] = (0.5 + i)
            s0 ^= max(int(gr.cast(max(v1, (-1000.0)), gr.i64)), cnt[i])
            o0_i32[i] = i
            o0_u64[i] = (x_u64[(x_i32[i] % 104)] ** ((x_u64[(x_i32[(q % 104)] % 104)] ** 3) % 4))
            gr.atomic_xor(s0, 31)

    x_f32 = np.array([0.0, 0.0, 1.2528011798858643, 0.0], np.float32)
    x_i32 = np.array([38, 20, -19775, -11], np.int32)
    x_u64 = np.zeros(104, np.uint64)
    x_u64[20], x_u64[89] = 50670, base   # (50670 ** 3) % 4 == 0
    cnt = np.array([3, 11, -3, 5], np.int32)
    o0_i32, o0_u64 = np.full(4, 9, np.int32), np.full(4, 9, np.uint64)
    kern(x_f32, x_i32, x_u64, cnt, o0_i32, o0_u64, 1)
    assert o0_i32[2] == 2 and o0_u64[2] == 1, (o0_i32, o0_u64)


@gr.kernel
def _continue_beside_division(x: L1, o: L1):
    for i in range(x.shape[0]):
        if (x[i] + x[i]) <= 3:
            continue
        o[i] = x[i] // 5


@gr.kernel
def _choice_beside_f64_division(x: L1, xf: D1, a: gr.types.ndarray(dtype=gr.f32, ndim=1),
                                o: gr.types.ndarray(dtype=gr.f32, ndim=1), p: D1):
    for i in range(x.shape[0]):
        v2 = 0
        if (x[i] * 2) > 1:
            v2 = 1
        p[i] = xf[i] / xf[0]
        o[i] = a[v2]


@need64
def test_64bit_comparisons_beside_a_division():
    """Found by tools/progfuzz on the H100 (seeds 22580 and 20851, shrunk): a 64-bit comparison
    next to a 64-bit integer or f64 division came out as if unsigned there (every negative x
    took the wrong branch; experiments/i64_branch.py); right on lavapipe. Comparisons of 64-bit
    integers are now made of 32-bit comparisons of the halves (compiler/codegen/wgsl_types.py)."""
    rng = np.random.default_rng(5)
    x = np.concatenate([np.arange(-20, 21), rng.integers(-2**62, 2**62, 87)]).astype(np.int64)
    o = np.zeros(len(x), np.int64)
    _continue_beside_division(x, o)
    np.testing.assert_array_equal(o, [v // 5 if v + v > 3 else 0 for v in x.tolist()])
    xf, a = rng.standard_normal(len(x)) + 2.0, np.array([-1.5, -2.1], np.float32)
    o, p = np.zeros(len(x), np.float32), np.zeros(len(x))
    _choice_beside_f64_division(x, xf, a, o, p)
    np.testing.assert_array_equal(o, np.where(x * 2 > 1, a[1], a[0]))
    np.testing.assert_array_equal(p, xf / xf[0])


@gr.kernel
def _divmod64(a: L1, b: L1, q: L1, r: L1, ua: Q1, ub: Q1, uq: Q1, ur: Q1):
    for i in range(a.shape[0]):
        q[i] = a[i] // b[i]
        r[i] = a[i] % b[i]
        uq[i] = ua[i] // ub[i]
        ur[i] = ua[i] % ub[i]


@gr.kernel
def _product_beside_remainder(x7: gr.types.ndarray(dtype=gr.u32, ndim=1), x8: L1, o1: L1, o2: L1):
    for i in range(x8.shape[0]):
        o1[i] = x7[i] * (1 & x8[i])
        o2[i] = x8[i] % 33


@need64
def test_64bit_division_is_exact_for_every_operand_size():
    """64-bit `//` and `%` are gfxrt's own shift-and-subtract division, not the driver's: on the
    H100 `x7 * (1 & x8)` gave x7 beside a 64-bit `% 33` (opsem fuzz seed 263; right on lavapipe).
    Both halves of the algorithm (32-bit operands, quotients of 1 to 64 bits) against Python."""
    rng = np.random.default_rng(11)
    edges = np.array([0, 1, 2, 3, 5, 7, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**62, 2**63 - 1, -1, -2,
                      -3, -2**31, -2**32, -2**32 - 1, -2**63, -2**63 + 1, 12345678901234567], np.int64)
    big = rng.integers(-2**63, 2**63 - 1, 4000, dtype=np.int64)
    a = np.concatenate([np.repeat(edges, len(edges)), big, big >> rng.integers(0, 63, 4000)])
    b = np.concatenate([np.tile(edges, len(edges)), big[::-1] >> rng.integers(0, 63, 4000), rng.integers(-9, 9, 4000)])
    q, r = np.zeros_like(a), np.zeros_like(a)
    ua, ub = a.view(np.uint64), b.view(np.uint64)
    uq, ur = np.zeros_like(ua), np.zeros_like(ua)
    _divmod64(a, b, q, r, ua, ub, uq, ur)
    wrap = lambda v: (v + 2**63) % 2**64 - 2**63  # noqa: E731  (-2**63 // -1 wraps)
    pairs, upairs = list(zip(a.tolist(), b.tolist())), list(zip(ua.tolist(), ub.tolist()))
    np.testing.assert_array_equal(q, [wrap(x // y) if y else 0 for x, y in pairs])
    np.testing.assert_array_equal(r, [x % y if y else 0 for x, y in pairs])
    np.testing.assert_array_equal(uq, np.array([x // y if y else 0 for x, y in upairs], np.uint64))
    np.testing.assert_array_equal(ur, np.array([x % y if y else 0 for x, y in upairs], np.uint64))
    x7 = rng.integers(0, 2**32, 256, dtype=np.uint32)
    x8 = rng.integers(-2**63, 2**63 - 1, 256, dtype=np.int64)
    o1, o2 = np.zeros(256, np.int64), np.zeros(256, np.int64)
    _product_beside_remainder(x7, x8, o1, o2)
    np.testing.assert_array_equal(o1, x7.astype(np.int64) * (x8 & 1))
    np.testing.assert_array_equal(o2, np.mod(x8, 33))


@pytest.mark.parametrize("dt", ["i64", "u64"])
def test_64bit_comparisons_are_made_of_32bit_ones(dt):
    """The WGSL of every comparison of two 64-bit integers compares 32-bit halves (see above)."""
    t = getattr(gr, dt)
    arr = gr.types.ndarray(dtype=t, ndim=1)

    def compares(x: arr, y: arr, o: gr.types.ndarray(dtype=gr.i32, ndim=1)):
        for i in range(x.shape[0]):
            o[i] = (int(x[i] < y[i]) + 2 * int(x[i] <= y[i]) + 4 * int(x[i] > y[i]) + 8 * int(x[i] >= y[i])
                    + 16 * int(x[i] == y[i]) + 32 * int(x[i] != y[i]))

    args = [ArgSpec("x", "ndarray", elem=t, ndim=1), ArgSpec("y", "ndarray", elem=t, ndim=1),
            ArgSpec("o", "ndarray", elem=gr.i32, ndim=1)]
    spec = compiler.compile_kernel(compares, args, Target(frozenset({"shader-int64"})))
    body = spec.wgsl[spec.wgsl.index("@compute"):]
    lines = [ln.split("//")[0] for ln in body.splitlines() if "b0_x[" in ln]
    assert lines and all(ln.count(f"gr_lt_{dt}(") == 4 and ln.count(f"gr_eq_{dt}(") == 2 for ln in lines), lines
    for op in (" < ", " <= ", " > ", " >= ", " == ", " != "):
        assert not any(op in ln for ln in lines), (op, lines)


@need64
def test_64bit_scalar_arguments_and_return_values():
    @gr.kernel
    def ret(a: gr.f64, b: gr.i64, c: gr.u64) -> (gr.f64, gr.i64, gr.u64, gr.f32):
        return a * 3.0, b - 1, c + 1, gr.f32(a)

    a = 0.1 + 2.0**-50
    r = ret(a, -2**62, 2**64 - 2)
    assert r == (a * 3.0, -2**62 - 1, 2**64 - 1, pytest.approx(a, rel=1e-7))
    assert isinstance(r[1], int) and isinstance(r[0], float)
    with pytest.raises(ValueError, match="does not fit in i64"):
        ret(1.0, 2**63, 0)


@need64
def test_mixed_promotion_follows_taichi():
    @gr.kernel
    def mix(x: D1, n: L1, out: D1):
        for i in range(x.shape[0]):
            v = n[i] + 2**33         # i64 + Python int stays i64
            out[i] = x[i] * 2 + v    # f64 op int -> f64

    x = np.array([0.25, -1.5])
    n = np.array([3, -2**40], np.int64)
    out = np.zeros(2)
    mix(x, n, out)
    np.testing.assert_array_equal(out, x * 2 + (n + 2**33))


NARROW = [(gr.i8, np.int8), (gr.i16, np.int16), (gr.u8, np.uint8), (gr.u16, np.uint16)]


@pytest.mark.parametrize("dt,npdt", NARROW, ids=lambda v: str(v))
def test_narrow_storage_load_store_wrap(dt, npdt, rng):
    @gr.kernel
    def step(a: gr.template(), x: gr.types.ndarray(), wide: gr.types.ndarray(dtype=gr.i32, ndim=1)):
        for i in range(x.shape[0]):
            wide[i] = x[i] * 3        # computed in 32 bits: no wrap
            x[i] = x[i] * 3 + a       # wraps to the narrow type when stored

    info = np.iinfo(npdt)
    x = rng.integers(info.min, int(info.max) + 1, 1001).astype(npdt)  # odd length: a partial last word
    wide = np.zeros(1001, np.int32)
    want = (x.astype(np.int64) * 3 + 5).astype(npdt)
    wide_want = (x.astype(np.int64) * 3).astype(np.int32)
    step(5, x, wide)
    np.testing.assert_array_equal(wide, wide_want)
    np.testing.assert_array_equal(x, want)


@pytest.mark.parametrize("dt,npdt", NARROW, ids=lambda v: str(v))
def test_narrow_device_arrays_and_neighbours(dt, npdt):
    # each thread stores one element; four (two) of them share a u32 word
    n = 4099
    a = gr.ndarray(dt, shape=(n,))
    src = (np.arange(n) * 7).astype(npdt)
    a.from_numpy(src)
    assert a.to_numpy().dtype == npdt
    np.testing.assert_array_equal(a.to_numpy(), src)

    @gr.kernel
    def bump(x: gr.types.ndarray(ndim=1)):
        for i in range(x.shape[0]):
            if i % 3 != 1:
                x[i] = x[i] + 1

    bump(a)
    want = src.copy()
    idx = np.arange(n) % 3 != 1
    want[idx] = (src[idx].astype(np.int64) + 1).astype(npdt)
    np.testing.assert_array_equal(a.to_numpy(), want)
    a.fill(-1 if dt.kind == "int" else 200)
    assert (a.to_numpy() == npdt(-1 if dt.kind == "int" else 200)).all()


@pytest.mark.parametrize("dt,npdt", NARROW, ids=lambda v: str(v))
def test_narrow_atomics(dt, npdt):
    # a histogram: threads update neighbouring elements of one u32 word at once
    @gr.kernel
    def hist(idx: gr.types.ndarray(dtype=gr.i32, ndim=1), h: gr.types.ndarray(ndim=1),
             m: gr.types.ndarray(ndim=1), old: gr.types.ndarray(dtype=gr.i32, ndim=1)):
        for i in range(idx.shape[0]):
            h[idx[i]] += 1
            gr.atomic_max(m[idx[i] % 3], i % 100 - 50)  # converted to m's type first
            old[i] = gr.atomic_add(h[9], 0)

    n = 3000
    idx = (np.arange(n) * 7 % 9).astype(np.int32)
    h = np.zeros(10, npdt)
    m = np.full(3, np.iinfo(npdt).min, npdt)
    old = np.zeros(n, np.int32)
    hist(idx, h, m, old)
    np.testing.assert_array_equal(h, np.bincount(idx, minlength=10).astype(npdt))  # wraps like numpy
    want_m = np.full(3, np.iinfo(npdt).min, np.int64)
    for i in range(n):
        want_m[idx[i] % 3] = max(want_m[idx[i] % 3], (i % 100 - 50) % 2**(8 * np.dtype(npdt).itemsize)
                                 if dt.kind == "uint" else i % 100 - 50)
    np.testing.assert_array_equal(m, want_m.astype(npdt))
    assert (old == 0).all()


def test_narrow_in_32bit_arithmetic_and_cast_wraps():
    @gr.kernel
    def k(x: gr.types.ndarray(dtype=gr.i8, ndim=1), out: gr.types.ndarray(dtype=gr.i32, ndim=1), s: gr.u8):
        for i in range(x.shape[0]):
            out[i] = x[i] * 2 + s                  # i8 * int -> 32-bit
            out[i + x.shape[0]] = gr.cast(x[i] * 2, gr.i8)  # wraps like numpy's astype
            out[i + 2 * x.shape[0]] = gr.cast(gr.cast(x[i], gr.u8), gr.i32)

    x = np.array([100, -100, 127, -128, 3], np.int8)
    out = np.zeros(15, np.int32)
    k(x, out, 255)
    n = len(x)
    np.testing.assert_array_equal(out[:n], x.astype(np.int32) * 2 + 255)
    np.testing.assert_array_equal(out[n:2 * n], (x.astype(np.int32) * 2).astype(np.int8))
    np.testing.assert_array_equal(out[2 * n:], x.astype(np.uint8))
    with pytest.raises(ValueError, match="does not fit in u8"):
        k(x, out, 256)


@need64
def test_default_fp_and_ip():
    opts = gr.runtime().dev.options
    try:
        gr.init(default_fp=gr.f64, default_ip=gr.i64)

        @gr.kernel
        def lit(x: D1, n: L1):
            for i in range(x.shape[0]):
                x[i] = 0.1 * i + 1.0 / 3.0       # Python floats are f64
                n[i] = 2**40 * (i + 1)           # Python ints are i64

        x, n = np.zeros(3), np.zeros(3, np.int64)
        lit(x, n)
        np.testing.assert_array_equal(x, 0.1 * np.arange(3) + 1.0 / 3.0)
        np.testing.assert_array_equal(n, 2**40 * np.arange(1, 4))
        assert gr.ndarray(float, shape=2).dtype == gr.f64 and gr.field(int, shape=2).dtype == gr.i64
        with pytest.raises(ValueError, match="default_fp"):
            gr.init(default_fp=gr.i32)
    finally:
        gr.init(adapter=opts.adapter, debug=opts.debug, adstack_size=opts.adstack_size,
                offline_cache=opts.offline_cache)
    assert gr.ndarray(float, shape=2).dtype == gr.f32


@need64
def test_errors_name_the_limit():
    @gr.kernel
    def reduce64(x: D1) -> gr.f64:
        s = gr.f64(0.0)
        for i in range(x.shape[0]):
            s += x[i]
        return s

    with pytest.raises(gr.CompileError, match="f64 values do not fit the 4-byte words"):
        reduce64(np.zeros(4))


@need64
def test_64bit_atomics_and_field_reductions(rng):
    if not _has("shader-int64-atomic-all-ops"):
        pytest.skip("no 64-bit atomics on this adapter")
    total = gr.field(gr.f64, shape=())
    stats = gr.field(gr.i64, shape=(2,))

    @gr.kernel
    def hist(x: D1, idx: gr.types.ndarray(dtype=gr.i32, ndim=1), h: D1):
        for i in range(x.shape[0]):
            total[None] += x[i]                          # a block reduction, then one f64 atomic per block
            stats[0] += 1
            gr.atomic_max(stats[1], gr.i64(i) * 2**33)
            h[idx[i]] += x[i]                            # compare-and-swap on u64 words

    n = 20000
    x = rng.random(n)
    idx = (np.arange(n) % 7).astype(np.int32)
    h = np.zeros(7)
    hist(x, idx, h)
    np.testing.assert_allclose(total.to_numpy(), x.sum(), rtol=1e-13)
    np.testing.assert_array_equal(stats.to_numpy(), [n, (n - 1) * 2**33])
    np.testing.assert_allclose(h, np.bincount(idx, x), rtol=1e-13)

    a = gr.ndarray(gr.f64, shape=4, needs_grad=True)  # gradients accumulate with f64 atomics
    b = gr.ndarray(gr.f64, shape=4, needs_grad=True)

    @gr.kernel
    def f(a: D1, b: D1):
        for i in range(a.shape[0]):
            b[i] = gr.sin(a[i]) * a[i]

    v = np.arange(4.0)
    a.from_numpy(v)
    f(a, b)
    b.grad.fill(1.0)
    f.grad(a, b)
    np.testing.assert_allclose(a.grad.to_numpy(), np.cos(v) * v + np.sin(v), rtol=1e-14)


def _atomic64_kernel(x: D1, idx: gr.types.ndarray(dtype=gr.i32, ndim=1)):
    for i in range(idx.shape[0]):
        x[idx[i]] += 1.0


def _f64_kernel(x: D1):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0


def test_missing_feature_is_a_compile_error_naming_it():
    args = [ArgSpec("x", "ndarray", elem=gr.f64, ndim=1)]
    with pytest.raises(gr.CompileError, match="f64 needs the adapter feature 'shader-f64'"):
        compiler.compile_kernel(_f64_kernel, args, Target())
    spec = compiler.compile_kernel(_f64_kernel, args, Target(frozenset({"shader-f64"})))
    assert "shader-f64" in spec.features and "array<f64>" in spec.wgsl


@need64
def test_fields_vectors_and_copies_of_new_types():
    f = gr.field(gr.i8, shape=(6,))
    g = gr.field(gr.f64, shape=())
    v3 = gr.types.vector(3, gr.f64)

    @gr.kernel
    def k(x: gr.types.ndarray(dtype=v3, ndim=1)):
        for i in range(6):
            f[i] = i * 50
        g[None] = 0.1
        for i in range(x.shape[0]):
            x[i] = x[i] * 2.0 + gr.Vector([1.0, 2.0, 3.0]) * g[None]

    x = np.ones((4, 3))
    k(x)
    np.testing.assert_array_equal(f.to_numpy(), (np.arange(6) * 50).astype(np.int8))
    assert g.to_numpy() == 0.1
    np.testing.assert_array_equal(x, np.ones((4, 3)) * 2.0 + np.array([1.0, 2.0, 3.0]) * 0.1)
    a, b = gr.ndarray(gr.u8, shape=10), gr.ndarray(gr.u8, shape=10)
    a.from_numpy(np.arange(10, dtype=np.uint8))
    b.copy_from(a, 4, 0, 4)
    np.testing.assert_array_equal(b.to_numpy()[:4], [4, 5, 6, 7])
    with pytest.raises(ValueError, match="multiples of 4"):
        b.copy_from(a, 1, 0, 3)
    args = [ArgSpec("x", "ndarray", elem=gr.f64, ndim=1), ArgSpec("idx", "ndarray", elem=gr.i32, ndim=1)]
    with pytest.raises(gr.CompileError, match="need the adapter feature 'shader-int64-atomic-all-ops'"):
        compiler.compile_kernel(_atomic64_kernel, args, Target(frozenset({"shader-f64"})))
