"""Reverse-mode strategies without a device (compiler/autodiff/preacc.py, hoist.py and the
adstack's first level): which loops are preaccumulated, the cost rule, which gradient reads
are hoisted and when not, aliasing, and gradients that agree with float64 finite differences
whichever strategy runs."""
import dataclasses

import numpy as np
import pytest
from adprograms import F1, I1, oracle_gradient, sin_loop, sin_loop_reference
from gfxrt.compiler import ArgSpec, Target, lower
from gfxrt.compiler.autodiff.adstack import SHARED_WG, first_level
from gfxrt.compiler.autodiff.preacc import plan_loop
from gfxrt.compiler.autodiff.reverse import copy_kernel, grad_buffers
from gfxrt.compiler.codegen.wgsl import emit
from gfxrt.compiler.interp import execute
from gfxrt.compiler.ir import Op, walk
from gfxrt.compiler.pipeline import CODEGEN, run, transform
from gfxrt.compiler.types import f32, i32

import gfxrt as gr

BASE = Target(frozenset({"immediates", "shader-float32-atomic"}), 128, adstack_private=3)
MODES = {m: dataclasses.replace(BASE, ad_loops=m) for m in ("adstack", "jacobian", "auto")}


def farr(name, grad=True):
    return ArgSpec(name, "ndarray", elem=f32, ndim=1, needs_grad=grad)


SPECS = [farr("x"), ArgSpec("cnt", "ndarray", elem=i32, ndim=1), farr("y")]


def grad_of(func, xs, cs, y0, w, target, specs=SPECS, mode="grad", grads=None):
    """Primal then grad kernel of func(x, cnt, y) in the interpreter: (y, x.grad, y.grad, grad IR)."""
    x, y = xs.astype(np.float32), y0.astype(np.float32)
    execute(lower(func, specs), [x, cs, y])
    g = transform(lower(func, specs), mode, target)
    gx, gy = np.zeros_like(x), w.astype(np.float32)
    it = execute(g, [x, cs, y], grads=grads or {0: gx, 2: gy}, threads=4,
                 internal={"adstack_heap": np.zeros(4096, np.uint32), "adstack_meta": np.zeros(4, np.uint32)})
    assert not it.failures
    return y, gx, gy, g


def stack_ops(g) -> int:
    return sum(1 for t in g.tasks for n in walk(t.body) if n.op in (Op.STORE, Op.LOAD)
               and n.attr in ("ad.stack", "ad.heap"))


def loops(g) -> int:
    return sum(1 for t in g.tasks for n in walk(t.body) if n.op in (Op.FOR, Op.WHILE))


# -- kernels k(x, cnt, y), also run as plain Python: float64 finite differences check them ----------
def fibonacci(x: F1, cnt: I1, y: F1):
    for i in range(x.shape[0]):
        a = 0.3
        b = x[i]
        for _j in range(cnt[i]):
            t = a * 0.6 + b * 0.5
            a = b
            b = t
        y[i] = a + 2.0 * b


def int_carried(x: F1, cnt: I1, y: F1):
    for i in range(x.shape[0]):
        k = i % 4
        v = 0.0
        for _j in range(cnt[i]):
            k = (k * 3 + 1) % 7
            v = v * 0.5 + x[i] * 0.1 * k
        y[i] = v


def while_float_control(x: F1, cnt: I1, y: F1):
    for i in range(x.shape[0]):
        v = x[i] * 0.5
        s = 0.0
        n = 0
        while n < cnt[i] + 2:
            n += 1
            v = gr.sin(v) * 0.9 + 0.2
            if n % 3 == 0:
                continue
            s = s * 0.5 + v * v
            if n > 5:
                break
        y[i] = s + v


def nested_with_inputs(x: F1, cnt: I1, y: F1):
    for i in range(x.shape[0]):
        p = x[i] * 0.5
        q = gr.cos(x[i])
        v = x[i]
        for j in range(cnt[i]):
            for _m in range(j % 3):
                v = gr.tanh(v * p + q)
            if j % 2 == 0:
                v = v * 0.9 + p * 0.1
        y[i] = v + p


def store_in_outer_loop(x: F1, cnt: I1, y: F1):
    """The outer loop stores (no preaccumulation); its inner loop qualifies."""
    for i in range(x.shape[0]):
        v = x[i]
        for j in range(cnt[i]):
            for _m in range(2 + j % 2):
                v = gr.sin(v) * 0.8 + 0.1
            y[i] += v * 0.5
        y[i] += v


def five_carried(x: F1, cnt: I1, y: F1):
    """More carried floats than MAX_STATE: the adstack."""
    for i in range(x.shape[0]):
        a, b, c, d, e = x[i], 0.1, 0.2, 0.3, 0.4
        for _j in range(cnt[i]):
            a, b, c, d, e = gr.sin(b) * 0.5, c * 0.9 + a * 0.1, gr.cos(d) * 0.5, e * 0.7 + a * 0.2, a * 0.3
        y[i] = a + b + c + d + e


def varying_read(x: F1, cnt: I1, y: F1):
    for i in range(x.shape[0]):
        v = x[i]
        for j in range(cnt[i]):
            v = gr.sin(v) * 0.7 + x[(i + j) % x.shape[0]] * 0.2
        y[i] = v


KERNELS = [fibonacci, int_carried, while_float_control, nested_with_inputs, store_in_outer_loop, five_carried,
           varying_read, sin_loop]


@pytest.mark.parametrize("func", KERNELS, ids=lambda f: f.__name__)
def test_every_loop_strategy_gives_the_float64_gradient(func, rng):
    n = 9
    xs, y0, w = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), rng.uniform(0.5, 1.5, n)
    cs = rng.integers(0, 6, n).astype(np.int32)
    cs[0] = 0  # a loop that does not run
    y_ref, gx_ref, gy_ref = oracle_gradient(func, xs, cs, y0, w)
    for mode, target in MODES.items():
        y, gx, gy, _ = grad_of(func, xs, cs, y0, w, target)
        np.testing.assert_allclose(y, y_ref, rtol=1e-5, atol=1e-6, err_msg=mode)
        np.testing.assert_allclose(gx, gx_ref, rtol=1e-3, atol=1e-4, err_msg=mode)
        np.testing.assert_allclose(gy, gy_ref, rtol=1e-3, atol=1e-4, err_msg=mode)


@pytest.mark.parametrize("func,preaccumulated", [
    (sin_loop, True), (fibonacci, True), (int_carried, True), (while_float_control, True),
    (nested_with_inputs, True), (five_carried, False), (varying_read, False)])
def test_which_loops_are_preaccumulated(func, preaccumulated):
    g = transform(lower(func, SPECS), "grad", MODES["jacobian"])
    assert (stack_ops(g) == 0) == preaccumulated
    assert (loops(g) == loops(lower(func, SPECS))) == preaccumulated  # no loop runs backwards
    if preaccumulated:
        assert [t.name for t in g.tasks] == ["task0_grad"]  # no counting pre-pass, no capped grid
        assert g.tasks[0].active is None


def test_an_inner_loop_is_preaccumulated_inside_an_adstack_loop():
    g = transform(lower(store_in_outer_loop, SPECS), "grad", MODES["jacobian"])
    body = g.tasks[-1].body
    outer = next(s for s in walk(body) if s.op is Op.FOR)
    inner = [s for s in walk(outer.blocks[0]) if s.op is Op.FOR]
    assert len(inner) == 1 and not any(n.op is Op.STORE and n.attr in ("ad.stack", "ad.heap")
                                       for n in walk(inner[0].blocks[0]))  # nothing pushed per inner iteration
    assert stack_ops(g) > 0  # the outer loop's values (its Jacobian among them) go on the stack


def _plan(func):
    ir = lower(func, SPECS)
    grads = grad_buffers(copy_kernel(ir, "g"))
    body = ir.tasks[0].body
    reads = {}
    for n in walk(body):
        if n.op is Op.VAR:
            reads[n.attr] = reads.get(n.attr, 0) + 1
    return plan_loop(next(s for s in body if s.op is Op.FOR), grads, ir.locals, reads)


def test_plan_of_a_loop_state_temporaries_and_inputs():
    plan = _plan(nested_with_inputs)
    assert plan.state == ["v"] and plan.inputs == ["p", "q"] and plan.loads == [] and plan.columns == 3
    plan = _plan(fibonacci)
    assert plan.state == ["a", "b"] and [t.split("_")[0] for t in plan.temps] == ["t"] and plan.columns == 2
    plan = _plan(int_carried)
    assert plan.state == ["v"] and [n.attr for n in plan.loads] == ["x"] and "k" in plan.assigned
    assert _plan(five_carried) is None and _plan(varying_read) is None


def linear_with_inputs(x: F1, cnt: I1, y: F1):
    for i in range(x.shape[0]):
        p = x[i] * 0.5
        q = x[i] * x[i]
        v = x[i]
        for _j in range(cnt[i]):
            v = v * 0.9 + p * 0.1 + q * 0.2
        y[i] = v


def test_cost_rule_keeps_the_adstack_when_tangents_cost_more(rng):
    # three columns (v, p, q) and nothing the adstack would save per iteration: the backward
    # loop is cheaper than two extra tangents per iteration
    auto = transform(lower(linear_with_inputs, SPECS), "grad", MODES["auto"])
    jac = transform(lower(linear_with_inputs, SPECS), "grad", MODES["jacobian"])
    assert loops(auto) == 2 and stack_ops(auto) == 0  # forward and backward loop, no stack
    assert loops(jac) == 1
    # one column: always preaccumulated
    assert loops(transform(lower(sin_loop, SPECS), "grad", MODES["auto"])) == 1
    xs, y0, w = rng.uniform(-1, 1, 7), rng.uniform(-1, 1, 7), rng.uniform(0.5, 1.5, 7)
    cs = rng.integers(0, 9, 7).astype(np.int32)
    _, gx_ref, _ = oracle_gradient(linear_with_inputs, xs, cs, y0, w)
    for target in MODES.values():
        np.testing.assert_allclose(grad_of(linear_with_inputs, xs, cs, y0, w, target)[1], gx_ref, rtol=1e-4)


def invariant_neighbour(x: F1, cnt: I1, y: F1):
    for i in range(y.shape[0]):
        v = 1.0
        for _j in range(cnt[i]):
            v = v * x[i + 1] + 0.5  # only items whose loop runs read x[i + 1]
        y[i] = v


def test_an_invariant_read_accumulates_only_where_the_loop_ran(rng):
    n = 6
    xs = rng.uniform(0.5, 1.0, n)
    cs = np.array([2, 0, 3, 1, 0, 0], np.int32)  # the last item's loop does not run: x[n] is never read
    specs = [farr("x"), ArgSpec("cnt", "ndarray", elem=i32, ndim=1), farr("y")]
    x, y = xs.astype(np.float32), np.zeros(n, np.float32)
    g = transform(lower(invariant_neighbour, specs), "grad", MODES["jacobian"])
    assert stack_ops(g) == 0
    gx, gy = np.zeros(n, np.float32), np.ones(n, np.float32)
    execute(lower(invariant_neighbour, specs), [x, cs, y])
    execute(g, [x, cs, y], grads={0: gx, 2: gy})  # an unguarded update of x.grad[n] would raise
    want = np.zeros(n)
    for i in range(n):
        v, d = 1.0, 0.0
        for _ in range(cs[i]):
            v, d = v * xs[i + 1] + 0.5, d * xs[i + 1] + v
        if cs[i]:
            want[i + 1] += d
    np.testing.assert_allclose(gx, want, rtol=1e-5)


# -- adjoint-read hoisting ----------------------------------------------------------------------
def test_sin_loop_reads_and_writes_each_gradient_once_at_the_ends_of_the_item(rng):
    g = transform(lower(sin_loop, SPECS), "grad", MODES["auto"])
    body = g.tasks[0].body
    grad_ops = [(k, s) for k, s in enumerate(body) for n in walk((s,)) if n.op in (Op.LOAD, Op.STORE)
                and n.attr in ("x.grad", "y.grad")]
    assert [(k, s.op) for k, s in grad_ops] == [(1, Op.ASSIGN), (2, Op.ASSIGN), (len(body) - 2, Op.STORE),
                                                (len(body) - 1, Op.STORE)]
    assert g.assumes_distinct == {"x.grad", "y.grad"}
    xs, cs = rng.uniform(-1, 1, 11), rng.integers(0, 9, 11).astype(np.int32)
    _, gx, gy, _ = grad_of(sin_loop, xs, cs, np.zeros(11), np.ones(11), MODES["auto"])
    np.testing.assert_allclose(gx, sin_loop_reference(xs, cs)[1], rtol=1e-5, atol=1e-6)
    assert not gy.any()


def scatter(x, perm, y):
    for i in range(x.shape[0]):
        v = x[i]
        for _j in range(3):
            v = gr.sin(v) + 0.5 * v
        y[perm[i]] = v


def scatter_in_branch(x, perm, y):
    for i in range(x.shape[0]):
        if perm[i] % 2 == 0:
            y[perm[i]] = gr.sin(x[i])


def scatter_in_loop(x, perm, y):
    for i in range(x.shape[0]):
        v = x[i]
        for j in range(perm[i] % 3):
            v = gr.sin(v) + 0.1 * j
            y[perm[i]] = v  # the store of the last iteration stays


def scatter_twice(x, perm, y):
    for i in range(x.shape[0]):
        y[perm[i]] = gr.sin(x[i])
        y[perm[i]] += x[i]


def _seed_position(g) -> tuple[int, bool]:
    """(top-level position of the first y.grad read, whether it is at the top level)."""
    body = g.tasks[-1].body
    for k, s in enumerate(body):
        if any(n.op is Op.LOAD and n.attr == "y.grad" for n in walk((s,))):
            return k, s.op is Op.ASSIGN and s.args[0].op is Op.LOAD
    raise AssertionError("no y.grad read")


@pytest.mark.parametrize("func,hoisted", [(scatter, True), (scatter_in_branch, False), (scatter_in_loop, False),
                                          (scatter_twice, False)])
def test_seed_reads_move_up_only_when_valid(func, hoisted, rng):
    n = 8
    specs = [farr("x"), ArgSpec("perm", "ndarray", elem=i32, ndim=1), farr("y")]
    perm = rng.permutation(n).astype(np.int32)
    xs, w = rng.uniform(-1, 1, n), rng.uniform(0.5, 1.5, n)
    g = transform(lower(func, specs), "grad", MODES["auto"])
    k, top = _seed_position(g)
    assert (k == 1 and top) == hoisted  # right after `i = ...`, before the forward sweep
    assert ("y.grad" in g.assumes_distinct) == hoisted
    _, gx, gy, _ = grad_of(func, xs, perm, np.zeros(n), w, MODES["auto"], specs)
    _, gx_ref, gy_ref = oracle_gradient(func, xs, perm, np.zeros(n), w)
    np.testing.assert_allclose(gx, gx_ref, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gy, gy_ref, rtol=1e-4, atol=1e-5)


def skip_odd(x: F1, cnt: I1, y: F1):
    for i in range(x.shape[0]):
        if i % 2 == 1:
            continue  # the parallel loop's continue: a flag, set before the index is computed
        v = x[i]
        for _j in range(cnt[i]):
            v = gr.sin(v) * 0.9
        y[i] = v


def test_a_continue_of_the_parallel_loop_keeps_gradients_private(rng):
    g = transform(lower(skip_odd, SPECS), "grad", MODES["auto"])
    assert not any(n.op is Op.ATOMIC for n in walk(g.tasks[0].body))
    body = g.tasks[0].body
    loads = [[n.attr for n in walk((s,)) if n.op is Op.LOAD] for s in body[2:4]]
    assert loads == [["y.grad"], ["x.grad"]]  # right after the flag and the index
    xs, y0, w = rng.uniform(-1, 1, 8), rng.uniform(-1, 1, 8), rng.uniform(0.5, 1.5, 8)
    cs = rng.integers(0, 5, 8).astype(np.int32)
    _, gx_ref, gy_ref = oracle_gradient(skip_odd, xs, cs, y0, w)
    _, gx, gy, _ = grad_of(skip_odd, xs, cs, y0, w, MODES["auto"])
    np.testing.assert_allclose(gx, gx_ref, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(gy, gy_ref, rtol=1e-6)


def shorter_output(x: F1, cnt: I1, y: F1):
    for i in range(x.shape[0]):
        if i < y.shape[0]:  # y is shorter than x: y.grad[i] exists only for these items
            v = x[i]
            for _j in range(cnt[i]):
                v = gr.sin(v) * 0.9
            y[i] = v


def test_conditional_gradient_accesses_stay_inside_their_buffers(rng):
    """Privatized gradients whose every access is conditional: items past the end of y
    neither read nor write y.grad (the interpreter raises on an out-of-bounds access)."""
    xs, cs = rng.uniform(-1, 1, 9), rng.integers(0, 4, 9).astype(np.int32)
    y0, w = rng.uniform(-1, 1, 5), rng.uniform(0.5, 1.5, 5)
    g = transform(lower(shorter_output, SPECS), "grad", MODES["auto"])
    assert g.assumes_distinct == {"x.grad", "y.grad"}
    assert any(n.op is Op.LENGTH and n.attr == "y.grad" for n in walk(g.tasks[0].body))
    _, gx, gy, _ = grad_of(shorter_output, xs, cs, y0, w, MODES["auto"])
    _, gx_ref, gy_ref = oracle_gradient(shorter_output, xs, cs, y0, w)
    np.testing.assert_allclose(gx, gx_ref, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(gy, gy_ref, rtol=1e-6)


def product(x, z, y):
    for i in range(x.shape[0]):
        y[i] = x[i] * z[i]


def test_hoisting_assumes_distinct_gradients_and_grad_alias_does_not(rng):
    """One array passed as x and z: the hoisted kernel reads both gradients before either
    update, so it loses one; the 'grad_alias' variant (what the runtime launches then) is right."""
    specs = [farr("x"), farr("z"), farr("y")]
    a = rng.uniform(-1, 1, 5).astype(np.float32)
    results = {}
    for mode in ("grad", "grad_alias"):
        g = transform(lower(product, specs), mode, MODES["auto"])
        ga, gy = np.zeros(5, np.float32), np.ones(5, np.float32)
        execute(g, [a, a, np.zeros(5, np.float32)], grads={0: ga, 1: ga, 2: gy})
        results[mode] = (ga, g.assumes_distinct)
    assert results["grad"][1] == {"x.grad", "z.grad", "y.grad"} and results["grad_alias"][1] == set()
    np.testing.assert_allclose(results["grad_alias"][0], 2 * a, rtol=1e-6)
    assert not np.allclose(results["grad"][0], 2 * a)


# -- the adstack's first level ---------------------------------------------------------------
def shared_and_stack(x, cnt, y):
    for i in range(x.shape[0]):
        pad = gr.simt.block.SharedArray((SIZE,), gr.f32)
        pad[0] = 0.0
        v = x[i]
        for _j in range(cnt[i]):
            v = gr.sin(v) * 0.9 + x[(i + 1) % x.shape[0]] * 0.1
        y[i] = v


SIZE = 16


@pytest.mark.parametrize("size,storage,level1", [
    (16, 16384, ("private_shared", 16, SHARED_WG)),   # 64 B of the kernel's own beside 4 KiB of stacks
    (2560, 16384, ("private_shared", 12, SHARED_WG)),  # 10 KiB of its own: fewer slots fit
    (3584, 16384, ("private", 32, None)),             # 14 KiB of its own: the stacks go private
    (16, 0, ("private", 32, None))])                  # no workgroup memory offered
def test_first_level_shares_workgroup_memory_with_the_kernel(size, storage, level1, monkeypatch):
    monkeypatch.setitem(globals(), "SIZE", size)
    target = dataclasses.replace(BASE, adstack_private=32, ad_loops="adstack", max_workgroup_storage=storage)
    ir = lower(shared_and_stack, SPECS)
    assert first_level(ir, 32, storage) == level1
    g = transform(ir, "grad", target)
    wgsl = emit(run(g, CODEGEN, target), target).wgsl
    kind, slots, wg = level1
    if kind == "private_shared":
        assert f"array<u32, {slots * wg}>;" in wgsl and f"* {wg} + i32(lid_)]" in wgsl
        assert f"@compute @workgroup_size({wg})\nfn task0_grad(" in wgsl
    else:
        assert "var<private> b" in wgsl and "lid_)]" not in wgsl
