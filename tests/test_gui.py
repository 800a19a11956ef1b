"""gr.GUI (gfxrt/gui/): off-screen frames compared with images computed in numpy, Taichi 1.7.4's
pixel conventions, set_image and PNG round trips, events by synthetic injection. Cheap: small frames."""
from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest

import gfxrt as gr
from gfxrt.gui.frame import Frame
from gfxrt.gui.png import encode_png, read_png, write_png

pytestmark = pytest.mark.gpu

BG = 0x112233


def rgb(c):
    return np.array([(c >> 16) & 255, (c >> 8) & 255, c & 255], np.float64) / 255


def pixels(w, h):
    """Taichi's pixel coordinates: x[i, j] = i, y[i, j] = j (img[x, y], y up)."""
    return np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64), indexing="ij")


def over(bg, color, alpha):
    return bg[None, None, :] * (1 - alpha[..., None]) + color[None, None, :] * alpha[..., None]


def expect_circles(res, centers, radii, colors):
    x, y = pixels(*res)
    img = np.broadcast_to(rgb(BG), res + (3,)).copy()
    for (cx, cy), r, c in zip(centers, radii, colors):
        a = np.clip(r - np.hypot(x - cx * res[0], y - cy * res[1]), 0, 1)
        img = over(img, rgb(c), a)
    return img


def test_frame_clear_write_read_and_png_round_trip(tmp_path):
    f = Frame(37, 19)  # a row of 148 bytes: the readback's 256-byte row pitch is stripped
    f.clear((1, 0, 0, 1))
    assert (f.read() == np.array([255, 0, 0, 255], np.uint8)).all()
    img = np.random.default_rng(0).integers(0, 256, (19, 37, 4), dtype=np.uint8)
    f.write(img)
    assert (f.read() == img).all()
    f.save(tmp_path / "f.png")
    assert (read_png(tmp_path / "f.png") == img).all()
    with pytest.raises(ValueError):
        f.write(img[:, :5])
    with pytest.raises(ValueError):
        Frame(0, 4)


def _filtered_png(img: np.ndarray, kinds) -> bytes:
    """A PNG whose rows use the given filters (1 Sub, 2 Up, 3 Average, 4 Paeth), made here."""
    h, w, c = img.shape
    rows, prev = [], np.zeros(w * c, np.int64)
    for y in range(h):
        cur = img[y].reshape(-1).astype(np.int64)
        left = np.concatenate([np.zeros(c, np.int64), cur[:-c]])
        ul = np.concatenate([np.zeros(c, np.int64), prev[:-c]])
        k = kinds[y % len(kinds)]
        if k == 1:
            pred = left
        elif k == 2:
            pred = prev
        elif k == 3:
            pred = (left + prev) // 2
        else:
            p = left + prev - ul
            pa, pb, pc = abs(p - left), abs(p - prev), abs(p - ul)
            pred = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, prev, ul))
        rows.append(bytes([k]) + ((cur - pred) & 255).astype(np.uint8).tobytes())
        prev = cur
    base = encode_png(img)
    head = base[:8 + 25]  # signature + IHDR chunk
    data = zlib.compress(b"".join(rows))
    idat = struct.pack(">I", len(data)) + b"IDAT" + data + struct.pack(">I", zlib.crc32(b"IDAT" + data))
    return head + idat + base[-12:]


def test_read_png_undoes_every_row_filter(tmp_path):
    img = np.random.default_rng(1).integers(0, 256, (6, 5, 3), dtype=np.uint8)
    (tmp_path / "f.png").write_bytes(_filtered_png(img, [1, 2, 3, 4]))
    assert (read_png(tmp_path / "f.png") == img).all()
    write_png(tmp_path / "g.png", img[:, :, 0])
    assert (read_png(tmp_path / "g.png")[:, :, 0] == img[:, :, 0]).all()


def test_circles_land_where_taichi_draws_them():
    """Centre at (x * w, y * h) in pixels (y up), radius in pixels, edge alpha clip(r - d, 0, 1):
    Taichi 1.7.4's canvas. Its numbers for this circle (40 x 30, (0.5, 0.5), radius 5, red on
    0x112233, measured with ti.GUI(show_gui=False).get_image()): red > 0.5 on x 16..24 and y 11..19."""
    res = (40, 30)
    gui = gr.GUI("t", res=res, show_gui=False, background_color=BG)
    gui.circle((0.5, 0.5), color=0xFF0000, radius=5)
    img = gui.get_image()
    assert img.shape == (40, 30, 4) and img.dtype == np.float32
    xs, ys = np.nonzero(img[:, :, 0] > 0.5)
    assert (xs.min(), xs.max(), ys.min(), ys.max()) == (16, 24, 11, 19)
    assert np.abs(img[:, :, :3] - expect_circles(res, [(0.5, 0.5)], [5], [0xFF0000])).max() <= 1.5 / 255


def test_many_circles_from_numpy_and_from_a_field_are_the_same_picture():
    res = (64, 48)
    rng = np.random.default_rng(2)
    pos = rng.random((20, 2)).astype(np.float32)
    radii = rng.uniform(1, 6, 20).astype(np.float32)
    palette = [0xFF0000, 0x00FF00, 0x0000FF, 0xFFFF00]
    idx = rng.integers(0, 4, 20)
    gui = gr.GUI("t", res=res, show_gui=False, background_color=BG)
    gui.circles(pos, radius=radii, palette=palette, palette_indices=idx)
    a = gui.get_image()
    gui.show()
    field = gr.Vector.field(2, gr.f32, shape=20)
    field.from_numpy(pos)
    gui.circles(field, radius=radii, color=np.array(palette)[idx])
    b = gui.get_image()
    assert (a == b).all()
    want = expect_circles(res, pos, radii, np.array(palette)[idx])
    assert np.abs(a[:, :, :3] - want).max() <= 1.5 / 255


def test_circles_see_the_kernel_launched_before_them_without_a_sync():
    x = gr.Vector.field(2, gr.f32, shape=4)

    @gr.kernel
    def place(t: gr.f32):
        for i in x:
            x[i] = [0.2 + 0.2 * i, t]

    gui = gr.GUI("t", res=(50, 20), show_gui=False)
    place(0.5)  # recorded, not yet submitted: the draw's submit comes after it
    gui.circles(x, radius=2, color=0xFFFFFF)
    img = gui.get_image()
    for i in range(4):
        assert img[int(round((0.2 + 0.2 * i) * 50)), 10, 0] == 1.0
    assert img[:, :, 0].sum() > 0 and img[:, 0, 0].max() == 0


def test_sync_waits_for_the_drawing_submitted_outside_the_recorder():
    gui = gr.GUI("t", res=(32, 32), show_gui=False)
    rt = gr.runtime()
    gr.sync()
    waits = rt.stats()["waits"]
    gr.sync()
    assert rt.stats()["waits"] == waits  # nothing pending: no wait
    gui.circles(np.array([[0.5, 0.5]]), radius=3)
    gui.show()  # a render pass on the queue, outside the runtime's recorder
    gr.sync()
    assert rt.stats()["waits"] == waits + 1  # the sync waited for it
    gr.sync()
    assert rt.stats()["waits"] == waits + 1


def test_lines_triangles_rect_arrows_match_numpy():
    res = (40, 30)
    gui = gr.GUI("t", res=res, show_gui=False, background_color=BG)
    gui.line((0.1, 0.2), (0.9, 0.2), radius=2, color=0x00FF00)
    img = gui.get_image()
    x, y = pixels(*res)
    # Taichi's segments sit half a pixel lower-left (measured: rows 4..7 > 0.5 for y = 0.2 * 30)
    ax, ay, bx = 0.1 * 40 - 0.5, 0.2 * 30 - 0.5, 0.9 * 40 - 0.5
    d = np.hypot(x - np.clip(x, ax, bx), y - ay)
    want = over(np.broadcast_to(rgb(BG), res + (3,)), rgb(0x00FF00), np.clip(2 - d, 0, 1))
    assert np.abs(img[:, :, :3] - want).max() <= 1.5 / 255
    gui.show()
    gui.triangle((0.1, 0.1), (0.9, 0.1), (0.1, 0.9), color=0x0000FF)
    b = gui.get_image()[:, :, 2]
    assert (b > 0.5).sum() == 384  # Taichi 1.7.4 covers exactly the area, 0.5 * 32 * 24
    gui.show()
    gui.rect((0.25, 0.75), (0.75, 0.25), radius=1, color=0xFFFFFF)
    r = gui.get_image()[:, :, 0]
    assert r[20, 15] < 0.2 and r[9, 15] > 0.4 and r[20, 22] > 0.4  # edges at x = 9.5, y = 22
    gui.show()
    gui.arrow((0.5, 0.5), (0.3, 0.0), radius=1, color=0xFFFFFF)
    r = gui.get_image()[:, :, 0]
    assert r[28, 14] > 0.4 and r[10, 14] < 0.1  # the shaft runs right from the middle


def test_set_image_orientation_and_dtypes_as_taichi():
    """img[x, y]: x to the right, y up; floats in [0, 1] become floor(v * 255) (Taichi's bytes);
    uint8 scales by 255; 1 channel is gray, 2 channels (r, g, 0)."""
    res = (8, 6)
    gui = gr.GUI("t", res=res, show_gui=False)
    im = np.zeros(res + (3,), np.float32)
    im[1, 4] = (1, 0.5, 0.25)
    gui.set_image(im)
    out = gui.get_image()
    assert (np.round(out[1, 4, :3] * 255) == [255, 127, 63]).all() and out[0, 0, :3].max() == 0
    field = gr.Vector.field(3, gr.f32, shape=res)  # the device path reads the field's buffer
    field.from_numpy(im)
    gui.set_image(field)
    assert (gui.get_image() == out).all()
    gray = (np.arange(48).reshape(res) * 5).astype(np.uint8)
    gui.set_image(gray)
    g = gui.get_image()
    assert (np.round(g[:, :, 0] * 255) == gray).all() and (g[:, :, 0] == g[:, :, 2]).all()
    sf = gr.field(gr.f32, shape=res)
    sf.from_numpy(gray.astype(np.float32) / 255)
    gui.set_image(sf)
    assert np.abs(np.round(gui.get_image()[:, :, 1] * 255) - gray).max() <= 1
    rg = np.zeros(res + (2,), np.float64)
    rg[..., 1] = 1
    gui.set_image(rg)
    assert (gui.get_image()[3, 3, :3] == [0, 1, 0]).all()
    with pytest.raises(ValueError):
        gui.set_image(np.zeros((6, 8), np.float32))  # (h, w): the wrong way round
    with pytest.raises(ValueError):
        gui.set_image(np.zeros(res, np.int32))


def test_show_writes_the_frame_and_starts_a_clear_one(tmp_path):
    gui = gr.GUI("t", res=(16, 12), show_gui=False, background_color=BG)
    gui.circle((0.25, 0.75), color=0xFF8000, radius=3)
    img = gui.get_image()
    gui.show(str(tmp_path / "a.png"))
    png = read_png(tmp_path / "a.png")
    assert png.shape == (12, 16, 3)
    assert (png == np.round(img[:, ::-1, :3] * 255).astype(np.uint8).transpose(1, 0, 2)).all()
    assert gui.frame == 1
    assert (np.round(gui.get_image()[:, :, :3] * 255) == [0x11, 0x22, 0x33]).all()  # cleared


def test_text_draws_inside_its_box():
    gui = gr.GUI("t", res=(100, 40), show_gui=False)
    gui.text("Hi 42", (0.1, 0.8), font_size=18, color=0xFFFFFF)
    r = gui.get_image()[:, :, 0]
    xs, ys = np.nonzero(r > 0.5)
    assert xs.min() >= 10 and ys.max() < 32 and ys.min() >= 32 - 18 and xs.max() < 10 + 5 * 12


def test_synthetic_events_filters_keys_cursor_and_exit():
    gui = gr.GUI("t", res=64, show_gui=False)
    assert gui.running and not gui.get_event()
    gui.push_event(gr.GUI.PRESS, "a", (0.25, 0.5))
    gui.push_event(gr.GUI.MOTION, gr.GUI.MOVE, (0.5, 0.75))
    gui.push_event(gr.GUI.PRESS, gr.GUI.SHIFT)
    assert gui.get_event(gr.GUI.PRESS)
    assert gui.event.key == "a" and gui.event.pos == (0.25, 0.5) and gui.is_pressed("a")
    assert gui.get_event((gr.GUI.PRESS, gr.GUI.SHIFT))  # skips the motion
    assert gui.is_pressed(gr.GUI.SHIFT) and gui.get_cursor_pos() == (0.5, 0.75)
    gui.push_event(gr.GUI.RELEASE, "a")
    gui.push_event(gr.GUI.PRESS, gr.GUI.WHEEL, delta=(0, 120))
    es = list(gui.get_events())
    assert [e.type for e in es] == [gr.GUI.RELEASE, gr.GUI.PRESS] and es[1].delta == (0, 120)
    assert es[0].modifier == ["Shift"] and not gui.is_pressed("a")
    gui.push_event(gr.GUI.PRESS, gr.GUI.EXIT)
    assert not gui.running
    with pytest.raises(ValueError):
        gui.push_event("Jump", "a")


def test_widgets_values_and_clicks():
    gui = gr.GUI("t", res=(320, 100), show_gui=False)
    s = gui.slider("speed", 0, 10, 1)
    lab = gui.label("n")
    name = gui.button("go")
    assert s.value == 0.0 and lab.value == 0 and name == "WidgetButton_go"
    s.value = 3
    lab.value = 7
    assert s.value == 3.0 and isinstance(s.value, float) and lab.value == 7
    gui.push_event(gr.GUI.PRESS, gr.GUI.LMB, (0.99, 1 - 2.5 * 22 / 100))  # the third row: the button
    assert any(e.key == name for e in gui.get_events(gr.GUI.PRESS))
    gui.push_event(gr.GUI.PRESS, gr.GUI.LMB, (1 - 160 / 320 * 0.5, 1 - 0.5 * 22 / 100))  # half way on the slider
    assert s.value == 5.0
    gui.show()  # the widgets draw without error


def test_wrong_arguments_raise_before_drawing():
    gui = gr.GUI("t", res=32, show_gui=False)
    with pytest.raises(ValueError):
        gui.circles(np.zeros((3, 3), np.float32))
    with pytest.raises(ValueError):
        gui.circles(np.zeros((3, 2), np.float32), color=np.zeros(2))
    with pytest.raises(ValueError):
        gui.circles(np.zeros((3, 2), np.float32), color=0.5)
    with pytest.raises(ValueError):
        gui.lines(np.zeros((3, 2)), np.zeros((2, 2)))
    with pytest.raises(ValueError):
        gui.circles(np.zeros((2, 2)), palette=[1, 2], palette_indices=[0, 2])
    with pytest.raises(ValueError):
        gr.GUI("t", res=(0, 4), show_gui=False)
    gui.show()  # nothing of the failed calls was recorded


def test_vector_field_and_contour():
    gui = gr.GUI("t", res=(32, 16), show_gui=False)
    v = gr.Vector.field(2, gr.f32, shape=(32, 16))
    v.fill(1.0)
    gui.vector_field(v, arrow_spacing=8)  # arrows pointing up-right from a grid of 4 x 2 origins
    lit = gui.get_image()[:, :, 0] > 0.4
    assert lit[0:2, 0:2].any() and lit[8:10, 0:2].any() and not lit[:, 14:].any()
    gui.show()
    cm = pytest.importorskip("matplotlib.cm")
    s = gr.field(gr.f32, shape=(8, 4))
    s.from_numpy(np.arange(32, dtype=np.float32).reshape(8, 4))
    gui.contour(s, normalize=True)  # resampled to 32 x 16, the range mapped to [0, 1], colours of 'plasma'
    img = gui.get_image()
    for corner, t in (((0, 0), 0.0), ((-1, -1), 1.0)):
        assert np.abs(img[corner][:3] - np.floor(np.array(cm.plasma(t)[:3]) * 255) / 255).max() < 1e-6


def test_in_a_notebook_without_a_window_frames_show_inline_in_one_image(monkeypatch):
    import sys
    import types

    from gfxrt.gui import gui as gui_module
    shown = []

    class Handle:
        def update(self, image):
            shown.append(("update", image.data))

    def display(image, display_id=False):
        shown.append(("display", image.data))
        return Handle()
    fake = types.ModuleType("IPython.display")
    fake.Image = lambda data: types.SimpleNamespace(data=data)
    fake.display = display
    ipython = types.ModuleType("IPython")
    ipython.display = fake
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", fake)
    monkeypatch.setattr(gui_module, "in_notebook", lambda: True)
    monkeypatch.setattr(gui_module, "open_window", lambda *a: None)
    gui = gr.GUI("t", res=(8, 4))
    gui.circle((0.5, 0.5), radius=2)
    gui.show()
    gui.show()
    assert [k for k, _ in shown] == ["display", "update"] and shown[0][1].startswith(b"\x89PNG")
    assert gr.GUI("t", res=4, show_gui=False)._inline is None


@pytest.mark.parametrize("fmt", ["rgba8unorm", "bgra8unorm", "rgba8unorm-srgb"])
def test_a_window_surface_shows_the_frames_bytes_scaled_to_its_size(fmt):
    """What a window presents (gfxrt/gui/window.py's Presenter), drawn onto a texture of the
    surface's format and twice the frame's size: each frame pixel becomes a 2 x 2 block of the
    same bytes (an -srgb surface gets them decoded, and encodes them back)."""
    import wgpu

    from gfxrt.gui.window import Presenter
    f = Frame(8, 4)
    img = np.random.default_rng(3).integers(0, 256, (4, 8, 4), dtype=np.uint8)
    img[..., 3] = 255
    f.write(img)
    target = f.device.create_texture(size=(16, 8, 1), format=fmt,
                                     usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC)
    Presenter(f, fmt).draw(target)
    raw = f.device.queue.read_texture({"texture": target, "mip_level": 0, "origin": (0, 0, 0)},
                                      {"offset": 0, "bytes_per_row": 256, "rows_per_image": 8}, (16, 8, 1))
    out = np.frombuffer(raw, np.uint8).reshape(8, 256)[:, :64].reshape(8, 16, 4)
    if fmt.startswith("bgra"):
        out = out[..., [2, 1, 0, 3]]
    want = img.repeat(2, axis=0).repeat(2, axis=1)
    assert np.abs(out.astype(int) - want).max() <= 1


def test_colour_conversions_are_taichis():
    from gfxrt.gui.colors import hex_to_rgb, rgb_to_hex
    assert hex_to_rgb(0xFF8000) == (1.0, 128 / 255, 0.0)
    assert rgb_to_hex((1.0, 0.5, 0.0)) == 0xFF7F00  # truncated, as ti.rgb_to_hex
    assert (rgb_to_hex(np.array([[1.0, 0.0], [0.0, 1.0], [0.2, 2.0]])) == [0xFF0033, 0x00FFFF]).all()
