"""The public API, `gr.*`: gfxrt/__init__.py loads this module on the first use of one of its names
(docs/design.md "Layers")."""
from __future__ import annotations

from gfxrt.compiler.builtins import BUILTINS as _BUILTINS
from gfxrt.compiler.func import Func, func, real_func
from gfxrt.compiler.types import f16, f32, f64, i8, i16, i32, i64, u1, u8, u16, u32, u64

from . import ad, lang, math, simt, tools, types
from .ad.ad_custom import clear_all_gradients
from .ad.autodiff import Tape
from .data.copy import copy_tensors
from .data.field import Field, MatrixField, ScalarField, field
from .data.ndarray import Ndarray, ndarray
from .data.oop import data_oriented
from .data.texture import Format, Texture
from .engine.arch import amdgpu, arm64, cpu, cuda, dx11, dx12, gles, gpu, metal, opengl, vulkan, x64, x86_64
from .engine.context import device, runtime, sync
from .engine.messages import CRITICAL, DEBUG, ERROR, INFO, TRACE, WARN  # Taichi's log levels (gr.init(log_level=))
from .errors import (
    AdstackOverflowError,
    CompileError,
    DeviceError,
    DeviceLostError,
    ForkedProcessError,
    GfxrtError,
    GraphCaptureError,
    InternalCompilerError,
    KernelAssertionError,
    KernelValueError,
    OutOfBoundsError,
)
from .graph import Graph
from .gui.gui import GUI  # Taichi's ti.GUI on wgpu render pipelines (docs/gui.md)
from .kernel import Kernel, kernel
from .profiler import profile
from .session import init, reset
from .taichi import algorithms, linalg  # noqa: E402, F401  gr.algorithms (sort, scan), gr.linalg (sparse): Taichi's
from .taichi.compat import core, layout, var  # noqa: F401  Taichi's pre-1.0 names
from .taichi.errors import (
    TaichiAssertionError,
    TaichiCompilationError,
    TaichiIndexError,
    TaichiNameError,
    TaichiRuntimeError,
    TaichiRuntimeTypeError,
    TaichiSyntaxError,
    TaichiTypeError,
)
from .taichi.graph import graph  # gr.graph() captures; gr.graph.GraphBuilder: Taichi's ti.graph
from .taichi.init import cfg, experimental, extension, is_extension_supported
from .taichi.linalg import eig, polar_decompose, solve, svd, sym_eig  # noqa: E402  (after the builtins)
from .taichi.rng import random
from .taichi.snode import SPARSE_BUILTINS as _SPARSE_BUILTINS
from .taichi.snode import FieldsBuilder, SNode, axes, deactivate_all_snodes, i, ij, ijk, ijkl, ik, j, jk, k, l, root  # noqa: E501, E741, F401
from .taichi.structs import Layout, Struct, StructField, dataclass, struct_class
from .tools import hex_to_rgb, rgb_to_hex  # Taichi's ti.rgb_to_hex / ti.hex_to_rgb (gr.tools: image utilities)
from .types import template

globals().update(_BUILTINS)  # gr.sin, gr.cos, ..., gr.select: usable in kernels and on the host
from .taichi.containers import Matrix, Vector  # noqa: E402, F401  gr.Vector.field / ndarray, ...: the builtins plus constructors

globals().update(_SPARSE_BUILTINS)  # gr.is_active & co. (sparse SNodes, compiler/sparse.py)
from .taichi.ops import BUILTINS as _TAICHI_OPS  # noqa: E402
from .taichi.ops import StaticAssertionError, pyfunc  # noqa: E402, F401

globals().update(_TAICHI_OPS)  # gr.static_assert, gr.round, gr.raw_div, gr.randn, ... (Taichi's names)
from .types import (  # noqa: E402, F401  Taichi's long dtype names
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
)

__all__ = ["init", "runtime", "sync", "device", "profile", "copy_tensors", "graph", "Graph", "kernel", "Kernel",
           "ndarray", "Ndarray", "types", "template", "f32", "f16", "i32", "u32", "u1",
           "f64", "i64", "u64", "i8", "i16", "u8", "u16", "func", "Func", "field",
           "real_func", "Field", "ScalarField", "MatrixField", "simt", "math", "random", "ad", "Tape", "GfxrtError",
           "CompileError",
           "InternalCompilerError", "DeviceError", "DeviceLostError", "AdstackOverflowError",
           "GraphCaptureError", "OutOfBoundsError", "KernelAssertionError", "KernelValueError", "ForkedProcessError",
           *_BUILTINS,
           "Struct", "StructField", "dataclass", "struct_class", "Layout", "svd", "polar_decompose", "sym_eig", "eig",
           "solve",
           "root", "SNode", "FieldsBuilder", "axes", "i", "j", "k", "l", "ij", "ik", "jk", "ijk", "ijkl",
           *_SPARSE_BUILTINS, *_TAICHI_OPS, "StaticAssertionError", "int8", "int16", "int32", "int64", "uint8",
           "uint16", "uint32", "uint64", "float16", "float32", "float64", "reset", "cfg", "clear_all_gradients",
           "deactivate_all_snodes", "pyfunc", "extension", "is_extension_supported", "Layout", "experimental",
           "TaichiCompilationError", "TaichiSyntaxError", "TaichiTypeError", "TaichiNameError", "TaichiIndexError",
           "TaichiRuntimeError", "TaichiRuntimeTypeError", "TaichiAssertionError",
           "data_oriented", "lang", "cpu", "gpu", "Texture", "Format",
           "x64", "x86_64", "arm64", "cuda", "amdgpu", "metal", "opengl", "gles", "vulkan", "dx11", "dx12",
           "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "CRITICAL", "tools", "rgb_to_hex", "hex_to_rgb", "GUI"]
