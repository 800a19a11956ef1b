"""Taichi and Quadrants (Taichi's fork): the same API under `ti` / `qd`. Default backend: CUDA
when available, else Vulkan, else the CPU (x64). Quadrants starts with its adstack enabled
(`ad_stack_experimental_enabled`), which its Vulkan backend needs for loops in gradients."""
from __future__ import annotations

import numpy as np

from .base import Framework, Unavailable


class TaichiLike(Framework):
    """Taichi or Quadrants (`kind` names the module) on CUDA, Vulkan or the CPU."""

    def start(self) -> None:
        name = self.kind
        try:
            mod = __import__(name)
        except ImportError as e:
            raise Unavailable(f"{name} is not installed ({e})") from None
        archs = {"cuda": mod.cuda, "vulkan": mod.vulkan, "cpu": mod.cpu, "x64": mod.x64,
                 "opengl": getattr(mod, "opengl", None), "metal": getattr(mod, "metal", None)}
        want = self.requested
        tries = [want] if want not in (None, "auto") else ["cuda", "vulkan", "cpu"]
        kw = {"ad_stack_experimental_enabled": True} if name == "quadrants" else {}
        last = ""
        for t in tries:
            arch = archs.get(t)
            if arch is None:
                raise Unavailable(f"{name} has no backend {t!r}")
            try:
                mod.init(arch=arch, log_level=mod.WARN, **kw)
            except Exception as e:  # noqa: BLE001 - a backend that fails to start is skipped
                last = f"{type(e).__name__}: {e}"
                continue
            got = str(mod.lang.impl.current_cfg().arch).split(".")[-1]
            if got == t or (t == "cpu" and got in ("x64", "arm64")):
                break
            last = f"asked for {t}, {name} started on {got}"
            mod.reset()
        else:
            raise Unavailable(f"{name} could not start on {'/'.join(tries)}: {last}")
        self.mod = mod
        self.backend = got
        self.version = ".".join(str(v) for v in mod.__version__)
        self.device = self._device_name(got)
        self.details = {"adstack": bool(kw)}

    def _device_name(self, arch: str) -> str:
        if arch == "cuda":
            try:
                import torch
                return torch.cuda.get_device_name(0)
            except Exception:  # noqa: BLE001 - the name is informative only
                return "cuda"
        if arch == "vulkan":
            try:
                import wgpu
                for a in wgpu.gpu.enumerate_adapters_sync():
                    if str(a.info.get("backend_type", "")).lower() == "vulkan":
                        return a.info.get("device", "vulkan")
            except Exception:  # noqa: BLE001
                pass
        return arch

    def sync(self) -> None:
        self.mod.sync()

    def to_device(self, a, needs_grad=False):
        a = np.ascontiguousarray(a)
        dt = {np.dtype(np.float32): self.mod.f32, np.dtype(np.int32): self.mod.i32}[a.dtype]
        x = self.mod.ndarray(dt, shape=a.shape, needs_grad=needs_grad)
        x.from_numpy(a)
        return x

    def to_numpy(self, x):
        return x.to_numpy().copy()
