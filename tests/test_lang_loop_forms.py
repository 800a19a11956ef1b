"""Serial `range` and `while` loops in the form every adapter runs right (compiler/codegen/wgsl_loops.py):
Python's range on a counter over its trip count (exact at the i32 limits), and the laundering that keeps
the NVIDIA driver's loop analysis from miscounting loops whose bounds depend on the thread index.

The dependent-bounds kernels are the minimized H100 reproducers of issue 21 (experiments/loopbreak/):
each ran wrong there before the laundering, and right on lavapipe either way; here they pin the
semantics on every adapter the suite runs on (run the suite on a GPU to check the workaround)."""
import re

import numpy as np
import pytest

import gfxrt as gr

I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)
N = 40


def test_taichi_for_break3():
    """Taichi's test_for_break3: on an H100 every row ran row 0's 8 passes from its own start."""
    x = gr.field(gr.i32, shape=(8, 8))

    @gr.kernel
    def func():
        for i in range(8):
            for j in range(i, 8 - i):
                if i == 0:
                    break
                x[i, j] = 100 * i + j

    func()
    want = np.zeros((8, 8), np.int32)
    for i in range(8):
        for j in range(i, 8 - i):
            if i == 0:
                break
            want[i, j] = 100 * i + j
    np.testing.assert_array_equal(x.to_numpy(), want)


def _sum_down(a, out):  # H100: threads 3..39 stopped after 5 passes
    for i in range(N):
        s = 0
        for j in range(3, 0 - i, -1):
            s += 20 * j + 3
        out[i] = s


def _break_never_taken(a, out):  # H100: thread 0 left after one pass, also with naga's loop bounding
    for i in range(N):
        s = 0
        for j in range(i + 3, 9 - i % 4, 1):
            if i > j:
                break
            s += 1
        out[i] = s


def _step_two_down(a, out):
    for i in range(N):
        s = 0
        for j in range(6 - i, 0 - i, -2):
            s += 18 * j + 3
        out[i] = s


def _break_on_inner_value(a, out):
    for i in range(N):
        s = 0
        for j in range(i, 4 - i, 1):
            s += 3 * i + 0
            if j % 4 == 0:
                break
            s += 1
        out[i] = s


def _memory_bound_down(a, out):
    for i in range(N):
        s = 0
        for _j in range(a[i] % 5 + i, 0 - i, -1):
            s += 27 * i + 3
        out[i] = s


def _three_deep(a, out):
    for i in range(N):
        s = 0
        for _j in range(6 - i % 4, i + 4, 2):
            for _k in range(4 - i % 4, a[i] % 7, -1):
                for _m in range(i, 0 - i, -1):
                    s += 27 * i + 2
        out[i] = s


def _while_from_thread_index(a, out):  # the while form of _break_never_taken: a carried start
    for i in range(N):
        s = 0
        j = i + 3
        while j < 9 - i % 4:
            if i > j:
                break
            s += 1
            j += 1
        out[i] = s


def _while_exit_from_thread_index(a, out):  # H100: ran forever with w laundered and i not (progfuzz)
    for i in range(N):
        w = i % 8
        s = 0
        while w < 5 - i and a[i] > -3:
            w += 1
            s += 10 * w + 1
        out[i] = s


@pytest.mark.parametrize("prog", [_sum_down, _break_never_taken, _step_two_down, _break_on_inner_value,
                                  _memory_bound_down, _three_deep, _while_from_thread_index,
                                  _while_exit_from_thread_index],
                         ids=lambda f: f.__name__.strip("_"))
def test_loops_with_bounds_from_the_thread_index(prog):
    a = np.random.default_rng(5).integers(0, 20, N).astype(np.int32)
    want = np.zeros(N, np.int32)
    prog(a, want)
    prog.__annotations__.update(a=I1, out=I1)
    got = np.zeros(N, np.int32)
    gr.kernel(prog)(a, got)
    np.testing.assert_array_equal(got, want)


@gr.kernel
def _count_range(b: gr.i32, e: gr.i32, s: gr.i32, out: I1):
    for _ in range(1):
        n = 0
        first = 0
        last = 0
        for j in range(b, e, s):
            if n == 0:
                first = j
            last = j
            n += 1
        out[0] = n
        out[1] = first
        out[2] = last


@pytest.mark.parametrize("b,e,s", [(2**31 - 10, 2**31 - 1, 5), (-2**31 + 8, -2**31, -3), (-2**31, 2**31 - 1, 2**30),
                                   (2**31 - 1, -2**31, -2**31), (0, 2**31 - 1, 2**31 - 1), (5, 5, 1), (7, 3, 2),
                                   (-5, 5, 3)])
def test_range_at_the_int32_limits_runs_pythons_iterations(b, e, s):
    """`j += s` past 2^31 wrapped and ran on (or hit lavapipe's loop cap); Python's range cannot overflow."""
    out = np.zeros(3, np.int32)
    _count_range(b, e, s, out)
    r = range(b, e, s)
    assert out.tolist() == [len(r), r[0] if r else 0, r[-1] if r else 0]


def test_loop_bounds_reach_the_driver_laundered():
    """Every range loop's non-constant bounds and every integer it carries or reads (a while loop's exit
    test included) pass through the opaque zero, and loops over constant bounds keep their constants
    (the driver may still unroll them)."""
    x = gr.ndarray(gr.i32, (4,))

    @gr.kernel
    def k(x: I1):
        for i in range(x.shape[0]):
            t = i * 3
            for j in range(i, 8 - i):
                t += j
            for j in range(4):
                t += j
            w = 0
            while w < 5 - i:
                w += 1
            x[i] = t + w

    wgsl = k.specialize((x,)).spec.wgsl
    assert re.search(r"let b_ = \(l\d+_i \^ i32\(nwg_\.z - 1u\)\);", wgsl)
    assert re.search(r"let end_ = \(\(8i - l\d+_i\) \^ i32\(nwg_\.z - 1u\)\);", wgsl)
    assert re.search(r"(l\d+_t\w*) = \(\1 \^ i32\(nwg_\.z - 1u\)\);", wgsl)
    assert "let b_ = 0i;" in wgsl and "let end_ = 4i;" in wgsl
    head = wgsl[:wgsl.index("(5i - l")]  # the while loop's entry: w and the i its exit test reads
    assert re.search(r"(l\d+_w) = \(\1 \^ i32\(nwg_\.z - 1u\)\);\s*(loop|while)", head[head.rindex("_i ^"):])
    assert re.search(r"(l\d+_i) = \(\1 \^ i32\(nwg_\.z - 1u\)\);", head[head.rindex("let end_ = 4i;"):])
