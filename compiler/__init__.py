"""gfxrt's compiler: Python source -> typed IR -> passes -> WGSL + KernelSpec (compiler/pipeline.py).

Pure: imports no wgpu, so everything here is testable without a GPU.
"""
from __future__ import annotations

if __name__ != "gfxrt.compiler":  # a second copy of every module (and class: isinstance would fail)
    raise ImportError(f"import gfxrt.compiler, not {__name__}: the folder compiler/ is installed as gfxrt.compiler "
                      "(docs/design.md)", name=__name__)

from .errors import CompileError, GfxrtError, InternalCompilerError
from .pipeline import Specialization, compile_kernel, lower
from .spec import ArgSpec, KernelSpec
from .target import Target

__all__ = ["compile_kernel", "lower", "Specialization", "CompileError", "GfxrtError", "InternalCompilerError",
           "ArgSpec", "KernelSpec", "Target"]
