"""gfxrt's compiler: Python source -> typed IR -> passes -> WGSL + KernelSpec.

Pure: imports no wgpu, so everything here is testable without a GPU.
"""
from __future__ import annotations

from .errors import CompileError, GfxrtError, InternalCompilerError
from .frontend.lower import Lowering
from .ir import KernelIR
from .passes import pipeline
from .spec import ArgSpec, KernelSpec
from .target import Target

__all__ = ["compile_kernel", "lower", "CompileError", "GfxrtError", "InternalCompilerError",
           "ArgSpec", "KernelSpec", "Target"]


def lower(func, args: list[ArgSpec], *, debug: bool = False, name: str | None = None) -> KernelIR:
    """Python function -> verified, optimized IR for one specialization."""
    return pipeline(Lowering(func, args, name=name, debug=debug).lower())


def compile_kernel(func, args: list[ArgSpec], target: Target, *, name: str | None = None,
                   mode: str = "primal") -> KernelSpec:
    """Python function + argument specialization -> WGSL and launch description.

    mode: 'primal' (the kernel), 'grad' (reverse mode), 'fwd' (forward mode) or
    'grad_probe' (the grad kernel's adstack-sizing pre-passes); see compiler.autodiff.
    """
    from .autodiff import transform
    from .codegen.wgsl import emit
    from .passes.verify import verify
    ir = transform(lower(func, args, debug=target.debug, name=name), mode, target)
    if mode != "primal" or target.debug:
        verify(ir)
    return emit(ir, target)
