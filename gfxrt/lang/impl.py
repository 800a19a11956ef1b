"""`gr.lang.impl.current_cfg()` / `get_runtime()`: the options `gr.init()` was given, with
Taichi's attribute names (`arch`, `default_fp`, `default_ip`, `debug`, `ad_stack_size`)."""
from __future__ import annotations

from types import SimpleNamespace


def current_cfg():
    """A snapshot of the current configuration (Taichi's `ti.lang.impl.current_cfg()`).
    `arch` is gfxrt's arch constant (`gr.vulkan`) where gfxrt defines one, else the string
    'vulkan' (gfxrt runs through WebGPU on Vulkan, Metal or DX12)."""
    import gfxrt
    from compiler import types as T

    from .. import context
    o = context._state["options"]
    return SimpleNamespace(arch=getattr(gfxrt, "vulkan", "vulkan"), default_fp=getattr(T, o.default_fp),
                           default_ip=getattr(T, o.default_ip), debug=o.debug, ad_stack_size=o.adstack_size or 0,
                           offline_cache=o.offline_cache)


def get_runtime():
    """Taichi's `ti.lang.impl.get_runtime()`, reduced to what user code reads: `default_fp`,
    `default_ip`, and `prog.config()` (the same as `current_cfg()`)."""
    cfg = current_cfg()
    return SimpleNamespace(default_fp=cfg.default_fp, default_ip=cfg.default_ip,
                           prog=SimpleNamespace(config=current_cfg))
