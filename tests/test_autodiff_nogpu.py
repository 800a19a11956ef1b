"""Autodiff without a device: the transforms run in the IR interpreter (compiler/interp.py)
and are checked against analytic derivatives and float64 finite differences of the same
Python source run as plain numpy code."""
import os

import numpy as np
import pytest
from adprograms import (
    load,
    oracle_gradient,
    programs,
    sin_loop,
    sin_loop_reference,
    while_break_continue,
    while_break_continue_reference,
)
from gfxrt.compiler import ArgSpec, CompileError, Target, lower
from gfxrt.compiler.autodiff.adstack import COUNTER
from gfxrt.compiler.interp import execute
from gfxrt.compiler.ir import Op, walk
from gfxrt.compiler.pipeline import transform
from gfxrt.compiler.spec import STATUS_ACCESS_RULE, STATUS_ADSTACK_OVERFLOW
from gfxrt.compiler.types import f32, i32
from hypothesis import HealthCheck, given, settings

import gfxrt as gr

TARGET = Target(frozenset({"immediates", "shader-float32-atomic"}), 128)
# loops through the adstack (no Jacobian preaccumulation), to test the stacks themselves
HEAP_ONLY = Target(TARGET.features, 128, adstack_private=0, ad_loops="adstack")  # every slot on the heap
HYBRID = Target(TARGET.features, 128, adstack_private=3, ad_loops="adstack")     # 3 private slots, then the heap
JACOBIAN = Target(TARGET.features, 128, adstack_private=3, ad_loops="jacobian")  # preaccumulate every loop that can
F1 = dict(elem=f32, ndim=1)


def farr(name, grad=True):
    return ArgSpec(name, "ndarray", needs_grad=grad, **F1)


def iarr(name):
    return ArgSpec(name, "ndarray", elem=i32, ndim=1)


def grad_run(func, specs, args, seeds, target=TARGET, threads=5, heap_words=4096):
    """Run func's primal then grad kernel in the interpreter; seeds: arg index -> output
    gradient. Returns (gradients by arg index, interpreter of the grad run, grad IR)."""
    ir = lower(func, specs)
    execute(ir, args)
    g = transform(lower(func, specs), "grad", target)
    grads = {i: np.array(seeds.get(i, np.zeros_like(args[i])), dtype=np.float32)
             for i, s in enumerate(specs) if s.needs_grad}
    internal = {"adstack_heap": np.zeros(heap_words, np.uint32), "adstack_meta": np.zeros(4, np.uint32)}
    it = execute(g, args, grads=grads, internal=internal, threads=threads)
    return grads, it, g


# -- unary derivatives against analytic formulas ----------------------------------------------------
UNARY = {
    "sin": (np.sin, np.cos, (-2, 2)), "cos": (np.cos, lambda x: -np.sin(x), (-2, 2)),
    "tan": (np.tan, lambda x: 1 / np.cos(x) ** 2, (-1, 1)),
    "asin": (np.arcsin, lambda x: 1 / np.sqrt(1 - x * x), (-0.9, 0.9)),
    "acos": (np.arccos, lambda x: -1 / np.sqrt(1 - x * x), (-0.9, 0.9)),
    "tanh": (np.tanh, lambda x: 1 - np.tanh(x) ** 2, (-2, 2)),
    "exp": (np.exp, np.exp, (-2, 2)), "log": (np.log, lambda x: 1 / x, (0.2, 3)),
    "sqrt": (np.sqrt, lambda x: 0.5 / np.sqrt(x), (0.2, 3)),
    "rsqrt": (lambda x: x ** -0.5, lambda x: -0.5 * x ** -1.5, (0.2, 3)),
    "abs": (np.abs, np.sign, (-2, 2)), "floor": (np.floor, np.zeros_like, (-2, 2)),
    "ceil": (np.ceil, np.zeros_like, (-2, 2)),
}


def k_unary(f, x, y):
    for i in range(x.shape[0]):
        y[i] = f(x[i])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_derivatives(name, rng):
    fn, deriv, (lo, hi) = UNARY[name]
    x = rng.uniform(lo, hi, 9).astype(np.float32)
    x[np.abs(x) < 0.05] = 0.3  # away from the kinks of abs/floor/ceil
    y = np.zeros(9, np.float32)
    specs = [ArgSpec("f", "template", value=getattr(gr, name)), farr("x"), farr("y")]
    w = rng.uniform(0.5, 1.5, 9).astype(np.float32)
    grads, _, _ = grad_run(k_unary, specs, [None, x, y], {2: w})
    np.testing.assert_allclose(y, fn(x.astype(np.float64)), rtol=2e-6, atol=1e-6)
    np.testing.assert_allclose(grads[1], w * deriv(x.astype(np.float64)), rtol=1e-5, atol=1e-6)
    assert not grads[2].any()  # a store zeroes the output's gradient


def k_binary(x, z, y):
    for i in range(x.shape[0]):
        y[i] = gr.atan2(x[i], z[i]) + gr.pow(x[i], z[i]) + gr.min(x[i], z[i]) * gr.max(x[i], 0.5 * z[i]) \
            + x[i] % z[i] + x[i] / z[i]


def test_binary_derivatives(rng):
    n = 12
    x, z = rng.uniform(0.3, 2, n).astype(np.float32), rng.uniform(0.3, 2, n).astype(np.float32)
    grads, _, _ = grad_run(k_binary, [farr("x"), farr("z"), farr("y")], [x, z, np.zeros(n, np.float32)],
                           {2: np.ones(n, np.float32)})
    X, Z = x.astype(np.float64), z.astype(np.float64)
    dx = Z / (X * X + Z * Z) + Z * X ** (Z - 1) + np.where(X <= Z, np.maximum(X, 0.5 * Z), 0) \
        + np.where(X >= 0.5 * Z, np.minimum(X, Z), 0) + 1 + 1 / Z
    dz = -X / (X * X + Z * Z) + X ** Z * np.log(X) + np.where(X <= Z, 0, np.maximum(X, 0.5 * Z)) \
        + np.where(X >= 0.5 * Z, 0, 0.5 * np.minimum(X, Z)) - np.floor(X / Z) - X / Z ** 2
    np.testing.assert_allclose(grads[0], dx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(grads[1], dz, rtol=1e-4, atol=1e-5)


# -- loops, branches, jumps -----------------------------------------------------------------------
def test_runtime_loop_saves_one_value_per_iteration_and_counts_without_looping():
    specs = [farr("x"), iarr("cnt"), farr("y")]
    g = transform(lower(sin_loop, specs), "grad", HEAP_ONLY)
    names = [t.name for t in g.tasks]
    assert names == ["task0_grad_count", "task0_grad"]  # no task zeroing meta[0]: the sync does
    count = g.tasks[0]
    assert not any(n.op in (Op.FOR, Op.WHILE) for n in walk(count.body))  # folded to cnt[i] * 1
    # only cnt per item (no read of meta[0] per item), then a max into meta[0]
    assert {n.attr for n in walk(count.body) if n.op is Op.LOAD} == {"cnt"}
    assert [(n.attr.op, n.attr.buf) for n in walk(count.body) if n.op is Op.ATOMIC] == [("max", "ad.meta")]
    stores = [n for n in walk(g.tasks[1].body) if n.op is Op.STORE and n.attr == "ad.heap"]
    assert len(stores) == 1  # v, once per iteration; the trip count and j are recomputed
    # the loop index of x is the task's own: the gradient update needs no atomic
    assert not any(n.op is Op.ATOMIC for n in walk(g.tasks[1].body))



@pytest.mark.parametrize("target", [HEAP_ONLY, HYBRID, TARGET], ids=["heap", "hybrid", "private"])
@pytest.mark.parametrize("threads,heap", [(1, 64), (3, 64), (7, 4096)])
def test_runtime_loop_gradient_any_heap(target, threads, heap, rng):
    n = 23
    xs = rng.uniform(-1, 1, n).astype(np.float32)
    cs = rng.integers(0, 8, n).astype(np.int32)
    y = np.zeros(n, np.float32)
    grads, it, _ = grad_run(sin_loop, [farr("x"), iarr("cnt"), farr("y")], [xs, cs, y],
                            {2: np.ones(n, np.float32)}, target=target, threads=threads, heap_words=heap)
    v, d = sin_loop_reference(xs, cs)
    np.testing.assert_allclose(y, v, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[0], d, rtol=1e-5, atol=1e-6)
    assert not it.failures


def test_while_break_continue(rng):
    xs = np.array([0.01, 0.2, 0.5, 0.9, 1.7, 3.0, 5.0], np.float32)
    y = np.zeros_like(xs)
    grads, _, _ = grad_run(while_break_continue, [farr("x"), farr("y")], [xs, y], {1: np.ones_like(xs)})
    want = np.array([while_break_continue_reference(v) for v in xs.astype(np.float64)])
    np.testing.assert_allclose(y, want[:, 0], rtol=1e-5)
    np.testing.assert_allclose(grads[0], want[:, 1], rtol=1e-4)


def k_for_break(x, y):
    for i in range(x.shape[0]):
        p = 1.0
        for j in range(1, 10, 2):
            if j * x[i] > 3.0:
                break
            p = p * x[i] + j
        y[i] = p


def test_for_with_break(rng):
    xs = np.array([0.1, 0.45, 0.9, 1.3, 2.9], np.float32)
    y = np.zeros_like(xs)
    grads, _, _ = grad_run(k_for_break, [farr("x"), farr("y")], [xs, y], {1: np.ones_like(xs)})
    for k, x in enumerate(xs.astype(np.float64)):
        p, dp = 1.0, 0.0
        for j in range(1, 10, 2):
            if j * x > 3.0:
                break
            p, dp = p * x + j, dp * x + p
        assert y[k] == pytest.approx(p, rel=1e-5)
        assert grads[0][k] == pytest.approx(dp, rel=1e-4)


def test_constant_loops_need_no_prepass():
    def k(x, y):
        for i in range(x.shape[0]):
            v = x[i]
            for _j in range(4):
                for _m in range(0, 6, 2):
                    v = gr.sin(v)
            y[i] = v
    g = transform(lower(k, [farr("x"), farr("y")]), "grad", TARGET)
    assert [t.name for t in g.tasks] == ["task0_grad"]  # 12 slots: all private, no heap
    assert g.tasks[0].active is None and not any(b.kind == "adstack_heap" for b in g.buffers)
    g = transform(lower(k, [farr("x"), farr("y")]), "grad", HYBRID)
    assert [t.name for t in g.tasks] == ["task0_grad"] and g.tasks[0].stack_depth == 9


@pytest.mark.parametrize("private", [0, 2, 32])
def test_forced_adstack_size_overflows_in_the_interpreter(private, rng):
    forced = Target(TARGET.features, 128, adstack_size=4, adstack_private=private, ad_loops="adstack")
    xs = rng.uniform(-1, 1, 5).astype(np.float32)
    cs = np.array([1, 2, 6, 3, 0], np.int32)
    _, it, g = grad_run(sin_loop, [farr("x"), iarr("cnt"), farr("y")], [xs, cs, np.zeros(5, np.float32)],
                        {2: np.ones(5, np.float32)}, target=forced)
    assert [t.name for t in g.tasks] == ["task0_grad"]  # no pre-pass with a forced size
    (code, msg), = it.failures
    assert code == STATUS_ADSTACK_OVERFLOW and "adstack_size=4" in msg


def test_counting_prepass_keeps_only_what_the_count_needs():
    def k(x, cnt, y):
        for i in range(x.shape[0]):
            v = x[i]
            m = cnt[i] * 2
            if v > 0.5:
                m = m + 1
            for _j in range(m):
                v = gr.sin(v) + v * v
            y[i] = v
    g = transform(lower(k, [farr("x"), iarr("cnt"), farr("y")]), "grad", HYBRID)
    count = g.tasks[0]
    assigned = {n.attr for n in walk(count.body) if n.op is Op.ASSIGN}
    assert assigned == {"i", "v", "m", COUNTER}  # v only because the if reads it


# -- global memory semantics -----------------------------------------------------------------------
def k_accumulate(x, loss, y):
    for i in range(x.shape[0]):
        loss[None] += x[i] ** 2
        y[i] += 3.0 * x[i]


def test_atomic_add_does_not_zero_and_reads_accumulate(rng):
    x = rng.uniform(-1, 1, 6).astype(np.float32)
    loss, y = np.zeros((), np.float32), np.zeros(6, np.float32)
    wy = rng.uniform(0.5, 1.5, 6).astype(np.float32)
    grads, _, _ = grad_run(k_accumulate, [farr("x"), ArgSpec("loss", "ndarray", elem=f32, ndim=0, needs_grad=True),
                                          farr("y")], [x, loss, y], {1: np.float32(2.0), 2: wy})
    np.testing.assert_allclose(grads[0], 2.0 * 2 * x + 3.0 * wy, rtol=1e-6)
    assert grads[1] == 2.0 and np.array_equal(grads[2], wy)


def k_repeated_reads(x, idx, v, y):
    for i in range(y.shape[0]):
        j = idx[i]
        y[i] = x[j] * x[j] + 0.5 * x[j] + v[i] * (1.0 - 0.1 * v[i])


def test_loads_of_one_element_update_its_gradient_once(rng):
    """x[j] read three times in one expression: one atomic add of the summed adjoint (the
    gather index may repeat), and v[i], at the item's own index, one plain update."""
    n = 16
    x, v = rng.uniform(-1, 1, 6).astype(np.float32), rng.uniform(-1, 1, n).astype(np.float32)
    idx = rng.integers(0, 6, n).astype(np.int32)
    w = rng.uniform(0.5, 1.5, n).astype(np.float32)
    specs = [farr("x"), iarr("idx"), farr("v"), farr("y")]
    grads, _, g = grad_run(k_repeated_reads, specs, [x, idx, v, np.zeros(n, np.float32)], {3: w})
    body = [n for t in g.tasks for n in walk(t.body)]
    assert sum(n.op is Op.ATOMIC and n.attr.buf == "x.grad" for n in body) == 1
    assert sum(n.op is Op.STORE and n.attr == "v.grad" for n in body) == 1
    want = np.zeros(6)
    np.add.at(want, idx, w * (2 * x[idx].astype(np.float64) + 0.5))
    np.testing.assert_allclose(grads[0], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[2], w * (1.0 - 0.2 * v.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_store_zeroes_and_chain_within_a_kernel(rng):
    def k(x, y, z):
        for i in range(x.shape[0]):
            y[i] = x[i] * x[i]
            z[i] = y[i] * 2.0 + x[i]
    x = rng.uniform(-1, 1, 5).astype(np.float32)
    y, z = np.zeros(5, np.float32), np.zeros(5, np.float32)
    grads, _, _ = grad_run(k, [farr("x"), farr("y"), farr("z")], [x, y, z], {2: np.ones(5, np.float32)})
    np.testing.assert_allclose(grads[0], 4 * x + 1, rtol=1e-6)
    assert not grads[1].any() and not grads[2].any()


def test_two_tasks_reverse_in_order(rng):
    def k(x, y, loss):
        for i in range(x.shape[0]):
            y[i] = gr.sin(x[i])
        for i in range(y.shape[0]):
            loss[None] += y[i] * y[i]
    x = rng.uniform(-1, 1, 7).astype(np.float32)
    grads, _, g = grad_run(k, [farr("x"), farr("y"), ArgSpec("loss", "ndarray", elem=f32, ndim=0, needs_grad=True)],
                           [x, np.zeros(7, np.float32), np.zeros((), np.float32)], {2: np.float32(1.0)})
    assert [t.name for t in g.tasks] == ["task1_grad", "task0_grad"]
    np.testing.assert_allclose(grads[0], 2 * np.sin(x) * np.cos(x), rtol=1e-5, atol=1e-7)


def test_forward_mode_matches_reverse(rng):
    def k(x, cnt, y):
        for i in range(x.shape[0]):
            v = x[i]
            j = 0
            while j < cnt[i]:
                v = gr.tanh(v * 1.1 + x[i])
                j += 1
            y[i] = v * v
    specs = [farr("x"), iarr("cnt"), farr("y")]
    xs = rng.uniform(-1, 1, 8).astype(np.float32)
    cs = rng.integers(0, 5, 8).astype(np.int32)
    grads, _, _ = grad_run(k, specs, [xs, cs, np.zeros(8, np.float32)], {2: np.ones(8, np.float32)})
    f = transform(lower(k, specs), "fwd", TARGET)
    y, ydot = np.zeros(8, np.float32), np.zeros(8, np.float32)
    execute(f, [xs, cs, y], duals={0: np.ones(8, np.float32), 2: ydot})
    np.testing.assert_allclose(ydot, grads[0], rtol=1e-5, atol=1e-7)


# -- random programs against float64 finite differences ----------------------------------------------
@settings(max_examples=int(os.environ.get("GFXRT_EXAMPLES", 30)), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(src=programs())
def test_random_programs_in_the_interpreter(src, tmp_path):
    prog = load(src, tmp_path)
    rng = np.random.default_rng(7)
    n = 6
    xs = rng.uniform(-1, 1, n)
    cs = rng.integers(0, 4, n).astype(np.int32)
    y0 = rng.uniform(-1, 1, n)
    w = rng.uniform(0.5, 1.5, n)
    y_ref, gx_ref, gy_ref = oracle_gradient(prog, xs, cs, y0, w)
    specs = [farr("x"), iarr("cnt"), farr("y")]
    # loops through the adstack, every qualifying loop preaccumulated, and the cost rule's mix
    for target in (HYBRID, JACOBIAN, TARGET):
        y = y0.astype(np.float32)
        grads, it, _ = grad_run(prog, specs, [xs.astype(np.float32), cs, y], {2: w.astype(np.float32)},
                                target=target)
        msg = f"{target.ad_loops}:\n{src}"
        np.testing.assert_allclose(y, y_ref, rtol=1e-4, atol=1e-5, err_msg=msg)
        np.testing.assert_allclose(grads[0], gx_ref, rtol=2e-3, atol=2e-4, err_msg=msg)
        np.testing.assert_allclose(grads[2], gy_ref, rtol=2e-3, atol=2e-4, err_msg=msg)
        assert not it.failures


# -- errors and the access rule ---------------------------------------------------------------------
def test_atomic_result_cannot_be_differentiated():
    from gfxrt.compiler.ir import AtomicAttr, Node, const
    ir = lower(k_accumulate, [farr("x"), ArgSpec("loss", "ndarray", elem=f32, ndim=0, needs_grad=True), farr("y")])
    body = ir.tasks[0].body
    ir.locals["old"] = f32
    atomic = Node(Op.ATOMIC, attr=AtomicAttr("add", "loss", "old"), args=(const(0, i32), const(1.0, f32)),
                  loc=body[1].loc)
    ir.tasks[0].body = (*body, atomic)
    from gfxrt.compiler.autodiff.reverse import reverse
    with pytest.raises(CompileError, match="atomic operation cannot be recomputed"):
        reverse(ir)


def test_access_rule_flags_read_then_overwrite():
    def k(x, y):
        for i in range(x.shape[0]):
            y[i] = y[i] * x[i]
    debug = Target(TARGET.features, 128, debug=True)
    specs = [farr("x"), farr("y")]
    ir = transform(lower(k, specs), "primal", debug)
    x, y = np.ones(4, np.float32), np.ones(4, np.float32)
    bufs = {b.name: b for b in ir.buffers}
    assert bufs["y.access"].kind == "access_shadow" and "x.access" not in bufs
    it = execute(ir, [x, y], internal={"access_shadow": np.zeros(4, np.uint32)})
    (code, msg), = it.failures
    assert code == STATUS_ACCESS_RULE and "'y'" in msg and "test_autodiff_nogpu.py" in msg
    assert it.failures[(code, msg)] == 4


def test_gradients_flow_through_cross_task_locals(rng):
    """A reduction into a kernel-scope local (kept in the 'temps' buffer across tasks):
    s = 0; for i: s += x[i] * x[i]; loss = s * s."""
    from gfxrt.compiler.ir import AtomicAttr, Buffer, KernelIR, Node, Param, Task, const
    ir = KernelIR("reduce", params=[Param("n", i32, ("shape", 0, 0))],
                  buffers=[Buffer("x", f32, "arg", 0, needs_grad=True), Buffer("loss", f32, "arg", 1, needs_grad=True),
                           Buffer("temps", f32, "temps")],
                  locals={"i": i32})
    zero, x_i = const(0, i32), Node(Op.LOAD, f32, (Node(Op.VAR, i32, attr="i"),), attr="x")
    s = Node(Op.LOAD, f32, (zero,), attr="temps")
    ir.tasks = [Task("t0", "serial", (Node(Op.STORE, attr="temps", args=(zero, const(0.0, f32))),)),
                Task("t1", "range", (Node(Op.ATOMIC, attr=AtomicAttr("add", "temps"),
                                          args=(zero, Node(Op.MUL, f32, (x_i, x_i)))),),
                     Node(Op.PARAM, i32, attr="n"), "i"),
                Task("t2", "serial", (Node(Op.STORE, attr="loss", args=(zero, Node(Op.MUL, f32, (s, s)))),))]
    xs = rng.uniform(-1, 1, 9).astype(np.float32)
    loss, temps = np.zeros(1, np.float32), np.zeros(1, np.float32)
    execute(ir, [xs, loss], internal={"temps": temps})
    g = transform(ir, "grad", TARGET)
    gx, gloss, gtemps = np.zeros(9, np.float32), np.ones(1, np.float32), np.zeros(1, np.float32)
    execute(g, [xs, loss], grads={0: gx, 1: gloss}, internal={"temps": temps, "temps.grad": gtemps})
    total = float((xs.astype(np.float64) ** 2).sum())
    np.testing.assert_allclose(gx, 2 * total * 2 * xs, rtol=1e-5)


def k_triangular(x, cnt, y):
    for i in range(x.shape[0]):
        v = x[i]
        for j in range(cnt[i], 0, -1):
            if i % 2 == 0 and j == 2:
                continue  # skips the rest of this item's iteration j
            for _m in range(j):
                v = gr.sin(v) + 0.1 * v
        if i % 3 == 1:
            continue  # skips the item's store (y keeps its value)
        y[i] = v


def test_triangular_loops_negative_steps_and_continue(rng):
    n = 9
    xs = rng.uniform(-1, 1, n).astype(np.float32)
    cs = rng.integers(0, 5, n).astype(np.int32)
    y0 = rng.uniform(-1, 1, n).astype(np.float32)
    y = y0.copy()
    grads, it, g = grad_run(k_triangular, [farr("x"), iarr("cnt"), farr("y")], [xs, cs, y],
                            {2: np.ones(n, np.float32)}, target=HYBRID)
    for i in range(n):
        v, d = float(xs[i]), 1.0
        for j in range(cs[i], 0, -1):
            if i % 2 == 0 and j == 2:
                continue
            for _ in range(j):
                v, d = np.sin(v) + 0.1 * v, d * (np.cos(v) + 0.1)
        skipped = i % 3 == 1
        assert y[i] == pytest.approx(y0[i] if skipped else v, rel=1e-5, abs=1e-6)
        assert grads[0][i] == pytest.approx(0.0 if skipped else d, rel=1e-4, abs=1e-6)
        assert grads[2][i] == (1.0 if skipped else 0.0)
    count = next(t for t in g.tasks if t.name.endswith("_count"))
    assert sum(n.op is Op.FOR for n in walk(count.body)) == 1  # the inner loop folded to a product
