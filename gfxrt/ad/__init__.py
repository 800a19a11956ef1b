"""The autodiff wing (docs/design.md, "Layers"); this module is `gr.ad`, one namespace over the
Tape, forward mode and gradient checking (autodiff.py) and Taichi's user-defined gradients built
on them (ad_custom.py: grad_replaced, grad_for, no_grad, clear_all_gradients), and kernels as
torch operations (torch_function.py)."""
from __future__ import annotations

from . import autodiff
from .ad_custom import clear_all_gradients, grad_for, grad_replaced, no_grad
from .autodiff import FwdMode, GradcheckError, GradcheckResult, Tape, gradcheck, launch_mode
from .torch_function import torch_function


def __getattr__(name: str):
    return getattr(autodiff, name)  # the rest of gfxrt/ad/autodiff.py (gr.ad._state, ...), as before


__all__ = ["Tape", "FwdMode", "gradcheck", "GradcheckResult", "GradcheckError", "launch_mode",
           "grad_replaced", "grad_for", "no_grad", "clear_all_gradients", "torch_function"]
