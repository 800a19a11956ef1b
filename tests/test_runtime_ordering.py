"""Random sequences of launches, uploads, fills, frees and readbacks against a numpy model:
program order, pool reuse (freed buffers come back zeroed, never while in use) and aliasing."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import gfxrt as gr

N = 33


@gr.kernel
def axpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


@gr.kernel
def copy(src: gr.types.ndarray(dtype=gr.f32, ndim=1), dst: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(src.shape[0]):
        dst[i] = src[i]


slot = st.integers(0, 2)
scale = st.sampled_from([-1.0, -0.5, 0.25, 0.5, 1.0])
ops = st.one_of(
    st.tuples(st.just("axpy"), scale, slot, slot),
    st.tuples(st.just("copy"), slot, slot),
    st.tuples(st.just("upload"), slot, st.integers(0, 2**16)),
    st.tuples(st.just("fill"), slot, st.sampled_from([0.0, 1.5, -2.0])),
    st.tuples(st.just("read"), slot),
    st.tuples(st.just("flush")),
    st.tuples(st.just("realloc"), slot),
    st.tuples(st.just("numpy_in"), scale, slot, st.integers(0, 2**16)),
    st.tuples(st.just("numpy_out"), scale, slot),
)


@settings(max_examples=30, deadline=None)
@given(st.lists(ops, min_size=1, max_size=25))
def test_random_command_sequences_match_numpy(program):
    rt = gr.runtime()
    dev = [gr.ndarray(gr.f32, N) for _ in range(3)]
    ref = [np.zeros(N, np.float32) for _ in range(3)]

    def check(i):
        np.testing.assert_allclose(dev[i].to_numpy(), ref[i], rtol=1e-5, atol=1e-5)

    for op in program:
        kind = op[0]
        if kind == "axpy":
            _, a, i, j = op
            axpy(a, dev[i], dev[j])
            ref[j] = np.float32(a) * ref[i] + ref[j]
        elif kind == "copy":
            _, i, j = op
            copy(dev[i], dev[j])
            ref[j] = ref[i].copy()
        elif kind == "upload":
            _, i, seed = op
            data = np.random.default_rng(seed).standard_normal(N).astype(np.float32)
            dev[i].from_numpy(data)
            ref[i] = data
        elif kind == "fill":
            _, i, v = op
            dev[i].fill(v)
            ref[i] = np.full(N, v, np.float32)
        elif kind == "read":
            check(op[1])
        elif kind == "flush":
            rt.flush()
        elif kind == "realloc":
            dev[op[1]] = gr.ndarray(gr.f32, N)  # the old buffer retires; a reused one must come zeroed
            ref[op[1]] = np.zeros(N, np.float32)
        elif kind == "numpy_in":
            _, a, j, seed = op
            xs = np.random.default_rng(seed).standard_normal(N).astype(np.float32)
            axpy(a, xs, dev[j])
            ref[j] = np.float32(a) * xs + ref[j]
        elif kind == "numpy_out":
            _, a, i = op
            out = np.ones(N, np.float32)
            axpy(a, dev[i], out)
            np.testing.assert_allclose(out, np.float32(a) * ref[i] + 1, rtol=1e-5, atol=1e-5)
        assert len(rt.pending_retirements) <= rt.PENDING_RETIREMENTS_DEPTH
    for i in range(3):
        check(i)
