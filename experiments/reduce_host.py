"""Where the host time of `kernels.reduce.sum(x)` goes (issue 13, second session), and what the
early submit (runtime EARLY_SUBMIT_BYTES: a launch binding that many bytes is submitted at once)
changes.

1. Per call, median of batches, for 2^20 .. 2^26 f32: reduce.sum as before this session ("old":
   no early submit, a blocking wait after the maps have completed), with the early submit off
   (threshold above any array), at the default threshold and always on; torch's
   `x.sum().item()` when torch has a GPU. Variants alternate within each round.
2. The same work in raw wgpu-native calls (the launchers' own pipelines and bind groups): one
   submit (pass 1, pass 2, copy), or two (pass 1 submitted first): the floor of wgpu-native
   and the driver, per step.
3. cProfile of reduce.sum at 2^20: gfxrt's Python per call.
4. Timeline of one reduce.sum (`timeline` argument: only this): when each wgpu-native step
   starts and ends, counted from the call's start, and how many non-blocking polls the wait made.

Run: `python -m experiments.reduce_host [calls per batch]`, `... reduce_host.py timeline`.
"""
from __future__ import annotations

import cProfile
import pstats
import statistics
import sys
import time

import numpy as np
from gfxrt.kernels._util import scratch

import gfxrt as gr
from gfxrt import kernels
from gfxrt.engine import ffi

INNER = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 200
SIZES = [1 << 20, 1 << 22, 1 << 24, 1 << 26]
pc = time.perf_counter


def batch(fn, inner=INNER) -> float:
    t = pc()
    for _ in range(inner):
        fn()
    return (pc() - t) / inner * 1e6


def torch_fn(n):
    try:
        import torch
        if not torch.cuda.is_available():
            return None
    except ImportError:
        return None
    x = torch.from_numpy(np.random.default_rng(3).uniform(0.5, 1.5, n).astype(np.float32)).cuda()
    return lambda: x.sum().item()


SPIN_UNTIL = ffi.spin_until


def submit(queue, cmd) -> int:  # one finished command buffer, as GfxRuntime.flush submits it
    ffi.SUBMIT_SLOT[0] = cmd
    index = int(ffi.submit_one(ffi.handle(queue), 1, ffi.SUBMIT_SLOT))
    ffi.release_commands(cmd)
    return index


def end_pass(p) -> None:
    ffi.end_pass_raw(p)
    ffi.release_pass(p)


def spin_then_block(*args):
    """The wait before this session: spin until mapped, then a blocking wait all the same."""
    SPIN_UNTIL(*args)
    return False


def variants():
    rt = gr.runtime()
    out = {}
    for n in SIZES:
        h = np.random.default_rng(3).uniform(0.5, 1.5, n).astype(np.float32)
        x = gr.ndarray(gr.f32, n)
        x.from_numpy(h)
        want = float(h.astype(np.float64).sum())
        fns = {}
        for name, thr, block in (("old", 1 << 62, True), ("off", 1 << 62, False),
                                 ("default", type(rt).EARLY_SUBMIT_BYTES, False), ("always", 1, False)):
            def f(thr=thr, block=block, x=x):
                rt.EARLY_SUBMIT_BYTES = thr
                ffi.spin_until = spin_then_block if block else SPIN_UNTIL
                return kernels.reduce.sum(x)
            fns[name] = f
        t = torch_fn(n)
        if t is not None:
            fns["torch"] = t
        for name, f in fns.items():
            got = f()
            assert abs(got - want) <= 1e-4 * want, (name, got, want)
            for _ in range(20):
                f()
        samples = {k: [] for k in fns}
        inner = max(20, INNER * (1 << 20) // n) if n <= 1 << 22 else INNER // (n >> 24 or 1) + 10
        for _ in range(9):
            for name, f in fns.items():
                samples[name].append(batch(f, inner))
        rt.EARLY_SUBMIT_BYTES = type(rt).EARLY_SUBMIT_BYTES
        ffi.spin_until = SPIN_UNTIL
        out[n] = {k: statistics.median(v) for k, v in samples.items()}
        print(f"2^{n.bit_length() - 1}: " + ", ".join(f"{k} {v:.1f} us ({4 * n / v / 1e3:.0f} GB/s)"
                                                     for k, v in out[n].items()), flush=True)
        del x
        gr.sync()
    return out


def raw(n, reps=300):
    """The two dispatches, the copy, map and read as raw calls; per step, us."""
    from gfxrt.engine.memory import READBACK
    rt = gr.runtime()
    x = gr.ndarray(gr.f32, n)
    x.fill(1.0)
    kernels.reduce.sum(x)
    part = scratch("reduce.partials", gr.f32, kernels.reduce._blocks(n))
    res = scratch("reduce.result", gr.f32, 1)

    def plan(a, b):  # (bind group entry, immediates, workgroups) as the launcher computes them
        L, entry = next((L, e) for L in list(rt.launchers) if L.name == "reduce_blocks" and L.rt is rt
                        for k, e in L.bind_cache.items() if k[:2] == (a._buffer, b._buffer))
        values = (a, b)
        pvals = [values[s[1]] if s[0] == "arg" else values[s[1]].shape[s[2]] for s in L.param_src]
        imm = L.struct.pack(*pvals)
        return entry, imm, L.groups_cache.get(imm) or L.groups(imm, pvals)
    first, second = plan(x, part), plan(part, res)
    res = res._buffer
    dev = rt.device
    st = dev.create_buffer(size=256, usage=READBACK)
    req = ffi.MapRequest(st)
    out = np.empty(1, np.float32)
    spin = dev._gfxrt_spin_s
    gr.sync()

    def rec(enc, entry, imm, g):
        p = ffi.begin_pass(enc)
        ffi.set_pipeline(p, entry[1][0])
        ffi.set_bind_group(p, 0, entry[0], 0, ffi.NULL)
        ffi.set_immediates(p, 0, imm, len(imm))
        ffi.dispatch(p, g[0], 1, 1)
        end_pass(p)

    for early in (False, True):
        steps = dict.fromkeys(("record 1", "finish+submit 1", "record 2 + copy", "finish+submit 2", "map start",
                               "spin until mapped", "read+unmap"), 0.0)
        total = 0.0
        for k in range(reps + 20):
            t0 = pc()
            enc = ffi.create_encoder(dev)
            rec(enc, *first)
            t1 = pc()
            if early:
                submit(rt.queue, ffi.finish(enc))
                enc = ffi.create_encoder(dev)
            t2 = pc()
            p = ffi.begin_pass(enc)  # pass 2 in its own pass, as gfxrt records it after a submit
            end_pass(p)
            rec(enc, *second)
            ffi.copy(enc, res, 0, st, 0, 4)
            t3 = pc()
            submit(rt.queue, ffi.finish(enc))
            t4 = pc()
            req.start(4)
            t5 = pc()
            if not ffi.spin_until(dev, spin or 1.0, [req]):
                raise RuntimeError("not mapped")
            t6 = pc()
            req.read_into(out, 4)
            t7 = pc()
            if k >= 20:
                for s, dt in zip(steps, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t6 - t5, t7 - t6)):
                    steps[s] += dt
                total += t7 - t0
        assert out[0] == n, out
        print(f"raw 2^{n.bit_length() - 1} {'two submits' if early else 'one submit '}: {total / reps * 1e6:.1f} us = "
              + ", ".join(f"{s} {v / reps * 1e6:.1f}" for s, v in steps.items()), flush=True)
    t = pc()
    for _ in range(1000):
        ffi.poll(dev)
    print(f"one non-blocking poll of an idle queue: {(pc() - t) * 1e3:.2f} us", flush=True)
    del x
    gr.sync()


def profile(n=1 << 20, calls=2000):
    x = gr.ndarray(gr.f32, n)
    x.fill(1.0)
    for _ in range(50):
        kernels.reduce.sum(x)
    cProfile.runctx("for _ in range(N): s(x)", {}, {"N": calls, "s": kernels.reduce.sum, "x": x}, "/tmp/reduce.prof")
    pstats.Stats("/tmp/reduce.prof").sort_stats("tottime").print_stats(18)


def timeline(n, calls=300):
    """Mean start/end (us from the call's start) of finish, submit, map start, the polls and the
    read of reduce.sum(x), through wrappers of the gfxrt.engine.ffi functions the runtime calls."""
    x = gr.ndarray(gr.f32, n)
    x.fill(1.0)
    marks: list = []
    real = {k: getattr(ffi, k) for k in ("finish", "submit", "poll")}
    real_start, real_read = ffi.MapRequest.start, ffi.MapRequest.read_into

    def wrap(name, fn):
        def w(*a):
            t0 = pc()
            r = fn(*a)
            marks.append((name, t0, pc()))
            return r
        return w
    for k, fn in real.items():
        setattr(ffi, k, wrap(k, fn))
    ffi.MapRequest.start = wrap("map start", real_start)
    ffi.MapRequest.read_into = wrap("read", real_read)
    sums: dict = {}
    polls = 0
    try:
        for k in range(calls + 20):
            marks.clear()
            t0 = pc()
            kernels.reduce.sum(x)
            t1 = pc()
            if k < 20:
                continue
            seen: dict = {}
            for name, a, b in marks:
                if name == "poll":
                    polls += 1
                    name = "polls"
                    if name in seen:
                        seen[name] = (seen[name][0], b)
                        continue
                i = sum(1 for m in seen if m.startswith(name))
                seen[f"{name} {i + 1}" if name != "polls" else name] = (a, b)
            seen["return"] = (t1, t1)
            for name, (a, b) in seen.items():
                s = sums.setdefault(name, [0.0, 0.0])
                s[0] += a - t0
                s[1] += b - t0
    finally:
        for k, fn in real.items():
            setattr(ffi, k, fn)
        ffi.MapRequest.start, ffi.MapRequest.read_into = real_start, real_read
    print(f"timeline 2^{n.bit_length() - 1} (us from the call's start, mean of {calls}; {polls / calls:.1f} polls "
          "per call): " + ", ".join(f"{k} {a / calls * 1e6:.1f}-{b / calls * 1e6:.1f}" for k, (a, b) in sums.items()), flush=True)
    del x
    gr.sync()


def main():
    gr.init()
    print(f"adapter: {gr.runtime().dev.adapter.info.get('device')}", flush=True)
    if "timeline" in sys.argv:
        for n in (1 << 20, 1 << 24, 1 << 26):
            timeline(n)
        return
    variants()
    for n in (1 << 20, 1 << 26):
        raw(n)
    profile()


if __name__ == "__main__":
    main()
