"""torch tensors as kernel arguments, `x.to_torch()` / `x.from_torch(t)`.

torch stays optional: nothing here imports it unless the user passed a tensor (then it is
in sys.modules already) or called to_torch / from_torch. A tensor argument is handled like
a numpy array: a CPU tensor through a numpy view of its memory (copied in, and back into
the tensor when the kernel writes it), a CUDA (or other device) tensor through a host copy,
copied back to the tensor after the launch when the kernel writes it.

A tensor with `requires_grad` is a differentiable argument, as in Taichi: it goes through a
`Mirrors` entry, a device array with a gradient (the same specialization as a gr.ndarray
with needs_grad=True) holding the tensor's values and, for a gradient launch, its `.grad`;
after the launch what the kernel wrote goes back into the tensor and its `.grad`. The
tensor's `.grad` is allocated (zeros) at its first launch, as Taichi does.
"""
from __future__ import annotations

import sys
import warnings

import numpy as np


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


GRAD_MODES = ("grad", "grad_alias", "grad_probe")  # the launch modes that bind gradients


class Mirrors:
    """The requires_grad tensors of one launch and their device arrays: `add` them as the
    arguments are bound, `upload` before the launch, `write_back` after it."""

    def __init__(self):
        self.items: dict[int, tuple] = {}  # argument index -> (tensor, device array with .grad)

    def add(self, i: int, t, elem, shape: tuple, ndarray):
        """The device array (a new `ndarray(elem, shape, needs_grad=True)`) that stands for
        tensor t as argument i. A tensor passed as two arguments is one array, so that the
        kernel sees one array and its gradient adds up (the launch then knows they alias)."""
        for t2, arr in self.items.values():
            if t2 is t and arr.element_type == elem and arr.shape == shape:
                break
        else:
            arr = ndarray(elem, shape, needs_grad=True)
        self.items[i] = (t, arr)
        return arr

    def _distinct(self):
        return {id(arr): (t, arr) for t, arr in self.items.values()}.values()

    def upload(self, mode: str) -> None:
        for t, arr in self._distinct():
            arr.from_numpy(to_numpy(t))
            if mode in GRAD_MODES:
                arr.grad.from_numpy(to_numpy(t.grad))

    def write_back(self, rt, spec) -> None:
        """Copy the values and gradients the launch wrote (one readback) into the tensors."""
        reads, dests = [], []
        for b in spec.bindings:
            if b.read_only:
                continue
            if b.kind == "arg" and b.source in self.items:
                t, arr = self.items[b.source]
                dst = t
            elif b.kind == "grad" and b.grad_of[0] == "arg" and b.grad_of[1] in self.items:
                t, arr = self.items[b.grad_of[1]]
                dst, arr = t.grad, arr.grad
            else:
                continue
            if any(a is arr for _, a, _ in dests):
                continue  # one array for two arguments: read once
            out = np.empty(arr._np_shape, arr.dtype.numpy)
            if arr.nbytes:
                reads.append((arr._buffer, 0, arr.nbytes, out))
            dests.append((dst, arr, out))
        if not dests:
            return
        import torch
        rt.blitter.device_to_host(reads)
        with torch.no_grad():
            for dst, _, out in dests:
                dst.copy_(torch.from_numpy(out))
