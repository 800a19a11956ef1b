"""A container's contents as Python data, without numpy (Pyodide in a browser has none).

numpy is one input / output format of `from_numpy` / `to_numpy` (compiler/npcompat.py); the
others are Python's own: a nested list / tuple of the container's shape (`shape + element_shape`,
as numpy's `tolist()` gives) or a flat sequence of all its scalars, an `array.array`, a
`memoryview`, bytes (a JavaScript typed array reaches Python as a memoryview). They are packed
into the device's bytes here, by the `struct` format of the element's storage type (`fmt`);
values convert by the rule of a cast in a kernel (compiler/opsem.py `convert`): floats round to
the dtype (f16 / f32), ints wrap, a float stored into an integer dtype truncates toward zero
(saturating), a bool dtype stores 0 / 1.
"""
from __future__ import annotations

import math
import struct

from gfxrt.compiler import hostmatrix, opsem
from gfxrt.compiler.types import DType

_FORMATS = {("float", 2): "e", ("float", 4): "f", ("float", 8): "d",
            ("int", 1): "b", ("int", 2): "h", ("int", 4): "i", ("int", 8): "q",
            ("uint", 1): "B", ("uint", 2): "H", ("uint", 4): "I", ("uint", 8): "Q", ("bool", 4): "I"}


def fmt(t: DType) -> str:
    """The struct / memoryview format of one stored scalar of dtype t (little-endian, as WGSL's)."""
    return _FORMATS[(t.kind, t.size)]


def _flat(data, shape: tuple[int, ...], what: str) -> list:
    """data's scalars in row-major order, checked against `shape` (nested) or its size (flat)."""
    if isinstance(data, (bytes, bytearray, memoryview)) or hasattr(data, "typecode"):
        m = memoryview(data)
        if m.format in ("B", "b", "c") and m.ndim == 1 and isinstance(data, (bytes, bytearray)):
            raise TypeError(f"{what}: bytes carry no element type; pass an array.array or a memoryview cast to it")
        flat = m.tolist() if m.ndim == 1 else list(struct.unpack(f"<{m.nbytes // m.itemsize}{m.format}", m.tobytes()))
    elif isinstance(data, (list, tuple)) or getattr(type(data), "__gfxrt_matrix__", False):
        try:
            flat, got = hostmatrix.components(data)
        except ValueError as e:
            raise ValueError(f"{what}: {e}") from None
        if len(got) > 1 and tuple(got) != shape:
            raise ValueError(f"shape mismatch: the sequence has shape {tuple(got)}, expected {shape}")
    else:
        raise TypeError(f"{what} takes a numpy array, a (nested) list or tuple, an array.array or a memoryview, "
                        f"not {type(data).__name__}")
    if len(flat) != math.prod(shape):
        raise ValueError(f"shape mismatch: {len(flat)} values, expected {math.prod(shape)} (shape {shape})")
    return flat


def pack(data, t: DType, shape: tuple[int, ...], what: str = "from_numpy") -> bytes:
    """The bytes of `data` stored as dtype t, checked against the container's `shape`."""
    flat = _flat(data, shape, what)
    return struct.pack(f"<{len(flat)}{fmt(t)}", *(opsem.convert(v, t) for v in flat))


def to_list(raw, t: DType, shape: tuple[int, ...]):
    """The read-back bytes `raw` as nested lists of `shape` (Python numbers; bools for a bool
    dtype), as numpy's `tolist()` of `to_numpy()` gives."""
    n = math.prod(shape)
    flat = list(struct.unpack_from(f"<{n}{fmt(t)}", raw))
    if t.kind == "bool":
        flat = [bool(v) for v in flat]
    return hostmatrix.nest(flat, shape)
