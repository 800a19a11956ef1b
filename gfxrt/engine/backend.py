"""Which implementation of the device calls (device_api.py: DeviceCalls) this process uses, and
the WebGPU names that come with it (docs/design.md, "The device seam"): wgpu-native through
wgpu-py (ffi.py) on the desktop; the browser's WebGPU through Pyodide (webgpu.py) where Python
runs in a browser (sys.platform == "emscripten"). The engine imports the calls as
`from .backend import calls as ffi`, so both paths run the same recorder and launchers."""
from __future__ import annotations

import sys

IN_BROWSER = sys.platform == "emscripten"

if IN_BROWSER:
    from . import webgpu as calls
    from .webgpu import Buffer as GPUBuffer
    from .webgpu import BufferUsage, GPUError, ShaderStage
    WGSL_ENABLES = frozenset({"subgroups"})  # Tint requires the directive for subgroup builtins
    wgpu_py = None  # no wgpu-py in a tab: what draws with its render pipelines (gr.GUI, gr.ui) is desktop-only
else:
    import wgpu as wgpu_py
    WGSL_ENABLES = frozenset()  # naga 29 rejects `enable subgroups;`
    from wgpu import BufferUsage, GPUBuffer, GPUError, ShaderStage

    from . import ffi as calls

__all__ = ["IN_BROWSER", "calls", "GPUBuffer", "BufferUsage", "GPUError", "ShaderStage", "wgpu_py",
           "WGSL_ENABLES"]
