"""Names assigned numbers are typed variables (Taichi's rule, docs/language.md "Variables and
kernel scope"): `v = 0` in a kernel or a @gr.func is an i32 (default_ip) variable and `s = 1.5`
an f32 (default_fp) one, so what follows computes in that type, folded or not; `gr.static(...)`
assignments, captured Python values and template arguments stay compile-time Python values."""
import numpy as np
import pytest

import gfxrt as gr

I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)
U1 = gr.types.ndarray(dtype=gr.u32, ndim=1)
F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)

BIG = 3_000_000_000  # a captured global: a compile-time Python int (beyond i32)


def _has(feature):
    return feature in gr.device().features


need64 = pytest.mark.skipif("not _has('shader-f64') or not _has('shader-int64')")


def test_int_name_divided_by_itself_in_a_func():
    # Found by tools/progfuzz: `v // abs(v)` of a name assigned 0 was folded with Python's
    # ints: "constant expression fails: integer division or modulo by zero" at compile time.
    # An i32 variable's `// 0` is 0 (docs/language.md), so is `% 0`.
    @gr.func
    def f(x):
        v = 0
        v = v // abs(v)
        w = 0
        return v + x + w % w

    @gr.kernel
    def k(out: I1):
        out[0] = f(3)
        z = 0
        out[1] = 7 // z + 1

    out = np.zeros(2, np.int32)
    k(out)
    assert out.tolist() == [3, 1]


def test_float_name_is_f32_next_to_u32():
    # Found by tools/progfuzz: `gr.ceil` of the Python float 1000.0 was the Python int 1000,
    # which then took u32 next to x[0] (4294966272.0); an f32 variable gives -1000.0 (Taichi).
    @gr.func
    def g(x):
        s = 1000.0
        return x[0] - gr.ceil(s)

    @gr.kernel
    def k(x: U1) -> gr.f32:
        return g(x)

    @gr.kernel
    def top(x: U1, out: F1):
        s = 1000.0
        out[0] = x[0] - gr.ceil(s)

    x = np.zeros(1, np.uint32)
    assert k(x) == -1000.0
    out = np.zeros(1, np.float32)
    top(x, out)
    assert out[0] == -1000.0


def test_func_parameters_passed_numbers_are_typed():
    # a non-template parameter is a variable holding the argument (Taichi passes by value)
    @gr.func
    def q(v):
        return v // abs(v) + 1

    @gr.func
    def c(s, x):
        return x[0] - gr.ceil(s)

    @gr.kernel
    def k(x: U1, out: F1):
        out[0] = q(0)
        out[1] = c(1000.0, x)

    out = np.zeros(2, np.float32)
    k(np.zeros(1, np.uint32), out)
    assert out.tolist() == [1.0, -1000.0]


def test_int_names_are_i32_variables():
    @gr.kernel
    def k(out: I1):
        a = 2**31 - 1
        out[0] = a + 1             # i32 wraps, as a variable does
        b = gr.i64(3_000_000_000)  # a literal beyond i32 needs a dtype (below); stored in an i32: wrapped
        e = 0
        e = b
        out[1] = e // 1000
        c = 7
        c = c / 2                  # a variable keeps its type: 3.5 -> 3
        out[2] = c * 10
        d = -7
        out[3] = d >> 1

    out = np.zeros(4, np.int32)
    k(out)
    assert out.tolist() == [-2**31, (3_000_000_000 - 2**32) // 1000, 30, -4]


def test_an_int_literal_beyond_default_ip_is_a_compile_error_as_in_taichi():
    # Taichi 1.7.4: "Integer literal 3000000000 exceeded the range of default_ip: i32"; it was silently wrapped
    @gr.kernel
    def k(out: I1):
        b = 3_000_000_000
        out[0] = b // 1000

    with pytest.raises(gr.CompileError, match="out of the range of default_ip i32"):
        k(np.zeros(1, np.int32))

    @gr.kernel
    def captured(out: I1):
        b = BIG  # a captured Python int becomes an i32 variable: the same error
        out[0] = b // 1000

    with pytest.raises(gr.CompileError, match="out of the range of default_ip i32"):
        captured(np.zeros(1, np.int32))

    @gr.kernel
    def typed(out: I1):
        out[0] = gr.u16(-1)  # Taichi 1.7.4: "Integer literal -1 exceeded the range of specified dtype: u16"

    with pytest.raises(gr.CompileError, match="out of the range of u16"):
        typed(np.zeros(1, np.int32))

    @gr.kernel
    def fine(out: I1):
        out[0] = gr.i64(3_000_000_000) // 1000 + 2_147_483_647 - 2_147_483_647  # a dtype given; i32 bounds fit

    out = np.zeros(1, np.int32)
    fine(out)
    assert out[0] == 3_000_000

    @gr.kernel
    def casts(out: I1):  # gr.cast and a vector's dtype wrap, as Taichi's ti.cast / ti.Vector(..., dt) do
        out[0] = gr.cast(300, gr.u8)
        out[1] = gr.Vector([300], gr.u8)[0]
        out[2] = gr.u8(255)

    out = np.zeros(3, np.int32)
    casts(out)
    assert out.tolist() == [44, 44, 255]


def test_float_names_are_f32_variables():
    @gr.kernel
    def k(x: F1, out: F1):
        t = 0.1                    # f32: 0.1 rounded to f32
        out[0] = (t - 0.1) * 1e9   # the literal adopts f32 too: exactly 0
        u = 16777216.0
        out[1] = (u + 1.0) - u     # f32 arithmetic, folded or not: 0 (f64 gives 1)
        v = 1.5
        v = 2                      # an f32 variable: 2.0
        out[2] = v / 4
        out[3] = x[0] * t

    x = np.array([3.0], np.float32)
    out = np.zeros(4, np.float32)
    k(x, out)
    assert out[0] == 0.0 and out[1] == 0.0 and out[2] == 0.5
    assert out[3] == np.float32(3.0) * np.float32(0.1)


@need64
def test_float_name_is_f32_next_to_f64_and_default_fp_f64():
    D1 = gr.types.ndarray(dtype=gr.f64, ndim=1)

    @gr.kernel
    def k(out: D1):
        t = 0.1
        out[0] = t                 # an f32 variable widened: f32's 0.1
        out[1] = t * out[1]

    out = np.array([0.0, 1.0])
    k(out)
    assert out[0] == float(np.float32(0.1)) and out[1] == float(np.float32(0.1))
    opts = gr.runtime().dev.options
    try:
        gr.init(default_fp=gr.f64)

        @gr.kernel
        def k64(out: D1):
            t = 0.1
            out[0] = t             # default_fp=f64: an f64 variable
            u = 9007199254740992.0
            out[1] = (u + 1.0) - u

        out = np.zeros(2)
        k64(out)
        assert out[0] == 0.1 and out[1] == 0.0
    finally:
        gr.init(adapter=opts.adapter, debug=opts.debug, adstack_size=opts.adstack_size,
                offline_cache=opts.offline_cache)


@need64
def test_static_assignments_and_captured_globals_stay_python_values():
    L1 = gr.types.ndarray(dtype=gr.i64, ndim=1)

    @gr.kernel
    def k(out: L1):
        s = gr.static(3_000_000_000)   # a compile-time Python int: exact, takes i64 beside out
        out[0] = s
        out[1] = BIG                   # a captured global: the same
        b = gr.i64(BIG)                # assigned in the kernel: a variable of the dtype given (bare, an
        out[2] = b                     # error: test_an_int_literal_beyond_default_ip_is_a_compile_error_as_in_taichi)
        p, q = gr.static(2**40, 5)
        out[3] = p + q

    out = np.zeros(4, np.int64)
    k(out)
    assert out.tolist() == [3_000_000_000, 3_000_000_000, 3_000_000_000, 2**40 + 5]


def test_constant_names_still_drive_compile_time_code():
    # Known values of typed variables still fold where the compiler needs a value: static
    # loops and branches, vector components, range bounds, shared array shapes.
    V = gr.types.vector(3, gr.f32)

    @gr.func
    def pick(v, k: gr.template()):
        return v[k]

    @gr.kernel
    def k(out: F1):
        n = 3
        m = gr.static(2)
        v = V(1.0, 2.0, 3.0)
        acc = 0.0
        for j in gr.static(range(n)):
            acc += v[j]
        if n > 2:
            acc += 100.0
        else:
            acc += v[7]                # never compiled: the branch is decided at compile time
        for _j in range(n + m):
            acc += 1000.0
        gr.static_assert(n == 3 and m == 2)
        out[0] = acc + pick(v, n - 1) + v[m - 1]

    out = np.zeros(1, np.float32)
    k(out)
    assert out[0] == 6.0 + 100.0 + 5000.0 + 3.0 + 2.0


def test_assigned_values_keep_their_type():
    # a re-assignment converts into the variable's type, as a variable inside a loop does;
    # a func parameter is such a variable too
    @gr.func
    def half(x):
        x = x / 2                  # x holds an i32: 7 / 2 -> 3
        return x

    @gr.kernel
    def k(out: F1):
        v = gr.Vector([1, 2])      # an i32 vector
        v = v * 1.5
        out[0] = v[0] + v[1]       # 1 + 3
        out[1] = half(7)
        for a in gr.static(v):     # a known vector is still a compile-time sequence
            out[2] += a

    out = np.zeros(3, np.float32)
    k(out)
    assert out.tolist() == [4.0, 3.0, 4.0]
