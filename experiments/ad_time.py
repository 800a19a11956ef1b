"""Issue 13: where the device time of reverse mode goes (the adstack grad, the Tape's backward).

Device time here is a *span*: one timestamp at the start and one at the end of a compute
pass holding R launches (nothing inserted between the dispatches; gr.profile()'s
per-dispatch timestamps add ~6-8 us per dispatch on an H100). `split` repeats one launch
with a timestamp around each of its dispatches (their own intervals, then the gaps).

    python -m experiments.ad_time adstack [n ...]   run-time sin loop (experiments/autodiff.py), variants
    python -m experiments.ad_time tape [n]          the ad_tape step kernel: forward, its grad, variants
    python -m experiments.ad_time tapewall [n]      the ad_tape case's host walls (forward, Tape)
    python -m experiments.ad_time tapephase [n]     the Tape's host timeline: recording, submits, sync

adstack variants: the default strategy, the adstack with its first level in workgroup or
private memory, more physical threads (adstack.THREADS_GPU), other block sizes
(compiler/autodiff/adstack.SHARED_WG), and gr.init(adstack_size=32) (no counting pre-pass,
an ordinary range task: the floor of the adstack's machinery). tape variants: hand-written
adjoints of the step kernel with fewer atomics (see `_tape_kernels`).
"""
import dataclasses
import os
import statistics
import sys
import time

import gfxrt.compiler.autodiff.adstack as cad  # noqa: E402
import numpy as np

import gfxrt as gr  # noqa: E402
from gfxrt.ad import adstack
from gfxrt.engine import ffi  # noqa: E402
from gfxrt.engine.memory import QUERY  # noqa: E402

REPS = 5


class Span:
    """Device seconds of whatever `fn` records, in one pass with timestamps at its ends."""

    def __init__(self, cap: int = 600):
        rt = self.rt = gr.runtime()
        self.cap = cap
        self.qs = rt.device.create_query_set(type="timestamp", count=cap)
        self.rb = rt.device.create_buffer(size=8 * cap, usage=QUERY)
        self.period = ffi.timestamp_period(rt.queue)

    def __call__(self, fn, each: bool = False):
        rt = self.rt
        gr.sync()
        rt.open_pass(self.qs, 0, 1)
        k = [2]
        if each:
            orig = ffi.dispatch

            def timed(p, *a):
                ffi.write_timestamp(p, self.qs, k[0])
                orig(p, *a)
                ffi.write_timestamp(p, self.qs, k[0] + 1)
                k[0] += 2
            ffi.dispatch = timed
            rt._slow = True
        try:
            fn()
        finally:
            if each:
                ffi.dispatch = orig
                rt.refresh_slow()
        assert rt._pass is not None and rt._recorded <= rt.AUTO_FLUSH_DISPATCHES, "a flush split the span"
        rt.end_pass()
        used = k[0]
        ffi.resolve_queries(rt.encoder(), self.qs, 0, used, self.rb, 0)
        rt.flush()
        gr.sync()
        t = np.frombuffer(rt.device.queue.read_buffer(self.rb, 0, 8 * used), np.uint64).astype(np.int64)
        total = float(t[1] - t[0]) * self.period * 1e-9
        if not each:
            return total
        inner = t[2:used]
        own = [float(b - a) * self.period * 1e-9 for a, b in zip(inner[0::2], inner[1::2])]
        gaps = [float(b - a) * self.period * 1e-9 for a, b in zip(inner[1:-1:2], inner[2::2])]
        return total, own, gaps


def med_span(span, fn, r: int) -> float:
    return statistics.median(span(fn) for _ in range(REPS)) / r


def us(s: float) -> str:
    return f"{s * 1e6:9.1f}"


# -- the adstack ---------------------------------------------------------------------------------

VARIANTS = [  # label, env, THREADS_GPU, SHARED_WG, adstack_size[, first-level slots]
    ("default (auto)", {}, None, None, None),
    ("adstack private", {"GFXRT_AD_LOOPS": "adstack", "GFXRT_ADSTACK_SHARED": "0"}, None, None, None),
    ("adstack shared wg64 (K=16)", {"GFXRT_AD_LOOPS": "adstack", "GFXRT_ADSTACK_SHARED": "1"}, None, None, None),
    ("adstack shared wg64 K=32", {"GFXRT_AD_LOOPS": "adstack", "GFXRT_ADSTACK_SHARED": "1"}, None, None, None, 32),
    ("adstack private 2^20 thr", {"GFXRT_AD_LOOPS": "adstack", "GFXRT_ADSTACK_SHARED": "0"}, 1 << 20, None, None),
    ("adstack private, adstack_size=32", {"GFXRT_AD_LOOPS": "adstack", "GFXRT_ADSTACK_SHARED": "0"}, None, None, 32),
]


def _measure(label, n, xs, cs, sample, dref) -> None:
    from experiments.autodiff import sin_loop
    x, y = gr.ndarray(gr.f32, n, needs_grad=True), gr.ndarray(gr.f32, n, needs_grad=True)
    cnt = gr.ndarray(gr.i32, n)
    x.from_numpy(xs)
    cnt.from_numpy(cs)
    sin_loop(x, cnt, y)
    x.grad.fill(0.0)
    y.grad.fill(1.0)
    sin_loop.grad(x, cnt, y)
    err = float(np.abs(x.grad.to_numpy()[sample] - dref).max())
    sin_loop.grad(x, cnt, y)
    gr.sync()
    span = Span()
    r = 10
    fwd = med_span(span, lambda: [sin_loop(x, cnt, y) for _ in range(r)], r)
    bwd = med_span(span, lambda: [sin_loop.grad(x, cnt, y) for _ in range(r)], r)
    _, own, gaps = span(lambda: sin_loop.grad(x, cnt, y), each=True)
    t0 = time.perf_counter()
    for _ in range(r):
        sin_loop.grad(x, cnt, y)
    gr.sync()
    host = (time.perf_counter() - t0) / r
    t0 = time.perf_counter()
    for _ in range(r):
        sin_loop(x, cnt, y)
    gr.sync()
    hostf = (time.perf_counter() - t0) / r
    print(f"{label:34s} fwd {us(fwd)} bwd {us(bwd)} ratio {bwd / fwd:5.2f} | host loop fwd {us(hostf)} "
          f"bwd {us(host)} ratio {host / hostf:5.2f} | split [{' '.join(f'{o * 1e6:.1f}' for o in own)}] "
          f"gaps [{' '.join(f'{g * 1e6:.1f}' for g in gaps)}] | heap {gr.runtime().adstack.words if gr.runtime().adstack else 0} "
          f"words | err {err:.1e}", flush=True)


def adstack_variants(sizes: list[int]) -> None:
    from experiments.autodiff import reference
    keys = ("GFXRT_AD_LOOPS", "GFXRT_ADSTACK_SHARED")
    saved = (adstack.THREADS_GPU, cad.SHARED_WG, cad.SHARED_STACK_BYTES)
    for n in sizes:
        rng = np.random.default_rng(0)
        xs = rng.uniform(-1.0, 1.0, n).astype(np.float32)
        cs = rng.integers(0, 32, n).astype(np.int32)
        sample = slice(0, min(n, 1 << 16))
        _, dref = reference(xs[sample], cs[sample])
        print(f"-- run-time sin loop, n = 2^{n.bit_length() - 1}; device us per launch (span of R launches); "
              "split: one grad launch's dispatches [own us] / gaps", flush=True)
        for label, env, threads, wg, forced, *slots in VARIANTS:
            for k in keys:
                os.environ.pop(k, None)
            os.environ.update(env)
            adstack.THREADS_GPU = threads or saved[0]
            cad.SHARED_WG = wg or saved[1]
            cad.SHARED_STACK_BYTES = 4 * cad.SHARED_WG * slots[0] if slots else saved[2]
            try:
                gr.init(adstack_size=forced, offline_cache=False)
                if slots:
                    dev = gr.device()
                    dev.target = dataclasses.replace(dev.target, adstack_private=slots[0])
                _measure(label, n, xs, cs, sample, dref)
            except Exception as e:  # keep measuring the other variants
                print(f"{label:34s} FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
    for k in keys:
        os.environ.pop(k, None)
    adstack.THREADS_GPU, cad.SHARED_WG, cad.SHARED_STACK_BYTES = saved
    gr.init()


# -- the Tape's step kernel ----------------------------------------------------------------------

def _tape_kernels():
    arr = gr.types.ndarray(dtype=gr.f32, ndim=2)

    @gr.kernel
    def step(x: arr, v: arr, t: gr.i32):
        for i in range(x.shape[1]):
            xc = x[t, i]
            xl = xc
            xr = xc
            if i > 0:
                xl = x[t, i - 1]
            if i < x.shape[1] - 1:
                xr = x[t, i + 1]
            vn = v[t, i] + 0.01 * (50.0 * (xl + xr - 2.0 * xc) - 0.1 * v[t, i])
            v[t + 1, i] = vn
            x[t + 1, i] = xc + 0.01 * vn

    @gr.kernel
    def adj_atomic(x: arr, v: arr, gx: arr, gv: arr, t: gr.i32):
        """The generated adjoint's memory traffic, written out: 3 atomics into gx[t], 1 into gv[t]
        (the generated kernel adds twice into gv[t, i])."""
        for i in range(x.shape[1]):
            n = x.shape[1]
            ax = gx[t + 1, i]
            gx[t + 1, i] = 0.0
            av = gv[t + 1, i]
            gv[t + 1, i] = 0.0
            avn = av + 0.01 * ax
            g0 = 0.01 * avn
            gr.atomic_add(gv[t, i], avn - 0.1 * g0)
            g1 = 50.0 * g0
            own = ax - 2.0 * g1
            if i < n - 1:
                gr.atomic_add(gx[t, i + 1], g1)
            else:
                own += g1
            if i > 0:
                gr.atomic_add(gx[t, i - 1], g1)
            else:
                own += g1
            gr.atomic_add(gx[t, i], own)

    @gr.kernel
    def adj_vplain(x: arr, v: arr, gx: arr, gv: arr, t: gr.i32):
        """gv[., i] touched by item i only: plain read-modify-write; gx as above (3 atomics)."""
        for i in range(x.shape[1]):
            n = x.shape[1]
            ax = gx[t + 1, i]
            gx[t + 1, i] = 0.0
            av = gv[t + 1, i]
            gv[t + 1, i] = 0.0
            avn = av + 0.01 * ax
            g0 = 0.01 * avn
            gv[t, i] = gv[t, i] + (avn - 0.1 * g0)
            g1 = 50.0 * g0
            own = ax - 2.0 * g1
            if i < n - 1:
                gr.atomic_add(gx[t, i + 1], g1)
            else:
                own += g1
            if i > 0:
                gr.atomic_add(gx[t, i - 1], g1)
            else:
                own += g1
            gr.atomic_add(gx[t, i], own)

    @gr.kernel
    def adj_plain(x: arr, v: arr, gx: arr, gv: arr, t: gr.i32):
        """No atomics at all (racy on gx[t, i +- 1]: a timing floor, not a correct adjoint)."""
        for i in range(x.shape[1]):
            n = x.shape[1]
            ax = gx[t + 1, i]
            gx[t + 1, i] = 0.0
            av = gv[t + 1, i]
            gv[t + 1, i] = 0.0
            avn = av + 0.01 * ax
            g0 = 0.01 * avn
            gv[t, i] = gv[t, i] + (avn - 0.1 * g0)
            g1 = 50.0 * g0
            own = ax - 2.0 * g1
            if i < n - 1:
                gx[t, i + 1] = gx[t, i + 1] + g1
            else:
                own += g1
            if i > 0:
                gx[t, i - 1] = gx[t, i - 1] + g1
            else:
                own += g1
            gx[t, i] = gx[t, i] + own

    @gr.kernel
    def adj_gather(x: arr, v: arr, gx: arr, gv: arr, gx2: arr, gv2: arr, t: gr.i32):
        """The adjoint as a gather (reads the neighbours' seeds, writes into other arrays): no
        atomics, exact; the traffic floor of a correct adjoint."""
        for i in range(x.shape[1]):
            n = x.shape[1]
            ax = gx[t + 1, i]
            av = gv[t + 1, i]
            g1 = 50.0 * 0.01 * (av + 0.01 * ax)
            left = 0.0
            right = 0.0
            if i > 0:
                left = 0.5 * (gv[t + 1, i - 1] + 0.01 * gx[t + 1, i - 1])
            if i < n - 1:
                right = 0.5 * (gv[t + 1, i + 1] + 0.01 * gx[t + 1, i + 1])
            avn = av + 0.01 * ax
            gv2[t, i] = gv[t, i] + avn - 0.1 * 0.01 * avn
            gx2[t, i] = gx[t, i] + ax - 2.0 * g1 + left + right

    @gr.kernel
    def adj_subgroup(x: arr, v: arr, gx: arr, gv: arr, t: gr.i32):
        """Neighbour contributions passed between subgroup lanes: one atomic per item into gx[t, i]
        plus one per subgroup edge; gv plain."""
        for i in range(x.shape[1]):
            n = x.shape[1]
            lane = gr.simt.subgroup.invocation_id()
            size = gr.simt.subgroup.group_size()
            cl = 0.0
            cr = 0.0
            own = 0.0
            if i < n:
                ax = gx[t + 1, i]
                gx[t + 1, i] = 0.0
                av = gv[t + 1, i]
                gv[t + 1, i] = 0.0
                avn = av + 0.01 * ax
                g0 = 0.01 * avn
                gv[t, i] = gv[t, i] + (avn - 0.1 * g0)
                g1 = 50.0 * g0
                own = ax - 2.0 * g1
                cl = g1
                cr = g1
                if i == 0:
                    own += cl
                    cl = 0.0
                if i == n - 1:
                    own += cr
                    cr = 0.0
            from_left = gr.simt.subgroup.shuffle_up(cr, 1)
            from_right = gr.simt.subgroup.shuffle_down(cl, 1)
            if i < n:
                if lane > 0:
                    own += from_left
                elif cl != 0.0:
                    gr.atomic_add(gx[t, i - 1], cl)
                if lane < size - 1:
                    own += from_right
                elif cr != 0.0:
                    gr.atomic_add(gx[t, i + 1], cr)
                gr.atomic_add(gx[t, i], own)

    return step, adj_atomic, adj_vplain, adj_plain, adj_gather, adj_subgroup


def _warm(x, v, step, seconds: float = 1.5) -> None:
    """Keep the device busy for a while first: clocks ramp up (a cold H100 ran the step
    kernel ~3x slower in the first second)."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for t in range(x.shape[0] - 1):
            step(x, v, t)
        gr.sync()


def fills(x, v, span_rt) -> None:
    """Zeroing both gradients: clear commands (x.grad.fill(0)) vs fill kernels."""
    from gfxrt.engine.blit_kernels import fill_words
    rt = gr.runtime()
    zero = bytes(4)
    cases = {"clear_buffer (x.grad.fill(0))": lambda: (x.grad.fill(0.0), v.grad.fill(0.0)),
             "fill_words kernel": lambda: (fill_words(rt, x.grad._buffer, x.grad.nbytes, zero),
                                          fill_words(rt, v.grad._buffer, v.grad.nbytes, zero))}
    try:
        from gfxrt import kernels
        cases["kernels.fill"] = lambda: (kernels.fill(x.grad, 0.0), kernels.fill(v.grad, 0.0))
    except Exception as e:  # noqa: BLE001
        print("kernels.fill unavailable:", e)
    for label, fn in cases.items():
        fn()
        best = 1e9
        for _ in range(REPS):
            gr.sync()
            t0 = time.perf_counter()
            fn()
            gr.sync()
            best = min(best, time.perf_counter() - t0)
        gb = 2 * x.grad.nbytes / best / 1e9
        print(f"{'zero x.grad, v.grad: ' + label:44s} {us(best)} us wall ({gb:.0f} GB/s)", flush=True)


def tape(n: int) -> None:
    from bench.benchmarks.autodiff import T, _tape_data
    gr.init()
    step, adj_atomic, adj_vplain, adj_plain, adj_gather, adj_subgroup = _tape_kernels()
    x0, v0, _, gref = _tape_data(n)
    xs = np.zeros((T + 1, n), np.float32)
    vs = np.zeros((T + 1, n), np.float32)
    xs[0], vs[0] = x0, v0
    x, v = gr.ndarray(gr.f32, (T + 1, n), needs_grad=True), gr.ndarray(gr.f32, (T + 1, n), needs_grad=True)
    x.from_numpy(xs)
    v.from_numpy(vs)
    for t in range(T):
        step(x, v, t)
    xf = x.to_numpy()[T].astype(np.float64)
    gx, gv = gr.ndarray(gr.f32, (T + 1, n)), gr.ndarray(gr.f32, (T + 1, n))
    gx2, gv2 = gr.ndarray(gr.f32, (T + 1, n)), gr.ndarray(gr.f32, (T + 1, n))

    def check(run) -> float:
        """Run the adjoint over all steps from d loss / d x[T] = 2 x[T]; error of d loss / d x[0]."""
        gx.fill(0.0)
        gv.fill(0.0)
        seed = np.zeros((T + 1, n), np.float32)
        seed[T] = 2 * xf
        gx.from_numpy(seed)
        run()
        got = gx.to_numpy()[0].astype(np.float64)
        return float(np.abs(got - gref).max() / np.abs(gref).max())

    _warm(x, v, step)
    span = Span()
    print(f"-- ad_tape step kernel, n = 2^{n.bit_length() - 1}, {T} launches; device us per launch "
          "(span of 100 launches); err: relative max error of d loss / d x[0]", flush=True)
    fwd = med_span(span, lambda: [step(x, v, t) for t in range(T)], T)
    print(f"{'step (forward)':34s} {us(fwd)}", flush=True)
    x.grad.fill(0.0)
    v.grad.fill(0.0)
    gen = med_span(span, lambda: [step.grad(x, v, t) for t in reversed(range(T))], T)
    print(f"{'step.grad (generated)':34s} {us(gen)}  {gen / fwd:5.2f}x forward", flush=True)
    for name, k in (("hand: same atomics, gv once", adj_atomic), ("hand: gv plain, 3 atomics gx", adj_vplain),
                    ("hand: no atomics (racy floor)", adj_plain), ("hand: subgroup neighbours", adj_subgroup)):
        try:
            err = check(lambda k=k: [k(x, v, gx, gv, t) for t in reversed(range(T))])
            s = med_span(span, lambda k=k: [k(x, v, gx, gv, t) for t in reversed(range(T))], T)
            print(f"{name:34s} {us(s)}  {s / fwd:5.2f}x forward  err {err:.1e}", flush=True)
        except Exception as e:
            print(f"{name:34s} FAILED {type(e).__name__}: {str(e)[:300]}", flush=True)
    s = med_span(span, lambda: [adj_gather(x, v, gx, gv, gx2, gv2, t) for t in reversed(range(T))], T)
    print(f"{'hand: gather (traffic floor)':34s} {us(s)}  {s / fwd:5.2f}x forward", flush=True)
    # host: what the Tape's phases cost (no device wait inside)
    loss = gr.ndarray(gr.f32, 1, needs_grad=True)

    @gr.kernel
    def total(x: gr.types.ndarray(dtype=gr.f32, ndim=2), loss: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(x.shape[1]):
            loss[0] += x[100, i] * x[100, i]

    def tape_pass():
        with gr.Tape(loss):
            for t in range(T):
                step(x, v, t)
            total(x, loss)
    tape_pass()
    gr.sync()
    for label, fn in (("host: 100 step launches (no sync)", lambda: [step(x, v, t) for t in range(T)]),
                      ("host: 100 step.grad launches", lambda: [step.grad(x, v, t) for t in reversed(range(T))])):
        best = 1e9
        for _ in range(REPS):
            gr.sync()
            t0 = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t0)
        print(f"{label:34s} {us(best)} us in all", flush=True)
    walls = {}
    for label, fn in (("wall: forward (bench)", lambda: (loss.fill(0.0), [step(x, v, t) for t in range(T)],
                                                         total(x, loss))),
                      ("wall: Tape forward+backward", tape_pass),
                      ("wall: x.grad, v.grad fill(0)", lambda: (x.grad.fill(0.0), v.grad.fill(0.0)))):
        best = 1e9
        for _ in range(REPS):
            gr.sync()
            t0 = time.perf_counter()
            fn()
            gr.sync()
            best = min(best, time.perf_counter() - t0)
        walls[label] = best
        print(f"{label:34s} {us(best)} us", flush=True)
    print(f"(forward+backward)/forward on the wall: {walls['wall: Tape forward+backward'] / walls['wall: forward (bench)']:.2f}")
    fills(x, v, span)


def tape_case(n: int):
    """The ad_tape benchmark's case on n items (gr.init() first): (forward, forward + backward
    through gr.Tape, x, v, step), trajectories of T + 1 rows, the first one random."""
    from bench.benchmarks.autodiff import T
    step = _tape_kernels()[0]

    @gr.kernel
    def total(x: gr.types.ndarray(dtype=gr.f32, ndim=2), loss: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(x.shape[1]):
            loss[0] += x[100, i] * x[100, i]
    rng = np.random.default_rng(0)
    xs = np.zeros((T + 1, n), np.float32)
    vs = np.zeros((T + 1, n), np.float32)
    xs[0], vs[0] = rng.uniform(-1, 1, n), rng.uniform(-0.5, 0.5, n)
    x, v = gr.ndarray(gr.f32, (T + 1, n), needs_grad=True), gr.ndarray(gr.f32, (T + 1, n), needs_grad=True)
    loss = gr.ndarray(gr.f32, 1, needs_grad=True)
    x.from_numpy(xs)
    v.from_numpy(vs)

    def forward():
        loss.fill(0.0)
        for t in range(T):
            step(x, v, t)
        total(x, loss)

    def fwd_bwd():
        with gr.Tape(loss):
            for t in range(T):
                step(x, v, t)
            total(x, loss)
    return forward, fwd_bwd, x, v, step


def tapewall(n: int, reps: int = 9) -> None:
    """Host wall time (best of `reps`, sync included) of the ad_tape benchmark's forward and of
    its gr.Tape forward + backward, after a warm-up: the bench's own figures, less noisy."""
    gr.init()
    forward, fwd_bwd, x, v, step = tape_case(n)
    _warm(x, v, step)
    walls = {}
    for label, fn in (("forward", forward), ("Tape forward+backward", fwd_bwd)):
        fn()
        best = 1e9
        for _ in range(reps):
            gr.sync()
            t0 = time.perf_counter()
            fn()
            gr.sync()
            best = min(best, time.perf_counter() - t0)
        walls[label] = best
    print(f"ad_tape 2^{n.bit_length() - 1} wall (best of {reps}): forward {walls['forward'] * 1e3:.3f} ms, "
          f"Tape forward+backward {walls['Tape forward+backward'] * 1e3:.3f} ms, ratio "
          f"{walls['Tape forward+backward'] / walls['forward']:.2f}", flush=True)


def tapephase(n: int, reps: int = 9) -> None:
    """Where the host time of the ad_tape case's Tape goes: host milliseconds from the start
    to the end of the forward's recording, to each submission (and how long it took), to the
    backward's last recorded launch, and to the end of the sync, median of `reps`; with the
    device time of each submission (gr.profile(per_kernel=False)) from one more pass."""
    gr.init()
    forward, fwd_bwd, x, v, step = tape_case(n)
    _warm(x, v, step)
    rt = gr.runtime()
    marks: list[tuple[str, float]] = []
    orig_flush = type(rt).flush

    def flush(self):
        t = time.perf_counter()
        orig_flush(self)
        marks.append((f"flush ({(time.perf_counter() - t) * 1e3:.3f} ms)", time.perf_counter()))
    type(rt).flush = flush
    orig_grad = gr.Tape.grad

    def grad(self):
        marks.append(("forward recorded", time.perf_counter()))
        orig_grad(self)
        marks.append(("backward recorded", time.perf_counter()))
    gr.Tape.grad = grad
    rows: dict[int, list] = {}
    for _ in range(reps + 1):
        gr.sync()
        marks.clear()
        t0 = time.perf_counter()
        fwd_bwd()
        gr.sync()
        marks.append(("synced", time.perf_counter()))
        for i, (label, t) in enumerate(marks):
            rows.setdefault(i, []).append((label, (t - t0) * 1e3))
    type(rt).flush = orig_flush
    gr.Tape.grad = orig_grad
    print(f"-- ad_tape 2^{n.bit_length() - 1}: Tape forward+backward, host ms from its start (median of {reps})")
    for i in sorted(rows):
        label = rows[i][-1][0]
        print(f"  {label:28s} {statistics.median(t for _, t in rows[i][1:]):8.3f}", flush=True)
    with gr.profile(per_kernel=False) as p:
        fwd_bwd()
        gr.sync()
    print(f"  device per submission (ms): {[round(b * 1e3, 3) for b in p.batches]}; total {p.total_s * 1e3:.3f}")
    gr.sync()
    t0 = time.perf_counter()
    forward()
    gr.sync()
    with gr.profile(per_kernel=False) as p:
        forward()
        gr.sync()
    print(f"  forward: device per submission (ms): {[round(b * 1e3, 3) for b in p.batches]}", flush=True)


def main(argv: list[str]) -> None:
    what = argv[0] if argv else "adstack"
    sizes = [int(a) for a in argv[1:] if a.isdigit()]
    print(gr.device().name, flush=True)
    if what == "adstack":
        adstack_variants(sizes or [1 << 18, 1 << 24])
    elif what == "wgsl":  # the generated code on this adapter, into the folder argv[1]
        from experiments.autodiff import sin_loop
        os.makedirs(argv[1], exist_ok=True)
        os.environ["GFXRT_AD_LOOPS"] = "adstack"
        gr.init(offline_cache=False)
        x, y, cnt = gr.ndarray(gr.f32, 64, needs_grad=True), gr.ndarray(gr.f32, 64, needs_grad=True), gr.ndarray(gr.i32, 64)
        open(f"{argv[1]}/sin_loop_grad_adstack.wgsl", "w").write(sin_loop.specialize((x, cnt, y), mode="grad").spec.wgsl)
        os.environ.pop("GFXRT_AD_LOOPS")
        gr.init(offline_cache=False)
        step = _tape_kernels()[0]
        a, b = gr.ndarray(gr.f32, (101, 64), needs_grad=True), gr.ndarray(gr.f32, (101, 64), needs_grad=True)
        open(f"{argv[1]}/step_grad.wgsl", "w").write(step.specialize((a, b, 3), mode="grad").spec.wgsl)
    elif what == "tape":
        tape(sizes[0] if sizes else 1 << 20)
    elif what == "tapewall":
        tapewall(sizes[0] if sizes else 1 << 20)
    elif what == "tapephase":
        tapephase(sizes[0] if sizes else 1 << 20)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
