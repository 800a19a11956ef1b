"""`gr.lang.impl.current_cfg()` / `get_runtime()`: the options `gr.init()` was given, with
Taichi's attribute names (`arch`, `default_fp`, `default_ip`, `debug`, `ad_stack_size`)."""
from __future__ import annotations

from types import SimpleNamespace

from ..taichi.init import cfg

__all__ = ["current_cfg", "default_cfg", "get_runtime"]


def current_cfg():
    """Taichi's `ti.lang.impl.current_cfg()`: gr.cfg (gfxrt/taichi/init.py), whose `arch` is the
    gr.<arch> the adapter serves."""
    return cfg


default_cfg = current_cfg


def get_runtime():
    """Taichi's `ti.lang.impl.get_runtime()`, reduced to what user code reads: `default_fp`,
    `default_ip`, and `prog.config()` (the same as `current_cfg()`)."""
    cfg = current_cfg()
    return SimpleNamespace(default_fp=cfg.default_fp, default_ip=cfg.default_ip,
                           prog=SimpleNamespace(config=current_cfg))
