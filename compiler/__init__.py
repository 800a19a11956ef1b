"""gfxrt's compiler: Python source -> typed IR -> passes -> WGSL + KernelSpec (compiler/pipeline.py).

Pure: imports no wgpu, so everything here is testable without a GPU.
"""
from __future__ import annotations

from .errors import CompileError, GfxrtError, InternalCompilerError
from .pipeline import Specialization, compile_kernel, lower
from .spec import ArgSpec, KernelSpec
from .target import Target

__all__ = ["compile_kernel", "lower", "Specialization", "CompileError", "GfxrtError", "InternalCompilerError",
           "ArgSpec", "KernelSpec", "Target"]
