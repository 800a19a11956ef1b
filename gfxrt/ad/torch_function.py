"""`gr.ad.torch_function(kernel, outputs=[...])`: a kernel as a differentiable torch operation
(docs/autodiff.md "torch"). Users of Taichi and Warp write this torch.autograd.Function by hand:

    op = gr.ad.torch_function(kernel, outputs=[(n,)])
    y = op(x, w)              # new output tensors, in torch's graph
    y.sum().backward()        # x.grad, w.grad from kernel.grad

The kernel takes the inputs and then the outputs (`kernel(*inputs, *outputs)`) and writes its
results into the outputs. Forward runs it on detached aliases of the inputs and on new zero
outputs; backward runs `kernel.grad` on the same values with the outputs' gradients seeded
from torch, and returns the inputs' gradients. Neither touches the `.grad` of the caller's
tensors: torch accumulates what backward returns, as for any torch operation. torch is
imported when the operation first runs.
"""
from __future__ import annotations

import operator

from ..data import torch_io


def _shape(spec, inputs) -> tuple[int, ...]:
    """An output's shape: an int, a tuple of ints (torch.Size too), or a function of the inputs."""
    s = spec(*inputs) if callable(spec) else spec
    try:
        return tuple(map(operator.index, s)) if isinstance(s, (tuple, list)) else (operator.index(s),)
    except TypeError:
        raise TypeError(f"torch_function: an output shape is an int or a tuple of ints, got {s!r}") from None


def _like(inputs):
    """The dtype and device of the outputs: the first floating-point tensor input's."""
    import torch
    for x in inputs:
        if torch_io.is_tensor(x) and x.is_floating_point():
            return x.dtype, x.device
    dev = next((x.device for x in inputs if torch_io.is_tensor(x)), torch.device("cpu"))
    return torch.get_default_dtype(), dev


def _aliases(values, wants_grad, grads=None) -> list:
    """Detached views of the tensors (the same memory), those whose gradient is wanted with
    requires_grad and a .grad of their own: the kernel sees a differentiable argument, the
    caller's tensor is left alone. The .grad: a copy of `grads[i]` where given (an output's
    gradient, which the gradient kernel consumes), zeros where grads is a list (an input's,
    accumulated into), else a zero of stride 0 that costs no memory (a forward launch binds
    no gradient)."""
    import torch
    out = []
    for k, (v, g) in enumerate(zip(values, wants_grad)):
        if torch_io.is_tensor(v):
            a = v.detach()
            if g:
                a.requires_grad_(True)
                seed = grads[k] if grads is not None else None
                a.grad = torch.zeros((), dtype=a.dtype, device=a.device).expand_as(a) if grads is None else \
                    torch.zeros_like(a) if seed is None else torch.empty_like(a).copy_(seed)
            v = a
        out.append(v)
    return out


class TorchFunction:
    """A kernel as a torch operation (see gr.ad.torch_function)."""

    def __init__(self, kernel, outputs, dtype=None):
        if not callable(getattr(kernel, "grad", None)):
            raise TypeError(f"torch_function() needs a @gr.kernel, not {type(kernel).__name__}")
        if not isinstance(outputs, (list, tuple)) or not outputs:
            raise TypeError("torch_function(kernel, outputs=[...]): outputs is a non-empty list of output shapes "
                            "(an int, a tuple of ints, or a function of the inputs returning one)")
        self.kernel, self.outputs, self.dtype = kernel, list(outputs), dtype
        self.__name__ = getattr(kernel, "__name__", "torch_function")
        self.__doc__ = getattr(kernel, "__doc__", None)
        self._fn = None

    def __call__(self, *inputs):
        if self._fn is None:
            self._fn = _function_class(self)
        out = self._fn.apply(*inputs)
        return out[0] if len(out) == 1 else out

    def _forward(self, ctx, inputs):
        import torch
        dtype, device = _like(inputs)
        dtype = self.dtype or dtype
        outs = [torch.zeros(_shape(s, inputs), dtype=dtype, device=device) for s in self.outputs]
        wants = [bool(g) and torch_io.is_tensor(x) and x.is_floating_point()
                 for x, g in zip(inputs, ctx.needs_input_grad)]
        ctx.wants = wants
        ctx.differentiable = any(wants) and dtype.is_floating_point
        self.kernel(*_aliases(inputs, wants), *_aliases(outs, [ctx.differentiable] * len(outs)))
        tensors = [x for x in inputs if torch_io.is_tensor(x)]
        ctx.others = [None if torch_io.is_tensor(x) else x for x in inputs]  # scalars, templates
        ctx.save_for_backward(*tensors, *outs)
        return tuple(outs)

    def _backward(self, ctx, grads):
        saved = list(ctx.saved_tensors)
        n_in = len(saved) - len(self.outputs)
        it = iter(saved[:n_in])
        inputs = [next(it) if o is None else o for o in ctx.others]
        outs = saved[n_in:]
        if not ctx.differentiable:
            return tuple(None for _ in inputs)
        ins = _aliases(inputs, ctx.wants, [None] * len(inputs))
        outs = _aliases(outs, [True] * len(outs), list(grads))
        self.kernel.grad(*ins, *outs)
        return tuple(a.grad if w else None for a, w in zip(ins, ctx.wants))


def _function_class(op: TorchFunction):
    import torch
    from torch.autograd.function import once_differentiable

    class Function(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            return op._forward(ctx, inputs)

        @staticmethod
        @once_differentiable  # the gradient kernel is not itself differentiated
        def backward(ctx, *grads):
            return op._backward(ctx, grads)

    Function.__name__ = Function.__qualname__ = f"{op.__name__}_torch_function"
    return Function


def torch_function(kernel=None, *, outputs, dtype=None):
    """Wrap `kernel` as a differentiable torch operation: `op(*inputs)` returns new output
    tensors (one tensor, or a tuple for several outputs) and torch's backward runs the
    kernel's gradient.

    The kernel is called as `kernel(*inputs, *outputs)`: its array parameters after the inputs
    receive the outputs, zero-filled tensors of the shapes `outputs` lists (each an int, a tuple
    of ints, or a function of the inputs returning one), of `dtype` (default: the first
    floating-point input's dtype) on the first tensor input's device. Inputs may be tensors
    (differentiable where torch asks for their gradient), numbers or other kernel arguments
    (no gradient). The kernel must not overwrite its inputs (the global data access rule of
    docs/autodiff.md). As a decorator: `@gr.ad.torch_function(outputs=[...])` over `@gr.kernel`.
    """
    if kernel is None:
        return lambda k: TorchFunction(k, outputs, dtype)
    return TorchFunction(kernel, outputs, dtype)


__all__ = ["torch_function", "TorchFunction"]
