"""torch tensors: what gfxrt asks of them, and `x.to_torch()` / `x.from_torch(t)`. As kernel
arguments they go through gfxrt/data/torch_args.py.

torch stays optional: nothing here imports it unless the user passed a tensor (then it is
in sys.modules already) or called to_torch / from_torch.
"""
from __future__ import annotations

import sys
import warnings

from gfxrt.compiler.npcompat import np


def is_tensor(v) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(v, torch.Tensor)


def any_tensor(values) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and any(isinstance(v, torch.Tensor) for v in values)


def requires_grad(v) -> bool:
    """A tensor that takes part in gradients (torch's requires_grad)."""
    return is_tensor(v) and v.requires_grad


def fill(t, value: float, grad: bool = False) -> None:
    """Set tensor t (grad: its .grad, allocated if it has none) to `value`, outside torch's graph."""
    import torch
    with torch.no_grad():
        if grad and t.grad is None:
            t.grad = torch.full_like(t, value)
        else:
            (t.grad if grad else t).fill_(value)


def ensure_grad(t) -> None:
    """Give tensor t a zero .grad if it has none (also a non-leaf tensor, whose .grad torch
    itself never fills: kernels read and write it as Taichi's do)."""
    import torch
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", ".*not a leaf Tensor", UserWarning)
        if t.grad is None:
            t.grad = torch.zeros_like(t)


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


def stand_in(t) -> np.ndarray:
    """A numpy array of t's dtype and shape, for type checks: a CPU tensor's view, else one
    element repeated (zero strides: nothing is copied from the device)."""
    if t.device.type == "cpu":
        return to_numpy(t)
    import torch
    one = to_numpy(torch.zeros((), dtype=t.dtype))
    return np.lib.stride_tricks.as_strided(one, shape=tuple(t.shape), strides=(0,) * t.dim())


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
