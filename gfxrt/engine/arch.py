"""Taichi's `arch=` for `gr.init`: backend names mapped onto WebGPU adapters.

gfxrt runs every kernel through WebGPU, so an "arch" only chooses an adapter:

    gr.cpu, gr.x64, gr.arm64    a CPU adapter (lavapipe / llvmpipe)
    gr.vulkan, gr.metal,        an adapter of that backend (a GPU before a CPU driver);
    gr.dx12, gr.opengl          gr.dx11 asks for D3D12 (WebGPU has no D3D11), gr.gles for OpenGL
    gr.cuda, gr.amdgpu          a GPU of that vendor over whatever backend it has (Vulkan on
                                Linux), else any GPU: no CUDA code is generated
    gr.gpu                      Taichi's list [cuda, metal, opengl, vulkan, dx11]: the first
                                that a GPU adapter matches

A list tries its archs in order and takes only GPU adapters for GPU archs. When nothing
matches, gfxrt warns and falls back to the CPU like Taichi (`enable_fallback=False` raises
RuntimeError instead).
"""
from __future__ import annotations

import platform

from .messages import warn


class Arch:
    """A Taichi backend name (`gr.cuda`, `gr.vulkan`, ...); compares equal to its name."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __eq__(self, other):
        if isinstance(other, Arch):
            return self.name == other.name
        return isinstance(other, str) and other == self.name

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return f"gr.{self.name}"

    __str__ = __repr__


_HOST = "arm64" if platform.machine().lower() in ("arm64", "aarch64") else "x64"
ARCHS = {n: Arch(n) for n in ("x64", "arm64", "cuda", "amdgpu", "metal", "opengl", "gles", "vulkan",
                              "dx11", "dx12", "cc", "wasm")}
x64 = x86_64 = ARCHS["x64"]
arm64 = ARCHS["arm64"]
cpu = ARCHS[_HOST]                     # as in Taichi: the host's CPU arch
cuda, amdgpu, metal, opengl, gles = (ARCHS[n] for n in ("cuda", "amdgpu", "metal", "opengl", "gles"))
vulkan, dx11, dx12 = ARCHS["vulkan"], ARCHS["dx11"], ARCHS["dx12"]
gpu = [cuda, metal, opengl, vulkan, dx11]  # Taichi's order
_CPU_NAMES = ("x64", "arm64", "cc", "wasm")
_BACKEND = {"vulkan": "vulkan", "metal": "metal", "opengl": "opengl", "gles": "opengl", "dx11": "d3d12",
            "dx12": "d3d12"}
_VENDOR = {"cuda": (0x10DE, "nvidia"), "amdgpu": (0x1002, "amd")}


def names(arch) -> tuple[str, ...] | None:
    """`arch` (an Arch, its name, or a list of them) as a tuple of names; None for no arch."""
    if arch is None:
        return None
    items = arch if isinstance(arch, (list, tuple)) else [arch]
    out = []
    for a in items:
        if isinstance(a, (list, tuple)):
            out.extend(names(a) or ())
            continue
        n = a.name if isinstance(a, Arch) else a
        if n == "x86_64":
            n = "x64"
        if n == "cpu":
            n = _HOST
        if n == "gpu":
            out.extend(x.name for x in gpu)
            continue
        if n not in ARCHS:
            raise ValueError(f"unknown arch {a!r}; use one of gr.cpu, gr.gpu, "
                             + ", ".join(f"gr.{k}" for k in ARCHS))
        out.append(n)
    return tuple(out)


def _kind(a) -> str:
    return str(a.info.get("adapter_type", "")).lower()


def _backend(a) -> str:
    return str(a.info.get("backend_type", "")).lower()


def _matches(name: str, a, strict: bool) -> bool:
    """Whether adapter `a` serves arch `name`. strict (a list of archs): GPU archs take GPUs only."""
    is_cpu = _kind(a) == "cpu"
    if name in _CPU_NAMES:
        return is_cpu
    if name in _VENDOR:
        vid, vname = _VENDOR[name]
        vendor = a.info.get("vendor_id") == vid or vname in str(a.info.get("vendor", "")).lower() \
            or vname in a.summary.lower()
        return not is_cpu and (vendor or not strict)
    return _backend(a) == _BACKEND[name] and not (strict and is_cpu)


def _rank(adapters):
    """Adapters best first: discrete GPU, integrated, virtual, CPU; OpenGL after the others."""
    kind = {"discretegpu": 0, "integratedgpu": 1, "virtualgpu": 2, "cpu": 3}
    return sorted(adapters, key=lambda a: (_backend(a) == "opengl",
                                           kind.get(str(a.info.get("adapter_type", "")).lower(), 4)))


def choose(arch_names: tuple[str, ...], adapters, enable_fallback: bool = True):
    """(adapter, the arch it serves) for the requested archs, falling back to a CPU adapter."""
    strict = len(arch_names) > 1
    for name in arch_names:
        hits = [a for a in adapters if _matches(name, a, strict)]
        if hits:
            return _rank(hits)[0], ARCHS[name]
    if len(arch_names) == 1 and arch_names[0] in _VENDOR:  # no such vendor: any GPU will do
        hits = [a for a in adapters if _kind(a) != "cpu"]
        if hits:
            return _rank(hits)[0], ARCHS[arch_names[0]]
    shown = ", ".join(f"gr.{n}" for n in arch_names)
    if not enable_fallback:
        raise RuntimeError(f"arch [{shown}] is not supported: no matching adapter (found: "
                           + "; ".join(a.summary for a in adapters) + ")")
    cpus = [a for a in adapters if _kind(a) == "cpu"]
    pick = _rank(cpus or adapters)[0]
    warn(f"arch [{shown}] is not supported here, falling back to {pick.summary}")  # at the user's line
    return pick, ARCHS[_HOST] if _kind(pick) == "cpu" else of_adapter(pick)


def of_adapter(a) -> Arch:
    """The arch that describes an adapter chosen without `arch=`."""
    if _kind(a) == "cpu":
        return ARCHS[_HOST]
    return ARCHS.get({"d3d12": "dx12"}.get(_backend(a), _backend(a)), vulkan)


__all__ = ["Arch", "cpu", "gpu", "x64", "x86_64", "arm64", "cuda", "amdgpu", "metal", "opengl", "gles",
           "vulkan", "dx11", "dx12"]
