"""Device errors as gfxrt reports them, for every implementation of the device calls (ffi.py on
wgpu-native, webgpu.py on a browser's WebGPU): what a device loss looks like, the exception a
WebGPU error becomes, and the log handler that turns a loss into the runtime's flag."""
from __future__ import annotations

import logging

from ..errors import DeviceError, DeviceLostError

_LOST_MARKERS = ("device is lost", "device was lost", "device lost")


def is_device_lost(e: BaseException) -> bool:
    return any(m in str(e).lower() for m in _LOST_MARKERS)


def translate(e: BaseException, what: str) -> Exception:
    """A gfxrt exception for a WebGPU error (wgpu-py's GPUError classes or webgpu.py's, which share
    their names) raised while doing `what`."""
    if is_device_lost(e):
        return DeviceLostError(f"the GPU device was lost ({what}); call gr.init() to continue.\n{e}")
    if any(c.__name__ == "GPUOutOfMemoryError" for c in type(e).__mro__):
        return MemoryError(f"the device is out of memory ({what})")
    return DeviceError(f"{what} failed: {type(e).__name__}: {e}")


class LostWatcher(logging.Handler):
    """wgpu-py only logs a device loss (its callback cannot raise); this handler turns the
    log record into a flag the runtime checks before touching the queue."""

    def __init__(self, on_lost):
        super().__init__(logging.ERROR)
        self.on_lost = on_lost

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = record.getMessage()
        except Exception:  # noqa: BLE001 (a logging handler must not raise)
            return
        if "DEVICE LOST" in msg or "device was lost" in msg:
            self.on_lost(msg)
