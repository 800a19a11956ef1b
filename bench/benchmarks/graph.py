"""Graph replay: a sequence of small launches run eagerly, and recorded once then replayed as a
graph (gr.graph, CUDA graphs, Taichi's GraphBuilder, warp's ScopedCapture).

- graph: 16 launches of x = 0.5 x + 1 on 4096 float32 (time per 16);
- graph_tiny: 200 launches of x = 0.99 x + 0.01 on 16 float32 (time per 200): the launch
  overhead a replay removes (issue 6: replay per kernel <= 1/3 of eager, < 2 us on the H100).
"""
import numpy as np

from ..registry import NA, Case, Work, benchmark
from ._common import close, first_line, no_graph_capture, rand_f32


def _ratio(got: dict) -> dict:
    e, g = got.get("eager"), got.get("graph replay")
    return {"replay/eager": g / e} if e and g else {}


_CASES = lambda quick: [Case("eager", "eager"), Case("graph replay", "graph")]  # noqa: E731
graph = benchmark(
    "graph", "16 small launches: eager vs recorded graph replay (time per 16)", unit="us", group="graph",
    cases=_CASES, na={"numpy": "no kernels or graphs"}, derived=_ratio)
graph_tiny = benchmark(
    "graph_tiny", "200 tiny launches (16 float32): eager vs graph replay (time per 200)", unit="us",
    group="graph", cases=_CASES, na={"numpy": "no kernels or graphs"}, derived=_ratio,
    note="divide by 200 for the time per launch; replay/eager is the host-cost ratio at the harness's "
         "throughput (batches of runs, one sync per batch)")

# benchmark -> (elements, launches, w, c): each launch does x = (1 - w) x + w c
SHAPES = {"graph": (4096, 16, 0.5, 2.0), "graph_tiny": (16, 200, 0.01, 1.0)}


def _want(x0, steps, w, c):
    x = x0.astype(np.float64)
    for _ in range(steps):
        x = (1 - w) * x + w * c
    return x


def _work(run, get, x0, shape, impl):
    _, steps, w, c = shape
    want = _want(x0, steps, w, c)
    return Work(run=run, check=lambda: close(get(), want, rtol=1e-5), impl=impl)


def _gfxrt(name):
    n, steps, *_ = shape = SHAPES[name]

    def setup(fw, mode):
        gr = fw.mod

        def make():
            @gr.kernel
            def half(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
                for i in range(x.shape[0]):
                    x[i] = 0.5 * x[i] + 1.0

            @gr.kernel
            def tiny(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
                for i in range(x.shape[0]):
                    x[i] = 0.99 * x[i] + 0.01
            return {"graph": half, "graph_tiny": tiny}
        k = fw.memo("graph", make)[name]
        x0 = rand_f32(n, 13)
        x = fw.to_device(x0)
        if mode == "eager":
            return _work(lambda: [k(x) for _ in range(steps)], x.to_numpy, x0, shape, f"{steps} launches")
        no_graph_capture(fw)
        with gr.graph() as g:
            for _ in range(steps):
                k(x)
        return _work(g.replay, x.to_numpy, x0, shape, f"with gr.graph() as g: {steps} launches; g.replay()")
    return setup


def _torch(name):
    n, steps, w, c = shape = SHAPES[name]

    def setup(fw, mode):
        torch = fw.mod
        x0 = rand_f32(n, 13)
        x = fw.to_device(x0)
        target = torch.tensor(c, device=fw.dev)

        def run():
            for _ in range(steps):
                x.lerp_(target, w)  # (1 - w) x + w c in one kernel
        if mode == "eager":
            return _work(run, lambda: fw.to_numpy(x), x0, shape, f"{steps} x.lerp_(c, w)")
        if fw.backend != "cuda":
            raise NA("CUDA graphs need a CUDA device")
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            run()  # warm-up on a side stream, as torch.cuda.graphs requires
        torch.cuda.current_stream().wait_stream(s)
        x.copy_(torch.from_numpy(x0).to(fw.dev))
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            run()
        return _work(g.replay, lambda: fw.to_numpy(x), x0, shape, f"torch.cuda.CUDAGraph of {steps} lerp_")
    return setup


def _taichi(name):
    n, steps, *_ = shape = SHAPES[name]

    def setup(fw, mode):
        ti = fw.mod

        def make():
            @ti.kernel
            def half(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
                for i in range(x.shape[0]):
                    x[i] = 0.5 * x[i] + 1.0

            @ti.kernel
            def tiny(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
                for i in range(x.shape[0]):
                    x[i] = 0.99 * x[i] + 0.01
            return {"graph": half, "graph_tiny": tiny}
        k = fw.memo("graph", make)[name]
        x0 = rand_f32(n, 13)
        x = fw.to_device(x0)
        if mode == "eager":
            return _work(lambda: [k(x) for _ in range(steps)], x.to_numpy, x0, shape, f"{steps} launches")
        if ti.__name__ == "quadrants":  # Quadrants replaced GraphBuilder by @qd.kernel(graph=True), CUDA only
            if fw.backend != "cuda":
                raise NA("@qd.kernel(graph=True) captures CUDA graphs only")

            def make_graph():
                @ti.kernel(graph=True)
                def half_steps(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
                    for _s in ti.static(range(SHAPES["graph"][1])):
                        for i in range(x.shape[0]):
                            x[i] = 0.5 * x[i] + 1.0

                @ti.kernel(graph=True)
                def tiny_steps(x: ti.types.ndarray(dtype=ti.f32, ndim=1)):
                    for _s in ti.static(range(SHAPES["graph_tiny"][1])):
                        for i in range(x.shape[0]):
                            x[i] = 0.99 * x[i] + 0.01
                return {"graph": half_steps, "graph_tiny": tiny_steps}
            g = fw.memo("graph-kernel", make_graph)[name]
            return _work(lambda: g(x), x.to_numpy, x0, shape, f"@qd.kernel(graph=True), {steps} static-unrolled loops")
        try:
            sym = ti.graph.Arg(ti.graph.ArgKind.NDARRAY, "x", ti.f32, ndim=1)
            b = ti.graph.GraphBuilder()
            for _ in range(steps):
                b.dispatch(k, sym)
            g = b.compile()
        except Exception as e:  # noqa: BLE001 - the backend has no graphs
            raise NA(f"{ti.__name__}.graph.GraphBuilder fails on {fw.backend}: {first_line(e)}") from None
        return _work(lambda: g.run({"x": x}), x.to_numpy, x0, shape,
                     f"{ti.__name__}.graph.GraphBuilder, {steps} dispatches")
    return setup


def _warp(name):
    n, steps, *_ = shape = SHAPES[name]

    def setup(fw, mode):
        wp = fw.mod

        def make():
            @wp.kernel(module="unique")
            def half(x: wp.array(dtype=wp.float32)):
                i = wp.tid()
                x[i] = 0.5 * x[i] + 1.0

            @wp.kernel(module="unique")
            def tiny(x: wp.array(dtype=wp.float32)):
                i = wp.tid()
                x[i] = 0.99 * x[i] + 0.01
            return {"graph": half, "graph_tiny": tiny}
        k = fw.memo("graph", make)[name]
        x0 = rand_f32(n, 13)
        x = fw.to_device(x0)

        def run():
            for _ in range(steps):
                wp.launch(k, dim=n, inputs=[x], device=fw.dev)
        if mode == "eager":
            return _work(run, x.numpy, x0, shape, f"{steps} wp.launch")
        if fw.backend != "cuda":
            raise NA("warp graph capture is benchmarked on CUDA only")
        run()  # load the module before capture
        wp.copy(x, wp.array(x0, device=fw.dev))
        with wp.ScopedCapture(device=fw.dev) as cap:
            run()
        return _work(lambda: wp.capture_launch(cap.graph), x.numpy, x0, shape,
                     f"wp.ScopedCapture of {steps} launches")
    return setup


for _b in (graph, graph_tiny):
    _b.impl("gfxrt")(_gfxrt(_b.name))
    _b.impl("torch")(_torch(_b.name))
    _b.impl("taichi", "quadrants")(_taichi(_b.name))
    _b.impl("warp")(_warp(_b.name))
