"""WGSL of textures (compiler/textures.py): the TEXEL expression, the TEXSTORE statement, the
declarations of a kernel's texture slots and sampler, their bindings and the features they need.

Texture slots are bound after the storage buffers, in the order of `ir.textures`, then the sampler
(one per kernel, when a task samples): bilinear filtering and repeat addressing, Taichi's choice
on Vulkan (gfxrt/data/texture.py creates it)."""
from __future__ import annotations

from ..ir import KernelIR, Node, Op, walk_task
from ..spec import BindingSpec
from ..textures import TextureSlot, storage_access
from ..types import f32

SAMPLER = "gr_sampler_"


def tex_name(slot: TextureSlot) -> str:
    return f"t{slot.source}_{''.join(c if c.isalnum() else '_' for c in slot.name)}"


def _coords(args: list[str], ndim: int, t: str) -> str:
    return args[0] if ndim == 1 else f"vec{ndim}<{t}>({', '.join(args[:ndim])})"


def texel(e, n: Node, args: list[str]) -> str:
    """One channel of a texture read, as f32."""
    a = n.attr
    slot: TextureSlot = e.textures[a.tex]
    name, c = tex_name(slot), "xyzw"[a.channel]
    if a.method == "sample":
        return f"textureSampleLevel({name}, {SAMPLER}, {_coords(args, slot.ndim, 'f32')}, {args[slot.ndim]}).{c}"
    level = f", {args[slot.ndim]}" if a.method == "fetch" else ""
    v = f"textureLoad({name}, {_coords(args, slot.ndim, 'i32')}{level}).{c}"
    return v if slot.fmt.kind == "float" else f"f32({v})"


def texstore(e, n: Node, ind: str, out: list[str]) -> None:
    slot: TextureSlot = e.textures[n.attr]
    args = [e.expr(a) for a in n.args]
    t = slot.fmt.sample_type
    out.append(f"{ind}textureStore({tex_name(slot)}, {_coords(args, slot.ndim, 'i32')}, "
               f"vec4<{t}>({', '.join(args[slot.ndim:])}));{e.comment(n)}")


def usage(ir: KernelIR) -> dict[str, tuple[bool, bool, bool]]:
    """(read, written, sampled) of each texture slot by name."""
    out = {s.name: [False, False, False] for s in ir.textures}
    for t in ir.tasks:
        for n in walk_task(t):
            if n.op is Op.TEXEL:
                out[n.attr.tex][0] = True
                if n.attr.method == "sample":
                    out[n.attr.tex][2] = True
            elif n.op is Op.TEXSTORE:
                out[n.attr][1] = True
    return {k: tuple(v) for k, v in out.items()}


def declarations(ir: KernelIR, first: int) -> list[str]:
    """The WGSL declarations of the texture slots (bindings from `first`) and the sampler."""
    use = usage(ir)
    out, k = [], first
    for s in ir.textures:
        r, w, _ = use[s.name]
        out.append(f"@group(0) @binding({k}) var {tex_name(s)}: {s.wgsl_type(storage_access(r, w))};")
        k += 1
    if any(u[2] for u in use.values()):
        out.append(f"@group(0) @binding({k}) var {SAMPLER}: sampler;")
    return out


def bindings(ir: KernelIR, first: int) -> list[BindingSpec]:
    """The BindingSpecs of the texture slots and the sampler; `texture` says how each binds:
    ('sampled', dims, sample type, filterable), ('storage', dims, format, access) or ('sampler',)."""
    use = usage(ir)
    out, k = [], first
    for s in ir.textures:
        r, w, sampled = use[s.name]
        if s.storage:
            how = ("storage", s.ndim, s.fmt.wgpu, storage_access(r, w), s.lod)
        else:
            how = ("sampled", s.ndim, s.fmt.sample_type, sampled)
        out.append(BindingSpec(k, s.name, f32, "texture", s.source, read_only=not w, written=w, texture=how))
        k += 1
    if any(u[2] for u in use.values()):
        out.append(BindingSpec(k, "gr.sampler", f32, "sampler", None, read_only=True, texture=("sampler",)))
    return out


def features(ir: KernelIR) -> set[str]:
    """Device features the kernel's textures need: float32-filterable to sample a 32-bit float
    texture; texture-adapter-specific-format-features to read and write a storage texture of a
    format other than r32f / r32i / r32u."""
    use = usage(ir)
    out = set()
    for s in ir.textures:
        r, w, sampled = use[s.name]
        if sampled and s.fmt.feature:
            out.add(s.fmt.feature)
        if s.storage and r and w and not s.fmt.wgpu.startswith("r32"):
            out.add("texture-adapter-specific-format-features")
    return out


__all__ = ["texel", "texstore", "declarations", "bindings", "features", "usage", "tex_name", "SAMPLER"]
