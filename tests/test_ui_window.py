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
