"""Device-side errors (the status-word protocol of compiler/spec.py): kernels with checks
(debug bounds checks, asserts, adstack overflow) write their failures into a status buffer;
the runtime reads the watched ones back at the next sync or readback (in the readback's own
submission) and raises the first failure as a gfxrt exception. `DeviceStatus` is the part of
`GfxRuntime` that does it; `_watched` is its state (generated launchers hold the dict)."""
from __future__ import annotations

import re
import struct

from gfxrt.compiler.spec import (
    OOB_PHRASE,
    STATUS_ACCESS_RULE,
    STATUS_ADSTACK_OVERFLOW,
    STATUS_HEADER_WORDS,
    STATUS_OUT_OF_BOUNDS,
    STATUS_RANGE_STEP,
    STATUS_USER_ASSERT,
)

from ..errors import (
    AdstackOverflowError,
    DeviceError,
    GfxrtError,
    KernelAssertionError,
    KernelValueError,
    OutOfBoundsError,
)

_ERRORS = {STATUS_OUT_OF_BOUNDS: OutOfBoundsError, STATUS_ADSTACK_OVERFLOW: AdstackOverflowError,
           STATUS_ACCESS_RULE: GfxrtError, STATUS_USER_ASSERT: KernelAssertionError,
           STATUS_RANGE_STEP: KernelValueError}


def status_error(code: int, message: str) -> Exception:
    """The exception for a device-side error code (compiler/spec.py STATUS_*)."""
    return _ERRORS.get(code, DeviceError)(message)


def _words(spec) -> int:
    """The words of a kernel's status buffer (compiler/spec.py): its counts, and the bounds
    checks' recorded values where the buffer has them."""
    return max(STATUS_HEADER_WORDS + len(spec.asserts), spec.internal.get("status", 0) // 4)


def _with_index(message: str, w, sites: int, k: int) -> str:
    """A bounds check's message with the index it failed on and the extent: 'index 7 is out
    of bounds for axis 0 with size 4' (numpy's words)."""
    at = STATUS_HEADER_WORDS + sites + 2 * k
    if OOB_PHRASE not in message or at + 2 > len(w):
        return message
    index, extent = struct.unpack_from("<2i", w, 4 * at)
    return re.sub(rf"{OOB_PHRASE} (\d+),", lambda m: f"index {index} is out of bounds for axis {m[1]} with size "
                  f"{extent},", message, count=1)


class DeviceStatus:
    """GfxRuntime's device-side error checks (needs `_watched`, a dict, and `blitter`)."""

    _watched: dict

    def watch_status(self, buffer, spec) -> None:
        """Check this kernel's status buffer at the next sync."""
        self._watched[id(buffer)] = (buffer, spec)

    def _check_status(self) -> None:
        entries = self.take_status_reads()
        self.blitter.device_to_host([(buf, 0, w.nbytes, w) for buf, _, w in entries], check=False)
        self.raise_status(entries)

    def take_status_reads(self) -> list:
        """The watched status buffers as (buffer, spec, host u32 words: a memoryview) to read back, and stop
        watching them (each launch's errors are reported once). A readback records these
        reads in its own submission, so device-side errors cost it no extra round trip."""
        watched = list(self._watched.values())
        self._watched.clear()  # in place: generated launchers hold this dict
        return [(buf, spec, memoryview(bytearray(4 * _words(spec))).cast("I")) for buf, spec in watched]

    def unwatch_failed(self, entries) -> None:
        """A readback failed before its status words arrived: watch them again."""
        for buf, spec, _ in entries:
            self._watched.setdefault(id(buf), (buf, spec))

    def raise_status(self, entries) -> None:
        """Raise the first device-side error in status words read back by `take_status_reads`
        (zeroing every failed buffer, so the next check is clean)."""
        failure = None
        for buf, spec, w in entries:
            if w[0]:
                self.blitter.host_to_device(buf, bytes(w.nbytes))
                for k, (code, message) in enumerate(spec.asserts):
                    if w[STATUS_HEADER_WORDS + k] and failure is None:
                        message = _with_index(message, w, len(spec.asserts), k) if code == STATUS_OUT_OF_BOUNDS \
                            else message
                        failure = (code, f"{message} ({w[STATUS_HEADER_WORDS + k]} time(s))")
        if failure is not None:
            raise status_error(*failure)
