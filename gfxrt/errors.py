"""gfxrt's exceptions. All derive from `GfxrtError`; compile errors come from the compiler."""
from __future__ import annotations

from gfxrt.compiler.errors import CompileError, GfxrtError, GradDtypeError, InternalCompilerError  # noqa: F401

__all__ = ["GfxrtError", "CompileError", "InternalCompilerError", "DeviceError",
           "DeviceLostError", "AdstackOverflowError", "GraphCaptureError", "OutOfBoundsError", "KernelAssertionError",
           "KernelValueError", "ForkedProcessError"]


class DeviceError(GfxrtError):
    """The device reported an error that is not the user's kernel's fault."""


class DeviceLostError(DeviceError):
    """The GPU device was lost (driver reset, removal). Re-run `gr.init()` to continue."""


class KernelAssertionError(DeviceError, AssertionError):
    """Debug mode: an `assert` in a kernel failed (raised at the next sync); an AssertionError
    as Taichi's TaichiAssertionError is."""


class KernelValueError(DeviceError, ValueError):
    """A kernel met at run time a value Python rejects with a ValueError (a `range()` step of
    0, which skips the loop); raised at the next sync or readback."""


class AdstackOverflowError(GfxrtError):
    """A reverse-mode kernel needed more adstack slots than `gr.init(adstack_size=N)` allows."""


class GraphCaptureError(GfxrtError):
    """Host work (numpy arguments, readbacks, sync) was attempted inside `gr.graph()` capture."""


class OutOfBoundsError(GfxrtError, IndexError):
    """Debug mode: a kernel indexed an array out of bounds (raised at the next sync)."""


class ForkedProcessError(GfxrtError):
    """gfxrt is used in a process forked (os.fork, multiprocessing's 'fork' start method) from
    one that had initialized it: a GPU device does not cross fork. Call `gr.init()` in the
    child for a device of its own, or start processes with the 'spawn' method."""
