"""Dense f32 matrix multiply, tiled in workgroup memory.

    kernels.linalg.matmul(a, b, c)     # c = a @ b; a (M, K), b (K, N), c (M, N)

Each block of 256 threads (16 x 16) computes a 64 x 64 tile of c: it walks K in steps of TK = 8,
staging a 64 x 8 slice of a (transposed) and an 8 x 64 slice of b in workgroup memory, and
each thread accumulates a 4 x 4 micro-tile of c in registers (a gr.types.matrix(4, 4)):
rows ty + 16 r and columns tx + 16 s, so loads and stores of neighbouring threads are
consecutive addresses. Any M, N, K (the edges are padded with zeros in workgroup memory).
TK = 8 measured 1.8x faster than 16 and 32 on lavapipe (bench/kernels_numpy.py).
"""
from __future__ import annotations

import gfxrt as gr

from ._util import Args

TM = 64        # tile of c: TM x TM
TK = 8        # depth of one staged slice
B = 256        # threads per block: 16 x 16, each a 4 x 4 micro-tile
R = 4          # micro-tile size
LOADS = TM * TK // B  # elements of each staged slice one thread loads

F2 = gr.types.ndarray(dtype=gr.f32, ndim=2)
vec4 = gr.types.vector(4, gr.f32)
mat4 = gr.types.matrix(4, 4, gr.f32)


@gr.kernel
def matmul_kernel(a: F2, b: F2, c: F2):
    gr.loop_config(block_dim=B)
    for _t in range(((c.shape[0] + TM - 1) // TM) * ((c.shape[1] + TM - 1) // TM) * B):
        M, N, K = a.shape[0], b.shape[1], a.shape[1]
        tid = gr.simt.block.thread_idx()
        blk = gr.simt.block.block_idx()
        tiles_n = (N + TM - 1) // TM
        row0 = (blk // tiles_n) * TM
        col0 = (blk % tiles_n) * TM
        ty = tid // 16
        tx = tid % 16
        As = gr.simt.block.SharedArray((TK, TM), gr.f32)  # a's slice, transposed: As[k, row]
        Bs = gr.simt.block.SharedArray((TK, TM), gr.f32)  # b's slice: Bs[k, col]
        acc = mat4(0.0)
        for k0 in range(0, K, TK):
            for q in gr.static(range(LOADS)):
                e = tid + q * B
                r, kk = e // TK, e % TK  # a: TK consecutive k of one row per TK threads
                va = 0.0
                if row0 + r < M and k0 + kk < K:
                    va = a[row0 + r, k0 + kk]
                As[kk, r] = va
                kb, cb = e // TM, e % TM  # b: 64 consecutive columns of one row per 64 threads
                vb = 0.0
                if k0 + kb < K and col0 + cb < N:
                    vb = b[k0 + kb, col0 + cb]
                Bs[kb, cb] = vb
            gr.simt.block.sync()
            for kk in gr.static(range(TK)):
                av = vec4(As[kk, ty], As[kk, ty + 16], As[kk, ty + 32], As[kk, ty + 48])
                bv = vec4(Bs[kk, tx], Bs[kk, tx + 16], Bs[kk, tx + 32], Bs[kk, tx + 48])
                acc += av.outer_product(bv)
            gr.simt.block.sync()
        for r in gr.static(range(R)):
            for s in gr.static(range(R)):
                i = row0 + ty + 16 * r
                j = col0 + tx + 16 * s
                if i < M and j < N:
                    c[i, j] = acc[r, s]


def matmul(a, b, c=None):
    """c = a @ b for 2-D f32 arrays a (M, K), b (K, N) and c (M, N); returns c (a new array of
    a's kind when not given)."""
    args = Args()
    ad = args.dev(a, "a", dtype=gr.f32, ndim=2)
    bd = args.dev(b, "b", dtype=gr.f32, ndim=2)
    if ad.shape[1] != bd.shape[0]:
        raise ValueError(f"a is {ad.shape} and b is {bd.shape}: a.shape[1] must equal b.shape[0]")
    shape = (ad.shape[0], bd.shape[1])
    if c is None:
        import numpy as np
        c = gr.ndarray(gr.f32, shape) if isinstance(a, gr.Ndarray) else np.zeros(shape, np.float32)
    if c is a or c is b:
        raise ValueError("c must be a different array from a and b")
    cd = args.dev(c, "c", dtype=gr.f32, ndim=2, written=True)
    if cd.shape != shape:
        raise ValueError(f"c has shape {cd.shape}; a @ b has {shape}")
    if ad.shape[1] == 0:
        cd.fill(0.0)
    elif shape[0] and shape[1]:
        matmul_kernel(ad, bd, cd)
    args.finish()
    return c
