"""Autodiff. (1) A kernel with a run-time loop, v = x[i]; repeat cnt[i] times (0..31):
v = sin(v)*0.95 + 0.01; y[i] = v — forward time vs backward (gradient) time, gradients checked
against the analytic derivative. (2) A Tape over 100 steps of a mass-spring chain (state kept
per step, loss = sum of squared final positions): forward vs forward+backward, gradients checked
against a hand-written float64 adjoint."""
import os

import numpy as np

from ..registry import NA, Case, Work, benchmark, machine_sizes
from ._common import close, gfxrt_fits, rand_f32, rand_i32

na = {"numpy": "no automatic differentiation"}


def _ratios(got: dict) -> dict:
    out = {}
    for label, v in got.items():
        if label.endswith(" backward"):
            fwd = got.get(label[: -len(" backward")] + " forward")
            if fwd and v:
                out[label[: -len(" backward")] + " backward/forward"] = v / fwd
        if label.endswith(" forward+backward"):
            fwd = got.get(label[: -len(" forward+backward")] + " forward")
            if fwd and v:
                out[label[: -len(" forward+backward")] + " (forward+backward)/forward"] = v / fwd
    return out


def _mode_cases(quick, quick_sizes, full, cpu, modes):
    """Cases 'SIZE MODE' for every size and mode; full runs: `cpu` sizes on CPU adapters."""
    sized = [(n, None) for n in quick_sizes] if quick else machine_sizes(full, cpu)
    return [Case(f"2^{n.bit_length() - 1} {m}", (n, m), only) for n, only in sized for m in modes]


def _loop_cases(quick):
    return _mode_cases(quick, [1 << 16], [1 << 18, 1 << 24], [1 << 18, 1 << 20], ("forward", "backward"))


ad_loop = benchmark("ad_loop", "run-time loop kernel: forward vs backward (gradients checked)", unit="ms",
                    group="autodiff", cases=_loop_cases, na=na, derived=_ratios)


def _loop_data(n):
    x = rand_f32(n, 21, 0.1, 1.5)
    cnt = rand_i32(n, 32, seed=22)
    v, g = x.astype(np.float64), np.ones(n)
    for j in range(32):
        live = j < cnt
        g = np.where(live, g * 0.95 * np.cos(v), g)
        v = np.where(live, np.sin(v) * 0.95 + 0.01, v)
    return x, cnt, v, g  # forward result and d y / d x


def _loop_work(mode, n, forward, backward, get_y, get_grad, impl):
    x, cnt, y_want, g_want = _loop_data(n)
    if mode == "forward":
        return Work(run=forward, check=lambda: close(get_y(), y_want, rtol=1e-4, atol=1e-5), impl=impl)
    return Work(run=backward, check=lambda: close(get_grad(), g_want, rtol=1e-3, atol=1e-5), impl=impl)


def sin_loop_kernel(gr):
    """ad_loop's gfxrt kernel, written once: experiments/autodiff.py and experiments/ad_time.py time it too."""
    @gr.kernel
    def sin_loop(x: gr.types.ndarray(dtype=gr.f32, ndim=1), cnt: gr.types.ndarray(dtype=gr.i32, ndim=1),
                 y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(x.shape[0]):
            v = x[i]
            for _j in range(cnt[i]):
                v = gr.sin(v) * 0.95 + 0.01
            y[i] = v
    return sin_loop


@ad_loop.impl("gfxrt")
def _loop_gfxrt(fw, p):
    n, mode = p
    f = fw.memo("ad_loop", lambda: sin_loop_kernel(fw.mod))
    gfxrt_fits(fw, 4 * n)
    x0, c0, _, _ = _loop_data(n)
    x, cnt, y = fw.to_device(x0, needs_grad=True), fw.to_device(c0), fw.to_device(np.zeros(n, np.float32), True)
    f(x, cnt, y)
    y.grad.fill(1.0)
    return _loop_work(mode, n, lambda: f(x, cnt, y), lambda: f.grad(x, cnt, y), y.to_numpy, x.grad.to_numpy,
                      "@gr.kernel; kernel.grad (strategy chosen per loop: docs/autodiff.md)")


@ad_loop.impl("taichi", "quadrants")
def _loop_taichi(fw, p):
    ti = fw.mod
    n, mode = p

    def make():
        @ti.kernel
        def f(x: ti.types.ndarray(dtype=ti.f32, ndim=1), cnt: ti.types.ndarray(dtype=ti.i32, ndim=1),
              y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
            for i in range(x.shape[0]):
                v = x[i]
                for _j in range(cnt[i]):
                    v = ti.sin(v) * 0.95 + 0.01
                y[i] = v
        return f
    f = fw.memo("ad_loop", make)
    x0, c0, _, _ = _loop_data(n)
    x, cnt, y = fw.to_device(x0, True), fw.to_device(c0), fw.to_device(np.zeros(n, np.float32), True)
    f(x, cnt, y)
    y.grad.fill(1.0)
    impl = f"@{ti.__name__}.kernel; kernel.grad" + (" (adstack enabled)" if fw.details.get("adstack") else "")
    return _loop_work(mode, n, lambda: f(x, cnt, y), lambda: f.grad(x, cnt, y), y.to_numpy, x.grad.to_numpy, impl)


@ad_loop.impl("warp")
def _loop_warp(fw, p):
    wp = fw.mod
    n, mode = p

    def make():
        @wp.kernel(module="unique")
        def f(x: wp.array(dtype=wp.float32), cnt: wp.array(dtype=wp.int32), y: wp.array(dtype=wp.float32)):
            i = wp.tid()
            v = x[i]
            for _j in range(cnt[i]):
                v = wp.sin(v) * 0.95 + 0.01
            y[i] = v
        return f
    f = fw.memo("ad_loop", make)
    x0, c0, _, _ = _loop_data(n)
    x, cnt, y = fw.to_device(x0, True), fw.to_device(c0), fw.to_device(np.zeros(n, np.float32), True)
    tape = wp.Tape()
    with tape:
        wp.launch(f, dim=n, inputs=[x, cnt], outputs=[y], device=fw.dev)
    ones = wp.array(np.ones(n, np.float32), device=fw.dev)
    return _loop_work(mode, n, lambda: wp.launch(f, dim=n, inputs=[x, cnt], outputs=[y], device=fw.dev),
                      lambda: tape.backward(grads={y: ones}), y.numpy, x.grad.numpy, "wp.Tape, tape.backward")


@ad_loop.impl("torch")
def _loop_torch(fw, p):
    torch = fw.mod
    n, mode = p
    need = n * 4 * 32 * 4  # autograd keeps ~4 tensors per masked step
    free = fw.mod.cuda.mem_get_info()[0] if fw.backend == "cuda" else os.sysconf("SC_AVPHYS_PAGES") * os.sysconf(
        "SC_PAGE_SIZE")
    if mode == "backward" and need > 0.4 * free:
        raise NA(f"autograd would keep ~{need / 2**30:.1f} GiB of the {free / 2**30:.1f} GiB free")
    x0, c0, _, _ = _loop_data(n)
    x, cnt = fw.to_device(x0, True), fw.to_device(c0)

    def f():
        v = x
        for j in range(32):
            v = torch.where(j < cnt, torch.sin(v) * 0.95 + 0.01, v)
        return v
    out = {}
    if mode == "forward":
        def forward():
            with torch.no_grad():
                out["y"] = f()
        return _loop_work(mode, n, forward, None, lambda: fw.to_numpy(out["y"]), None,
                          "32 masked steps (torch.where), no_grad")
    y = f()
    ones = torch.ones_like(y)

    def backward():
        out["g"] = torch.autograd.grad(y, x, ones, retain_graph=True)[0]
    return _loop_work(mode, n, None, backward, None, lambda: fw.to_numpy(out["g"]),
                      "torch.autograd.grad over 32 masked steps, retain_graph")


# -- Tape over 100 simulation steps ------------------------------------------------------------
T, DT, K, C = 100, 0.01, 50.0, 0.1


def _tape_cases(quick):
    # CPU adapters: 2^18 is the largest whose trajectories (101 x n float32) fit lavapipe's 128 MiB binding
    return _mode_cases(quick, [1 << 12], [1 << 16, 1 << 20], [1 << 16, 1 << 18], ("forward", "forward+backward"))


ad_tape = benchmark("ad_tape", f"Tape over {T} steps of a mass-spring chain: forward vs forward+backward",
                    unit="ms", group="autodiff", cases=_tape_cases, na=na, derived=_ratios,
                    note="the same 1-D chain kernel, launch per step and Tape in every kernel language, each zeroing "
                         "the gradients on every pass as gr.Tape does (kernels.diffsim.MassSpring is a different "
                         "workload: a 2-D soft body of vec2 particles with 8 springs each); torch: tensor ops")


def _tape_data(n):
    x0 = rand_f32(n, 31, -1.0, 1.0)
    v0 = rand_f32(n, 32, -0.5, 0.5)

    def lap(x):
        xl = np.concatenate([x[:1], x[:-1]])
        xr = np.concatenate([x[1:], x[-1:]])
        return xl + xr - 2 * x
    xs, x, v = [], x0.astype(np.float64), v0.astype(np.float64)
    for _ in range(T):
        xs.append(x)
        v = v + DT * (K * lap(x) - C * v)
        x = x + DT * v
    gx, gv = 2 * x, np.zeros(n)
    for _ in range(T):  # adjoint of v' = v + dt (k L x - c v), x' = x + dt v'
        gvt = gv + DT * gx
        gx = gx + DT * K * lap(gvt)
        gv = gvt * (1 - DT * C)
    return x0, v0, float((x ** 2).sum()), gx


def _tape_work(mode, n, forward, fwd_bwd, get_loss, get_grad, impl):
    _, _, loss_want, g_want = _tape_data(n)
    if mode == "forward":
        return Work(run=forward, check=lambda: close(get_loss(), loss_want, rtol=1e-3), impl=impl)
    return Work(run=fwd_bwd, check=lambda: close(get_grad(), g_want, rtol=1e-3, atol=1e-3), impl=impl)


def _state(fw, n):
    x0, v0, _, _ = _tape_data(n)
    xs = np.zeros((T + 1, n), np.float32)
    vs = np.zeros((T + 1, n), np.float32)
    xs[0], vs[0] = x0, v0
    return fw.to_device(xs, True), fw.to_device(vs, True), fw.to_device(np.zeros(1, np.float32), True)


@ad_tape.impl("gfxrt")
def _tape_gfxrt(fw, p):
    gr = fw.mod
    n, mode = p
    gfxrt_fits(fw, 4 * (T + 1) * n)

    def make():
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
        def total(x: arr, loss: gr.types.ndarray(dtype=gr.f32, ndim=1)):
            for i in range(x.shape[1]):
                loss[0] += x[100, i] * x[100, i]
        return step, total
    step, total = fw.memo("ad_tape", make)
    x, v, loss = _state(fw, n)

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
    return _tape_work(mode, n, forward, fwd_bwd, lambda: loss.to_numpy()[0], lambda: x.grad.to_numpy()[0],
                      "@gr.kernel per step; gr.Tape(loss)")


@ad_tape.impl("taichi", "quadrants")
def _tape_taichi(fw, p):
    ti = fw.mod
    n, mode = p

    def make():
        arr = ti.types.ndarray(dtype=ti.f32, ndim=2)

        @ti.kernel
        def step(x: arr, v: arr, t: ti.i32):
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

        @ti.kernel
        def total(x: arr, loss: ti.types.ndarray(dtype=ti.f32, ndim=1)):
            for i in range(x.shape[1]):
                loss[0] += x[100, i] * x[100, i]
        return step, total
    step, total = fw.memo("ad_tape", make)
    x, v, loss = _state(fw, n)

    def forward():
        loss.fill(0.0)
        for t in range(T):
            step(x, v, t)
        total(x, loss)

    def fwd_bwd():
        x.grad.fill(0.0)  # ti.ad.Tape clears fields' gradients, not ndarrays': a training loop zeroes them
        v.grad.fill(0.0)
        with ti.ad.Tape(loss=loss):
            for t in range(T):
                step(x, v, t)
            total(x, loss)
    return _tape_work(mode, n, forward, fwd_bwd, lambda: loss.to_numpy()[0], lambda: x.grad.to_numpy()[0],
                      f"@{ti.__name__}.kernel per step; {ti.__name__}.ad.Tape(loss) on ndarrays")


@ad_tape.impl("warp")
def _tape_warp(fw, p):
    wp = fw.mod
    n, mode = p

    def make():
        @wp.kernel(module="unique")
        def step(x: wp.array2d(dtype=wp.float32), v: wp.array2d(dtype=wp.float32), t: int):
            i = wp.tid()
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

        @wp.kernel(module="unique")
        def total(x: wp.array2d(dtype=wp.float32), loss: wp.array(dtype=wp.float32)):
            i = wp.tid()
            wp.atomic_add(loss, 0, x[100, i] * x[100, i])
        return step, total
    step, total = fw.memo("ad_tape", make)
    x, v, loss = _state(fw, n)

    def launches():
        loss.zero_()
        for t in range(T):
            wp.launch(step, dim=n, inputs=[x, v, t], device=fw.dev)
        wp.launch(total, dim=n, inputs=[x, loss], device=fw.dev)

    def fwd_bwd():
        x.grad.zero_()  # as gr.Tape does: gradients start from zero on every pass
        v.grad.zero_()
        tape = wp.Tape()
        with tape:
            launches()
        tape.backward(loss=loss)
    return _tape_work(mode, n, launches, fwd_bwd, lambda: loss.numpy()[0], lambda: x.grad.numpy()[0],
                      "wp.launch per step; wp.Tape, tape.backward(loss)")


@ad_tape.impl("torch")
def _tape_torch(fw, p):
    torch = fw.mod
    n, mode = p
    x0, v0, _, _ = _tape_data(n)
    out = {}

    def sim(x, v):
        for _ in range(T):
            xl = torch.cat([x[:1], x[:-1]])
            xr = torch.cat([x[1:], x[-1:]])
            v = v + DT * (K * (xl + xr - 2 * x) - C * v)
            x = x + DT * v
        return (x * x).sum()

    def forward():
        with torch.no_grad():
            out["loss"] = sim(fw.to_device(x0), fw.to_device(v0))

    def fwd_bwd():
        x = fw.to_device(x0, True)
        sim(x, fw.to_device(v0)).backward()
        out["g"] = x.grad
    return _tape_work(mode, n, forward, fwd_bwd, lambda: float(out["loss"]), lambda: fw.to_numpy(out["g"]),
                      "100 steps of tensor ops; loss.backward()")
