"""The acceptance corpus of Taichi's example programs (tools/taichi_examples).

The comparison, the headless stand-ins and the translation are tested everywhere (no Taichi
needed). The last tier runs two of Taichi's examples through the whole command, against Taichi
1.7.4 in the same run: it is skipped unless a python with taichi is found (env TAICHI_PYTHON,
this interpreter, or python3 on PATH).
"""
import json
import os
import subprocess
import sys
import textwrap
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from tools.taichi_examples import compare as cmp
from tools.taichi_examples.translate import translate_example

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT / "tools" / "taichi_examples" / "harness.py"


def test_identical_states_match_and_a_perturbation_beyond_the_tolerance_does_not():
    rng = np.random.default_rng(1)
    ref = {"x": rng.random((64, 2)).astype(np.float32), "n": np.arange(10)}
    assert cmp.compare(dict(ref), ref, None)["match"]
    bad = dict(ref, x=ref["x"] + np.float32(1e-3))
    v = cmp.compare(bad, ref, None)
    assert not v["match"] and v["worst"][0] == "x"
    assert not cmp.compare({"x": ref["x"]}, ref, None)["match"]  # a missing array differs
    assert not cmp.compare(dict(ref, n=np.arange(11)), ref, None)["match"]  # so does another shape


def test_calibration_picks_elementwise_for_agreeing_backends_and_distribution_for_random_ones():
    rng = np.random.default_rng(2)
    det = rng.random(1000)
    vulkan = {"det": det, "rand": rng.random(1000)}
    cpu = {"det": det * (1 + 1e-7), "rand": rng.random(1000)}  # another random stream
    cal = cmp.calibrate(cpu, vulkan)
    assert cal["det"][0] == "elementwise" and cal["det"][1] == pytest.approx(cmp.FLOOR)
    assert cal["rand"][0] == "distribution"
    # a third stream of the same distribution matches; the same values shifted do not
    assert cmp.compare({"det": det, "rand": rng.random(1000)}, vulkan, cal)["match"]
    assert not cmp.compare({"det": det, "rand": rng.random(1000) + 0.2}, vulkan, cal)["match"]
    assert not cmp.compare({"det": det[::-1].copy(), "rand": vulkan["rand"]}, vulkan, cal)["match"]


def test_a_few_isolated_cells_of_a_large_array_may_differ_but_no_more():
    """A cell on a geometric edge (a float test rounded the other way) flips a 0/1 mask's element
    and an image's level: up to OUTLIERS x size such cells are left out of the elementwise error;
    ten in a 512 x 512 mask, a small array or a scalar still differ."""
    rng = np.random.default_rng(3)
    mask = (rng.random((512, 512)) < 0.3).astype(np.int32)
    img = (1 - mask / 4).astype(np.float32)

    def flipped(k):
        m = mask.copy().ravel()
        m[rng.choice(m.size, k, replace=False)] ^= 1
        return m.reshape(mask.shape)

    one = flipped(1)
    assert cmp.compare({"x": one, "img": (1 - one / 4).astype(np.float32)}, {"x": mask, "img": img}, None)["match"]
    v = cmp.compare({"x": flipped(10), "img": img}, {"x": mask, "img": img}, None)
    assert not v["match"] and v["worst"][:2] == ("x", 1.0)
    row = img.copy()
    row[7] += 1e-3  # a whole row off: not an edge cell
    assert not cmp.compare({"x": mask, "img": row}, {"x": mask, "img": img}, None)["match"]
    small = np.arange(1000, dtype=np.int32)
    assert not cmp.compare({"n": small + (small == 7)}, {"n": small}, None)["match"]
    assert not cmp.compare({"n": np.int32(5)}, {"n": np.int32(4)}, None)["match"]


def test_nans_must_sit_where_the_reference_has_them():
    b = np.array([1.0, np.nan, 3.0])
    assert cmp.elementwise(b.copy(), b) == 0.0
    assert cmp.elementwise(np.array([1.0, 2.0, np.nan]), b) == float("inf")
    assert cmp.distribution(np.array([np.nan, 3.0, 1.0]), b) == 0.0


def test_translation_maps_taichi_submodules_and_the_examples_own_module():
    src = textwrap.dedent("""\
        import taichi as ti
        import taichi.math as tm
        from taichi.math import vec2
        from taichi.examples.patterns import taichi_logo
        ti.init(arch=ti.gpu)
    """)
    out = translate_example(src)
    assert out.splitlines() == ["import gfxrt as gr", "import gfxrt.math as tm", "from gfxrt.math import vec2",
                                "from patterns import taichi_logo", "gr.init(arch=gr.gpu)"]


PROGRAM = """\
import gfxrt as gr

count = gr.field(gr.i32, shape=())
v = gr.Vector.field(2, gr.f32, shape=4)


@gr.kernel
def step():
    count[None] += 1
    for i in v:
        v[i] += gr.Vector([1.0, 0.5])


def main():
    local = gr.field(gr.f32, shape=3)
    gui = gr.GUI("demo", res=64)
    for frame in range(1000000):
        if gui.get_event(gr.GUI.PRESS) or gui.is_pressed(gr.GUI.LMB):
            break
        step()
        local.fill(frame)
        gui.circles(v.to_numpy(), radius=2)
        gui.show()


if __name__ == "__main__":
    main()
"""


def test_the_headless_harness_ends_a_gui_loop_after_n_frames_and_dumps_globals_and_main_locals(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    path = os.pathsep.join([str(ROOT)] + os.environ.get("PYTHONPATH", "").split(os.pathsep))
    env = {**os.environ, "PYTHONPATH": path, "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", "/tmp")}
    subprocess.run([sys.executable, str(HARNESS), "--lib", "gfxrt", "--frames", "4", "--out", str(tmp_path / "s.npz"),
                    str(prog)], env=env, check=True, timeout=240)
    meta = json.loads((tmp_path / "s.json").read_text())
    assert meta["status"] == "frames" and meta["frames_shown"] == 5, meta
    with np.load(tmp_path / "s.npz") as z:
        state = {k: z[k] for k in z.files}
    assert set(state) == {"count", "v", "main:local"}
    assert int(state["count"]) == 5  # the 5th show() ended the loop, after its step()
    np.testing.assert_allclose(state["v"], np.tile([5.0, 2.5], (4, 1)))
    np.testing.assert_allclose(state["main:local"], [4.0, 4.0, 4.0])


CLOCK_PROGRAM = """\
import time
from time import perf_counter
import gfxrt as gr

gr.init(arch=gr.cpu)
t = gr.field(gr.f64, shape=4)
t0 = perf_counter()
for k in range(3):
    t[k] = time.perf_counter() - t0  # a program animating on the wall clock
time.sleep(1000.0)  # advances the clock, waits for nothing
t[3] = time.perf_counter() - t0
"""


def test_the_program_reads_a_deterministic_clock_so_both_runs_see_the_same_times(tmp_path):
    prog = tmp_path / "prog.py"
    prog.write_text(CLOCK_PROGRAM)
    path = os.pathsep.join([str(ROOT)] + os.environ.get("PYTHONPATH", "").split(os.pathsep))
    env = {**os.environ, "PYTHONPATH": path, "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", "/tmp")}
    runs = []
    for n in range(2):
        subprocess.run([sys.executable, str(HARNESS), "--lib", "gfxrt", "--out", str(tmp_path / f"s{n}.npz"),
                        str(prog)], env=env, check=True, timeout=240)
        meta = json.loads((tmp_path / f"s{n}.json").read_text())
        assert meta["status"] == "ok" and meta["run_s"] < 200, meta  # the sleep did not wait
        with np.load(tmp_path / f"s{n}.npz") as z:
            runs.append(z["t"])
    np.testing.assert_array_equal(runs[0], runs[1])
    step = runs[0][1] - runs[0][0]
    assert step > 0 and np.allclose(np.diff(runs[0][:3]), step)  # readings advance evenly, never coincide
    assert runs[0][3] - runs[0][2] > 1000.0  # sleep(1000.0) moved the clock by 1000 s


FAST_MATH_PROGRAM = """\
import gfxrt as gr

gr.init(arch=gr.cpu{extra})
fast = gr.field(gr.i32, shape=())
fast[None] = int(gr.cfg.fast_math)
"""


@pytest.mark.parametrize("extra, args, want", [("", [], 1), (", fast_math=False", [], 0)])
def test_the_harness_runs_the_program_with_gr_inits_own_defaults_which_are_taichis(tmp_path, extra, args, want):
    """ti.init() means fast_math=True and so does gr.init() (docs/taichi.md): the harness runs the
    program as written, with nothing added, and the program's own fast_math=False holds."""
    prog = tmp_path / "prog.py"
    prog.write_text(FAST_MATH_PROGRAM.format(extra=extra))
    path = os.pathsep.join([str(ROOT)] + os.environ.get("PYTHONPATH", "").split(os.pathsep))
    env = {**os.environ, "PYTHONPATH": path, "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", "/tmp")}
    subprocess.run([sys.executable, str(HARNESS), "--lib", "gfxrt", "--out", str(tmp_path / "s.npz"), *args,
                    str(prog)], env=env, check=True, timeout=240)
    with np.load(tmp_path / "s.npz") as z:
        assert int(z["fast"]) == want


def _state(st, name, status="frames", **arrays):
    np.savez(st / f"{name}.npz", **arrays)
    return {"status": status, "error": None if status != "error" else "RuntimeError: cannot"}


def test_without_taichis_vulkan_run_the_calibration_partner_is_its_cpu_run_without_fast_math(tmp_path):
    """A program Taichi's Vulkan backend cannot run is calibrated on Taichi's CPU backend at
    fast_math=False: an array that moves under Taichi's own rounding change gets a tolerance, a
    deterministic one keeps the floor."""
    from tools.taichi_examples.run import verdict
    ref = {"steady": np.arange(100.0), "touchy": np.linspace(1.0, 2.0, 100)}
    metas = {"ti-vulkan": _state(tmp_path, "ti-vulkan", "error"), "ti-cpu": _state(tmp_path, "ti-cpu", **ref),
             "ti-cpu-fm0": _state(tmp_path, "ti-cpu-fm0", steady=ref["steady"], touchy=ref["touchy"] * (1 + 1e-4)),
             "gr": _state(tmp_path, "gr", steady=ref["steady"], touchy=ref["touchy"] * (1 + 5e-4))}
    row = verdict("p.py", tmp_path, metas)
    assert row["status"] == "match" and "fast_math=False" in row["detail"], row
    _state(tmp_path, "gr", steady=ref["steady"] + 0.01, touchy=ref["touchy"])  # beyond the floor where Taichi agrees
    assert verdict("p.py", tmp_path, metas)["status"] == "differs"
    _state(tmp_path, "gr", steady=ref["steady"], touchy=ref["touchy"] * (1 + 5e-3))  # beyond 10x Taichi's own gap
    assert verdict("p.py", tmp_path, metas)["status"] == "differs"
    del metas["ti-cpu-fm0"]  # no partner: every array at the floor
    _state(tmp_path, "gr", steady=ref["steady"], touchy=ref["touchy"] * (1 + 5e-4))
    assert verdict("p.py", tmp_path, metas)["status"] == "differs"


def test_a_differing_program_that_taichis_bounds_check_stops_is_undefined_not_a_match():
    from tools.taichi_examples.run import markdown, undefined_if_out_of_bounds
    row = {"program": "p.py", "status": "differs", "detail": "d: 1.00e+00 > tol 1e-05 (elementwise)"}
    msg = ("TaichiAssertionError: \n(kernel=curl_c84_0) Accessing field (S5place<f32>) of size (512, 512) "
           "with indices (-1, 0)")
    out = undefined_if_out_of_bounds(row, {"status": "error", "error": msg})
    assert out["status"] == "undefined" and "with indices (-1, 0)" in out["detail"]
    assert undefined_if_out_of_bounds(row, {"status": "frames", "error": None}) == row  # in bounds: still differs
    assert undefined_if_out_of_bounds(row, {"status": "error", "error": "RuntimeError: no"}) == row
    md = markdown([out, {"program": "q.py", "status": "match", "detail": "ok"}], [])
    assert md.startswith("**1 of 2 run and match** Taichi 1.7.4. 1 more read outside a field")


def test_draw_runs_the_real_gui_off_screen_with_the_same_frames_and_input(tmp_path):
    """--draw: gr.GUI itself draws (off-screen), each shown frame a PNG; the program sees the
    same frame budget and no input, so its state is the stand-in's."""
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    path = os.pathsep.join([str(ROOT)] + os.environ.get("PYTHONPATH", "").split(os.pathsep))
    env = {**os.environ, "PYTHONPATH": path, "XDG_RUNTIME_DIR": os.environ.get("XDG_RUNTIME_DIR", "/tmp")}
    env.pop("DISPLAY", None)
    subprocess.run([sys.executable, str(HARNESS), "--lib", "gfxrt", "--frames", "4", "--out", str(tmp_path / "s.npz"),
                    "--draw", str(tmp_path / "frames"), str(prog)], env=env, check=True, timeout=240)
    meta = json.loads((tmp_path / "s.json").read_text())
    assert meta["status"] == "frames" and meta["frames_shown"] == 5, meta
    names = sorted(p.name for p in (tmp_path / "frames").iterdir())
    assert names == ["gui0-0000.png", "gui0-0001.png", "gui0-0002.png", "gui0-0003.png"]
    from gfxrt.gui.png import read_png
    last = read_png(tmp_path / "frames" / names[-1])
    assert last.shape == (64, 64, 3)  # (the program's particles have left the canvas by then)
    with np.load(tmp_path / "s.npz") as z:
        assert int(z["count"]) == 5


@cache
def _taichi_python():
    from tools.taichi_examples.run import find_taichi_python
    return find_taichi_python()[0]


@pytest.mark.parametrize("program", ["algorithm/laplace.py", "autodiff/jacobian.py"])
def test_taichi_examples_match_taichi(program, tmp_path):
    if _taichi_python() is None:
        pytest.skip("no python with taichi: the corpus compares with Taichi 1.7.4")
    from tools.taichi_examples.run import main
    rows = main(["-k", program, "--out", str(tmp_path), "--timeout", "240"])
    assert [r["program"] for r in rows] == [program]
    assert rows[0]["status"] == "match", rows[0]
