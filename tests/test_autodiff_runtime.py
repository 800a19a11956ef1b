"""The adstack heap's sizing and overflow protocol, forward mode, gradcheck, the debug-mode
access rule, bad input, and random programs on the device."""
import os

import adprograms
import numpy as np
import pytest
from adprograms import F0, F1, arr, load, oracle_gradient, programs, sin_loop_reference
from hypothesis import HealthCheck, given, settings

import gfxrt as gr
from gfxrt.ad import adstack


@pytest.fixture
def fresh():
    """gr.init(...) for one test (a new device, runtime and adstack heap); defaults after."""
    yield gr.init
    gr.init()


@pytest.fixture
def stacked(monkeypatch):
    """`fresh` with every loop reversed through the adstack (no Jacobian preaccumulation,
    which would leave the run-time sin loop nothing to push): the heap's own tests."""
    monkeypatch.setenv("GFXRT_AD_LOOPS", "adstack")
    yield gr.init
    monkeypatch.delenv("GFXRT_AD_LOOPS")
    gr.init()


sin_loop = gr.kernel(adprograms.sin_loop)


def expected_grad(xs, cs):
    return sin_loop_reference(xs, cs)[1]


def first_level() -> int:
    """The stack slots sin_loop's grad kernel keeps before the heap on this adapter (16 in
    workgroup memory on GPUs, 32 private on CPU drivers; compiler/autodiff/adstack.py)."""
    x, y = arr(np.zeros(4, np.float32)), arr(np.zeros(4, np.float32))
    cnt = arr(np.zeros(4, np.int32), grad=False, dtype=gr.i32)
    return max(t.stack_level1 for t in sin_loop.specialize([x, cnt, y], mode="grad").spec.tasks)


def run_grad(xs, cs):
    x, y, cnt = arr(xs), arr(np.zeros(len(xs), np.float32)), arr(cs, grad=False, dtype=gr.i32)
    sin_loop(x, cnt, y)
    y.grad.fill(1.0)
    sin_loop.grad(x, cnt, y)
    return x


# -- the heap ---------------------------------------------------------------------------------------
def grown_words(heap, depth: int) -> int:
    """The heap size (words) the runtime's doubling policy reaches for `depth` from its
    initial size: the adapter's own figures (threads, initial words, limits), not lavapipe's."""
    want = min(heap.threads * max(depth, 1), heap.max_words)
    words = heap.initial_words
    while words < want:
        words *= 2
    return min(words, heap.max_words)


def test_heap_doubles_retires_the_old_heap_and_learns_depths_at_sync(stacked, rng):
    stacked()
    rt = gr.runtime()
    n = 3000
    xs = rng.uniform(-1, 1, n).astype(np.float32)
    cs = rng.integers(0, 200, n).astype(np.int32)
    cs[0] = 200
    x, y, cnt = arr(xs), arr(np.zeros(n, np.float32)), arr(cs, grad=False, dtype=gr.i32)
    sin_loop(x, cnt, y)
    y.grad.fill(1.0)
    sin_loop.grad(x, cnt, y)  # first launch: the pre-pass runs alone to size the heap
    heap = rt.adstack
    private = first_level()
    assert heap.depth == 200 - private and heap.grown == 1
    assert heap.words == grown_words(heap, heap.depth) > heap.initial_words
    assert heap.words >= min(heap.threads * heap.depth, heap.max_words)
    old = [b for b in rt.ctx_buffers if b.size == 4 * heap.initial_words]
    assert len(old) == 1  # the old heap waits for the work recorded before the growth
    rt.flush()
    assert any(old[0] in batch for _, batch in rt.pending_retirements)
    np.testing.assert_allclose(x.grad.to_numpy(), expected_grad(xs, cs), rtol=1e-4, atol=1e-6)

    # a deeper launch runs on fewer threads (still correct); the sync after it reads the depth
    words = heap.words
    cs2 = cs.copy()
    cs2[7] = 900
    cnt.from_numpy(cs2)
    sin_loop(x, cnt, y)
    x.grad.fill(0.0)
    y.grad.fill(1.0)
    sin_loop.grad(x, cnt, y)
    assert heap.words == words
    np.testing.assert_allclose(x.grad.to_numpy(), expected_grad(xs, cs2), rtol=1e-4, atol=1e-6)
    gr.sync()
    assert heap.depth == 900 - private
    sin_loop.grad(x, cnt, y)  # grows to fit the new depth before launching
    assert heap.words == grown_words(heap, heap.depth)
    assert heap.grown == 1 + (heap.words > words)  # no growth when the first one reached the device's limit
    assert heap.words >= min(heap.threads * heap.depth, heap.max_words)


def test_counted_depth_carries_over_to_the_next_sync(stacked, rng):
    """The pre-pass maxes into meta[0] without zeroing it per launch: a shallow launch after a
    deep one (no sync between) uses the deeper layout and is still right; the sync zeroes it."""
    stacked()
    xs = rng.uniform(-1, 1, 300).astype(np.float32)
    deep = rng.integers(0, 90, 300).astype(np.int32)
    shallow = rng.integers(0, 5, 300).astype(np.int32)
    gr.sync()
    x_deep = run_grad(xs, deep)
    x_shallow = run_grad(xs, shallow)
    heap = gr.runtime().adstack
    heap_words = heap.words
    assert heap.read_meta()[0] == deep.max()  # the deep launch's count, still there
    np.testing.assert_allclose(x_deep.grad.to_numpy(), expected_grad(xs, deep), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(x_shallow.grad.to_numpy(), expected_grad(xs, shallow), rtol=1e-4, atol=1e-6)
    gr.sync()
    assert heap.read_meta()[0] == 0
    x_shallow = run_grad(xs, shallow)
    assert heap.read_meta()[0] == shallow.max() and heap.words == heap_words
    np.testing.assert_allclose(x_shallow.grad.to_numpy(), expected_grad(xs, shallow), rtol=1e-4, atol=1e-6)


def test_sync_reads_the_depth_and_the_status_words_in_one_round_trip(stacked, rng):
    stacked()
    rt = gr.runtime()
    xs = rng.uniform(-1, 1, 200).astype(np.float32)
    cs = rng.integers(0, 70, 200).astype(np.int32)
    run_grad(xs, cs)  # the first launch probes the depth (a round trip of its own)
    gr.sync()
    run_grad(xs, cs)
    waits = rt._waits
    gr.sync()
    assert rt._waits - waits == 2  # the flush's wait, then meta and the status words together
    assert rt.adstack.depth == cs.max() - first_level()


def test_adstack_grad_launches_take_the_fast_path(stacked, rng, monkeypatch):
    """After its first (checked, probing) launch, a call shape's adstack gradient launches
    skip the checked path (bench/RESULTS.md: 46.6 -> 6.0 us of host time each on lavapipe),
    and still size the heap, read the depth at the sync and give the right gradients."""
    from gfxrt.engine.launch import Launcher
    stacked()
    checked = []
    real = Launcher.launch
    monkeypatch.setattr(Launcher, "launch", lambda self, *a, **k: (checked.append(self.name), real(self, *a, **k))[1])
    xs = rng.uniform(-1, 1, 300).astype(np.float32)
    x = run_grad(xs, rng.integers(0, 20, 300).astype(np.int32))  # first launch: checked, probes
    first = list(checked)
    assert any(n.endswith(".grad") for n in first)
    heap = gr.runtime().adstack
    for depth in (10, 60, 5):  # deeper than probed: the heap grows at the sync, then it fits
        cs = rng.integers(0, depth, 300).astype(np.int32)
        cs[0] = depth
        x = run_grad(xs, cs)
        try:
            gr.sync()
        except gr.AdstackOverflowError:
            gr.sync()
            x = run_grad(xs, cs)
        np.testing.assert_allclose(x.grad.to_numpy(), expected_grad(xs, cs), rtol=1e-4, atol=1e-6)
        assert heap.depth >= depth - first_level()
    assert not any(n.endswith(".grad") for n in checked[len(first):])  # every later grad launch: fast


@pytest.fixture
def tiny_heap(monkeypatch):
    """A 64-word heap for 64 threads on every adapter (a GPU's larger default heap would
    absorb the overflow these tests need)."""
    for kind in ("CPU", "GPU"):
        monkeypatch.setattr(adstack, f"INITIAL_WORDS_{kind}", 64)
        monkeypatch.setattr(adstack, f"THREADS_{kind}", 64)


def test_heap_too_small_for_one_stack_raises_then_grows(stacked, tiny_heap, rng):
    stacked()
    xs = rng.uniform(-1, 1, 100).astype(np.float32)
    run_grad(xs, np.full(100, 3, np.int32))  # sizes the heap for depth 3
    gr.sync()
    cs = np.full(100, 3, np.int32)
    cs[5] = 20000  # a single stack larger than the whole heap
    run_grad(xs, cs)
    with pytest.raises(gr.AdstackOverflowError, match="enlarged"):
        gr.sync()
    gr.sync()  # the next sync is clean
    x = run_grad(xs, cs)  # and the launch now fits
    np.testing.assert_allclose(x.grad.to_numpy(), expected_grad(xs, cs), rtol=1e-4, atol=1e-6)


def test_forced_adstack_size(stacked, rng):
    stacked(adstack_size=40)
    xs = rng.uniform(-1, 1, 500).astype(np.float32)
    cs = rng.integers(0, 41, 500).astype(np.int32)
    x = run_grad(xs, cs)  # depth <= 40: fits
    np.testing.assert_allclose(x.grad.to_numpy(), expected_grad(xs, cs), rtol=1e-4, atol=1e-6)
    heap = gr.runtime().adstack
    assert heap.words >= heap.threads * (40 - first_level())
    cs[123] = 50
    run_grad(xs, cs)
    with pytest.raises(gr.AdstackOverflowError, match="adstack_size=40"):
        gr.sync()
    gr.sync()
    x = run_grad(xs, cs)
    with pytest.raises(gr.AdstackOverflowError, match="adstack_size=40"):
        x.grad.to_numpy()  # a readback raises it too, once
    gr.sync()


D1 = gr.types.ndarray(dtype=gr.f64, ndim=1)
D0 = gr.types.ndarray(dtype=gr.f64, ndim=0)


@gr.kernel
def f64_branchy_loop(x: D1, z: D1, loss: D0, n: gr.i32):
    for i in range(x.shape[0]):
        a = x[i]
        w = 0
        while w < n:
            w += 1
            v = x[i] if x[i] > a else z[w]  # in the first pass a == x[i] exactly: z[1]
            a = a * 0.7 + gr.sin(v) * v
        loss[None] += a


@pytest.mark.skipif("'shader-f64' not in gr.device().features or 'shader-int64' not in gr.device().features")
@pytest.mark.parametrize("n", [3, 40])  # 40 passes: two words each, beyond the first level into the heap
def test_f64_values_keep_their_bits_on_the_adstack(n):
    """Found by tools/progfuzz on lavapipe (grad seed 600207, shrunk): the adstack stored an
    f64 as an f32, so the reverse sweep recomputed `x > a` with a rounded `a` and sent z[1]'s
    gradient to x. A 64-bit value now takes two 32-bit slots (compiler/autodiff/adstack.py)."""
    x = np.array([0.36460021601067183, -0.8123456789012345, 0.1])
    z = np.random.default_rng(3).uniform(-2, 2, n + 1)
    xs, zs, loss = gr.ndarray(gr.f64, 3, needs_grad=True), gr.ndarray(gr.f64, n + 1, needs_grad=True), \
        gr.ndarray(gr.f64, (), needs_grad=True)
    xs.from_numpy(x)
    zs.from_numpy(z)
    f64_branchy_loop(xs, zs, loss, n)
    loss.grad.from_numpy(np.array(1.0))
    f64_branchy_loop.grad(xs, zs, loss, n)
    gx, gz = np.zeros(3), np.zeros(n + 1)
    for i, xi in enumerate(x):  # the reverse sweep by hand: d/dv of sin(v) v is cos(v) v + sin(v)
        a, used = xi, []
        for w in range(1, n + 1):
            take_x = xi > a
            v = xi if take_x else z[w]
            used.append((take_x, w, np.cos(v) * v + np.sin(v)))
            a = a * 0.7 + np.sin(v) * v
        ga = 1.0
        for take_x, w, dv in reversed(used):
            if take_x:
                gx[i] += ga * dv
            else:
                gz[w] += ga * dv
            ga *= 0.7
        gx[i] += ga
    np.testing.assert_allclose(xs.grad.to_numpy(), gx, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(zs.grad.to_numpy(), gz, rtol=1e-12, atol=1e-14)


# -- forward mode -------------------------------------------------------------------------------------
@gr.kernel
def sum_squares(x: F1, loss: F0):
    for i in range(x.shape[0]):
        loss[None] += x[i] ** 2


def test_forward_mode_jvp(rng):
    xs = rng.uniform(-1, 1, 50).astype(np.float32)
    cs = rng.integers(0, 12, 50).astype(np.int32)
    seed = rng.uniform(-1, 1, 50)
    x, y, cnt = arr(xs), arr(np.zeros(50, np.float32)), arr(cs, grad=False, dtype=gr.i32)
    with gr.ad.FwdMode(loss=y, param=x, seed=seed):
        sin_loop(x, cnt, y)
    np.testing.assert_allclose(y.dual.to_numpy(), expected_grad(xs, cs) * seed, rtol=1e-4, atol=1e-6)
    loss = gr.ndarray(gr.f32, (), needs_grad=True)
    with gr.ad.FwdMode(loss=loss, param=x, seed=seed):
        sum_squares(x, loss)
    assert float(loss.dual.to_numpy()) == pytest.approx(float((2 * xs * seed).sum()), rel=1e-4)
    assert not x.grad.to_numpy().any()  # forward mode leaves gradients alone
    assert not x.dual.to_numpy().any()  # the seed is cleared on exit (Taichi's clear_seed)
    assert float(loss.dual.to_numpy()) != 0  # the tangents computed inside stay


def test_forward_mode_seed_checks():
    x, y = arr(np.zeros(3, np.float32)), arr(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="seed of 3 values"):
        gr.ad.FwdMode(loss=y, param=x)
    with pytest.raises(ValueError, match="seed has 2 values"):
        gr.ad.FwdMode(loss=y, param=x, seed=[1.0, 2.0])
    with pytest.raises(ValueError, match="needs_grad"):
        gr.ad.FwdMode(loss=y, param=arr(np.zeros(3, np.float32), grad=False), seed=[1, 2, 3])


def test_ndarray_annotation_needs_grad():
    """Taichi's `ndarray(needs_grad=False)`: the argument is a constant of the gradient even
    when it has one (its test_ndarray_needs_grad_false); `needs_grad=True` refuses an array
    without a gradient."""
    N = 3

    @gr.kernel
    def test(x: gr.types.ndarray(needs_grad=False), y: gr.types.ndarray()):
        for i in range(N):
            a = 2.0
            for _j in range(N):
                a += x[i] / x.shape[0]
            y[0] += a

    @gr.kernel
    def want_grad(x: gr.types.ndarray(needs_grad=True), y: gr.types.ndarray()):
        for i in range(N):
            y[0] += x[i]

    x, y = arr(np.ones(N, np.float32)), arr(np.zeros(1, np.float32))
    test(x, y)
    y.grad.fill(1.0)
    test.grad(x, y)
    np.testing.assert_array_equal(x.grad.to_numpy(), np.zeros(N))
    want_grad(x, y)
    with pytest.raises(ValueError, match="annotated needs_grad=True, but the array has no gradient"):
        want_grad(np.ones(N, np.float32), y)
    with pytest.raises(TypeError, match="needs_grad must be None, True or False"):
        gr.types.ndarray(needs_grad="yes")
    assert "needs_grad=False" in repr(gr.types.ndarray(needs_grad=False))


@gr.kernel
def _vec_norms(v: gr.types.ndarray(dtype=gr.types.vector(2, gr.f32), ndim=1), out: F1):
    for i in range(v.shape[0]):
        out[i] = v[i].norm()


def test_forward_mode_vector_param(rng):
    """A vector ndarray as FwdMode's param: one seed value per component (was refused: the
    seed was counted against the number of vectors)."""
    vs = rng.uniform(0.5, 2.0, (5, 2)).astype(np.float32)
    seed = rng.uniform(-1, 1, (5, 2))
    v = gr.ndarray(gr.types.vector(2, gr.f32), 5, needs_grad=True)
    v.from_numpy(vs)
    out = arr(np.zeros(5, np.float32))
    with gr.ad.FwdMode(loss=out, param=v, seed=seed.ravel()):
        _vec_norms(v, out)
    want = (vs * seed).sum(1) / np.linalg.norm(vs, axis=1)  # d|v| = v . dv / |v|
    np.testing.assert_allclose(out.dual.to_numpy(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="seed has 5 values; a param of shape .5,. of vector.2, f32. elements has 10"):
        gr.ad.FwdMode(loss=out, param=v, seed=np.ones(5))


# -- gradcheck ------------------------------------------------------------------------------------
@gr.kernel
def mixed(x: F1, z: F1, y: F1):
    for i in range(x.shape[0]):
        v = x[i]
        k = 0
        while k < i % 4:
            v = gr.tanh(v * z[i]) + 0.1 * v
            k += 1
        y[i] += v * v


@gr.kernel
def in_place(x: F1, y: F1):
    for i in range(x.shape[0]):
        y[i] = y[i] * x[i]  # reads y[i] and then overwrites it: breaks the access rule


def test_gradcheck_passes_and_restores(rng):
    xs, zs, ys = (rng.uniform(-1, 1, 12).astype(np.float32) for _ in range(3))
    x, z, y = arr(xs), arr(zs), arr(ys)
    result = gr.ad.gradcheck(mixed, [x, z, y], max_points=6)
    assert result.ok and len(result.rows) == 18
    np.testing.assert_array_equal(y.to_numpy(), ys)  # arrays are restored
    assert "passed" in str(result)


def test_gradcheck_reports_the_worst_elements(rng):
    x, y = arr(rng.uniform(1, 2, 8).astype(np.float32)), arr(rng.uniform(1, 2, 8).astype(np.float32))
    with pytest.raises(gr.ad.GradcheckError) as e:
        gr.ad.gradcheck(in_place, [x, y])
    msg = str(e.value)
    assert "FAILED" in msg and "analytic" in msg and " x " in msg
    result = gr.ad.gradcheck(in_place, [x, y], raise_on_failure=False)
    assert not result.ok and result.worst(1)[0][4] > result.worst(1)[0][5]


def test_debug_mode_checks_the_access_rule(fresh, rng):
    fresh(debug=True)
    x, y = arr(np.ones(64, np.float32)), arr(np.ones(64, np.float32))
    in_place(x, y)
    with pytest.raises(gr.GfxrtError, match="reads an element of 'y' and then overwrites it"):
        gr.sync()
    gr.sync()
    z = arr(np.zeros(64, np.float32))
    sin_loop(x, arr(np.ones(64, np.int32), grad=False, dtype=gr.i32), z)  # follows the rule
    gr.sync()


# -- bad input ---------------------------------------------------------------------------------------
def test_bad_input_raises_at_the_call():
    x = arr(np.ones(4, np.float32))
    loss = gr.ndarray(gr.f32, (), needs_grad=True)
    with pytest.raises(ValueError, match="'x' is a grad array"):
        sum_squares.grad(x.grad, loss)
    with pytest.raises(TypeError, match="float dtype"):
        gr.ndarray(gr.i32, 4, needs_grad=True)
    with pytest.raises(ValueError, match="exactly one element"):
        gr.Tape(loss=gr.ndarray(gr.f32, (3,), needs_grad=True))
    with pytest.raises(ValueError, match="needs_grad=True"):
        gr.Tape(loss=gr.ndarray(gr.f32, ()))
    with pytest.raises(TypeError):
        gr.Tape(loss=np.zeros(()))
    with pytest.raises(ValueError, match="nothing to differentiate"):
        sum_squares.grad(arr(np.ones(4, np.float32), grad=False), gr.ndarray(gr.f32, ()))
    with pytest.raises(ValueError, match="needs_grad"):
        gr.ad.gradcheck(sum_squares, [arr(np.ones(4, np.float32), grad=False), gr.ndarray(gr.f32, ())])
    gr.Tape(loss=gr.ndarray(gr.f32, (1,), needs_grad=True))  # one element is a valid loss
    with gr.Tape(loss):
        with pytest.raises(gr.GfxrtError, match="inside a gr.Tape"):
            with gr.Tape(loss):
                pass
        sum_squares(x, loss)
    np.testing.assert_allclose(x.grad.to_numpy(), 2.0)


# -- random programs on the device -------------------------------------------------------------------
@settings(max_examples=int(os.environ.get("GFXRT_EXAMPLES", 12)), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(src=programs())
def test_random_programs_on_the_device(src, tmp_path):
    prog = gr.kernel(load(src, tmp_path))
    rng = np.random.default_rng(11)
    n = 6
    xs, y0, w = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n), rng.uniform(0.5, 1.5, n)
    cs = rng.integers(0, 4, n).astype(np.int32)
    y_ref, gx_ref, gy_ref = oracle_gradient(prog.func, xs, cs, y0, w)
    x, y, cnt = arr(xs.astype(np.float32)), arr(y0.astype(np.float32)), arr(cs, grad=False, dtype=gr.i32)
    prog(x, cnt, y)
    np.testing.assert_allclose(y.to_numpy(), y_ref, rtol=1e-4, atol=1e-5, err_msg=src)
    y.grad.from_numpy(w)
    prog.grad(x, cnt, y)
    np.testing.assert_allclose(x.grad.to_numpy(), gx_ref, rtol=2e-3, atol=2e-4, err_msg=src)
    np.testing.assert_allclose(y.grad.to_numpy(), gy_ref, rtol=2e-3, atol=2e-4, err_msg=src)
    gr.ad.gradcheck(prog, [x, cnt, y], max_points=4, eps=1e-3)
