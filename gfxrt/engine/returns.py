"""Kernel return values: the 'result' buffer's u32 words back into Python values."""
from __future__ import annotations

import math

import numpy as np

from gfxrt.compiler.hostmatrix import HostMatrix
from gfxrt.compiler.spec import KernelSpec


def _scalar(word: np.uint32, dtype):
    if dtype.kind == "float":
        v = float(np.array([word], np.uint32).view(np.float32)[0])
        return float(np.float16(v)) if dtype.size == 2 else v
    if dtype.kind == "int":
        return int(np.array([word], np.uint32).view(np.int32)[0])
    if dtype.kind == "bool":
        return bool(word)
    return int(word)


def decode_returns(spec: KernelSpec, raw) -> object:
    """Scalars become Python numbers, vectors and matrices gr.Vector / gr.Matrix values (numpy
    arrays); several values a tuple."""
    words = np.frombuffer(raw, dtype=np.uint32)
    values, k = [], 0
    for t in spec.returns:
        if t.size == 8:  # two words, low first
            values.append(t.numpy.type(words[k:k + 2].view(t.numpy)[0]).item())
            k += 2
        else:
            values.append(_scalar(words[k], t))
            k += 1
    shapes = spec.return_shapes or ((),) * len(values)
    out, k = [], 0
    for shape in shapes:
        n = math.prod(shape)
        if shape:
            dt = spec.returns[k].numpy if spec.returns[k].kind != "bool" else np.bool_
            out.append(HostMatrix(np.array(values[k:k + n], dtype=dt).reshape(shape)))  # a gr.Vector / gr.Matrix
        else:
            out.append(values[k])
        k += n
    several = spec.return_tuple or (not spec.return_shapes and len(out) > 1)
    return tuple(out) if several else out[0]
