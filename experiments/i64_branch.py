"""python -m experiments.i64_branch

H100 findings of 2026-11-27 (docs/testing.md, "Open"): a 64-bit integer comparison that decides
a branch seems to come out wrong when the kernel also divides:

    progfuzz 22580   if x + x <= 3: continue          (i64 x)      o = x // 5 stored: -2, want 0
    progfuzz 20851   v2 = 1 if x * 2 > 1 else 0; dead f64 atan2     o = a[v2] took the wrong one
    opsem 263        x7 * (1 & x8) beside a kept x8 % 33 (any 64-bit division but % 32)

Each kernel here runs over x in -20..20 and some large values, in parallel (one element per
thread), and prints how many elements are wrong and which x values, so that the pattern can be
read: signed vs unsigned comparison, with and without the division, with a run-time divisor, with
the division done by a loop of our own, and with f64 division instead.
"""
from __future__ import annotations

import numpy as np

import gfxrt as gr

I64 = gr.types.ndarray(dtype=gr.i64, ndim=1)
F64 = gr.types.ndarray(dtype=gr.f64, ndim=1)
F32 = gr.types.ndarray(dtype=gr.f32, ndim=1)


@gr.kernel
def cont_div(x: I64, o: I64):
    for i in range(x.shape[0]):
        if (x[i] + x[i]) <= 3:
            continue
        o[i] = x[i] // 5


@gr.kernel
def cont_div_d(x: I64, o: I64, d: gr.i64):
    for i in range(x.shape[0]):
        if (x[i] + x[i]) <= 3:
            continue
        o[i] = x[i] // d


@gr.kernel
def cont_div_ucmp(x: I64, o: I64):
    for i in range(x.shape[0]):
        if (gr.cast(x[i] + x[i], gr.u64) ^ gr.u64(1 << 63)) <= gr.u64((1 << 63) + 3):
            continue
        o[i] = x[i] // 5


@gr.kernel
def cont_div_split(x: I64, o: I64):
    for i in range(x.shape[0]):
        s = x[i] + x[i]
        hi = gr.cast(s >> 32, gr.i32)
        lo = gr.cast(s & 0xFFFFFFFF, gr.u32)
        if hi < 0 or (hi == 0 and lo <= gr.u32(3)):
            continue
        o[i] = x[i] // 5


@gr.kernel
def select_kept_fdiv_split(x: I64, xf: F64, a: F32, o: F32, p: F64):
    for i in range(x.shape[0]):
        v2 = 0
        s = x[i] * 2
        hi = gr.cast(s >> 32, gr.i32)
        lo = gr.cast(s & 0xFFFFFFFF, gr.u32)
        if hi > 0 or (hi == 0 and lo > gr.u32(1)):
            v2 = 1
        p[i] = xf[i] / xf[0]
        o[i] = a[v2]


@gr.kernel
def cont_mul(x: I64, o: I64):
    for i in range(x.shape[0]):
        if (x[i] + x[i]) <= 3:
            continue
        o[i] = x[i] * 5


@gr.kernel
def cont_div_le1(x: I64, o: I64):
    for i in range(x.shape[0]):
        if x[i] <= 1:
            continue
        o[i] = x[i] // 5


@gr.kernel
def cont_rem(x: I64, o: I64):
    for i in range(x.shape[0]):
        if (x[i] + x[i]) <= 3:
            continue
        o[i] = x[i] % 5


@gr.kernel
def cont_udiv(x: I64, o: I64):
    for i in range(x.shape[0]):
        if (x[i] + x[i]) <= 3:
            continue
        o[i] = gr.cast(gr.cast(x[i], gr.u64) // gr.u64(5), gr.i64)


@gr.kernel
def flag_dead_div(x: I64, o: I64):
    for i in range(x.shape[0]):
        f = 0
        if (x[i] + x[i]) <= 3:
            f = 1
        v = x[i] // 5  # noqa: F841 - dead
        o[i] = f


@gr.kernel
def select_dead_atan2(x: I64, xf: F64, a: F32, o: F32):
    for i in range(x.shape[0]):
        v2 = 0
        if (x[i] * 2) > 1:
            v2 = 1
        v7 = gr.atan2(xf[i], x[0])  # noqa: F841 - dead
        o[i] = a[v2]


@gr.kernel
def select_plain(x: I64, xf: F64, a: F32, o: F32):
    for i in range(x.shape[0]):
        v2 = 0
        if (x[i] * 2) > 1:
            v2 = 1
        o[i] = a[v2]


@gr.kernel
def select_dead_fdiv(x: I64, xf: F64, a: F32, o: F32):
    for i in range(x.shape[0]):
        v2 = 0
        if (x[i] * 2) > 1:
            v2 = 1
        v7 = xf[i] / xf[0]  # noqa: F841 - dead
        o[i] = a[v2]


@gr.kernel
def select_kept_fdiv(x: I64, xf: F64, a: F32, o: F32, p: F64):
    for i in range(x.shape[0]):
        v2 = 0
        if (x[i] * 2) > 1:
            v2 = 1
        p[i] = xf[i] / xf[0]
        o[i] = a[v2]


def _floordiv(x, d):
    return np.array([int(v) // d for v in x], np.int64)


def main() -> int:
    small = np.arange(-20, 21, dtype=np.int64)
    rng = np.random.default_rng(1)
    big = rng.integers(-2**62, 2**62, 87, dtype=np.int64)
    x = np.concatenate([small, big])
    n = len(x)
    keep = (x + x) > 3
    print(f"{gr.device().name}; {n} values of x", flush=True)

    def report(tag, got, want):
        bad = np.flatnonzero(got != want)
        which = ", ".join(str(int(x[k])) for k in bad[:8])
        print(f"{tag:22s} {len(bad):4d} wrong" + (f"; at x = {which}; got {got[bad[:4]].tolist()}" if len(bad) else ""),
              flush=True)

    for tag, k, want in [("cont; x // 5", cont_div, np.where(keep, _floordiv(x, 5), 0)),
                         ("cont as u64 cmp; x // 5", cont_div_ucmp, np.where(keep, _floordiv(x, 5), 0)),
                         ("cont split 32; x // 5", cont_div_split, np.where(keep, _floordiv(x, 5), 0)),
                         ("cont; x * 5", cont_mul, np.where(keep, x * 5, 0)),
                         ("cont x<=1; x // 5", cont_div_le1, np.where(x > 1, _floordiv(x, 5), 0)),
                         ("cont; x % 5", cont_rem, np.where(keep, np.mod(x, 5), 0)),
                         ("cont; u64(x) // 5", cont_udiv,
                          np.where(keep, (x.astype(np.uint64) // np.uint64(5)).astype(np.int64), 0)),
                         ("flag; dead x // 5", flag_dead_div, np.where(keep, 0, 1))]:
        o = np.zeros(n, np.int64)
        k(x, o)
        report(tag, o, want)
    o = np.zeros(n, np.int64)
    cont_div_d(x, o, 5)
    report("cont; x // d (d=5)", o, np.where(keep, _floordiv(x, 5), 0))

    xf = rng.standard_normal(n) + 2.0
    a = np.array([-1.5, -2.1], np.float32)
    sel = np.where(x * 2 > 1, a[1], a[0]).astype(np.float32)
    for tag, k in [("v2; dead f64 atan2", select_dead_atan2), ("v2 alone", select_plain),
                   ("v2; dead f64 /", select_dead_fdiv)]:
        o = np.zeros(n, np.float32)
        k(x, xf, a, o)
        report(tag, o, sel)
    o, p = np.zeros(n, np.float32), np.zeros(n)
    select_kept_fdiv(x, xf, a, o, p)
    report("v2; kept f64 /", o, sel)
    o, p = np.zeros(n, np.float32), np.zeros(n)
    select_kept_fdiv_split(x, xf, a, o, p)
    report("v2 split 32; kept f64 /", o, sel)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
