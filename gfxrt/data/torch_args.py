"""torch tensors as kernel arguments (gfxrt/kernel.py hands them here when a call has any).

A tensor is handled like a numpy array: a CPU tensor through a numpy view of its memory
(copied in, and back into the tensor when the kernel writes it), a CUDA (or other device)
tensor through a host copy, copied back to the tensor after the launch when the kernel
writes it.

A tensor with `requires_grad` is a differentiable argument, as in Taichi: it goes through a
`Mirrors` entry, a device array with a gradient (the same specialization as a gr.ndarray
with needs_grad=True) holding the tensor's values and, for a gradient launch, its `.grad`;
after the launch what the kernel wrote goes back into the tensor and its `.grad`. The
tensor's `.grad` is allocated (zeros) at its first launch, as Taichi does.
"""
from __future__ import annotations

from gfxrt.compiler.npcompat import np

from ..engine import context
from .ndarray import Ndarray
from .torch_io import ensure_grad, is_tensor, requires_grad, to_numpy


def bind(kernel_name: str, params, values: list, array_spec) -> tuple:
    """Replace the torch tensors in a call's bound `values`: one with requires_grad (where the
    annotation does not say needs_grad=False) by a device array with a gradient, the others
    by numpy arrays. `array_spec(param, tensor)`: the ArgSpec the kernel gives the tensor.
    Returns (host copies to write back, Mirrors or None)."""
    mirrors = Mirrors()
    for i, p in enumerate(params):
        v = values[i]
        if p.kind != "ndarray" or not requires_grad(v):
            continue
        ensure_grad(v)  # Taichi allocates .grad at the first launch that takes the tensor
        if p.ann.needs_grad is not False:
            rt = context.runtime()
            if rt.capture is not None:
                rt.capture.host_work(f"{kernel_name}() argument {p.name!r} is a torch tensor (copied to "
                                     "and from the host at each launch); pass a gr.ndarray")
            spec = array_spec(p, v)
            values[i] = mirrors.add(i, v, spec.elem, tuple(v.shape[:spec.ndim]))
    return host_values(values), (mirrors if mirrors.items else None)


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


class Mirrors:
    """The requires_grad tensors of one launch and their device arrays: `add` them as the
    arguments are bound, `upload` before the launch, `write_back` after it."""

    def __init__(self):
        self.items: dict[int, tuple] = {}  # argument index -> (tensor, device array with .grad)

    def add(self, i: int, t, elem, shape: tuple) -> Ndarray:
        """The device array (a new `gr.ndarray(elem, shape, needs_grad=True)`) that stands for
        tensor t as argument i. A tensor passed as two arguments is one array, so that the
        kernel sees one array and its gradient adds up (the launch then knows they alias)."""
        for t2, arr in self.items.values():
            if t2 is t and arr.element_type == elem and arr.shape == shape:
                break
        else:
            arr = Ndarray(elem, shape, needs_grad=True)
        self.items[i] = (t, arr)
        return arr

    def upload(self, spec) -> None:
        """Copy the tensors' values, and the .grad the launch binds, to their device arrays."""
        grads = {b.grad_of[1] for b in spec.bindings if b.kind == "grad" and b.grad_of[0] == "arg"}
        done = set()
        for i, (t, arr) in self.items.items():
            if id(arr) not in done:
                arr.from_numpy(to_numpy(t))
            if i in grads and ("grad", id(arr)) not in done:
                arr.grad.from_numpy(to_numpy(t.grad))
                done.add(("grad", id(arr)))
            done.add(id(arr))

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
