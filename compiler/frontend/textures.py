"""Texture methods in kernels (compiler/textures.py has the model): `tex.sample_lod(uv, lod)` and
`tex.fetch(index, lod)` of a `gr.types.texture` argument, `tex.load(index)` and
`tex.store(index, value)` of a `gr.types.rw_texture` one. A read is a vector of 4 f32, one TEXEL
expression per channel; a store is one TEXSTORE statement."""
from __future__ import annotations

from .. import semantic as sem
from ..ir import Loc, Node, Op, TexelAttr
from ..types import VectorType, f32, i32, u32
from .values import BoundMethod, Compound, ShapeValue, TextureValue

SAMPLED_METHODS = ("sample_lod", "fetch")
STORAGE_METHODS = ("load", "store")


class TextureMixin:
    def texture_attribute(self, tex: TextureValue, attr: str, loc: Loc):
        """`tex.<method>`, waiting for its call."""
        methods = STORAGE_METHODS if tex.slot.storage else SAMPLED_METHODS
        if attr in methods:
            return BoundMethod(attr, tex)
        if attr == "shape":  # its extents (Taichi's rw_texture accessor has it)
            return ShapeValue(tex)
        kind = "gr.types.rw_texture" if tex.slot.storage else "gr.types.texture"
        self.error(f"a {kind} argument has no attribute {attr!r} (it has shape, {', '.join(methods)}"
                   + ("; sample_lod and fetch read a gr.types.texture" if tex.slot.storage else
                      "; load and store use a gr.types.rw_texture") + ")", loc)

    def texture_method(self, bm: BoundMethod, args, kwargs, loc: Loc):
        tex: TextureValue = bm.self_value
        name = bm.name
        names = {"sample_lod": ("uv", "lod"), "fetch": ("index", "lod"), "load": ("index",),
                 "store": ("index", "value")}[name]
        if len(args) > len(names) or set(kwargs) - set(names[len(args):]):
            self.error(f"{tex.name}.{name}() takes ({', '.join(names)})", loc)
        vals = [*args, *(kwargs[k] for k in names[len(args):] if k in kwargs)]
        if len(vals) != len(names):
            self.error(f"{tex.name}.{name}() takes ({', '.join(names)})", loc)
        slot = tex.slot
        if name == "sample_lod":
            if slot.ndim == 1:
                self.error("sample_lod() of a 1-D texture is not supported on WebGPU (no filtered 1-D sampling "
                           "at a level); use fetch(), or a 2-D texture of height 1", loc)
            if slot.fmt.kind != "float":
                self.error(f"sample_lod() filters, and a {slot.fmt.name} texture holds integers: use fetch()", loc)
            coords = self._tex_coords(tex, vals[0], f32, loc)
            return self._texel(tex, "sample", [*coords, self._tex_scalar(vals[1], f32, loc)], loc)
        coords = self._tex_coords(tex, vals[0], i32, loc)
        if name == "fetch":
            return self._texel(tex, "fetch", [*coords, self._tex_scalar(vals[1], i32, loc)], loc)
        if name == "load":
            return self._texel(tex, "load", coords, loc)
        value = vals[1]
        items = list(value.items) if isinstance(value, Compound) and len(value.shape) == 1 else \
            list(value) if isinstance(value, (tuple, list)) else None
        if items is None or len(items) != 4:
            self.error(f"{tex.name}.store() takes a vector of 4 values (r, g, b, a), got {self.describe(value)}", loc)
        t = {"float": f32, "sint": i32, "uint": u32}[slot.fmt.kind]
        items = [self._tex_scalar(x, t, loc) for x in items]
        self.emit(Node(Op.TEXSTORE, attr=slot.name, args=(*coords, *items), loc=loc))
        return None

    def _tex_scalar(self, v, t, loc: Loc) -> Node:
        return sem.as_node(self.scalar(v, loc), loc, t)

    def _tex_coords(self, tex: TextureValue, v, t, loc: Loc) -> list[Node]:
        """The coordinates of a texture read or write as `t` nodes, one per axis; an expression is
        computed once (every channel's TEXEL uses it)."""
        items = list(v.items) if isinstance(v, Compound) and len(v.shape) == 1 else \
            list(v) if isinstance(v, (tuple, list)) else [v]
        if len(items) != tex.ndim:
            self.error(f"texture {tex.name!r} has {tex.ndim} dimension(s): give {tex.ndim} coordinate(s), got "
                       f"{self.describe(v)}", loc)
        out = []
        for x in items:
            n = self._tex_scalar(x, t, loc)
            out.append(n if n.op in (Op.CONST, Op.VAR, Op.PARAM) else self.temp(n, loc))
        return out

    def _texel(self, tex: TextureValue, method: str, args: list[Node], loc: Loc) -> Compound:
        """The 4 f32 channels of one texture read."""
        items = tuple(Node(Op.TEXEL, f32, tuple(args), attr=TexelAttr(tex.slot.name, method, c), loc=loc)
                      for c in range(4))
        return Compound(VectorType(4, f32).shape, items)


__all__ = ["TextureMixin", "SAMPLED_METHODS", "STORAGE_METHODS"]
