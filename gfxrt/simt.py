"""`gr.simt`: workgroup (block) and subgroup primitives for kernels; see compiler/simt.py
and docs/language.md ("Blocks and subgroups")."""
from __future__ import annotations

from types import SimpleNamespace

from gfxrt.compiler.simt import BLOCK, SUBGROUP

block = SimpleNamespace(**BLOCK)
block.__doc__ = "Block (workgroup) primitives: SharedArray, sync, mem_fence, thread_idx, global_thread_idx."
subgroup = SimpleNamespace(**SUBGROUP)
subgroup.__doc__ = "Subgroup primitives (need the adapter feature 'subgroup'): reduce_add, inclusive_add, ..."

__all__ = ["block", "subgroup"]
