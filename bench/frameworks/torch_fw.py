"""torch: CUDA when available (synchronized with torch.cuda.synchronize, timed with CUDA
events), else CPU."""
from __future__ import annotations

import numpy as np

from .base import Framework, Unavailable


class _CudaEvents:
    def __init__(self, torch):
        self.torch = torch
        self.seconds = None

    def __enter__(self):
        self.a = self.torch.cuda.Event(enable_timing=True)
        self.b = self.torch.cuda.Event(enable_timing=True)
        self.a.record()
        return self

    def __exit__(self, *exc):
        self.b.record()
        self.b.synchronize()
        self.seconds = self.a.elapsed_time(self.b) / 1e3


class Torch(Framework):
    """torch on CUDA or the CPU."""

    def start(self) -> None:
        try:
            import torch
        except ImportError as e:
            raise Unavailable(f"torch is not installed ({e})") from None
        want = self.requested
        if want in (None, "auto"):
            want = "cuda" if torch.cuda.is_available() else "cpu"
        if want == "cuda" and not torch.cuda.is_available():
            raise Unavailable("torch has no CUDA device here")
        if want not in ("cuda", "cpu"):
            raise Unavailable(f"torch backend {want!r} is not benchmarked (cuda or cpu)")
        self.mod = torch
        self.dev = torch.device(want)
        self.backend = want
        self.version = torch.__version__
        self.device = torch.cuda.get_device_name(0) if want == "cuda" else f"cpu ({torch.get_num_threads()} threads)"

    def sync(self) -> None:
        if self.backend == "cuda":
            self.mod.cuda.synchronize()

    def device_timer(self):
        if self.backend != "cuda":
            return None
        return lambda: _CudaEvents(self.mod)

    def to_device(self, a, needs_grad=False):
        t = self.mod.from_numpy(np.ascontiguousarray(a).copy()).to(self.dev)
        if needs_grad:
            t.requires_grad_(True)
        return t

    def to_numpy(self, x):
        return x.detach().cpu().numpy().copy()
