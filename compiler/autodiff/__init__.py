"""Automatic differentiation as IR -> IR transforms.

    reverse.py   reverse mode: the grad kernel (forward sweep + backward sweep per item)
    preacc.py    reverse mode through a loop by its preaccumulated Jacobian (no adstack)
    hoist.py     gradient-buffer reads moved to the start of each grad item
    gather.py    neighbour scatters of a grad task as gathers (columns.py: which items touch which elements)
    rules.py     the per-op derivatives (declared in compiler/ops.py) shared by both modes
    jumps.py     break/continue -> flags, before reversing
    adstack.py   PUSH/POP -> per-thread stacks (workgroup/private memory, then a heap buffer),
                 and the counting pre-pass
    forward.py   forward mode (Jacobian-vector products into `.dual` arrays)
    access.py    debug mode: the global data access rule check
"""
from __future__ import annotations

from ..ir import KernelIR, Op, walk
from .access import check_access_rule
from .adstack import META, lower_adstack
from .forward import forward
from .reverse import prune_buffers, reverse

MODES = ("primal", "grad", "grad_alias", "grad_probe", "fwd")


def transform(ir: KernelIR, mode: str, target) -> KernelIR:
    """The kernel to compile for `mode`:

    primal      the kernel itself (debug mode: with the access-rule check)
    grad        its reverse-mode kernel, adstack lowered
    grad_alias  the same without adjoint-read hoisting (hoist.py), for launches that bind one
                gradient buffer twice (KernelIR.assumes_distinct)
    grad_probe  only the counting pre-passes of the grad kernel (the runtime zeroes meta[0] and
                runs it once to size the adstack heap before a grad kernel's first launch)
    fwd         its forward-mode kernel
    """
    if mode == "primal":
        return check_access_rule(ir) if target.debug else ir
    if mode == "fwd":
        return forward(ir)
    if mode not in ("grad", "grad_alias", "grad_probe"):
        raise ValueError(f"unknown autodiff mode {mode!r}")
    g = reverse(ir, target.ad_loops, hoist=mode == "grad", gather=target.ad_gather,
                gather_items=target.ad_gather_items)
    shared = target.max_workgroup_storage if target.adstack_shared else 0
    g = lower_adstack(g, target.adstack_size, target.adstack_private, shared)
    if mode == "grad_probe":
        g.tasks = [t for t in g.tasks if t.active is None and t.kind == "range"
                   and any(n.op is Op.ATOMIC and n.attr.buf == META for n in walk(t.body))]
        g.name = f"{ir.name}.grad_probe"
        prune_buffers(g)
    return g


__all__ = ["transform", "reverse", "forward", "lower_adstack", "check_access_rule", "MODES"]
