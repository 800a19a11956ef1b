"""Control for experiments/scan_hang.py: the look-back's subgroupMin(select(ready, S, lane)) in a
kernel of its own, outside any loop and inside a uniform loop over atomic loads (nothing published:
every lane not ready, the minimum must be 0). On the H100 it returns 0 everywhere, so the 0xFFFFFFFF
that scan version B's loop saw comes from lanes that were not together there, not from the
reduction itself. Run: `python -m experiments.subgroup_min`."""
import numpy as np

import gfxrt as gr

gr.init()
U1 = gr.types.ndarray(dtype=gr.u32, ndim=1)
I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)

@gr.kernel
def probe(state: U1, out: I1, start: gr.i32):
    gr.loop_config(block_dim=256)
    for _t in range(256):
        lane = gr.simt.subgroup.invocation_id()
        S = gr.simt.subgroup.group_size()
        w = gr.simt.subgroup.subgroup_id()
        # outside any loop or branch
        ok0 = lane > 100
        out[0 + _t] = gr.simt.subgroup.reduce_min(gr.select(ok0, S, lane))
        if w == 0:
            q = start
            k = 0
            while q >= 0:
                i = q - lane
                lo = state[gr.max(i, 0)]
                ok = lo != 0 or i < 0
                r = gr.simt.subgroup.reduce_min(gr.select(ok, S, lane))
                ru = gr.simt.subgroup.reduce_min(gr.select(ok, gr.cast(S, gr.u32), gr.cast(lane, gr.u32)))
                if lane == 0:
                    out[256 + 3 * k] = r
                    out[256 + 3 * k + 1] = gr.cast(ru, gr.i32)
                    out[256 + 3 * k + 2] = q
                q -= 1
                k += 1
state = gr.ndarray(gr.u32, 64)
state.from_numpy(np.array([0] * 64, np.uint32))
out = gr.ndarray(gr.i32, 512)
out.fill(-7)
probe(state, out, 3)
o = out.to_numpy()
print("outside loop (want 0..31 lanes->min 0):", o[:4], "...")
print("in loop r, ru, q:", o[256:256 + 12].reshape(-1, 3).tolist())
