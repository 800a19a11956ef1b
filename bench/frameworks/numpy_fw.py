"""numpy: the CPU reference (single-threaded elementwise, BLAS for matmul)."""
from __future__ import annotations

import platform

import numpy as np

from .base import Framework, Unavailable


class Numpy(Framework):
    """numpy on the host CPU."""

    def start(self) -> None:
        if self.requested not in (None, "cpu"):
            raise Unavailable(f"numpy runs on the CPU only, not {self.requested!r}")
        self.mod = np
        self.backend = "cpu"
        self.version = np.__version__
        self.device = platform.processor() or platform.machine()

    def to_device(self, a, needs_grad=False):
        return np.array(a, copy=True)

    def to_numpy(self, x):
        return np.array(x, copy=True)
