"""`gr.lang.impl.current_cfg()`: the corner of Taichi's `ti.lang` that programs reach into."""
from __future__ import annotations

from types import SimpleNamespace

from .taichi_init import current_cfg

impl = SimpleNamespace(current_cfg=current_cfg, default_cfg=current_cfg)

__all__ = ["impl"]
