"""gr.ui in a real window (rendercanvas + glfw, gr.GUI's window layer) on a virtual display
(Xvfb, started by test_gui_window's fixture; skipped without Xvfb and glfw): frames are presented,
the window's input reaches GGUI's events and keys, closing it ends `running`."""
import numpy as np
import pytest
from test_gui_window import display  # noqa: F401  (the Xvfb fixture)

import gfxrt as gr

pytestmark = pytest.mark.gpu


def test_a_ggui_window_presents_frames_and_takes_its_input(display):  # noqa: F811
    win = gr.ui.Window("ggui window test", (160, 120))
    assert win._shown is not None  # a real window on the virtual display
    scene, canvas = win.get_scene(), win.get_canvas()
    cam = gr.ui.Camera()
    cam.position(0, 0, 3)
    cam.lookat(0, 0, 0)
    for _ in range(3):
        scene.set_camera(cam)
        scene.ambient_light((1, 1, 1))
        scene.particles(np.float32([[0, 0, 0]]), radius=0.3, color=(1, 0.5, 0))
        canvas.scene(scene)
        win.show()
    assert np.allclose(win.get_image_buffer_as_numpy()[80, 60, :3], (1, 128 / 255, 0), atol=1 / 255)
    c = win._shown.canvas
    c.submit_event({"event_type": "key_down", "key": "w", "modifiers": ()})
    c.submit_event({"event_type": "pointer_down", "x": 40.0, "y": 30.0, "button": 1, "buttons": (1,), "modifiers": ()})
    win.show()  # takes the window's input
    assert win.is_pressed("w") and win.is_pressed(gr.ui.LMB)
    assert win.get_cursor_pos() == pytest.approx((0.25, 0.75))
    assert [(e.key, e.type) for e in win.get_events(gr.ui.PRESS)] == [("w", gr.ui.PRESS), (gr.ui.LMB, gr.ui.PRESS)]
    c.close()  # the user closes the window: running turns False
    win.show()  # harmless after closing
    assert not win.running


@pytest.mark.parametrize("make", ["ui", "gui"])
def test_a_window_paces_its_frames_to_fps_limit_and_vsyncs_only_when_asked(display, make):  # noqa: F811
    import time
    if make == "ui":
        win = gr.ui.Window("paced", (32, 32), fps_limit=20)
        shown, show = win._shown, win.show
        synced = gr.ui.Window("v", (32, 32), vsync=True)._shown.canvas
        assert not shown.canvas._vsync and synced._vsync
        synced.close()
    else:
        win = gr.GUI("paced", res=(32, 32))
        win.fps_limit = 20
        shown, show = win.window, win.show
        assert not shown.canvas._vsync  # ti.GUI has no vsync: fps_limit paces it
    t0 = time.perf_counter()
    for _ in range(5):
        show()
    assert time.perf_counter() - t0 >= 4 / 20  # at most 20 frames per second: 4 gaps of 1/20 s
    shown.canvas.close()


PROGRAMS = {  # a Taichi-style frame loop each, ended by the harness's frame budget
    "gui": """
import gfxrt as gr
x = gr.Vector.field(2, gr.f32, shape=8)
@gr.kernel
def move(t: gr.f32):
    for i in x:
        x[i] = [0.1 + 0.1 * i, 0.5 + 0.2 * gr.sin(t + i)]
gui = gr.GUI("corpus-style", res=(64, 48), background_color=0x112F41)
t = 0.0
while gui.running:
    move(t)
    gui.circles(x, radius=3, color=0xED553B)
    gui.show()
    t += 0.1
""",
    "ui": """
import gfxrt as gr
window = gr.ui.Window("corpus-style", (64, 48), vsync=True)
canvas = window.get_canvas()
x = gr.Vector.field(2, gr.f32, shape=4)
@gr.kernel
def place():
    for i in x:
        x[i] = [0.2 + 0.2 * i, 0.5]
while window.running:
    place()
    canvas.set_background_color((0.1, 0.2, 0.3))
    canvas.circles(x, radius=0.05, color=(1.0, 0.6, 0.2))
    window.show()
""",
}


@pytest.mark.parametrize("kind", sorted(PROGRAMS))
def test_the_corpus_harness_draws_in_a_real_window(display, tmp_path, kind):  # noqa: F811
    """tools/taichi_examples' --window mode: a program's own window (gr.GUI / gr.ui) opens on the
    display and presents each frame until the frame budget ends the program; frames are saved too."""
    import sys

    from tools.taichi_examples.run import run_one

    (tmp_path / "prog.py").write_text(PROGRAMS[kind])
    meta = run_one(sys.executable, "gfxrt", "vulkan", tmp_path, "prog.py", tmp_path / "state" / "gr", 3, 120,
                   ("--window",), draw=tmp_path / "frames")
    assert meta["status"] == "ok" and meta["frames_shown"] == 3, meta  # `running` turned False after 3
    assert meta["frames_in_window"] == 3, meta
    assert len(list((tmp_path / "frames").glob("*.png"))) == 3
