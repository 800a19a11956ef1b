"""gfxrt's compiler: Python source -> typed IR -> passes -> WGSL + KernelSpec.

Pure: imports no wgpu, so everything here is testable without a GPU.
"""
from __future__ import annotations

from .errors import CompileError, GfxrtError, InternalCompilerError, too_deep
from .frontend.lower import Lowering
from .ir import KernelIR, Loc
from .passes import codegen_pipeline, pipeline
from .passes.verify import verify
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


def compile_ir(ir: KernelIR, target: Target, mode: str = "primal") -> KernelSpec:
    """Optimized IR -> the kernel for `mode` -> target rewrites -> WGSL and launch description.

    mode: 'primal' (the kernel), 'grad' (reverse mode), 'fwd' (forward mode) or
    'grad_probe' (the grad kernel's adstack-sizing pre-passes); see compiler.autodiff.
    Autodiff sees the IR before atomic demotion, so `y[i] += v` keeps its meaning
    (accumulate, never overwrite) for the gradient and the debug access rule.
    """
    from .autodiff import transform
    from .codegen.wgsl import emit
    if mode != "primal":
        from .frontend.prints import strip_prints
        ir = strip_prints(ir)
    ir = transform(ir, mode, target)
    if mode != "primal" or target.debug:
        verify(ir)
    return emit(codegen_pipeline(ir), target)


def compile_kernel(func, args: list[ArgSpec], target: Target, *, name: str | None = None,
                   mode: str = "primal") -> KernelSpec:
    """Python function + argument specialization -> WGSL and launch description (see compile_ir)."""
    from .semantic import defaults
    try:
        with defaults(target.default_fp, target.default_ip):
            ir = lower(func, args, debug=target.debug, name=name)
        return compile_ir(ir, target, mode)
    except RecursionError:
        raise too_deep(name or func.__name__, kernel_loc(func)) from None


def kernel_loc(func) -> Loc | None:
    """Where a kernel function begins (its `def` line), for errors about the whole kernel."""
    code = getattr(func, "__code__", None)
    return Loc(code.co_filename, code.co_firstlineno) if code is not None else None
