"""`gr.math`: Taichi's `ti.math` for kernels. The functions and their lowerings live on the
compiler's side (compiler/mathlib.py); this module only names them."""
from gfxrt.compiler.mathlib import *  # noqa: F403
from gfxrt.compiler.mathlib import __all__  # noqa: F401

from . import types as _types  # noqa: E402, F401  vec3.field / vec3.ndarray (attached in gfxrt/types.py)
