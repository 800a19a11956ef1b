"""What a Python expression in a kernel can evaluate to, besides scalar IR nodes and
Python constants: arrays, their shapes, vectors and matrices of scalars, iteration spaces,
and the variables that names are bound to."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..types import DType, ElementType, scalar_of


@dataclass(frozen=True)
class ArrayValue:
    """An ndarray argument, a field or a shared array: a buffer plus its shape.

    `shape` holds one entry per dimension: an IR node (a PARAM for ndarray arguments)
    or a Python int (fields and shared arrays, whose shape is fixed). `obj` is the Python
    object of a field (for `f.grad`). `offset`: a field's first index per axis (Taichi's
    `offset=`); () for arrays that start at 0.
    """

    name: str            # the Python-visible name, for messages
    buf: str             # IR buffer name
    elem: ElementType
    shape: tuple
    obj: Any = None
    clamp: bool = False  # boundary="clamp": every index is clamped into its extent (Taichi's ndarray option)
    offset: tuple = ()

    def index_space(self) -> tuple:
        """(begin, end) per axis: what `for i, j in x` and `gr.grouped(x)` visit."""
        return tuple((o, o + n) if isinstance(n, int) else (0, n)
                     for o, n in zip(self.offset or (0,) * len(self.shape), self.shape))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self) -> DType:
        return scalar_of(self.elem)


@dataclass(frozen=True)
class TextureValue:
    """A texture argument in a kernel: its slot (compiler/textures.py) and extents; `tex.sample_lod(...)`
    and the other methods lower in compiler/frontend/textures.py, `for i, j in tex` visits its texels."""

    name: str
    slot: Any
    shape: tuple = ()  # its extents: PARAM nodes (`tex.shape`, `for i, j in tex`)

    @property
    def ndim(self) -> int:
        return self.slot.ndim


class ListValue(tuple):
    """A list in a kernel (`[a, b]` written there, or a Python list it reads): compile-time
    items, as a tuple's, that its error messages call a list (as the user wrote it)."""

    __slots__ = ()


@dataclass(frozen=True, eq=False)
class DictValue:
    """A dict in a kernel, as Taichi reads one: a Python dict the kernel reaches by name
    (`param["shape"][0]`; `path`: its dependency path, the items are converted as they are read),
    or one written in the kernel (`{k: v}`, a dict comprehension: `items` holds kernel values).
    Its keys are compile-time values; `d[key]` is the item."""

    items: dict
    name: str
    python: bool = False
    path: tuple | None = None


def seq_kind(v) -> str:
    """'list' or 'tuple': what the user wrote, for messages."""
    return "list" if isinstance(v, ListValue) else "tuple"


@dataclass(frozen=True)
class ShapeValue:
    """`x.shape`: indexable by a constant to give one extent; unpackable into a tuple."""

    array: ArrayValue


@dataclass(frozen=True)
class Compound:
    """A vector (1-D) or matrix (2-D) of scalar values, row-major in `items`."""

    shape: tuple[int, ...]
    items: tuple  # Node | Python constant

    @property
    def n(self) -> int:
        return self.shape[0]

    def at(self, *idx: int):
        if len(self.shape) == 1:
            return self.items[idx[0]]
        return self.items[idx[0] * self.shape[1] + idx[1]]


@dataclass(frozen=True)
class RangeValue:
    """`range(begin, end, step)` (bounds: nodes or ints): a loop's iteration space."""

    begin: Any
    end: Any
    step: Any


@dataclass(frozen=True)
class NdrangeValue:
    """`gr.ndrange(...)` or the index space of an array: one (begin, end) per dimension."""

    dims: tuple  # ((begin, end), ...)
    source: Any = field(default=None, compare=False)  # the array iterated (a struct-for), if any


@dataclass(frozen=True)
class GroupedValue:
    """`gr.grouped(space)`: iterate the space with one index vector instead of several ints."""

    space: NdrangeValue


@dataclass(frozen=True)
class StaticValue:
    """`gr.static(v)` where v is iterated by a for loop: unroll at compile time."""

    value: Any


@dataclass(frozen=True)
class BoundMethod:
    """`v.norm` and friends: a vector/matrix method waiting for its call."""

    name: str
    self_value: Compound


# -- variables: what a name bound by assignment refers to -------------------------------

@dataclass(frozen=True)
class ScalarVar:
    """An IR local. `kernel_scope`: declared outside any parallel loop (shared by every
    thread of a later parallel loop, where it may only be read or reduced)."""

    name: str
    dtype: DType
    kernel_scope: bool = False


@dataclass(frozen=True)
class CompoundVar:
    """A vector or matrix variable: one ScalarVar per component."""

    shape: tuple[int, ...]
    vars: tuple[ScalarVar, ...]


@dataclass(frozen=True)
class ListVar:
    """A list bound to a name whose items the function assigns (`verts[1] = verts[2]`): one
    variable per item (ScalarVar or CompoundVar), as Taichi makes each item of an assigned
    list a local variable."""

    vars: tuple
