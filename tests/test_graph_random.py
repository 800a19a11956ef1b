"""Random captured programs (launches, fills, copies with offsets, batched device copies,
temporaries dropped after capture) replayed several times against a numpy model, through
the generated replay and the checked one, with pool churn between replays."""
import gc

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import gfxrt as gr

N = 29


@gr.kernel
def axpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


@gr.kernel
def scale(x: gr.types.ndarray(dtype=gr.f32, ndim=1), k: gr.f32):
    for i in range(x.shape[0]):
        x[i] = x[i] * k


slot = st.integers(0, 2)
coef = st.sampled_from([-1.0, -0.5, 0.25, 0.5, 1.0])
offset = st.integers(0, N - 1)
ops = st.one_of(
    st.tuples(st.just("axpy"), coef, slot, slot),
    st.tuples(st.just("scale"), slot, coef),
    st.tuples(st.just("fill"), slot, st.sampled_from([0.0, 1.5, -2.0])),
    st.tuples(st.just("copy"), slot, slot, offset, offset, st.integers(0, N)),
    st.tuples(st.just("copy_tensors"), st.lists(st.tuples(slot, slot), min_size=1, max_size=3)),
    st.tuples(st.just("temporary"), slot, slot, coef),
)


def _issue(program, dev):
    """Issue `program` on device arrays (recorded by the capture around it)."""
    for op in program:
        kind = op[0]
        if kind == "axpy":
            _, a, i, j = op
            axpy(a, dev[i], dev[j])
        elif kind == "scale":
            _, i, k = op
            scale(dev[i], k)
        elif kind == "fill":
            _, i, v = op
            dev[i].fill(v)
        elif kind == "copy":
            _, i, j, so, do, cnt = op
            dev[j].copy_from(dev[i], src_offset=so, dst_offset=do, count=min(cnt, N - so, N - do))
        elif kind == "copy_tensors":
            gr.copy_tensors([(dev[j], dev[i]) for j, i in op[1]])
        else:  # a temporary allocated inside the capture and dropped after it
            _, i, j, a = op
            tmp = gr.ndarray(gr.f32, N)
            tmp.copy_from(dev[i])
            scale(tmp, a)
            axpy(1.0, tmp, dev[j])
            del tmp


def _model(program, m):
    """Apply `program` to the numpy model `m` (a list of float32 arrays), in place."""
    f = np.float32
    for op in program:
        kind = op[0]
        if kind == "axpy":
            _, a, i, j = op
            m[j] = f(a) * m[i] + m[j]
        elif kind == "scale":
            _, i, k = op
            m[i] = m[i] * f(k)
        elif kind == "fill":
            _, i, v = op
            m[i] = np.full(N, v, np.float32)
        elif kind == "copy":
            _, i, j, so, do, cnt = op
            cnt = min(cnt, N - so, N - do)
            src = m[i][so:so + cnt].copy()
            m[j] = m[j].copy()
            m[j][do:do + cnt] = src
        elif kind == "copy_tensors":
            for j, i in op[1]:
                m[j] = m[i].copy()
        else:
            _, i, j, a = op
            m[j] = m[i] * f(a) + m[j]


@settings(max_examples=30, deadline=None)
@given(st.lists(ops, min_size=1, max_size=12), st.integers(1, 3), st.booleans(), st.integers(0, 2**16))
def test_random_captured_programs_replay_like_numpy(program, replays, checked, seed):
    rng = np.random.default_rng(seed)
    init = [(rng.random(N, dtype=np.float32) + 0.5).astype(np.float32) for _ in range(3)]
    dev = []
    for a in init:
        x = gr.ndarray(gr.f32, N)
        x.from_numpy(a)
        dev.append(x)
    model = [a.copy() for a in init]
    with gr.graph() as g:
        _issue(program, dev)
    for x, a in zip(dev, init):
        np.testing.assert_array_equal(x.to_numpy(), a)
    gc.collect()
    rt = gr.runtime()
    for r in range(replays):
        # take every idle buffer of the arrays' size (new arrays are zeroed): a dropped temporary
        # would be among them unless the graph pinned it
        gr.sync()
        churn = [gr.ndarray(gr.f32, N)]
        while rt.pool.free.get(dev[0]._buffer._gfxrt_pool_key):
            churn.append(gr.ndarray(gr.f32, N))
        if checked:
            rt.replay_checked(g.records, g._params, g._watch)
        else:
            g.replay()
        _model(program, model)
        for k, (x, m) in enumerate(zip(dev, model)):
            np.testing.assert_allclose(x.to_numpy(), m, rtol=1e-5, atol=1e-5, err_msg=f"replay {r}, array {k}")
        for c in churn:
            np.testing.assert_array_equal(c.to_numpy(), np.zeros(N, np.float32))
        del churn, c
    g.release()

