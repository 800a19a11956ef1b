"""Language forms real Taichi programs use (issue 24, item 1, third layer): gr.math.floor / ceil / round
with Taichi's optional dtype (one implementation, shared with gr.floor / gr.ceil / gr.round), Python values
folded while tracing (`gr.ndrange(*[n] * dim)`, a global numpy array, a list meeting a vector), a
kernel-scope variable rewritten inside the parallel loop, and `and` / `or` on run-time values.
The expected numbers were printed by Taichi 1.7.4 (ti.cpu) running the same programs."""
import numpy as np
import pytest

import gfxrt as gr
import gfxrt.math as tm


def test_math_floor_ceil_round_are_the_taichi_ops_with_their_dtype():
    assert tm.floor is gr.floor and tm.ceil is gr.ceil and tm.round is gr.round  # one implementation each
    out = gr.field(gr.f32, shape=8)
    ints = gr.field(gr.i32, shape=(8, 3))

    @gr.kernel
    def k():
        for i in range(8):
            v = -2.5 + 0.5 * i
            out[i] = tm.round(v)
            ints[i, 0] = tm.ceil(v * 1.3, int)
            ints[i, 1] = tm.floor(gr.Vector([v, 1.0]), gr.i32)[0]
            ints[i, 2] = tm.round(i - 3)  # an integer is its own nearest integer

    k()
    # Taichi 1.7.4 on ti.cpu (halves away from zero; its Vulkan backend rounds them to even)
    np.testing.assert_array_equal(out.to_numpy(), [-3, -2, -2, -1, -1, 0, 1, 1])
    np.testing.assert_array_equal(ints.to_numpy()[:, 0], [-3, -2, -1, -1, 0, 0, 1, 2])
    np.testing.assert_array_equal(ints.to_numpy()[:, 1], np.floor(-2.5 + 0.5 * np.arange(8)))
    np.testing.assert_array_equal(ints.to_numpy()[:, 2], np.arange(8) - 3)
    assert tm.ceil(7 * 1.5, int) == 11 and tm.round(-0.5) == -1.0 and tm.floor(3) == 3


N_CUBE = np.array([3, 4, 5])
SCALE = np.array([0.5, 0.25])


def test_python_values_meet_in_python_while_tracing():
    out = gr.field(gr.i32, shape=8)
    dim = 2

    @gr.kernel
    def k(j: gr.i32):
        for _ in gr.grouped(gr.ndrange(*(N_CUBE - 1))):  # numpy arithmetic, then spread
            gr.atomic_add(out[0], 1)
        for i, jj in gr.ndrange(*[N_CUBE[1]] * dim):  # a list repeated: ndrange(4, 4)
            gr.atomic_add(out[7], i * jj)
        out[1] = N_CUBE[1]
        v = gr.Vector([j, j + 1, j + 2])
        w = [v[i] >> 1 for i in range(3)] ^ v  # a list meeting a vector becomes one
        out[2] = w[0] + 10 * w[1] + 100 * w[2]
        rep = [j] * 3
        out[3] = len(rep) + rep[2]
        out[4] = (N_CUBE * 2)[2] + (-N_CUBE)[j - 4]  # a run-time index reads the folded array
        out[5] = len((1, 2) * 2) + int((SCALE * 4)[1])
        out[6] = ([1, 2, 3] + gr.Vector([j, j, j]))[2]

    k(5)
    # Taichi 1.7.4 (ti.cpu) prints [24 4 457 8 10 4 8] for the same expressions (out[4]: Taichi has no
    # run-time index into a numpy array, so its kernel read (N_CUBE * 2)[2] only)
    np.testing.assert_array_equal(out.to_numpy(), [24, 4, 457, 8, 10 - 4, 4 + 1, 8, 36])


M2 = np.array([[1.0, 2.0], [3.0, 4.0]])


def test_a_captured_numpy_matrix_meeting_a_vector_becomes_a_matrix():
    @gr.kernel
    def k(x: gr.f32) -> gr.f32:
        v = gr.Vector([x, 1.0])
        w = M2 @ v + SCALE * v
        return w[0] * 10 + w[1]

    assert k(2.0) == (M2 @ [2, 1] + SCALE * [2, 1]) @ [10, 1]


def test_python_operators_on_run_time_values_are_refused_clearly():
    @gr.kernel
    def list_and_scalar(j: gr.i32) -> gr.i32:
        return ([1, 2] * j)[0]  # a repetition count known only at run time

    @gr.kernel
    def array_and_scalar(j: gr.i32) -> gr.i32:
        return (N_CUBE + j)[0]

    with pytest.raises(gr.CompileError, match="list with"):
        list_and_scalar(2)
    with pytest.raises(gr.CompileError, match="numpy array captured from Python"):
        array_and_scalar(2)


def test_a_kernel_scope_variable_written_first_in_the_loop_is_thread_private():
    out = gr.Vector.field(2, gr.f32, shape=257)

    @gr.kernel
    def k():
        r = gr.Vector([-1.0, -1.0])
        n = int(r.norm() * 100)  # read before the loop, as comet's generate() does
        for i in range(256):
            r = gr.Vector([i * 1.0, n])  # every iteration assigns it before reading it
            for _ in range(20):
                r += 0.5
            out[i] = r
        r = gr.Vector([2.0, 3.0])  # assigned again: readable after the loop
        out[256] = r

    k()
    # Taichi 1.7.4 on ti.cpu: every thread sees its own r (its Vulkan backend shares one r between
    # threads, and 896 of 1024 iterations of the same loop read another thread's value)
    want = np.stack([np.arange(256) + 10.0, np.full(256, 141 + 10.0)], 1)
    np.testing.assert_array_equal(out.to_numpy()[:256], want)
    np.testing.assert_array_equal(out.to_numpy()[256], [2.0, 3.0])


def test_a_loop_private_variable_read_after_the_loop_or_read_first_is_refused():
    out = gr.field(gr.f32, shape=8)

    @gr.kernel
    def read_after():
        r = -1.0
        for i in range(8):
            r = i * 1.0
            out[i] = r
        out[0] = r  # no thread's value: Taichi's is whichever thread wrote last

    @gr.kernel
    def read_first():
        r = -1.0
        for i in range(8):
            out[i] = r
            r = i * 1.0  # every thread would write the one shared r

    with pytest.raises(gr.CompileError, match="each thread had its own copy"):
        read_after()
    with pytest.raises(gr.CompileError, match="differs between the threads"):
        read_first()


def test_and_or_give_an_operand_as_python_and_taichi_do():
    out = gr.field(gr.i32, shape=(5, 7))
    big = gr.field(gr.i64, shape=2)
    f = gr.field(gr.f32, shape=2)

    @gr.kernel
    def k(row: gr.i32, a: gr.i32, b: gr.i32):
        out[row, 0] = a and b
        out[row, 1] = a or b
        out[row, 2] = (a and b) + 0
        out[row, 3] = (a > 0) and b
        out[row, 4] = a or (b > 100)
        out[row, 5] = 1 if (a and b > 3) else 2  # a condition: its truth
        out[row, 6] = a and 4 or 9

    @gr.kernel
    def wide(a: gr.i64, b: gr.i32, x: gr.f32, y: gr.f32):
        big[0], big[1] = a and b, a or b  # the promoted type, as in Taichi
        f[0], f[1] = x and y, x or y      # Taichi refuses floats here; Python's value

    cases = [(3, 5), (0, 5), (3, 0), (-2, 7), (0, 0)]
    for row, (a, b) in enumerate(cases):
        k(row, a, b)
    # Taichi 1.7.4 (ti.cpu and ti.vulkan) prints columns 0, 1, 2, 3, 4 of these rows
    np.testing.assert_array_equal(out.to_numpy()[:, :5], [[5, 3, 5, 5, 3], [0, 5, 0, 0, 0], [0, 3, 0, 0, 3],
                                                          [7, -2, 7, 0, -2], [0, 0, 0, 0, 0]])
    np.testing.assert_array_equal(out.to_numpy()[:, 5:], [[(a and b > 3) and 1 or 2, a and 4 or 9] for a, b in cases])
    wide(2**40, 3, 2.5, 0.0)
    assert big.to_numpy().tolist() == [3, 2**40] and f.to_numpy().tolist() == [0.0, 2.5]
    wide(0, 3, 0.0, 1.5)
    assert big.to_numpy().tolist() == [0, 3] and f.to_numpy().tolist() == [0.0, 1.5]


def test_chained_comparisons_of_vectors_and_componentwise():
    out = gr.field(gr.i32, shape=(3, 4))

    @gr.kernel
    def k():
        for i in range(3):
            v = gr.Vector([0.5, 2.0, -1.0]) * (i - 0.5)
            c = -0.1 <= v <= 1.1  # comet.py: `if not all(-0.1 <= x[i] <= 1.1)`
            out[i, 0] = c[0] + 2 * c[1] + 4 * c[2]
            out[i, 1] = not all(-0.1 <= v <= 1.1)
            out[i, 2] = any(0 < v < 1 < 2)
            out[i, 3] = all(v == v)

    k()
    assert out.to_numpy().tolist() == [[4, 1, 1, 1], [3, 1, 1, 1], [1, 1, 1, 1]]  # Taichi 1.7.4's


def test_vector_unit_is_an_integer_vector_by_default():
    x = gr.field(gr.f32, shape=(4, 4))
    out = gr.field(gr.f32, shape=(2, 2))

    @gr.kernel
    def k():
        for i, j in x:
            x[i, j] = i * 10 + j
        for p in gr.grouped(out):
            s = 0.0
            for d in gr.static(range(2)):
                offset = gr.Vector.unit(2, d)  # mgpcg_advanced.py: an index offset (Taichi's dt=int)
                s += x[p + 1 + offset] - x[p + 1 - offset]
            out[p] = s

    k()
    np.testing.assert_array_equal(out.to_numpy(), np.full((2, 2), 22.0))
    assert gr.Vector.unit(3, 1).tolist() == [0, 1, 0] and np.asarray(gr.Vector.unit(3, 1)).dtype == np.int32


def test_list_items_assigned_in_a_branch_are_variables():
    f = gr.Vector.field(4, int, shape=2)
    out = gr.field(int, shape=(2, 3))

    @gr.kernel
    def k():
        for c in f:
            f[c] = gr.Vector([10 * c, 10 * c + 1, 10 * c + 2, 10 * c + 3])
        for c in f:
            verts = [f[c][(1 + j) % 4] for j in range(3)]  # implicit_fem.py's get_indices()
            if c == 1:
                tmp = verts[1]
                verts[1] = verts[2]
                verts[2] = tmp
            out[c, 0], out[c, 1], out[c, 2] = verts[0], verts[1], verts[2]

    k()
    # Taichi 1.7.4: the items are local copies (the field is unchanged), swapped where c == 1
    assert f.to_numpy().tolist() == [[0, 1, 2, 3], [10, 11, 12, 13]]
    assert out.to_numpy().tolist() == [[1, 2, 3], [11, 13, 12]]
