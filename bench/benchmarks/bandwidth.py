"""Memory bandwidth: saxpy (y = a*x + y), memcpy (y = x) and fill (x = v) on float32 arrays
from 16 KB to 256 MB per array (CPU adapters: 64 MB, the largest that lavapipe's 128 MiB
storage binding holds). GB/s counts the bytes each operation must move once."""
import numpy as np

from ..registry import Case, Work, benchmark, fmt_bytes, sizes
from ._common import close, gfxrt_fits, library, rand_f32

FULL = [16 << 10, 1 << 20, 16 << 20, 256 << 20]
CPU = [16 << 10, 1 << 20, 16 << 20, 64 << 20]
QUICK = [16 << 10, 1 << 20, 16 << 20]
A, V = 2.0, 3.0
NOTE = ("one thread per element everywhere (gfxrt: kernels.fill / memcpy / saxpy; Taichi, Quadrants, Warp: "
        "the same plain kernel); numpy and torch: their library calls")


def _cases():
    def cases(quick):
        return [Case(c.label, c.param // 4, c.only) for c in sizes(FULL, QUICK, fmt_bytes, cpu=CPU)(quick)]
    return cases


saxpy = benchmark("saxpy", "saxpy y = a*x + y, float32 (12 bytes per element)", unit="GB/s", group="bandwidth",
                  cases=_cases(), note=NOTE)
memcpy = benchmark("memcpy", "copy y = x, float32 (8 bytes per element)", unit="GB/s", group="bandwidth",
                   cases=_cases(), note=NOTE)
fill = benchmark("fill", "fill x = v, float32 (4 bytes per element)", unit="GB/s", group="bandwidth",
                 cases=_cases(), note=NOTE)
BYTES = {"saxpy": 12, "memcpy": 8, "fill": 4}


def _data(n):
    return rand_f32(n, 1), rand_f32(n, 2)


def _work(op, fw, n, run, x, y, impl):
    """Work for `op` with the check after exactly one run (x, y: framework arrays)."""
    x0, y0 = _data(n)
    want = {"saxpy": A * x0 + y0, "memcpy": x0, "fill": np.full(n, V, np.float32)}[op]
    got = (lambda: fw.to_numpy(x)) if op == "fill" else (lambda: fw.to_numpy(y))
    return Work(run=run, amount=BYTES[op] * n, check=lambda: close(got(), want), impl=impl)


# -- gfxrt: the kernels/ library --------------------------------------------------------------
def _gfxrt(op):
    def setup(fw, n):
        gfxrt_fits(fw, 4 * n)
        k = library()
        x0, y0 = _data(n)
        x, y = fw.to_device(x0), fw.to_device(y0)
        run, impl = {"saxpy": (lambda: k.saxpy(A, x, y), "kernels.saxpy(a, x, y)"),
                     "memcpy": (lambda: k.memcpy(y, x), "kernels.memcpy(y, x)"),
                     "fill": (lambda: k.fill(x, V), "kernels.fill(x, v)")}[op]
        return _work(op, fw, n, run, x, y, impl + ": @gr.kernel over gr.grouped, blocks of 256")
    return setup


# -- taichi / quadrants ------------------------------------------------------------------------
def _ti_kernels(ti):
    arr = ti.types.ndarray(dtype=ti.f32, ndim=1)

    @ti.kernel
    def k_saxpy(a: ti.f32, x: arr, y: arr):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

    @ti.kernel
    def k_copy(x: arr, y: arr):
        for i in range(x.shape[0]):
            y[i] = x[i]

    @ti.kernel
    def k_fill(x: arr, v: ti.f32):
        for i in range(x.shape[0]):
            x[i] = v
    return {"saxpy": k_saxpy, "memcpy": k_copy, "fill": k_fill}


def _taichi(op):
    def setup(fw, n):
        k = fw.memo("bandwidth", lambda: _ti_kernels(fw.mod))[op]
        x0, y0 = _data(n)
        x, y = fw.to_device(x0), fw.to_device(y0)
        run = {"saxpy": lambda: k(A, x, y), "memcpy": lambda: k(x, y), "fill": lambda: k(x, V)}[op]
        return _work(op, fw, n, run, x, y, f"@{fw.mod.__name__}.kernel on ndarray")
    return setup


# -- warp --------------------------------------------------------------------------------------
def _wp_kernels(wp):
    @wp.kernel(module="unique")
    def k_saxpy(a: float, x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32)):
        i = wp.tid()
        y[i] = a * x[i] + y[i]

    @wp.kernel(module="unique")
    def k_copy(x: wp.array(dtype=wp.float32), y: wp.array(dtype=wp.float32)):
        i = wp.tid()
        y[i] = x[i]

    @wp.kernel(module="unique")
    def k_fill(x: wp.array(dtype=wp.float32), v: float):
        i = wp.tid()
        x[i] = v
    return {"saxpy": k_saxpy, "memcpy": k_copy, "fill": k_fill}


def _warp(op):
    def setup(fw, n):
        wp = fw.mod
        k = fw.memo("bandwidth", lambda: _wp_kernels(wp))[op]
        x0, y0 = _data(n)
        x, y = fw.to_device(x0), fw.to_device(y0)
        inputs = {"saxpy": [A, x, y], "memcpy": [x, y], "fill": [x, V]}[op]
        return _work(op, fw, n, lambda: wp.launch(k, dim=n, inputs=inputs, device=fw.dev), x, y, "wp.launch")
    return setup


# -- torch / numpy -----------------------------------------------------------------------------
def _torch(op):
    def setup(fw, n):
        x0, y0 = _data(n)
        x, y = fw.to_device(x0), fw.to_device(y0)
        run, impl = {"saxpy": (lambda: y.add_(x, alpha=A), "y.add_(x, alpha=a)"),
                     "memcpy": (lambda: y.copy_(x), "y.copy_(x)"),
                     "fill": (lambda: x.fill_(V), "x.fill_(v)")}[op]
        return _work(op, fw, n, run, x, y, impl)
    return setup


def _numpy(op):
    def setup(fw, n):
        x, y = _data(n)
        tmp = np.empty_like(x)

        def np_saxpy():
            np.multiply(x, A, out=tmp)
            np.add(y, tmp, out=y)
        run, impl = {"saxpy": (np_saxpy, "np.multiply + np.add into preallocated arrays"),
                     "memcpy": (lambda: np.copyto(y, x), "np.copyto(y, x)"),
                     "fill": (lambda: x.fill(V), "x.fill(v)")}[op]
        return _work(op, fw, n, run, x, y, impl)
    return setup


for _op, _b in (("saxpy", saxpy), ("memcpy", memcpy), ("fill", fill)):
    _b.impl("gfxrt")(_gfxrt(_op))
    _b.impl("taichi", "quadrants")(_taichi(_op))
    _b.impl("warp")(_warp(_op))
    _b.impl("torch")(_torch(_op))
    _b.impl("numpy")(_numpy(_op))
