"""Kernel return values: the 'result' buffer's u32 words back into Python values."""
from __future__ import annotations

import math
import struct

from gfxrt.compiler import hostmatrix, opsem
from gfxrt.compiler.spec import KernelSpec


def scalar_at(raw, k: int, dtype):
    """The value of `dtype` at word k as a Python number (struct, no numpy): a scalar travels as a
    kernel scalar argument does (DType.pack: an f16 as an f32 word, 8-byte values low word first)."""
    if dtype.kind == "bool":
        return struct.unpack_from("<I", raw, 4 * k)[0] != 0
    v = struct.unpack_from("<" + dtype.pack, raw, 4 * k)[0]
    return opsem.round_to(v, dtype) if dtype.size == 2 and dtype.is_float else v


def decode_returns(spec: KernelSpec, raw) -> object:
    """Scalars become Python numbers, vectors and matrices gr.Vector / gr.Matrix values (numpy
    arrays); several values a tuple."""
    raw = bytes(raw)
    values, k = [], 0
    for t in spec.returns:
        values.append(scalar_at(raw, k, t))
        k += 2 if t.size == 8 else 1
    shapes = spec.return_shapes or ((),) * len(values)
    out, k = [], 0
    for shape in shapes:
        n = math.prod(shape)
        if shape:  # a gr.Vector / gr.Matrix value
            out.append(hostmatrix.value(hostmatrix.nest(values[k:k + n], shape), spec.returns[k]))
        else:
            out.append(values[k])
        k += n
    several = spec.return_tuple or (not spec.return_shapes and len(out) > 1)
    return tuple(out) if several else out[0]
