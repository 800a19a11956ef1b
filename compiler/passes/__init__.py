"""IR -> IR passes, applied in order by `pipeline`.

Set GFXRT_PRINT_IR=1 to print the IR after each pass.
"""
from __future__ import annotations

import os

from ..ir import KernelIR
from .verify import verify

PASSES = []  # (name, function KernelIR -> KernelIR), in order


def pipeline(ir: KernelIR) -> KernelIR:
    verify(ir)
    show = os.environ.get("GFXRT_PRINT_IR")
    for name, fn in PASSES:
        ir = fn(ir)
        verify(ir)
        if show:
            from ..printer import print_ir
            print(f"--- after {name} ---\n{print_ir(ir)}")
    return ir
