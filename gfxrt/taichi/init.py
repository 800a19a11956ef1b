"""Taichi's `ti.init(...)` options that `gr.init` accepts beyond its own (their tables and
parsing: gfxrt/engine/init_options.py, below gfxrt/engine/context.py), and `gr.cfg`.

Taichi passes every field of its CompileConfig through `ti.init(**kwargs)`; programs set
many that mean nothing on WebGPU. gfxrt maps the few with a counterpart and accepts the
others without effect; a name Taichi does not know raises KeyError as in Taichi
("Unrecognized keyword argument(s) for ti.init: ...").
"""
from __future__ import annotations

from ..engine.context import _state, device
from ..engine.init_options import IGNORED, MAPPED, UnrecognizedOption, taichi_options  # noqa: F401  (below gfxrt/engine/context.py)


class Config:
    """`gr.cfg` (Taichi's `ti.cfg`): what the current gr.init() chose. `arch` is the gr.<arch>
    the adapter serves (gr.vulkan, gr.x64 for a CPU adapter, ...)."""

    @property
    def arch(self):
        return device().arch

    def __getattr__(self, name):
        options = _state["options"]
        if name in ("debug", "offline_cache", "adstack_size", "enable_fallback", "fast_math"):
            return getattr(options, name)
        if name in ("default_fp", "default_ip"):
            import gfxrt.compiler.types as t
            return getattr(t, getattr(options, name))
        if name == "random_seed":
            return _state.get("random_seed", 0)
        if name == "check_out_of_bound":
            return options.debug
        if name == "ad_stack_size":
            return options.adstack_size or 0
        raise AttributeError(f"gr.cfg has no option {name!r}")

    def __repr__(self):
        return f"gr.cfg({_state['options']})"


cfg = Config()


def current_cfg() -> Config:
    """Taichi's `ti.lang.impl.current_cfg()`: gr.cfg."""
    return cfg


class _Extension:
    """Taichi's `ti.extension` names (for `gr.is_extension_supported(arch, ext)`)."""

    sparse, quant, quant_basic, data64, adstack, bls, assertion, extfunc, packed, dynamic_index, mesh = (
        "sparse", "quant", "quant_basic", "data64", "adstack", "bls", "assertion", "extfunc", "packed",
        "dynamic_index", "mesh")


extension = _Extension()
_SUPPORTED = {"adstack", "bls", "assertion", "packed", "dynamic_index", "sparse"}  # bls, packed: accepted hints


def is_extension_supported(arch, ext) -> bool:
    """Whether gfxrt has Taichi's extension `ext` (`arch` is accepted for Taichi's signature: every
    arch runs the same WebGPU code). data64 (f64 / i64) depends on the current device."""
    name = getattr(ext, "name", ext)
    if name == "data64":
        return {"shader-f64", "shader-int64"} <= set(device().features)
    return name in _SUPPORTED


def _experimental():
    from types import SimpleNamespace

    from gfxrt.compiler.func import real_func
    return SimpleNamespace(real_func=real_func)  # Taichi 1.5-1.6 kept real_func here


experimental = _experimental()
