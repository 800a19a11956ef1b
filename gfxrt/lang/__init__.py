"""`gr.lang.impl.current_cfg()` (gfxrt/lang/impl.py), `gr.lang.misc.is_arch_supported(arch)`,
`gr.lang.exception` (Taichi's exception names): the corners of Taichi's `ti.lang` that programs and
test helpers reach into."""
from __future__ import annotations

from types import SimpleNamespace

from ..engine import arch as archs
from ..engine.arch import cpu
from ..engine.device import _adapters
from ..taichi.init import current_cfg
from . import exception, impl, ops


def is_arch_supported(arch, use_gles: bool = False) -> bool:
    """Whether an adapter on this machine serves `arch` (no fallback)."""
    try:
        archs.choose(archs.names(arch), _adapters(), enable_fallback=False)
    except RuntimeError:
        return False
    return True


def get_host_arch_list() -> list:
    """Taichi's [the host CPU arch]."""
    return [cpu]


misc = SimpleNamespace(is_arch_supported=is_arch_supported, get_host_arch_list=get_host_arch_list)

__all__ = ["exception", "impl", "ops", "misc", "current_cfg", "is_arch_supported", "get_host_arch_list"]
