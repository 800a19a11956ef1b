"""Timing: warm-up, batches sized to a target duration, repeats and medians, host and device time.

Host time of one operation = (time of `inner` runs followed by one sync) / inner, so queued
frameworks are measured at their throughput and a sync's cost is amortized over the batch.
Device time comes from the framework's device timer (timestamp queries, CUDA events) where it
has one, measured in separate repeats so profiling never inflates the host figures.
Every case gets about `case_budget_s` of timed runs: an operation that lasts a good part of it
is not warmed up again (the checked run warmed it), its first timed run counts as a sample, and
it gets fewer repeats (one, past the budget) and no device-time repeats past half the budget.
Other cases run for at least `warm_s` before their first sample: under Vulkan an H100's clocks
rose only after ~0.3 s of load, and the first samples of a case read half speed.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass


@dataclass
class Config:
    """How long and how often to measure."""

    warmup: int = 3
    repeats: int = 11
    device_repeats: int = 5
    target_s: float = 0.05     # a batch of runs lasts at least about this long
    max_inner: int = 10000
    case_budget_s: float = 10.0  # past this (estimated), fewer repeats are taken
    warm_s: float = 0.4        # run at least this long before the first sample: a GPU's clocks ramp up under
    #                            load (H100 over Vulkan: the first ~0.3 s of a case ran at half speed)

    @classmethod
    def quick(cls) -> Config:
        """The settings of `--quick`."""
        return cls(warmup=2, repeats=5, device_repeats=3, target_s=0.02, max_inner=2000, case_budget_s=2.0,
                   warm_s=0.05)


def stats(samples: list[float], inner: int = 1) -> dict:
    """Summary of per-operation times in seconds."""
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples),
            "mean": statistics.fmean(samples), "n": len(samples), "inner": inner,
            "samples": [float(f"{s:.6g}") for s in samples]}


def _batch(run, sync, inner: int) -> float:
    t = time.perf_counter()
    for _ in range(inner):
        run()
    sync()
    return time.perf_counter() - t


def measure(run, sync, cfg: Config, device_timer=None) -> tuple[dict, dict | None]:
    """Time `run` (already run once and checked by the caller). Returns (host stats, device
    stats or None); both in seconds per operation."""
    start = time.perf_counter()
    first = _batch(run, sync, 1)  # warm: the caller's checked run came first
    warmup = cfg.warmup if first * cfg.warmup < cfg.case_budget_s / 4 else 0
    one = first
    for _ in range(warmup):
        one = min(one, _batch(run, sync, 1))
    inner = 1
    t = one
    while t < cfg.target_s and inner < cfg.max_inner:
        grow = max(2, int(cfg.target_s / max(t, 1e-9) * inner * 1.2))
        inner = min(cfg.max_inner, grow)
        t = _batch(run, sync, inner)
    while warmup and time.perf_counter() - start < cfg.warm_s:  # until the device's clocks are up
        t = _batch(run, sync, inner)
    repeats = max(1, min(cfg.repeats, int(cfg.case_budget_s / max(t, 1e-9))))
    repeats = max(repeats, 3) if t * 3 < cfg.case_budget_s * 2 else repeats
    # a long operation (no warm-up, batches of one): its first timed run is a sample too
    host = [first] if inner == 1 and warmup == 0 else []
    host += [_batch(run, sync, inner) / inner for _ in range(repeats - len(host))]
    device = None
    if device_timer is not None:
        dev = []
        for _ in range(min(cfg.device_repeats, repeats, int(cfg.case_budget_s / 2 / max(t, 1e-9)))):
            timer = device_timer()
            with timer:
                for _ in range(inner):
                    run()
                sync()
            if timer.seconds is None:
                break
            dev.append(timer.seconds / inner)
        device = stats(dev, inner) if dev else None
    return stats(host, inner), device
