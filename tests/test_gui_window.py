"""gr.GUI in a real window (rendercanvas + glfw) on a virtual display: Xvfb, started here when its
binary and glfw are installed (`apt-get install xvfb`, `pip install gfxrt[gui]`), else skipped.
The window's input arrives as rendercanvas events; they must become Taichi's GUI events."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import time

import numpy as np
import pytest

import gfxrt as gr

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def display():
    if shutil.which("Xvfb") is None or importlib.util.find_spec("glfw") is None \
            or importlib.util.find_spec("rendercanvas") is None:
        pytest.skip("needs Xvfb and glfw (apt-get install xvfb; pip install gfxrt[gui])")
    num = 70 + os.getpid() % 200
    proc = subprocess.Popen(["Xvfb", f":{num}", "-screen", "0", "640x480x24"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while not os.path.exists(f"/tmp/.X11-unix/X{num}") and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    old = os.environ.get("DISPLAY")
    os.environ["DISPLAY"] = f":{num}"
    try:
        yield f":{num}"
    finally:
        import glfw
        glfw.terminate()  # drop the X connection first: Xlib exits the process when its server goes away
        if old is None:
            os.environ.pop("DISPLAY", None)
        else:
            os.environ["DISPLAY"] = old
        proc.terminate()
        proc.wait(10)


def test_a_window_presents_frames_and_its_input_becomes_taichi_events(display):
    gui = gr.GUI("window test", res=(200, 100), background_color=0x223344)
    assert gui.window is not None
    gui.fps_limit = None
    for _ in range(3):
        gui.circles(np.float32([[0.5, 0.5]]), radius=10, color=0xFF8800)
        gui.show()
    c = gui.window.canvas
    c.submit_event({"event_type": "key_down", "key": "Escape", "modifiers": ()})
    c.submit_event({"event_type": "pointer_down", "x": 50.0, "y": 25.0, "button": 1, "buttons": (1,), "modifiers": ()})
    c.submit_event({"event_type": "pointer_move", "x": 100.0, "y": 50.0, "button": 0, "buttons": (1,),
                    "modifiers": ()})
    c.submit_event({"event_type": "key_down", "key": "A", "modifiers": ()})
    c.submit_event({"event_type": "key_up", "key": "ArrowUp", "modifiers": ()})
    es = [(e.type, e.key, e.pos) for e in gui.get_events()]
    assert es == [(gr.GUI.PRESS, gr.GUI.ESCAPE, (0.0, 0.0)), (gr.GUI.PRESS, gr.GUI.LMB, (0.25, 0.75)),
                  (gr.GUI.MOTION, gr.GUI.MOVE, (0.5, 0.5)), (gr.GUI.PRESS, "a", (0.5, 0.5)),
                  (gr.GUI.RELEASE, gr.GUI.UP, (0.5, 0.5))]
    assert gui.is_pressed(gr.GUI.LMB) and gui.get_cursor_pos() == (0.5, 0.5)
    img = gui.get_image()  # the off-screen frame the window presents
    assert img.shape == (200, 100, 4)
    c.close()  # the user closes the window: EXIT, and running turns False
    assert not gui.running
    assert gui.get_event(gr.GUI.EXIT)
    gui.show()  # harmless after closing
