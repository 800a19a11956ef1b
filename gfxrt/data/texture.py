"""`gr.Texture` (Taichi's `ti.Texture`): a 1-, 2- or 3-D WebGPU texture that kernels read through
`gr.types.texture` (sampled: `sample_lod`, `fetch`) and read and write through
`gr.types.rw_texture` (storage: `load`, `store`). compiler/textures.py has the formats and the
compiler's side; docs/runtime.md "Textures" the user's.

Texel (i, j, k) of a texture of shape (w, h, d) is at x = i, y = j, z = k. The host copies
(`from_ndarray`, `from_field`, `from_numpy`, `to_numpy`) move the texels' bytes as Taichi's do:
the array's C-order elements fill the texture x fastest, so texel (x, y) holds element
`y * w + x` of the flattened array (for a square array of scalars that is `arr[y, x]`).
They are queue operations: recorded work is submitted first, so they land in program order.
"""
from __future__ import annotations

import enum

from gfxrt.compiler import npcompat
from gfxrt.compiler.npcompat import np
from gfxrt.compiler.textures import FORMATS, STORAGE_FORMATS, format_of

from ..engine import context

# Taichi's `ti.Format`: the texel formats by Taichi's names (r32f, rgba8, rgba16f, ...)
Format = enum.Enum("Format", [(name, name) for name in FORMATS], module=__name__, qualname="Format")
Format.__repr__ = lambda self: f"gr.Format.{self.name}"
Format.__doc__ = """Taichi's `ti.Format`: a texel format, by Taichi's name: `r`, `rg` or `rgba` channels, then 8, 16 or
32 bits each, then nothing (normalized: reads in [0, 1]), `u` / `i` (unsigned / signed integers) or `f` (float):
`gr.Format.r32f`, `gr.Format.rgba8`, `gr.Format.rgba16f`, `gr.Format.r32i`, ... (no r32 and no r8f, as in Taichi;
WebGPU has no 3-channel formats)."""


def _sampler(rt):
    """The device's texture sampler: bilinear, repeat addressing (Taichi's on Vulkan)."""
    s = getattr(rt.device, "_gfxrt_sampler", None)
    if s is None:
        s = rt.device._gfxrt_sampler = rt.device.create_sampler(
            address_mode_u="repeat", address_mode_v="repeat", address_mode_w="repeat",
            mag_filter="linear", min_filter="linear", mipmap_filter="nearest")
    return s


def _is_int(n) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) or npcompat.scalar_kind(n) in ("i", "u")


class Texture:
    """`gr.Texture(fmt, shape)`: a texture of `fmt` (a `gr.Format`, e.g. `gr.Format.r32f`) and shape
    (w,), (w, h) or (w, h, d), zero-filled. Pass it to a kernel parameter annotated
    `gr.types.texture(num_dimensions=n)` or `gr.types.rw_texture(num_dimensions=n, fmt=..., lod=0)`.
    Reads in kernels give vectors of 4 f32 (missing channels 0, alpha 1; normalized formats in
    [0, 1])."""

    __gfxrt_texture__ = True  # the compiler's mark: a texture reaches a kernel as an argument only

    def __init__(self, fmt, arr_shape):
        self.fmt = fmt if isinstance(fmt, Format) else Format[format_of(fmt).name]
        self.format = format_of(self.fmt.name)
        shape = (arr_shape,) if isinstance(arr_shape, int) else tuple(arr_shape)
        if not 1 <= len(shape) <= 3 or not all(_is_int(n) and n > 0 for n in shape):
            raise ValueError(f"a texture's shape is 1 to 3 positive ints, got {arr_shape!r}")
        self.shape = tuple(int(n) for n in shape)
        self.num_dims = len(self.shape)
        import wgpu
        self._rt = rt = context.runtime()
        limit = int(context.device().limits.get(f"max-texture-dimension-{self.num_dims}d", 2048) or 2048)
        if max(self.shape) > limit:
            raise ValueError(f"a {self.num_dims}-D texture of shape {self.shape}: {context.device().name} allows at "
                             f"most {limit} texels per axis (WebGPU limit max-texture-dimension-{self.num_dims}d)")
        need = "texture-format16bit-norm" if self.format.wgpu.endswith("16unorm") else None
        if need and need not in context.device().features:
            raise ValueError(f"texture format {self.format.name} ({self.format.wgpu}) needs the device feature "
                             f"{need!r}, which {context.device().name} lacks")
        usage = wgpu.TextureUsage.TEXTURE_BINDING | wgpu.TextureUsage.COPY_SRC | wgpu.TextureUsage.COPY_DST
        if self.format.wgpu in STORAGE_FORMATS:
            usage |= wgpu.TextureUsage.STORAGE_BINDING
        size = (*self.shape, *(1,) * (3 - self.num_dims))
        self._texture = rt.device.create_texture(size=size, format=self.format.wgpu, usage=usage,
                                                 dimension=f"{self.num_dims}d", mip_level_count=1)
        self._device = rt.device
        self._views: dict[tuple, object] = {}

    # -- binding ----------------------------------------------------------------------------
    def _spec(self) -> tuple:
        """What selects a kernel specialization: (Format, dims)."""
        return (self.format, self.num_dims)

    def view(self, level: int = 0):
        """The texture view of mip level `level` that kernels bind."""
        v = self._views.get(level)
        if v is None:
            if level != 0:
                raise ValueError(f"this texture has 1 mip level; a rw_texture annotated lod={level} cannot bind it")
            v = self._views[level] = self._texture.create_view(base_mip_level=level, mip_level_count=1)
            v._gfxrt_owner = self  # the view keeps its texture alive inside bind groups and graphs
        return v

    # -- host copies ------------------------------------------------------------------------
    def _texel_bytes(self) -> int:
        return self.format.channels * self.format.bits // 8

    def _host_shape(self) -> tuple:
        """The numpy shape of the texture's contents: the shape, then the channels if more than one."""
        return self.shape + ((self.format.channels,) if self.format.channels > 1 else ())

    def from_numpy(self, arr) -> None:
        """Copy a numpy array's elements into the texels (Taichi's raw copy, see the module doc): it has
        w*h*d elements (times the channels), of the format's channel type (float32 for r32f, uint8 for
        rgba8, float16 for rgba16f, ...)."""
        a = np.ascontiguousarray(arr, dtype=self.format.numpy)
        n = int(np.prod(self.shape)) * self.format.channels
        if a.size != n:
            raise ValueError(f"a {self.format.name} texture of shape {self.shape} holds {n} values, the array "
                             f"{a.size} (shape {np.shape(arr)})")
        rt = self._rt
        rt.check_alive()
        if rt.capture is not None:
            rt.capture.host_work("copying host data into a texture (from_numpy, from_ndarray, from_image)")
        rt.flush()  # earlier recorded work first: the queue keeps the order from here
        w = self.shape[0]
        h = self.shape[1] if self.num_dims > 1 else 1
        rt.queue.write_texture({"texture": self._texture, "mip_level": 0, "origin": (0, 0, 0)}, a.tobytes(),
                               {"offset": 0, "bytes_per_row": w * self._texel_bytes(), "rows_per_image": h},
                               (*self.shape, *(1,) * (3 - self.num_dims)))

    def to_numpy(self) -> np.ndarray:
        """The texels as a numpy array of `from_numpy`'s layout: shape (w, h, d)[, channels]."""
        rt = self._rt
        rt.check_alive()
        if rt.capture is not None:
            rt.capture.host_work("reading a texture back to the host (to_numpy, to_image)")
        rt.synchronize()
        w = self.shape[0]
        h = self.shape[1] if self.num_dims > 1 else 1
        data = rt.queue.read_texture({"texture": self._texture, "mip_level": 0, "origin": (0, 0, 0)},
                                     {"offset": 0, "bytes_per_row": w * self._texel_bytes(), "rows_per_image": h},
                                     (*self.shape, *(1,) * (3 - self.num_dims)))
        return np.frombuffer(bytes(data), dtype=self.format.numpy).reshape(self._host_shape()).copy()

    def from_ndarray(self, ndarray) -> None:
        """Load a gr.ndarray into the texture (Taichi's raw copy: see the module doc)."""
        self.from_numpy(ndarray.to_numpy())

    def from_field(self, field) -> None:
        """Load a field into the texture (Taichi's raw copy: see the module doc)."""
        self.from_numpy(field.to_numpy())

    def from_image(self, image) -> None:
        """Load a PIL image (Taichi's: a 2-D rgba8 texture of the image's size; texel (x, y) is the
        pixel in row y from the top, column x from the right, as Taichi's `image.rotate(90)` puts it;
        alpha 0)."""
        from PIL import Image
        if not isinstance(image, Image.Image):
            raise TypeError(f"from_image() takes a PIL image, got {type(image).__name__}")
        if self.num_dims != 2 or self.format.name != "rgba8":
            raise ValueError("from_image() needs a 2-D texture of gr.Format.rgba8")
        if image.mode != "RGB":
            image = image.convert("RGB")
        if image.size != self.shape:
            raise ValueError(f"the image is {image.size}, the texture {self.shape}")
        rgb = np.asarray(image.rotate(90, expand=True))  # [x, y]: Taichi's orientation
        texels = np.zeros((*self.shape, 4), np.uint8)
        texels[..., :3] = rgb
        self.from_numpy(texels.transpose(1, 0, 2))  # texel (x, y) at row y

    def to_image(self):
        """The texture as a PIL image in RGB mode (Taichi's: a 2-D rgba8 texture; from_image's orientation)."""
        from PIL import Image
        if self.num_dims != 2 or self.format.name != "rgba8":
            raise ValueError("to_image() needs a 2-D texture of gr.Format.rgba8")
        w, h = self.shape
        rgb = np.ascontiguousarray(self.to_numpy().reshape(h, w, 4).transpose(1, 0, 2)[..., :3])  # [x, y]
        return Image.fromarray(rgb).rotate(270, expand=True)

    def __repr__(self) -> str:
        return f"gr.Texture({self.fmt!r}, {self.shape})"


def bind_texture(rt, compiled, b, values):
    """A kernel's texture binding (kernel.BINDING_RESOLVERS): the argument's view."""
    v = values[b.source]
    if not isinstance(v, Texture):
        raise TypeError(f"argument {b.name!r} is a texture parameter: pass a gr.Texture, not {type(v).__name__}")
    return v.view(b.texture[4] if b.texture[0] == "storage" else 0)


def bind_sampler(rt, compiled, b, values):
    return _sampler(rt)


__all__ = ["Texture", "Format", "bind_texture", "bind_sampler"]
