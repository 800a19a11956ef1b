"""What a Python expression in a kernel can evaluate to, besides scalar IR nodes and
Python constants: arrays, their shapes, vectors and matrices of scalars."""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import Node
from ..types import ElementType, scalar_of


@dataclass(frozen=True)
class ArrayValue:
    """An ndarray argument or a field: a buffer plus its shape.

    `shape` holds one entry per dimension: an IR node (a PARAM for ndarray arguments)
    or a Python int (fields, whose shape is fixed).
    """

    name: str            # the Python-visible name, for messages
    buf: str             # IR buffer name
    elem: ElementType
    shape: tuple
    grad_buf: str | None = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self):
        return scalar_of(self.elem)


@dataclass(frozen=True)
class ShapeValue:
    """`x.shape`: indexable by a constant to give one extent."""

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


Value = Node | int | float | bool | ArrayValue | ShapeValue | Compound
