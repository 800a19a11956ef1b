"""Graph replay: 16 launches of a small kernel (x = 0.5 x + 1 on 4096 float32) run eagerly, and
recorded once then replayed as a graph (gr.graph, CUDA graphs, Taichi's GraphBuilder)."""
import numpy as np

from ..registry import NA, Case, Work, benchmark
from ._common import close, first_line, no_graph_capture, rand_f32

graph = benchmark(
    "graph", "16 small launches: eager vs recorded graph replay (time per 16)", unit="us", group="graph",
    cases=lambda quick: [Case("eager", "eager"), Case("graph replay", "graph")],
    na={"numpy": "no kernels or graphs"})

N, STEPS = 4096, 16


def _want(x0):
    x = x0.astype(np.float64)
    for _ in range(STEPS):
        x = 0.5 * x + 1.0
    return x


def _work(run, get, x0, impl):
    want = _want(x0)
    return Work(run=run, check=lambda: close(get(), want, rtol=1e-5), impl=impl)


@graph.impl("gfxrt")
def _gfxrt(fw, mode):
    gr = fw.mod

    def make():
        @gr.kernel
        def step(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
            for i in range(x.shape[0]):
                x[i] = 0.5 * x[i] + 1.0
        return step
    k = fw.memo("graph", make)
    x0 = rand_f32(N, 13)
    x = fw.to_device(x0)
    if mode == "eager":
        return _work(lambda: [k(x) for _ in range(STEPS)], x.to_numpy, x0, "16 launches")
    no_graph_capture(fw)
    with gr.graph() as g:
        for _ in range(STEPS):
            k(x)
    return _work(g.replay, x.to_numpy, x0, "with gr.graph() as g: 16 launches; g.replay()")


@graph.impl("torch")
def _torch(fw, mode):
    torch = fw.mod
    x0 = rand_f32(N, 13)
    x = fw.to_device(x0)
    two = torch.tensor(2.0, device=fw.dev)

    def steps():
        for _ in range(STEPS):
            x.lerp_(two, 0.5)  # 0.5 x + 1 in one kernel
    if mode == "eager":
        return _work(steps, lambda: fw.to_numpy(x), x0, "16 x.lerp_(2, 0.5)")
    if fw.backend != "cuda":
        raise NA("CUDA graphs need a CUDA device")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        steps()  # warm-up on a side stream, as torch.cuda.graphs requires
    torch.cuda.current_stream().wait_stream(s)
    x.copy_(torch.from_numpy(x0).to(fw.dev))
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        steps()
    return _work(g.replay, lambda: fw.to_numpy(x), x0, "torch.cuda.CUDAGraph of 16 lerp_")


@graph.impl("taichi", "quadrants")
def _taichi(fw, mode):
    ti = fw.mod

    def make():
        @ti.kernel
        def step(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
            for i in range(x.shape[0]):
                x[i] = 0.5 * x[i] + 1.0
        return step
    k = fw.memo("graph", make)
    x0 = rand_f32(N, 13)
    x = fw.to_device(x0)
    if mode == "eager":
        return _work(lambda: [k(x) for _ in range(STEPS)], x.to_numpy, x0, "16 launches")
    if ti.__name__ == "quadrants":  # Quadrants replaced GraphBuilder by @qd.kernel(graph=True), CUDA only
        if fw.backend != "cuda":
            raise NA("@qd.kernel(graph=True) captures CUDA graphs only")
        def make_graph():
            @ti.kernel(graph=True)
            def steps(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
                for _s in ti.static(range(STEPS)):
                    for i in range(x.shape[0]):
                        x[i] = 0.5 * x[i] + 1.0
            return steps
        g = fw.memo("graph-kernel", make_graph)
        return _work(lambda: g(x), x.to_numpy, x0, "@qd.kernel(graph=True), 16 static-unrolled loops")
    try:
        sym = ti.graph.Arg(ti.graph.ArgKind.NDARRAY, "x", ti.f32, ndim=1)
        b = ti.graph.GraphBuilder()
        for _ in range(STEPS):
            b.dispatch(k, sym)
        g = b.compile()
    except Exception as e:  # noqa: BLE001 - the backend has no graphs
        raise NA(f"{ti.__name__}.graph.GraphBuilder fails on {fw.backend}: {first_line(e)}") from None
    return _work(lambda: g.run({"x": x}), x.to_numpy, x0, f"{ti.__name__}.graph.GraphBuilder, 16 dispatches")


@graph.impl("warp")
def _warp(fw, mode):
    wp = fw.mod

    def make():
        @wp.kernel(module="unique")
        def step(x: wp.array(dtype=wp.float32)):
            i = wp.tid()
            x[i] = 0.5 * x[i] + 1.0
        return step
    k = fw.memo("graph", make)
    x0 = rand_f32(N, 13)
    x = fw.to_device(x0)

    def steps():
        for _ in range(STEPS):
            wp.launch(k, dim=N, inputs=[x], device=fw.dev)
    if mode == "eager":
        return _work(steps, x.numpy, x0, "16 wp.launch")
    if fw.backend != "cuda":
        raise NA("warp graph capture is benchmarked on CUDA only")
    steps()  # load the module before capture
    wp.copy(x, wp.array(x0, device=fw.dev))
    with wp.ScopedCapture(device=fw.dev) as cap:
        steps()
    return _work(lambda: wp.capture_launch(cap.graph), x.numpy, x0, "wp.ScopedCapture of 16 launches")
