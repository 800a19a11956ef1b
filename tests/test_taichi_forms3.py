"""Language forms real Taichi programs use (issue 24, item 1, third layer): gr.math.floor / ceil / round
with Taichi's optional dtype (one implementation, shared with gr.floor / gr.ceil / gr.round), Python values
folded while tracing (`gr.ndrange(*[n] * dim)`, a global numpy array, a list meeting a vector), a
kernel-scope variable rewritten inside the parallel loop, and `and` / `or` on run-time values.
The expected numbers were printed by Taichi 1.7.4 (ti.cpu) running the same programs."""
import numpy as np

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
