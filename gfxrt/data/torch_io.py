"""torch tensors as kernel arguments, `x.to_torch()` / `x.from_torch(t)`.

torch stays optional: nothing here imports it unless the user passed a tensor (then it is
in sys.modules already) or called to_torch / from_torch. A tensor argument is handled like
a numpy array: a CPU tensor through a numpy view of its memory (copied in, and back into
the tensor when the kernel writes it), a CUDA (or other device) tensor through a host copy,
copied back to the tensor after the launch when the kernel writes it.
"""
from __future__ import annotations

import sys

import numpy as np


def is_tensor(v) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(v, torch.Tensor)


def any_tensor(values) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and any(isinstance(v, torch.Tensor) for v in values)


def to_numpy(t) -> np.ndarray:
    """A numpy array for tensor t: a view of a CPU tensor's memory, else a host copy."""
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    try:
        return t.numpy()
    except TypeError as e:  # bfloat16, complex, ...
        raise TypeError(f"torch tensor of dtype {t.dtype} has no gfxrt dtype ({e}); convert it with "
                        ".float(), .double(), .int() or .long()") from None


def host_values(values: list) -> list:
    """Replace tensors in `values` by numpy arrays; returns [(index, tensor, array)] of
    those whose memory is not shared (non-CPU tensors: written back by `write_back`)."""
    out = []
    for i, v in enumerate(values):
        if is_tensor(v):
            a = to_numpy(v)
            values[i] = a
            if v.device.type != "cpu":
                out.append((i, v, a))
    return out


def write_back(copies: list, spec) -> None:
    """Copy the arrays of non-CPU tensors the kernel wrote back into them."""
    if not copies:
        return
    import torch
    written = {b.source for b in spec.bindings if b.kind == "arg" and not b.read_only}
    for i, t, a in copies:
        if i in written:
            with torch.no_grad():
                t.copy_(torch.from_numpy(a))


def to_torch(arr, device=None):
    """`x.to_torch(device=None)`: a new tensor with the contents of device array x."""
    import torch
    t = torch.from_numpy(arr.to_numpy())
    return t.to(device) if device is not None else t


def from_torch(arr, t) -> None:
    """`x.from_torch(t)`: copy tensor t (any device) into device array x."""
    if not is_tensor(t):
        raise TypeError(f"from_torch() expects a torch.Tensor, not {type(t).__name__}")
    arr.from_numpy(to_numpy(t))
