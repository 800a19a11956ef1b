"""gfxrt: a Python kernel language with a WebGPU runtime.

    import gfxrt as gr

    @gr.kernel
    def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1),
              y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]
"""
from __future__ import annotations

from compiler.builtins import BUILTINS as _BUILTINS
from compiler.func import Func, func, real_func
from compiler.types import f16, f32, f64, i8, i16, i32, i64, u1, u8, u16, u32, u64

from . import autodiff as ad
from . import constarray as _constarray
from . import (
                     lang,  # noqa: F401  Taichi's ti.lang.impl.current_cfg()
                     math,
                     simt,
                     types,
)
from . import runtime as _runtime_module  # noqa: F401  load the submodule before `runtime` names the function
from .autodiff import Tape
from .compat import (  # noqa: F401  Taichi's names for programs ported by renaming ti -> gr
                     TaichiCompilationError,
                     TaichiIndexError,
                     TaichiNameError,
                     TaichiRuntimeError,
                     TaichiSyntaxError,
                     TaichiTypeError,
                     layout,
                     var,
)
from .context import device, init, runtime, sync
from .copy import copy_tensors
from .errors import (
                     AdstackOverflowError,
                     CompileError,
                     DeviceError,
                     DeviceLostError,
                     GfxrtError,
                     GraphCaptureError,
                     InternalCompilerError,
                     OutOfBoundsError,
)
from .field import Field, field
from .graph import Graph, graph
from .kernel import Kernel, kernel
from .ndarray import Ndarray, ndarray
from .profiler import profile
from .rng import random
from .snode import SPARSE_BUILTINS as _SPARSE_BUILTINS
from .snode import FieldsBuilder, SNode, axes, i, ij, ijk, ijkl, ik, j, jk, k, l, root  # noqa: E741
from .types import template

__version__ = "0.1.0"

_constarray.install()  # captured numpy arrays over 64 elements: read-only device copies
globals().update(_BUILTINS)  # gr.sin, gr.cos, ..., gr.select: usable in kernels and on the host
from .containers import Matrix, Vector  # noqa: E402, F401  gr.Vector.field / ndarray, ...: the builtins plus constructors

globals().update(_SPARSE_BUILTINS)  # gr.is_active & co.: clear errors (fields are dense)

__all__ = ["init", "runtime", "sync", "device", "profile", "copy_tensors", "graph", "Graph", "kernel", "Kernel",
           "ndarray", "Ndarray", "types", "template", "f32", "f16", "i32", "u32", "u1",
           "f64", "i64", "u64", "i8", "i16", "u8", "u16", "func", "Func", "field",
           "real_func", "Field", "simt", "math", "random", "ad", "Tape", "GfxrtError", "CompileError",
           "InternalCompilerError", "DeviceError", "DeviceLostError", "AdstackOverflowError",
           "GraphCaptureError", "OutOfBoundsError", *_BUILTINS,
           "root", "SNode", "FieldsBuilder", "axes", "i", "j", "k", "l", "ij", "ik", "jk", "ijk", "ijkl",
           *_SPARSE_BUILTINS]
