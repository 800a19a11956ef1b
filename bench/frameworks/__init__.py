"""Framework adapters: how each framework is started, synchronized, timed and described.

A framework spec is `kind` or `kind:backend` (e.g. `taichi:vulkan`, `warp:cpu`, `torch:cuda`);
without a backend each picks its GPU backend when there is one, else its CPU backend.
`python -m bench` runs default_peers() (DEFAULT_PEERS less the CUDA-only ones on a machine
without CUDA) unless told otherwise (`--peers`, `--no-peers`).
"""
from __future__ import annotations

import shutil

from .base import Framework, Unavailable

KINDS = ("gfxrt", "numpy", "torch", "taichi", "quadrants", "warp")
# The default peers: the kernel languages on gfxrt's own driver (Taichi and Quadrants forced onto
# Vulkan: the like-for-like comparison, also on lavapipe), numpy and torch (CUDA where there is
# one, else the CPU reference), and Warp on CUDA only (on a machine without CUDA it would run
# natively on the CPU: neither like for like nor the reference; `--peers warp:cpu` asks for it).
DEFAULT_PEERS = ("numpy", "torch", "taichi:vulkan", "quadrants:vulkan", "warp:cuda")
CUDA_ONLY = ("warp:cuda",)  # default peers left out where there is no NVIDIA GPU (nothing to skip, nothing to say)


def default_peers(cuda: bool | None = None) -> tuple[str, ...]:
    """DEFAULT_PEERS for this machine: without CUDA (no `nvidia-smi`, the test dev.sh uses to
    install Warp) the CUDA-only ones are not asked for, so the run does not report them skipped."""
    if cuda is None:
        cuda = shutil.which("nvidia-smi") is not None
    return DEFAULT_PEERS if cuda else tuple(p for p in DEFAULT_PEERS if p not in CUDA_ONLY)


def parse_spec(spec: str) -> tuple[str, str | None]:
    """`taichi:vulkan` -> ("taichi", "vulkan"); `numpy` -> ("numpy", None)."""
    kind, _, backend = spec.strip().partition(":")
    kind = kind.lower()
    if kind not in KINDS:
        raise ValueError(f"unknown framework {kind!r}: one of {', '.join(KINDS)}")
    return kind, (backend.lower() or None)


def make(spec: str) -> Framework:
    """An (unstarted) adapter for a framework spec."""
    kind, backend = parse_spec(spec)
    if kind == "gfxrt":
        from .gfxrt_fw import Gfxrt as cls
    elif kind == "numpy":
        from .numpy_fw import Numpy as cls
    elif kind == "torch":
        from .torch_fw import Torch as cls
    elif kind in ("taichi", "quadrants"):
        from .taichi_fw import TaichiLike as cls
    else:
        from .warp_fw import Warp as cls
    return cls(kind, backend, spec)


__all__ = ["Framework", "Unavailable", "KINDS", "DEFAULT_PEERS", "default_peers", "parse_spec", "make"]
