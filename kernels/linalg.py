"""Dense f32 matrix multiply, tiled in workgroup memory.

    kernels.linalg.matmul(a, b, c)     # c = a @ b; a (M, K), b (K, N), c (M, N)

Any M, N, K (the edges are padded with zeros in workgroup memory). A block of threads computes
a BM x BN tile of c (`Tiles`; `tiles_for` picks 128 x 128, 64 x 128 or 64 x 64 by the number of
blocks a size makes), each thread an 8 x 8 micro-tile held in 64 registers (a
gr.types.matrix(8, 8)). The block walks K in slices of TK = 16 or 8, staging a's slice transposed
(As[k, rows]) and b's slice (Bs[k, cols]) in workgroup arrays of vec4, so that each step k of a
thread is four 128-bit workgroup loads (two vec4 of a's rows, two of b's columns) for 64
multiply-adds. A thread's rows are 4 (ty + TY i) + r for i < 2, r < 4, likewise its columns:
neighbouring threads read consecutive vec4 of Bs and the same vec4 of As. A thread
stages one vec4 of four rows of a at one k (As rows are padded by one vec4 so that those
stores do not collide in the banks) and coalesced scalars of b. The next slice is loaded into
registers before the current one is computed, so global latency hides behind the arithmetic;
with `double` (where the adapter's workgroup memory holds it) the workgroup arrays are
double-buffered too: one barrier per slice instead of two.

The same kernels run on lavapipe, 3.5-4x faster there than the 64 x 64 tiles of 4 x 4 scalars
they replace (experiments/matmul_tiles.py; RESULTS in bench/RESULTS.md, issue 13).
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import gfxrt as gr

from ._util import Args

F2 = gr.types.ndarray(dtype=gr.f32, ndim=2)
vec4 = gr.types.vector(4, gr.f32)
mat8 = gr.types.matrix(8, 8, gr.f32)


@dataclass(frozen=True)
class Tiles:
    """A kernel's shape: a BM x BN tile of c per block of (BM / 8) * (BN / 8) threads,
    slices of depth tk, workgroup arrays double-buffered or not."""

    bm: int = 128
    bn: int = 128
    tk: int = 8
    double: bool = True

    @property
    def threads(self) -> int:
        return (self.bm // 8) * (self.bn // 8)

    @property
    def shared_bytes(self) -> int:
        return (2 if self.double else 1) * self.tk * (self.bm + 4 + self.bn) * 4

    def __str__(self) -> str:
        return f"{self.bm}x{self.bn}/{self.tk}{'/db' if self.double else ''}"


@functools.cache
def tiled(cfg: Tiles):
    """The matmul kernel for one tile shape (made once per shape)."""
    return _make_tiled(cfg)


def _make_tiled(cfg: Tiles):
    BM, BN, KT, DB = cfg.bm, cfg.bn, cfg.tk, cfg.double
    TY, TX = BM // 8, BN // 8           # threads along rows and columns: 8 x 8 each
    T = TY * TX
    PA = BM // 4 + 1                    # vec4 per k of As: BM rows and one vec4 of padding
    PB = BN // 4
    NBUF = 2 if DB else 1
    AL = BM * KT // (4 * T)             # vec4 (four rows at one k) of a that a thread stages per slice
    AM = T // KT                        # row quads covered by one pass of the block's threads
    BL = BN * KT // T                   # scalars of b that a thread stages per slice
    BK = T // BN                        # rows of b covered by one pass of the block's threads
    LOG_TX, LOG_KT, LOG_BN = TX.bit_length() - 1, KT.bit_length() - 1, BN.bit_length() - 1
    if not (all(v & (v - 1) == 0 for v in (TX, KT, BN)) and T % KT == 0 and T % BN == 0 and AL >= 1 and BL >= 1):
        raise ValueError(f"unsupported matmul tiles {cfg}: BM, BN, TK powers of two, BM >= 64, TK >= BN / 16")
    regs_a = gr.types.matrix(AL, 4, gr.f32)
    regs_b = gr.types.vector(BL, gr.f32)

    @gr.kernel
    def matmul_tiled(a: F2, b: F2, c: F2):
        gr.loop_config(block_dim=T)
        for _t in range(((c.shape[0] + BM - 1) // BM) * ((c.shape[1] + BN - 1) // BN) * T):
            M, N, K = a.shape[0], b.shape[1], a.shape[1]
            tid = gr.simt.block.thread_idx()
            blk = gr.simt.block.block_idx()
            tiles_n = (N + BN - 1) // BN
            row0 = (blk // tiles_n) * BM
            col0 = (blk % tiles_n) * BN
            ty = tid >> LOG_TX  # tid // TX, tid % TX (bit operations: tid is not known to be >= 0)
            tx = tid & (TX - 1)
            As = gr.simt.block.SharedArray((NBUF * KT, PA), vec4)  # As[k, q]: rows 4q .. 4q + 3 of a's slice
            Bs = gr.simt.block.SharedArray((NBUF * KT, PB), vec4)  # Bs[k, q]: columns 4q .. 4q + 3 of b's slice
            # what this thread stages: a at k = ka of the row quads qa + AM p; b at column cb of rows kb + BK p
            ka = tid & (KT - 1)
            qa = tid >> LOG_KT
            cb = tid & (BN - 1)
            kb = tid >> LOG_BN
            cq = cb >> 2
            cc = cb & 3
            ra = regs_a(0.0)
            rb = regs_b(0.0)
            for p in gr.static(range(AL)):  # slice 0 into registers
                for r in gr.static(range(4)):
                    row = row0 + 4 * (qa + AM * p) + r
                    v = 0.0
                    if row < M and ka < K:
                        v = a[row, ka]
                    ra[p, r] = v
            for p in gr.static(range(BL)):
                v = 0.0
                if kb + BK * p < K and col0 + cb < N:
                    v = b[kb + BK * p, col0 + cb]
                rb[p] = v
            acc = mat8(0.0)
            nt = (K + KT - 1) // KT
            for t in range(nt):
                base = (t & (NBUF - 1)) * KT
                for p in gr.static(range(AL)):
                    As[base + ka, qa + AM * p] = vec4(ra[p, 0], ra[p, 1], ra[p, 2], ra[p, 3])
                for p in gr.static(range(BL)):
                    Bs[base + kb + BK * p, cq][cc] = rb[p]
                gr.simt.block.sync()
                if t + 1 < nt:  # the next slice into registers while this one is computed
                    k1 = (t + 1) * KT
                    for p in gr.static(range(AL)):
                        for r in gr.static(range(4)):
                            row = row0 + 4 * (qa + AM * p) + r
                            v = 0.0
                            if row < M and k1 + ka < K:
                                v = a[row, k1 + ka]
                            ra[p, r] = v
                    for p in gr.static(range(BL)):
                        v = 0.0
                        if k1 + kb + BK * p < K and col0 + cb < N:
                            v = b[k1 + kb + BK * p, col0 + cb]
                        rb[p] = v
                for kk in gr.static(range(KT)):
                    a0 = As[base + kk, ty]
                    a1 = As[base + kk, ty + TY]
                    b0 = Bs[base + kk, tx]
                    b1 = Bs[base + kk, tx + TX]
                    for r in gr.static(range(4)):
                        for s in gr.static(range(4)):
                            acc[r, s] += a0[r] * b0[s]
                            acc[r, 4 + s] += a0[r] * b1[s]
                            acc[4 + r, s] += a1[r] * b0[s]
                            acc[4 + r, 4 + s] += a1[r] * b1[s]
                if gr.static(not DB):
                    gr.simt.block.sync()
            for i in gr.static(range(2)):
                for r in gr.static(range(4)):
                    row = row0 + 4 * (ty + TY * i) + r
                    for j in gr.static(range(2)):
                        for s in gr.static(range(4)):
                            col = col0 + 4 * (tx + TX * j) + s
                            if row < M and col < N:
                                c[row, col] = acc[4 * i + r, 4 * j + s]

    return matmul_tiled


# tile shapes from the largest, and the blocks of a launch below which the next smaller shape is
# taken (GPUs: enough blocks for every multiprocessor; CPU adapters: for every core). H100,
# device TFLOP/s at 1024 / 2048 / 4096 (experiments/matmul_tiles.py): 128x128/16/db 16.0 / 34.3
# / 36.9, 128x128/8/db 13.7 / 30.7 / 32.5, 64x128/8/db 23.4 / 32.5 / 35.1, 64x64/8/db 21.9 /
# 31.2 / 32.9. Slices of 16 double the unrolled body: lavapipe compiles it 1.5 s slower for the
# same speed, so CPU adapters keep slices of 8.
GPU_SHAPES = (Tiles(128, 128, 16), Tiles(64, 128, 8), Tiles(64, 64, 8))
CPU_SHAPES = (Tiles(128, 128, 8), Tiles(64, 128, 8), Tiles(64, 64, 8))
MIN_BLOCKS_GPU = 128
MIN_BLOCKS_CPU = 8


def tiles_for(m: int, n: int) -> Tiles:
    """The tile shape for an (m, n) result on the current device: the largest of the device's
    shapes that makes at least MIN_BLOCKS_* blocks (else the smallest); then the first of
    (double-buffered, single, slices of 8 double-buffered, single) that the adapter's workgroup
    memory holds. GFXRT_MATMUL_TILES=BMxBN/TK[/db] overrides the shape (to measure:
    experiments/matmul_tiles.py)."""
    env = os.environ.get("GFXRT_MATMUL_TILES")
    dev = gr.device()
    if env:
        bmbn, tk, *rest = env.split("/")
        bm, bn = (int(x) for x in bmbn.split("x"))
        cfg = Tiles(bm, bn, int(tk), rest == ["db"])
    else:
        shapes, least = (CPU_SHAPES, MIN_BLOCKS_CPU) if dev.is_cpu else (GPU_SHAPES, MIN_BLOCKS_GPU)
        cfg = next((t for t in shapes if -(-m // t.bm) * -(-n // t.bn) >= least), shapes[-1])
    limit = dev.target.max_workgroup_storage
    for t in (cfg, Tiles(cfg.bm, cfg.bn, cfg.tk, False), Tiles(cfg.bm, cfg.bn, 8, cfg.double),
              Tiles(cfg.bm, cfg.bn, 8, False)):
        if t.shared_bytes <= limit:
            return t
    return Tiles(cfg.bm, cfg.bn, 8, False)  # 8320 bytes at most: WebGPU's minimum limit is 16384


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
        tiled(tiles_for(*shape))(ad, bd, cd)
    args.finish()
    return c
