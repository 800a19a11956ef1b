"""Automatic differentiation as IR -> IR passes (which modes run which: compiler/pipeline.py).

    reverse.py   reverse mode: the grad kernel (forward sweep + backward sweep per item)
    preacc.py    reverse mode through a loop by its preaccumulated Jacobian (no adstack)
    hoist.py     gradient-buffer reads moved to the start of each grad item
    gather.py    neighbour scatters of a grad task as gathers (columns.py: which items touch which elements)
    rules.py     the per-op derivatives (declared in compiler/ops.py) shared by both modes
    jumps.py     break/continue -> flags, before reversing
    adstack.py   PUSH/POP -> per-thread stacks (workgroup/private memory, then a heap buffer),
                 and the counting pre-pass (`counting_tasks`: the grad_probe kernel)
    forward.py   forward mode (Jacobian-vector products into `.dual` arrays)
    access.py    debug mode: the global data access rule check
"""
