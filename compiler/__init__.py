"""gfxrt's compiler: Python source -> typed IR -> passes -> WGSL + KernelSpec.

Pure: imports no wgpu, so everything here is testable without a GPU.
"""
from __future__ import annotations

from .errors import CompileError, GfxrtError, InternalCompilerError
from .frontend.lower import Lowering
from .ir import KernelIR
from .passes import codegen_pipeline, pipeline
from .spec import ArgSpec, KernelSpec
from .target import Target

__all__ = ["compile_kernel", "lower", "lower_raw", "CompileError", "GfxrtError", "InternalCompilerError",
           "ArgSpec", "KernelSpec", "Target"]


def lower_raw(func, args: list[ArgSpec], *, debug: bool = False, name: str | None = None) -> Lowering:
    """Run the frontend only; the returned Lowering holds `.ir` and what the kernel depends
    on (`.deps`, `.field_paths`, `.cacheable`) for the offline cache."""
    fe = Lowering(func, args, name=name, debug=debug)
    fe.lower()
    return fe


def lower(func, args: list[ArgSpec], *, debug: bool = False, name: str | None = None) -> KernelIR:
    """Python function -> verified, optimized IR for one specialization."""
    return pipeline(lower_raw(func, args, debug=debug, name=name).ir)


def compile_ir(ir: KernelIR, target: Target) -> KernelSpec:
    """Optimized IR -> target rewrites -> WGSL and launch description."""
    from .codegen.wgsl import emit
    return emit(codegen_pipeline(ir), target)


def compile_kernel(func, args: list[ArgSpec], target: Target, *, name: str | None = None) -> KernelSpec:
    """Python function + argument specialization -> WGSL and launch description."""
    return compile_ir(lower(func, args, debug=target.debug, name=name), target)
