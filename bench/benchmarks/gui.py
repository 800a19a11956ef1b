"""Drawing particles with the 2D GUI (issue 25): one frame of a particle program, its step alone,
its drawing alone, and both, in ms per frame; the derived rows give the drawing's share of a frame.

gfxrt: `gui.circles(x)` of a gr.Vector.field, drawn from the field's own buffer (instanced quads,
no readback), `gui.show()` off-screen (show_gui=False: no window, no file). Taichi: ti.GUI with
show_gui=False, which draws on the host from `x.to_numpy()` (its API takes numpy)."""
import numpy as np

from ..registry import NA, Case, Work, benchmark, machine_sizes

RES = 512
RADIUS = 1.5
MODES = ("step", "draw", "step + draw")


def _cases(quick):
    sized = [(1 << 16, None)] if quick else machine_sizes([10 ** 6], [10 ** 6])
    return [Case(f"{n:.0e} {m}".replace("e+0", "e"), (n, m), only) for n, only in sized for m in MODES]


def _shares(got: dict) -> dict:
    out = {}
    for label, v in got.items():
        if label.endswith(" step + draw"):
            size = label[: -len(" step + draw")]
            step = got.get(size + " step")
            if step and v:
                out[size + " drawing's share of a frame"] = (v - step) / v
    return out


gui_particles = benchmark(
    "gui_particles", f"particles drawn per frame by the 2D GUI ({RES}x{RES}, radius {RADIUS} px)", unit="ms",
    group="gui", cases=_cases, derived=_shares,
    na={"numpy": "no GUI", "torch": "no GUI", "warp": "no 2D GUI", "quadrants": "measured as taichi"},
    note="step: x += v * dt with wrap-around (a kernel); draw: gui.circles(x) + gui.show() off-screen; "
         "taichi draws on the host from x.to_numpy()")


def _data(n):
    rng = np.random.default_rng(7)
    return rng.random((n, 2), dtype=np.float32), ((rng.random((n, 2), dtype=np.float32) - 0.5) * 0.1)


@gui_particles.impl("gfxrt")
def _gfxrt(fw, param):
    gr = fw.mod
    n, mode = param
    if not hasattr(gr, "GUI"):
        raise NA("this gfxrt has no gr.GUI")
    x0, v0 = _data(n)
    x = gr.Vector.field(2, gr.f32, shape=n)
    v = gr.Vector.field(2, gr.f32, shape=n)
    x.from_numpy(x0)
    v.from_numpy(v0)

    @gr.kernel
    def step():
        for i in x:
            x[i] = gr.math.fract(x[i] + v[i] * 0.01)
    gui = gr.GUI("bench", res=RES, show_gui=False)

    def draw():
        gui.circles(x, radius=RADIUS, color=0xFFFFFF)
        gui.show()
    run = {"step": step, "draw": draw, "step + draw": lambda: (step(), draw())}[mode]

    def check():
        gui.circles(x, radius=RADIUS, color=0xFFFFFF)  # one more frame: lit pixels where the particles are
        img = gui.get_image()
        gui.show()
        lit = img[:, :, 0] > 0.5
        p = np.clip(np.rint(x.to_numpy() * RES).astype(int), 0, RES - 1)  # the pixel nearest each centre
        return None if lit[p[:64, 0], p[:64, 1]].all() else "particles not drawn where they are"
    return Work(run=run, check=check, impl="gr.GUI.circles(field) + show(), off-screen")


@gui_particles.impl("taichi")
def _taichi(fw, param):
    ti = fw.mod
    n, mode = param
    x0, v0 = _data(n)
    x = ti.Vector.field(2, ti.f32, shape=n)
    v = ti.Vector.field(2, ti.f32, shape=n)
    x.from_numpy(x0)
    v.from_numpy(v0)

    def make():
        @ti.kernel
        def step(x: ti.template(), v: ti.template()):
            for i in x:
                x[i] = ti.math.fract(x[i] + v[i] * 0.01)
        return step
    k = fw.memo("gui_step", make)
    gui = ti.GUI("bench", res=RES, show_gui=False)

    def draw():
        gui.circles(x.to_numpy(), radius=RADIUS, color=0xFFFFFF)
        gui.show()
    run = {"step": lambda: k(x, v), "draw": draw, "step + draw": lambda: (k(x, v), draw())}[mode]
    return Work(run=run, impl="ti.GUI.circles(x.to_numpy()) + show(), show_gui=False")
