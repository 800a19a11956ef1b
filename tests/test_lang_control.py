"""Control flow and loops against numpy / plain Python: if/elif/else, while, break, continue,
and/or/not, ternary, gr.select, tuple assignment, range with steps, ndrange, grouped,
struct-for, gr.static, serial loops, several tasks per kernel."""
import numpy as np
import pytest

import gfxrt as gr

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
F2 = gr.types.ndarray(dtype=gr.f32, ndim=2)
I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)
I2 = gr.types.ndarray(dtype=gr.i32, ndim=2)


def py_branches(a):
    if a > 0.5 and not a > 0.9:
        b = a * 2
    elif a < 0.1 or a > 0.95:
        b = -a
    else:
        b = a + 10 if a < 0.3 else a - 10
    return b


@gr.kernel
def branches(x: F1, y: F1):
    for i in range(x.shape[0]):
        a = x[i]
        if a > 0.5 and not a > 0.9:
            b = a * 2
        elif a < 0.1 or a > 0.95:
            b = -a
        else:
            b = a + 10 if a < 0.3 else a - 10
        y[i] = b


def test_if_elif_else_and_or_not_ternary(rng):
    x = rng.random(300, dtype=np.float32)
    y = np.zeros_like(x)
    branches(x, y)
    np.testing.assert_allclose(y, [py_branches(a) for a in x], rtol=1e-6)


def py_collatz(v, cap):
    steps = 0
    while v != 1:
        if steps >= cap:
            break
        steps += 1
        if v % 2 == 0:
            v //= 2
            continue
        v = 3 * v + 1
    return steps


@gr.kernel
def collatz(x: I1, out: I1, cap: gr.i32):
    for i in range(x.shape[0]):
        v = x[i]
        steps = 0
        while v != 1:
            if steps >= cap:
                break
            steps += 1
            if v % 2 == 0:
                v //= 2
                continue
            v = 3 * v + 1
        out[i] = steps


def test_while_break_continue(rng):
    x = rng.integers(1, 500, 200).astype(np.int32)
    out = np.zeros_like(x)
    collatz(x, out, 60)
    np.testing.assert_array_equal(out, [py_collatz(int(v), 60) for v in x])


@gr.kernel
def stepped(x: I1, a: gr.i32, b: gr.i32):
    for i in range(a, b, 3):
        x[i] += i
    for j in range(b - 1, a - 1, -4):
        x[j] += 1000


def test_range_with_positive_and_negative_steps():
    x = np.zeros(40, np.int32)
    stepped(x, 5, 33)
    want = np.zeros(40, np.int32)
    for i in range(5, 33, 3):
        want[i] += i
    for j in range(32, 4, -4):
        want[j] += 1000
    np.testing.assert_array_equal(x, want)


@gr.kernel
def nd(x: I2, lo: gr.i32):
    for i, j in gr.ndrange((lo, x.shape[0]), x.shape[1]):
        x[i, j] = i * 100 + j
    for I in gr.grouped(gr.ndrange(2, 3)):  # noqa: E741
        x[I] += 7


def test_ndrange_with_bounds_and_grouped_ndrange():
    x = np.full((6, 5), -1, np.int32)
    nd(x, 2)
    want = np.full((6, 5), -1, np.int32)
    for i in range(2, 6):
        for j in range(5):
            want[i, j] = i * 100 + j
    want[:2, :3] += 7
    np.testing.assert_array_equal(x, want)


@gr.kernel
def struct_for(x: F2, y: F2, z: F1):
    for i, j in x:
        y[i, j] = x[i, j] * 2
    for I in gr.grouped(y):  # noqa: E741
        y[I] += 1.0
    for k in z:
        z[k] = k * 0.5


def test_struct_for_over_arrays(rng):
    x = rng.random((9, 7), dtype=np.float32)
    y = np.zeros_like(x)
    z = np.zeros(13, np.float32)
    struct_for(x, y, z)
    np.testing.assert_allclose(y, x * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(z, np.arange(13) * 0.5)


@gr.kernel
def nested_serial(x: F2, out: F1):
    for i in range(x.shape[0]):
        s = 0.0
        for j in range(x.shape[1]):
            if j % 2 == 1:
                continue
            s += x[i, j]
        for a, b in gr.ndrange(2, 2):
            s += a * 10 + b
        for J in gr.grouped(gr.ndrange(2)):
            s += J[0] * 100
        out[i] = s


def test_nested_loops_are_serial(rng):
    x = rng.random((11, 6), dtype=np.float32)
    out = np.zeros(11, np.float32)
    nested_serial(x, out)
    np.testing.assert_allclose(out, x[:, ::2].sum(1) + 22 + 100, rtol=1e-5)


N_POW = 3


@gr.kernel
def static_loops(x: F1, y: F1, flag: gr.template()):
    for i in range(x.shape[0]):
        acc = 0.0
        for k in gr.static(range(N_POW)):
            acc += x[i] ** (k + 1)
        for c, w in gr.static(((1.0, 2.0), (3.0, 4.0))):
            acc += c * w
        if gr.static(flag):
            acc = -acc
        y[i] = acc


def test_static_unrolling_and_compile_time_branch(rng):
    x = rng.random(50, dtype=np.float32)
    y = np.zeros_like(x)
    static_loops(x, y, True)
    np.testing.assert_allclose(y, -(x + x**2 + x**3 + 14), rtol=1e-5)
    static_loops(x, y, False)
    np.testing.assert_allclose(y, x + x**2 + x**3 + 14, rtol=1e-5)
    assert len(static_loops._cache) == 2  # one specialization per template value


@gr.kernel
def by_mode(x: F1, y: F1, mode: gr.template(), dt: gr.template()):
    for i in range(x.shape[0]):
        if gr.static(mode == "double" and dt == gr.f32):
            y[i] = x[i] * 2.0
        elif gr.static(mode != "square" or dt is None):
            y[i] = -x[i]
        else:
            y[i] = x[i] * x[i]


def test_equality_of_compile_time_objects_is_decided_in_python(rng):
    x = rng.random(20, dtype=np.float32)
    y = np.zeros_like(x)
    for mode, dt, want in (("double", gr.f32, 2 * x), ("double", gr.i32, -x), ("square", gr.f32, x * x)):
        by_mode(x, y, mode, dt)
        np.testing.assert_allclose(y, want, rtol=1e-6)


@gr.kernel
def swap_and_select(x: I1, y: I1):
    for i in range(x.shape[0]):
        a, b = x[i], y[i]
        a, b = b, a + b
        y[i] = gr.select(a > b, a, b) * 1000 + a
        x[i] = gr.select(x[i] % 2 == 0, 1, -1)


def test_tuple_assignment_and_select(rng):
    x = rng.integers(-20, 20, 64).astype(np.int32)
    y = rng.integers(-20, 20, 64).astype(np.int32)
    x0, y0 = x.copy(), y.copy()
    swap_and_select(x, y)
    a, b = y0, x0 + y0
    np.testing.assert_array_equal(y, np.maximum(a, b) * 1000 + a)
    np.testing.assert_array_equal(x, np.where(x0 % 2 == 0, 1, -1))


@gr.kernel
def multi_task(x: F1, out: F1) -> gr.f32:
    m = x[0]                      # serial code: one thread
    for i in range(x.shape[0]):   # task 2, parallel
        out[i] = x[i] - m
    shift = out[3] * 2            # serial again, reads what task 2 wrote
    for i in range(x.shape[0]):   # task 4
        out[i] += shift
    return shift


def test_serial_code_between_parallel_loops_runs_in_order(rng):
    x = rng.random(100, dtype=np.float32)
    out = np.zeros_like(x)
    shift = multi_task(x, out)
    want_shift = (x[3] - x[0]) * 2
    assert abs(shift - want_shift) < 1e-6
    np.testing.assert_allclose(out, x - x[0] + want_shift, rtol=1e-5, atol=1e-6)


@gr.kernel
def prefix_sum(x: I1):
    gr.loop_config(serialize=True)
    for i in range(1, x.shape[0]):
        x[i] += x[i - 1]


def test_serialized_top_level_loop(rng):
    x = rng.integers(0, 10, 300).astype(np.int32)
    want = np.cumsum(x)
    prefix_sum(x)
    np.testing.assert_array_equal(x, want)


@gr.kernel
def empty_range(x: F1, n: gr.i32):
    for i in range(n):
        x[i] = 1.0


def test_empty_and_negative_ranges_launch_nothing():
    x = np.zeros(4, np.float32)
    empty_range(x, 0)
    empty_range(x, -5)
    assert (x == 0).all()


@gr.func
def halve_count(v):
    k = 0
    while v > 1:
        v //= 2
        k += 1
    return k


@gr.func
def first_index(x: gr.template(), val, start):
    for k in range(start, x.shape[0]):
        if x[k] == val:
            return k  # an early return from inside a loop
    return -1


@gr.kernel
def funcs_in_conditions(x: I1, out: I1):
    for i in range(x.shape[0]):
        v = x[i]
        n = 0
        while halve_count(v) > 2:  # the condition needs statements: re-evaluated every iteration
            v -= 5
            n += 1
        hit = i > 3 and first_index(x, x[i], 0) == i  # the func runs only when i > 3
        out[i] = n * 100 + int(hit) * 10 + (first_index(x, 7, i) if v > 0 else -2)


def test_funcs_in_loop_conditions_and_short_circuits(rng):
    x = rng.integers(0, 60, 40).astype(np.int32)
    x[5] = 7
    out = np.zeros_like(x)
    funcs_in_conditions(x, out)

    def ref(i):
        v, n = int(x[i]), 0
        while v > 1 and int(np.log2(v)) > 2:
            v -= 5
            n += 1
        first = next(k for k in range(len(x)) if x[k] == x[i])
        hit = i > 3 and first == i
        rest = next((k for k in range(i, len(x)) if x[k] == 7), -1)
        return n * 100 + int(hit) * 10 + (rest if v > 0 else -2)
    np.testing.assert_array_equal(out, [ref(i) for i in range(len(x))])


@gr.kernel
def device_extent(x: F1, counts: I1) -> gr.f32:
    n = counts[0]  # the loop's extent is only known on the device
    s = 0.0
    for i in range(n):
        s += x[i]
    return s


def test_loop_extent_read_from_device_memory(rng):
    x = rng.random(100_000, dtype=np.float32)
    for n in (0, 5, 99_999):
        assert device_extent(x, np.array([n], np.int32)) == pytest.approx(float(x[:n].astype(np.float64).sum()),
                                                                           rel=1e-4, abs=1e-6)


def test_twenty_line_benchmark_kernel_matches_numpy(rng):
    from experiments.compile_time import advect
    k = gr.kernel(advect)
    n, m, dt = 16, 12, 0.5
    q = rng.random((n, m), dtype=np.float32)
    vel = (rng.random((n, m, 2), dtype=np.float32) - 0.5) * 4
    out = np.zeros_like(q)
    total = k(q, vel, out, dt)
    i, j = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    px = np.clip(i - vel[..., 0] * dt, 0, n - 1.001).astype(np.float32)
    py = np.clip(j - vel[..., 1] * dt, 0, m - 1.001).astype(np.float32)
    i0, j0 = px.astype(int), py.astype(int)
    fx, fy = px - i0, py - j0
    a = q[i0, j0] * (1 - fx) + q[i0 + 1, j0] * fx
    b = q[i0, j0 + 1] * (1 - fx) + q[i0 + 1, j0 + 1] * fx
    r = a * (1 - fy) + b * fy
    want = np.where(r > 1, 1.0, np.where(r < 0, 0.0, r))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)
    assert total == pytest.approx(float(want.sum()), rel=1e-5)


@gr.func
def bump(x: gr.template(), i):
    x[i] = x[i] + 100.0
    return 1.0


@gr.kernel
def evaluation_order(x: F1, y: F1, m: gr.types.ndarray(dtype=gr.types.matrix(2, 2, gr.f32), ndim=1)):
    for i in range(x.shape[0]):
        y[i] = x[i] + bump(x, i) + x[i]      # left to right: the old x[i], then the bumped one
        v = gr.Vector([x[i], y[i]])
        v = v.yx                              # every component read before any is written
        y[i] += v[0] * 0 + gr.atomic_add(x[i], 1.0) * 0 + x[i]
        m[i] += m[i].transpose()              # reads the whole matrix before writing it


def test_python_evaluation_order_and_whole_value_assignment():
    x = np.arange(4, dtype=np.float32)
    y = np.zeros(4, np.float32)
    m = np.arange(16, dtype=np.float32).reshape(4, 2, 2)
    m0 = m.copy()
    evaluation_order(x, y, m)
    i = np.arange(4)
    np.testing.assert_allclose(y, (2 * i + 101) + (i + 101))
    np.testing.assert_allclose(x, i + 101)
    np.testing.assert_allclose(m, m0 + m0.transpose(0, 2, 1))


@gr.kernel
def runtime_step(x: I1, a: gr.i32, b: gr.i32, s: gr.i32):
    for i in range(a, b, s):        # parallel, step known only at launch
        x[i] += 1
    for _ in range(1):
        for q in range(a, b, s):    # serial
            x[q] += 10


def test_range_with_a_run_time_step():
    for a, b, s in [(2, 30, 3), (29, 1, -4), (5, 5, 1), (0, 32, -1)]:
        x = np.zeros(32, np.int32)
        runtime_step(x, a, b, s)
        want = np.zeros(32, np.int32)
        want[list(range(a, b, s))] += 11
        np.testing.assert_array_equal(x, want)


@gr.kernel
def loop_var_after(n: gr.types.ndarray(dtype=gr.i32, ndim=1), out: gr.types.ndarray(dtype=gr.i32, ndim=2)):
    for i in range(n.shape[0]):
        j = -5
        for j in range(n[i]):          # zero trips when n[i] == 0: j keeps -5  # noqa: B007 (read after the loop)
            pass
        out[i, 0] = j
        for k in range(10):
            if k * k > n[i]:
                break
        out[i, 1] = k                  # the value at the break
        for m in range(n[i], 0, -2):  # noqa: B007 (read after the loop)
            pass
        out[i, 2] = m if n[i] > 0 else -7


def test_loop_variable_after_its_loop_has_pythons_value():
    ns = np.array([0, 1, 2, 5, 9], np.int32)
    out = np.zeros((5, 3), np.int32)
    loop_var_after(ns, out)
    want = []
    for v in ns.tolist():
        j = -5
        for j in range(v):  # noqa: B007 (read after the loop)
            pass
        for k in range(10):
            if k * k > v:
                break
        m = -7
        for m in range(v, 0, -2):  # noqa: B007 (read after the loop)
            pass
        want.append([j, k, m if v > 0 else -7])
    np.testing.assert_array_equal(out, np.array(want, np.int32))


@gr.kernel
def loop_var_after_serial(n: I1, out: I1):
    for _ in range(1):                 # one iteration: serial, at kernel scope
        j = -5
        for j in range(n[0]):          # noqa: B007 (read after the loop)
            pass
        out[0] = j
        m = 7
        for m in range(n[1], 0, -1):   # noqa: B007 (read after the loop)
            pass
        out[1] = m
    gr.loop_config(serialize=True)
    for i in range(2):
        t = 4
        for t in range(n[i]):          # noqa: B007 (read after the loop)
            pass
        out[2 + i] = t


def test_loop_variable_after_an_empty_loop_keeps_its_value_at_kernel_scope():
    """Found by tools/progfuzz (mixed seed 200033): in a one-iteration (serial) top-level loop the
    loop variable, assigned before, read 0 after a loop that ran no iteration (Python: its old
    value), because a kernel-scope variable is not reused as the counter and its copy started at 0."""
    for ns, want in (([0, 0], [-5, 7, 4, 4]), ([3, 2], [2, 1, 2, 1])):
        out = np.zeros(4, np.int32)
        loop_var_after_serial(np.array(ns, np.int32), out)
        np.testing.assert_array_equal(out, want)
