"""Launch overhead: host time per launch of a tiny kernel (16 elements), on device arrays
(launches queued, one sync per batch) and on numpy arguments (copied in and back each launch)."""
import numpy as np

from ..registry import Case, Work, benchmark
from ._common import close

launch = benchmark(
    "launch", "launch overhead of a tiny kernel (16 float32)", unit="us", group="launch",
    cases=lambda quick: [Case("device array", "device"), Case("numpy arguments", "numpy")],
    na={"numpy": "runs on the host: no launch to measure"},
    note="x[i] = x[i] + 1 over 16 elements; device: the framework's own array; numpy: a numpy array "
         "argument, copied to the device and back by the framework (torch/warp: by hand)")

N = 16


def _check(get):
    return lambda: close(get(), np.ones(N, np.float32))


@launch.impl("gfxrt")
def _gfxrt(fw, mode):
    gr = fw.mod

    def make():
        @gr.kernel
        def tiny(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
            for i in range(x.shape[0]):
                x[i] = x[i] + 1.0
        return tiny
    k = fw.memo("launch", make)
    if mode == "device":
        x = fw.to_device(np.zeros(N, np.float32))
        return Work(run=lambda: k(x), check=_check(lambda: x.to_numpy()), impl="@gr.kernel on gr.ndarray")
    a = np.zeros(N, np.float32)
    return Work(run=lambda: k(a), check=_check(lambda: a), impl="@gr.kernel on a numpy array")


@launch.impl("taichi", "quadrants")
def _taichi(fw, mode):
    ti = fw.mod

    def make():
        @ti.kernel
        def tiny(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
            for i in range(x.shape[0]):
                x[i] = x[i] + 1.0
        return tiny
    k = fw.memo("launch", make)
    if mode == "device":
        x = fw.to_device(np.zeros(N, np.float32))
        return Work(run=lambda: k(x), check=_check(lambda: x.to_numpy()), impl=f"@{ti.__name__}.kernel on ndarray")
    a = np.zeros(N, np.float32)
    return Work(run=lambda: k(a), check=_check(lambda: a), impl=f"@{ti.__name__}.kernel on a numpy array")


@launch.impl("warp")
def _warp(fw, mode):
    wp, dev = fw.mod, fw.dev

    def make():
        @wp.kernel(module="unique")
        def tiny(x: wp.array(dtype=wp.float32)):
            i = wp.tid()
            x[i] = x[i] + 1.0
        return tiny
    k = fw.memo("launch", make)
    if mode == "device":
        x = fw.to_device(np.zeros(N, np.float32))
        return Work(run=lambda: wp.launch(k, dim=N, inputs=[x], device=dev), check=_check(x.numpy),
                    impl="wp.launch on wp.array")
    a = np.zeros(N, np.float32)

    def run():
        x = wp.array(a, dtype=wp.float32, device=dev)
        wp.launch(k, dim=N, inputs=[x], device=dev)
        np.copyto(a, x.numpy())
    return Work(run=run, check=_check(lambda: a), impl="wp.array(a) + wp.launch + .numpy()")


@launch.impl("torch")
def _torch(fw, mode):
    torch = fw.mod
    if mode == "device":
        x = fw.to_device(np.zeros(N, np.float32))
        return Work(run=lambda: x.add_(1.0), check=_check(lambda: fw.to_numpy(x)), impl="x.add_(1)")
    a = np.zeros(N, np.float32)
    if fw.backend == "cpu":
        return Work(run=lambda: torch.from_numpy(a).add_(1.0), check=_check(lambda: a),
                    impl="torch.from_numpy(a).add_(1) (zero-copy on the CPU)")

    def run():
        t = torch.from_numpy(a).to(fw.dev)
        t.add_(1.0)
        np.copyto(a, t.cpu().numpy())
    return Work(run=run, check=_check(lambda: a), impl="from_numpy(a).cuda(), add_, .cpu()")
