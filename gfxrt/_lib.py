"""`gr._lib.core`: the queries of Taichi's C++ module (`ti._lib.core`, imported by programs as
`from taichi._lib import core as _ti_core`) that programs make before choosing an arch or a
window, answered for this machine: `with_vulkan()` & co. say whether an adapter here serves that
arch (as `gr.lang.misc.is_arch_supported`), `GGUI_AVAILABLE` is True (gr.ui draws on any adapter,
off-screen where no display is found),
and Taichi's type predicates (`is_integral`, `is_signed`, `is_real`)."""
from __future__ import annotations

from types import SimpleNamespace

from .engine.arch import amdgpu, cuda, dx11, dx12, metal, opengl, vulkan
from .lang import is_arch_supported
from .taichi.compat import core as _types_core


def _with(arch):
    def query() -> bool:
        return is_arch_supported(arch)
    query.__name__ = query.__qualname__ = f"with_{arch.name}"
    query.__doc__ = f"Whether an adapter on this machine serves gr.{arch.name}."
    return query


core = SimpleNamespace(
    **{f"with_{a.name}": _with(a) for a in (vulkan, cuda, metal, opengl, dx11, dx12, amdgpu)},
    GGUI_AVAILABLE=True,
    is_integral=_types_core.is_integral, is_signed=_types_core.is_signed, is_real=_types_core.is_real,
)

__all__ = ["core"]
