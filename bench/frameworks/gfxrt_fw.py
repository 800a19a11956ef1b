"""gfxrt: ours. Device time from `gr.profile(per_kernel=False)` (timestamps at the start and end of
each submission) when the runtime has it, on GPUs only (see CPU_DEVICE_TIME)."""
from __future__ import annotations

import numpy as np

from .base import Framework, Unavailable


def profile_seconds(p) -> float | None:
    """Total device seconds recorded by a `gr.profile()` session, read through whichever of
    these the profiler offers (first found): `total_s` / `total_seconds` (float or method),
    `total()`, `summary()` / `stats()` (name -> {"total": s} or (count, total, ...)),
    `records` / `events` (items with `.seconds` / `.duration_s` / `.duration`, or (name, s))."""
    for name in ("total_s", "total_seconds", "total"):
        v = getattr(p, name, None)
        v = v() if callable(v) else v
        if isinstance(v, (int, float)):
            return float(v)
    for name in ("summary", "stats"):
        v = getattr(p, name, None)
        v = v() if callable(v) else v
        if isinstance(v, dict) and v:
            tot = 0.0
            for row in v.values():
                if isinstance(row, dict) and "total" in row:
                    tot += float(row["total"])
                elif isinstance(row, (tuple, list)) and len(row) >= 2:
                    tot += float(row[1])
                else:
                    break
            else:
                return tot
    for name in ("records", "events"):
        v = getattr(p, name, None)
        v = v() if callable(v) else v
        if v is None:
            continue
        tot = 0.0
        for r in v:
            for attr in ("seconds", "duration_s", "duration"):
                if hasattr(r, attr):
                    tot += float(getattr(r, attr))
                    break
            else:
                if isinstance(r, (tuple, list)) and len(r) >= 2:
                    tot += float(r[-1])
                else:
                    return None
        return tot
    return None


class _ProfileTimer:
    def __init__(self, gr):
        self.gr = gr
        self.seconds = None

    def __enter__(self):
        self.gr.sync()
        try:  # whole submissions: what the work takes as it runs unprofiled (per-kernel timestamps
            # would add a pipeline drain to every dispatch: ~6 us each on an H100)
            self.cm = self.gr.profile(per_kernel=False)
        except TypeError:  # an older gfxrt
            self.cm = self.gr.profile()
        self.p = self.cm.__enter__()
        return self

    def __exit__(self, *exc):
        self.gr.sync()
        self.cm.__exit__(*exc)
        self.seconds = profile_seconds(self.p if self.p is not None else self.cm)


# Why a CPU adapter gets no device-time figures (recorded in the run's JSON).
CPU_DEVICE_TIME = ("not measured: on a CPU adapter (lavapipe) the 'device' is the same CPU, so the host "
                   "figure (sync included) is already the device's time; its timestamps measured dependent "
                   "back-to-back dispatches at 2-4x the host time per launch (the driver's waits between them)")


class Gfxrt(Framework):
    """gfxrt on its default (or a named) wgpu adapter."""

    def start(self) -> None:
        try:
            import gfxrt as gr
        except ImportError as e:
            raise Unavailable(f"gfxrt cannot be imported ({e})") from None
        try:
            if self.requested:
                gr.init(adapter=self.requested)
            dev = gr.device()  # first use: the default adapter (env GFXRT_ADAPTER, else high-performance)
        except Exception as e:  # no adapter, bad adapter name
            raise Unavailable(f"gfxrt cannot start: {e}") from None
        import wgpu
        self.mod = gr
        info = dev.adapter.info
        self.backend = f"wgpu/{info.get('backend_type', '?')}".lower()
        self.version = f"{gr.__version__} (wgpu-py {wgpu.__version__})"
        self.device = f"{info.get('device', '')} ({info.get('adapter_type', '')})".strip()
        self.details = {"features": sorted(dev.features), "profiler": hasattr(gr, "profile"),
                        "cpu_adapter": bool(dev.is_cpu)}
        if dev.is_cpu:
            self.details["device_time"] = CPU_DEVICE_TIME
        self.unsupported = (gr.CompileError, NotImplementedError)

    def sync(self) -> None:
        self.mod.sync()

    def device_timer(self):
        if not hasattr(self.mod, "profile") or self.details.get("cpu_adapter"):
            return None
        return lambda: _ProfileTimer(self.mod)

    def to_device(self, a, needs_grad=False):
        a = np.ascontiguousarray(a)
        kw = {"needs_grad": True} if needs_grad else {}
        x = self.mod.ndarray(a.dtype, shape=a.shape, **kw)
        x.from_numpy(a)
        return x

    def to_numpy(self, x):
        return x.to_numpy()
