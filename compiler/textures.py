"""Textures as kernel arguments (Taichi's `ti.types.texture` / `ti.types.rw_texture`), the compiler's
side: the formats, the argument annotations and a kernel's texture slots.

A texture argument is bound as a WebGPU texture: `texture(num_dimensions)` as a sampled texture
(`texture_2d<f32>`; `sample_lod` filters through one sampler per kernel, bilinear with repeat
addressing as Taichi's Vulkan backend does; `fetch` reads one texel of a mip level), and
`rw_texture(num_dimensions, fmt, lod)` as a storage texture of that format (`load`, `store`; its
access is what the kernel does: read, write or read_write). Every read gives a vector of 4 f32
(missing channels read as 0, alpha as 1), as in Taichi. In the IR each channel of a read is one
TEXEL expression and a store one TEXSTORE statement (compiler/ir.py); the code generator
declares the slots after the storage buffers.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import CompileError


@dataclass(frozen=True)
class Format:
    """A texel format: Taichi's name, WebGPU's name, channels and how a channel reads
    ('float' for float and normalized formats, 'sint', 'uint'); `bits` per channel."""

    name: str
    wgpu: str
    channels: int
    kind: str
    bits: int

    @property
    def numpy(self) -> str:
        """The numpy dtype of one channel as stored (normalized formats: the integers)."""
        if self.wgpu.endswith("float"):
            return f"float{self.bits}"
        return f"{'int' if self.kind == 'sint' else 'uint'}{self.bits}"

    @property
    def sample_type(self) -> str:
        """WGSL's texel type of a sampled texture of this format."""
        return {"float": "f32", "sint": "i32", "uint": "u32"}[self.kind]

    @property
    def feature(self) -> str | None:
        """The device feature a texture of this format needs to be filtered (None: none)."""
        return "float32-filterable" if self.wgpu.endswith("32float") else None


def _formats() -> dict[str, Format]:
    out = {}
    chans = {"r": 1, "rg": 2, "rgba": 4}
    for prefix, n in chans.items():
        for bits in (8, 16, 32):
            for suffix, kind, wsuffix in (("", "float", "unorm"), ("u", "uint", "uint"), ("i", "sint", "sint"),
                                          ("f", "float", "float")):
                if (bits == 32 and suffix == "") or (bits == 8 and suffix == "f"):
                    continue  # Taichi has no r32 (unorm) and no r8f
                name = f"{prefix}{bits}{suffix}"
                out[name] = Format(name, f"{prefix}{bits}{wsuffix}", n, kind, bits)
    return out


FORMATS: dict[str, Format] = _formats()
# WGSL's storage texel formats (a rw_texture's fmt): WebGPU's core set; reading and writing one in a
# kernel needs the adapter's `texture-adapter-specific-format-features` except for the r32 formats
STORAGE_FORMATS = frozenset({"rgba8unorm", "rgba8uint", "rgba8sint", "rgba16uint", "rgba16sint", "rgba16float",
                             "r32uint", "r32sint", "r32float", "rg32uint", "rg32sint", "rg32float", "rgba32uint",
                             "rgba32sint", "rgba32float"})


def format_of(fmt) -> Format:
    """The Format of Taichi's `ti.Format.<name>` (gr.Format members and their names)."""
    name = getattr(fmt, "name", fmt)
    f = FORMATS.get(name) if isinstance(name, str) else None
    if f is None:
        if isinstance(name, str) and name.startswith("rgb") and not name.startswith("rgba"):
            raise ValueError(f"texture format {name!r}: WebGPU has no 3-channel texture formats; use the rgba "
                             f"format of the same type (gr.Format.rgba{name[3:]})")
        raise ValueError(f"unknown texture format {fmt!r}; gr.Format lists them (r32f, rgba8, rgba16f, ...)")
    return f


def _check_dims(n) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n not in (1, 2, 3):
        raise CompileError(f"num_dimensions of a texture is 1, 2 or 3, got {n!r}")
    return n


class TextureType:
    """`gr.types.texture(num_dimensions)`: a sampled texture argument (`sample_lod`, `fetch`)."""

    def __init__(self, num_dimensions: int):
        self.num_dimensions = _check_dims(num_dimensions)

    def __repr__(self) -> str:
        return f"gr.types.texture(num_dimensions={self.num_dimensions})"


class RWTextureType:
    """`gr.types.rw_texture(num_dimensions, fmt, lod=0)`: a storage texture argument of format
    `fmt` (`load`, `store`) at mip level `lod`."""

    def __init__(self, num_dimensions: int, fmt=None, lod: int = 0):
        self.num_dimensions = _check_dims(num_dimensions)
        if fmt is None:
            raise CompileError("fmt is required for rw_texture type")
        self.fmt = format_of(fmt)
        if self.fmt.wgpu not in STORAGE_FORMATS:
            raise CompileError(f"rw_texture format {self.fmt.name!r} ({self.fmt.wgpu}) cannot be a storage texture "
                               "on WebGPU; use r32f / r32i / r32u, rg32*, rgba8, rgba8u / rgba8i, rgba16u / i / f "
                               "or rgba32*")
        if isinstance(lod, bool) or not isinstance(lod, int) or lod < 0:
            raise CompileError(f"lod of a rw_texture is a mip level, a non-negative int, got {lod!r}")
        self.lod = lod

    def __repr__(self) -> str:
        return f"gr.types.rw_texture(num_dimensions={self.num_dimensions}, fmt={self.fmt.name}, lod={self.lod})"


@dataclass(frozen=True)
class TextureSlot:
    """A texture argument of a kernel: argument `source`, `ndim` axes, Format `fmt`; `storage`
    (a rw_texture, mip level `lod`) or sampled."""

    name: str
    source: int
    ndim: int
    fmt: Format
    storage: bool
    lod: int = 0

    def wgsl_type(self, access: str) -> str:
        dim = f"{self.ndim}d"
        if self.storage:
            return f"texture_storage_{dim}<{self.fmt.wgpu}, {access}>"
        return f"texture_{dim}<{self.fmt.sample_type}>"


def storage_access(reads: bool, writes: bool) -> str:
    """The WGSL access of a storage texture a kernel reads and / or writes."""
    return "read_write" if reads and writes else "read" if reads else "write"


__all__ = ["Format", "FORMATS", "STORAGE_FORMATS", "format_of", "TextureType", "RWTextureType", "TextureSlot",
           "storage_access"]
