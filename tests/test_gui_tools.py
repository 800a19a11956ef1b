"""gr.tools' image functions and VideoManager (gfxrt/gui/images.py, video.py), as Taichi's ti.tools."""
from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest

import gfxrt as gr
from gfxrt.gui import images, video
from gfxrt.gui.png import read_png


def test_imwrite_imread_round_trip_in_taichis_orientation(tmp_path):
    img = np.random.default_rng(0).integers(0, 256, (7, 5, 3), dtype=np.uint8)  # img[x, y], y up
    images.imwrite(img, str(tmp_path / "a.png"))
    png = read_png(tmp_path / "a.png")
    assert png.shape == (5, 7, 3) and (png[0, :, :] == img[:, -1, :]).all()  # top row = largest y
    assert (images.imread(str(tmp_path / "a.png")) == img).all()
    f = gr.Vector.field(3, gr.f32, shape=(7, 5))
    f.from_numpy(img.astype(np.float32) / 255)
    images.imwrite(f, str(tmp_path / "b.png"))  # floats: floor(clip(v) * 255), as Taichi's
    assert np.abs(images.imread(str(tmp_path / "b.png")).astype(int) - img).max() <= 1
    gray = images.imread(str(tmp_path / "a.png"), channels=1)
    assert gray.shape == (7, 5, 1)
    assert images.imread(str(tmp_path / "a.png"), channels=4)[..., 3].min() == 255
    images.imwrite(np.full((4, 3), 65535, np.uint16), str(tmp_path / "c.png"))
    assert (images.imread(str(tmp_path / "c.png")) == 255).all()
    with pytest.raises(ValueError):
        images.imwrite(np.zeros((4, 3), np.int32), str(tmp_path / "d.png"))
    with pytest.raises(FileNotFoundError):
        images.imread(str(tmp_path / "missing.png"))


def test_imshow_without_a_display_warns_and_returns(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    if not sys.platform.startswith("linux"):
        pytest.skip("display detection by environment is Linux's")
    with pytest.warns(UserWarning, match="no display"):
        images.imshow(np.zeros((8, 8, 3), np.float32))


def test_video_manager_writes_frames_and_says_what_videos_need(tmp_path, monkeypatch):
    vm = video.VideoManager(str(tmp_path), framerate=10, automatic_build=False)
    for k in range(3):
        img = np.zeros((9, 6, 3), np.float32)  # odd width: the last column is dropped, as Taichi's
        img[k] = 1
        vm.write_frame(img)
    names = sorted(os.listdir(vm.get_frame_directory()))
    assert names == ["000000.png", "000001.png", "000002.png"]
    assert read_png(os.path.join(vm.get_frame_directory(), names[1])).shape == (6, 8, 3)
    monkeypatch.setitem(sys.modules, "imageio", None)  # not installed
    monkeypatch.setitem(sys.modules, "imageio.v2", None)
    with pytest.raises(ModuleNotFoundError, match="imageio"):
        vm.make_video()


@pytest.mark.skipif(importlib.util.find_spec("imageio") is None or importlib.util.find_spec("imageio_ffmpeg") is None,
                    reason="needs imageio and imageio-ffmpeg (pip install gfxrt[gui])")
def test_video_manager_makes_mp4_and_gif(tmp_path):
    vm = video.VideoManager(str(tmp_path), video_filename="run", framerate=10, automatic_build=False)
    for k in range(4):
        img = np.zeros((16, 8, 3), np.uint8)
        img[4 * k:4 * k + 4] = 255
        vm.write_frame(img)
    vm.make_video(mp4=True, gif=True)
    assert os.path.getsize(tmp_path / "run.mp4") > 0
    import imageio.v2 as imageio
    frames = imageio.mimread(tmp_path / "run.gif")
    assert len(frames) == 4 and frames[0].shape[:2] == (8, 16)
