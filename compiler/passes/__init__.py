"""IR -> IR passes, applied in order.

`pipeline` runs the passes that keep the IR's meaning and form (what autodiff and the
interpreter see); `codegen_pipeline` runs the target-level rewrites that only the code
generator consumes (atomic demotion; reductions add per-task accumulators). Each pass is
verified.

Set GFXRT_PRINT_IR=1 to print the IR after each pass.
"""
from __future__ import annotations

import os

from ..ir import KernelIR
from .atomics import demote_atomics
from .reductions import reductions
from .simplify import simplify
from .verify import verify

PASSES = [("simplify", simplify)]  # (name, KernelIR -> KernelIR)
# after autodiff (which must see `+=` as accumulation, not as a read and a store)
CODEGEN_PASSES = [("demote_atomics", demote_atomics), ("reductions", reductions)]


def _run(ir: KernelIR, passes) -> KernelIR:
    show = os.environ.get("GFXRT_PRINT_IR")
    for name, fn in passes:
        ir = fn(ir)
        verify(ir)
        if show:
            from ..printer import print_ir
            print(f"--- after {name} ---\n{print_ir(ir)}")
    return ir


def pipeline(ir: KernelIR) -> KernelIR:
    """The IR-level passes: simplification."""
    verify(ir)
    return _run(ir, PASSES)


def codegen_pipeline(ir: KernelIR) -> KernelIR:
    """Target-level rewrites run right before WGSL generation."""
    return _run(ir, CODEGEN_PASSES)
