"""Why the subgroup-wide look-back (branch i13-scan2's version B, commit 2feb3fe, 75 us at 2^24) hung on
the H100 at 2-6 tiles: the same kernel (scan_b_kernel.py) with its look-back loop bounded, recording
what the subgroup saw when it gave up, over the sequence of the test that hung (every size of
tests/test_kernels_reduce_scan.py SCAN_SIZES, int32 / uint32 / float32, inclusive and exclusive,
numpy arguments). Run: `python -m experiments.scan_hang`.

Found (bench/RESULTS.md): `r = subgroupMin(select(lane, S, ready))` read 0xFFFFFFFF, a value no lane
supplied, so the step went back r = -1 tiles, i.e. one tile *forward*, and the loop then waited on
tiles that publish after it: the subgroup's lanes were not converged inside the loop.
"""

import numpy as np

import gfxrt as gr  # noqa: E402
from experiments import scan_b_kernel as K  # noqa: E402

which = "bounded"

gr.init()
L = K.LTILE
SIZES = [1, 2, 3, 31, 33, 255, 257, K.TILE - 1, K.TILE + 1, L - 1, L, L + 1, 2 * L - 1, 2 * L + 1, 5 * L + 77]
if which == "bounded":
    K.DBG[0] = gr.ndarray(gr.u32, 80 * 4096)
rng = np.random.default_rng(0)
for dtype in (np.int32, np.uint32, np.float32):
    for n in SIZES:
        x = (rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(dtype) if dtype != np.float32
             else rng.standard_normal(n).astype(np.float32))
        for inclusive in (True, False):
            print(f"{dtype.__name__} n={n} inclusive={inclusive} ...", end=" ", flush=True)
            if which == "bounded":
                K.DBG[0].fill(0)
            got = K.scan(x, inclusive=inclusive)
            wide = np.float64 if dtype == np.float32 else (np.uint64 if dtype == np.uint32 else np.int64)
            c = np.cumsum(x, dtype=wide)
            want = (c if inclusive else c - x.astype(wide))
            ok = np.allclose(got, want, rtol=1e-5, atol=1e-3) if dtype == np.float32 else \
                np.array_equal(got, want.astype(dtype))
            print("ok" if ok else "WRONG", flush=True)
            if which == "bounded":
                dbg = K.DBG[0].to_numpy().reshape(-1, 80)
                for t in np.flatnonzero(dbg[:, 69] == 7777)[:3]:
                    d = dbg[t]
                    print(f"  gave up in tile {t}: q={d[64]} r={d[65]} f={d[66]} S={d[67]} first={d[68]} "
                          f"lo tags {[int(v) >> 16 for v in d[:6]]} hi tags {[int(v) >> 16 for v in d[32:38]]}")
