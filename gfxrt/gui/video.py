"""Taichi's ti.tools.VideoManager (gr.tools re-exports it): frames written as PNG files
(output_dir/frames/000000.png, ...), then an mp4 and/or a gif made from them with imageio
(mp4 through imageio-ffmpeg's own ffmpeg binary): `pip install gfxrt[gui]`."""
from __future__ import annotations

import os
import warnings

from .images import imwrite
from .png import read_png

FRAME_FN_TEMPLATE = "%06d.png"
FRAME_DIR = "frames"
NEEDS = "making videos needs imageio and imageio-ffmpeg: pip install gfxrt[gui] (or pip install imageio imageio-ffmpeg)"


def _imageio():
    try:
        import imageio.v2 as imageio
    except ImportError:
        raise ModuleNotFoundError(NEEDS) from None
    return imageio


class VideoManager:
    """Frames to PNG files, then mp4 / gif (Taichi's API: output_dir, video_filename, width,
    height, post_processor with .process(img), framerate, automatic_build: make the videos
    after frame 4, 8, 16, ...)."""

    def __init__(self, output_dir, video_filename=None, width=None, height=None, post_processor=None,
                 framerate=24, automatic_build=True):
        if (width is None) != (height is None):
            raise ValueError("give both width and height, or neither")
        self.width, self.height = width, height
        self.directory = str(output_dir)
        self.frame_directory = os.path.join(self.directory, FRAME_DIR)
        os.makedirs(self.frame_directory, exist_ok=True)
        self.video_filename = video_filename
        self.next_video_checkpoint = 4
        self.framerate = framerate
        self.post_processor = post_processor
        self.frame_counter = 0
        self.frame_fns: list[str] = []
        self.automatic_build = automatic_build
        self._warned = False

    def get_output_filename(self, suffix: str) -> str:
        name = os.path.splitext(self.video_filename)[0] if self.video_filename else "video"
        return os.path.join(self.directory, name + suffix)

    def get_frame_directory(self) -> str:
        return self.frame_directory

    def write_frame(self, img) -> None:
        """Write img[x, y] (numpy, or a gfxrt field) as the next frame (even sizes: an odd last
        row or column is dropped, as Taichi's, for the video encoder)."""
        if hasattr(img, "to_numpy"):
            img = img.to_numpy()
        if img.shape[0] % 2:
            img = img[:-1]
        if img.shape[1] % 2:
            img = img[:, :-1]
        if self.post_processor:
            img = self.post_processor.process(img)
        if self.width is None:
            self.width, self.height = img.shape[0], img.shape[1]
        fn = FRAME_FN_TEMPLATE % self.frame_counter
        self.frame_fns.append(fn)
        imwrite(img, os.path.join(self.frame_directory, fn))
        self.frame_counter += 1
        if self.automatic_build and self.frame_counter % self.next_video_checkpoint == 0:
            self.next_video_checkpoint *= 2
            try:
                self.make_video()
            except ModuleNotFoundError as e:
                if not self._warned:
                    warnings.warn(f"VideoManager: frames are written, videos are not: {e}", stacklevel=2)
                    self._warned = True

    def write_frames(self, images) -> None:
        for img in images:
            self.write_frame(img)

    def clean_frames(self) -> None:
        """Delete the frames this manager wrote."""
        for fn in self.frame_fns:
            path = os.path.join(self.frame_directory, fn)
            if os.path.exists(path):
                os.remove(path)

    def make_video(self, mp4=True, gif=True) -> None:
        """Make video.mp4 and / or video.gif in output_dir from the frames written so far."""
        if not (mp4 or gif) or not self.frame_fns:
            return
        imageio = _imageio()
        frames = [read_png(os.path.join(self.frame_directory, fn)) for fn in self.frame_fns]
        if mp4:
            try:
                import imageio_ffmpeg  # noqa: F401
            except ImportError:
                raise ModuleNotFoundError(NEEDS) from None
            with imageio.get_writer(self.get_output_filename(".mp4"), fps=self.framerate, codec="libx264",
                                    pixelformat="yuv420p", macro_block_size=1) as w:
                for f in frames:
                    w.append_data(f[:, :, :3])
        if gif:
            imageio.mimsave(self.get_output_filename(".gif"), [f[:, :, :3] for f in frames],
                            duration=1000 / self.framerate, loop=0)
