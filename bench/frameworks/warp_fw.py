"""NVIDIA Warp: cuda:0 when available (timed with CUDA events), else the CPU."""
from __future__ import annotations

import numpy as np

from .base import Framework, Unavailable


class _WarpEvents:
    def __init__(self, wp, device):
        self.wp, self.device = wp, device
        self.seconds = None

    def __enter__(self):
        self.a = self.wp.Event(self.device, enable_timing=True)
        self.b = self.wp.Event(self.device, enable_timing=True)
        self.wp.record_event(self.a)
        return self

    def __exit__(self, *exc):
        self.wp.record_event(self.b)
        self.wp.synchronize_event(self.b)
        self.seconds = self.wp.get_event_elapsed_time(self.a, self.b) / 1e3


class Warp(Framework):
    """NVIDIA Warp on cuda:0 or the CPU."""

    def start(self) -> None:
        try:
            import warp as wp
        except ImportError as e:
            raise Unavailable(f"warp is not installed ({e})") from None
        wp.config.quiet = True
        wp.init()
        want = self.requested
        if want in (None, "auto"):
            want = "cuda" if wp.is_cuda_available() else "cpu"
        if want == "cuda" and not wp.is_cuda_available():
            raise Unavailable("warp has no CUDA device here")
        if want not in ("cuda", "cpu"):
            raise Unavailable(f"warp backend {want!r} is not benchmarked (cuda or cpu)")
        self.mod = wp
        self.dev = wp.get_device("cuda:0" if want == "cuda" else "cpu")
        self.backend = want
        self.version = wp.__version__
        self.device = self.dev.name

    def sync(self) -> None:
        self.mod.synchronize_device(self.dev)

    def device_timer(self):
        if self.backend != "cuda":
            return None
        return lambda: _WarpEvents(self.mod, self.dev)

    def to_device(self, a, needs_grad=False):
        return self.mod.array(np.ascontiguousarray(a), device=self.dev, requires_grad=needs_grad)

    def to_numpy(self, x):
        return x.numpy().copy()
