"""`gr.math`: Taichi's `ti.math` for kernels. The functions and their lowerings live on the
compiler's side (compiler/mathlib.py); this module only names them."""
from gfxrt.compiler import mathlib as _mathlib
from gfxrt.compiler.mathlib import *  # noqa: F403
from gfxrt.compiler.mathlib import __all__  # noqa: F401

from . import types as _types  # noqa: E402, F401  vec3.field / vec3.ndarray (attached in gfxrt/types.py)

for _name in _mathlib.TYPE_NAMES:  # vec2 ... mat4 follow gr.init's default types: read them from mathlib
    del globals()[_name]


def __getattr__(name: str):
    if name in _mathlib.TYPE_NAMES:
        return getattr(_mathlib, name)
    raise AttributeError(f"module 'gfxrt.math' has no attribute {name!r}")
