"""The process-wide gfxrt state: options, device and runtime, created on first use."""
from __future__ import annotations

from .device import Device, Options, open_device

_state: dict = {"options": Options(), "device": None, "runtime": None}


def init(adapter: str | None = None, debug: bool = False, adstack_size: int | None = None,
         offline_cache: bool = True) -> None:
    """(Re)initialize gfxrt. Optional: the first kernel launch or allocation calls it with
    defaults.

    adapter: a substring of the adapter's name (default: env GFXRT_ADAPTER, else the
    high-performance adapter). debug: bounds-checked indexing, errors raised at the next
    sync. adstack_size: force N adstack slots per thread instead of automatic sizing.
    offline_cache: keep compiled kernels on disk between processes.
    """
    if adstack_size is not None and (not isinstance(adstack_size, int) or adstack_size <= 0):
        raise ValueError(f"adstack_size must be a positive int, got {adstack_size!r}")
    old, _state["runtime"] = _state["runtime"], None
    if old is not None:
        old.close()  # finishes its work unless its device was lost
    _state["options"] = Options(adapter, debug, adstack_size, offline_cache)
    _state["device"] = open_device(_state["options"])
    from .runtime import GfxRuntime
    _state["runtime"] = GfxRuntime(_state["device"])


def device() -> Device:
    if _state["device"] is None:
        init(**vars(_state["options"]))
    return _state["device"]


def runtime():
    """The `GfxRuntime` (initializing gfxrt with defaults if needed)."""
    if _state["runtime"] is None:
        init(**vars(_state["options"]))
    return _state["runtime"]


def sync() -> None:
    """Wait for all launched work; raise device-side errors. Same as `gr.runtime().synchronize()`."""
    if _state["runtime"] is not None:
        _state["runtime"].synchronize()
