"""The benchmark registry: what a benchmark is, its cases, and one implementation per framework.

A benchmark module (one small file in bench/benchmarks/) declares a `Benchmark` and registers a
setup function per framework:

    saxpy = benchmark("saxpy", "saxpy y = a*x + y (float32)", unit="GB/s", cases=sizes(...))

    @saxpy.impl("torch")
    def _(fw, n):                      # fw: a started bench.frameworks.Framework; n: the case's param
        x, y = ...
        return Work(run=lambda: y.add_(x, alpha=2.0), amount=12 * n, check=...)

`run` enqueues one operation; the harness synchronizes the framework around batches of runs.
A setup that cannot do the case raises `NA("reason")`: it is recorded as "n/a: reason".

Machines: a case may be marked `only="gpu"` (too slow, or too large, for a CPU adapter such as
lavapipe) or `only="cpu"` (its stand-in there). `sizes(full, quick, cpu=...)` does the marking
from two lists; `Benchmark.cases_for(quick, machine)` is the list a run uses.
"""
from __future__ import annotations

import importlib
import os
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# unit -> (what the value is, factor): rate = amount / seconds / factor; time = seconds * factor
UNITS = {
    "GB/s": ("rate", 1e9), "GFLOP/s": ("rate", 1e9), "Gelem/s": ("rate", 1e9),
    "s": ("time", 1.0), "ms": ("time", 1e3), "us": ("time", 1e6),
}

FRAMEWORKS = ("gfxrt", "numpy", "torch", "taichi", "quadrants", "warp")


class NA(Exception):
    """Raised by a setup function: this framework cannot run this case (the message says why)."""


MACHINES = ("gpu", "cpu")


@dataclass
class Case:
    """One point of a benchmark: a label for tables and the parameter its setups receive.
    `only`: None (every run), "gpu" or "cpu" (only runs whose gfxrt adapter is of that kind;
    see `python -m bench --sizes`)."""

    label: str
    param: Any
    only: str | None = None

    def __post_init__(self):
        if self.only not in (None, *MACHINES):
            raise ValueError(f"case {self.label!r}: only must be None, 'gpu' or 'cpu', not {self.only!r}")


@dataclass
class Work:
    """What a setup function returns: one operation to time, and how to judge it.

    run: enqueue one operation (the harness syncs the framework after batches of runs).
    amount: bytes / flops / elements per operation, for rate units (GB/s, GFLOP/s, Gelem/s).
    check: called after exactly one run (and a sync): None when the result is right, else what is wrong.
    samples: custom timing instead of `run`: samples(k) returns k per-operation times in seconds.
    impl: what exactly was measured (kernel variant, library call), recorded with the result.
    """

    run: Callable[[], Any] | None = None
    amount: float | None = None
    check: Callable[[], str | None] | None = None
    samples: Callable[[int], list[float]] | None = None
    impl: str = ""
    note: str = ""


@dataclass
class Benchmark:
    """A named measurement with cases and per-framework implementations."""

    name: str
    title: str
    unit: str
    cases: Callable[[bool], list[Case]]
    group: str = ""
    note: str = ""
    impls: dict[str, Callable] = field(default_factory=dict)
    na: dict[str, str] = field(default_factory=dict)
    derived: Callable[[dict], dict] | None = None
    unlike: tuple[str, ...] = ()

    def __post_init__(self):
        if self.unit not in UNITS:
            raise ValueError(f"benchmark {self.name}: unknown unit {self.unit!r} (one of {', '.join(UNITS)})")

    @property
    def higher_is_better(self) -> bool:
        """Rates (GB/s, GFLOP/s) are better higher; times (us, ms) lower."""
        return UNITS[self.unit][0] == "rate"

    def impl(self, *frameworks: str):
        """Decorator: register `setup(fw, param) -> Work` for these framework kinds."""
        for f in frameworks:
            if f not in FRAMEWORKS:
                raise ValueError(f"unknown framework {f!r}")

        def register(setup):
            for f in frameworks:
                self.impls[f] = setup
            return setup
        return register

    def cases_for(self, quick: bool, machine: str) -> list[Case]:
        """The cases a run on `machine` ("gpu" or "cpu") takes: those marked for it or unmarked."""
        return [c for c in self.cases(quick) if c.only in (None, machine)]

    def value(self, seconds: float | None, amount: float | None) -> float | None:
        """The figure in this benchmark's unit for one operation taking `seconds`."""
        if seconds is None or seconds <= 0:
            return None
        kind, factor = UNITS[self.unit]
        if kind == "time":
            return seconds * factor
        if amount is None:
            return None
        return amount / seconds / factor


BENCHMARKS: dict[str, Benchmark] = {}


def benchmark(name: str, title: str, *, unit: str, cases, group: str = "", note: str = "",
              na: dict[str, str] | None = None, derived=None, unlike=()) -> Benchmark:
    """Declare and register a benchmark. `cases(quick)` returns the list of `Case`s to run;
    `na` maps framework kinds to why they have no implementation; `derived` is a function of
    {case label: value} (one framework's results) returning extra figures {label: value}, e.g. a
    backward/forward ratio (shown as rows with unit "x", lower is better); `unlike` names the framework
    kinds whose implementation is of a different algorithmic class than gfxrt's (their ratios are starred)."""
    if name in BENCHMARKS:
        raise ValueError(f"benchmark {name!r} registered twice")
    b = Benchmark(name, title, unit, cases, group, note, {}, dict(na or {}), derived, tuple(unlike))
    BENCHMARKS[name] = b
    return b


def load_all() -> dict[str, Benchmark]:
    """Import every module of bench/benchmarks/ (each registers its benchmarks), then the modules
    named in env GFXRT_BENCH_MODULES (comma-separated import paths: benchmarks kept elsewhere,
    e.g. by tests), and return the registry."""
    from . import benchmarks as pkg
    names = [m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")]
    rank = {n: i for i, n in enumerate(pkg.ORDER)}
    for name in sorted(names, key=lambda n: (rank.get(n, len(rank)), n)):
        importlib.import_module(f"{pkg.__name__}.{name}")
    for extra in filter(None, os.environ.get("GFXRT_BENCH_MODULES", "").split(",")):
        importlib.import_module(extra.strip())
    return BENCHMARKS


def select(only: list[str] | None) -> list[Benchmark]:
    """The benchmarks whose name (or group) matches one of `only` (prefix match), in file order."""
    allb = list(load_all().values())
    if not only:
        return allb
    out = [b for b in allb if any(b.name.startswith(o) or b.group == o for o in only)]
    unknown = [o for o in only if not any(b.name.startswith(o) or b.group == o for b in allb)]
    if unknown:
        raise SystemExit(f"--only: no benchmark matches {', '.join(unknown)}; known: "
                         f"{', '.join(b.name for b in allb)}")
    return out


def machine_sizes(full: list, cpu: list | None = None) -> list[tuple[Any, str | None]]:
    """[(size, only)] of a full run, in increasing size: sizes in both lists run on every
    machine (only=None), the others only on GPUs (`full` alone) or CPU adapters (`cpu` alone).
    `cpu` None: the same sizes everywhere."""
    cpu = full if cpu is None else cpu
    return [(s, None if s in full and s in cpu else ("gpu" if s in full else "cpu"))
            for s in sorted(set(full) | set(cpu))]


def sizes(full: list[int], quick: list[int], label=None, cpu: list[int] | None = None) -> Callable[[bool], list[Case]]:
    """Cases from a list of sizes (quick run: the `quick` list); `label(size)` names each.
    `cpu`: the full run's sizes where gfxrt's adapter is a CPU (default: `full`), e.g. without
    a case that takes minutes on lavapipe."""
    label = label or fmt_count

    def cases(is_quick: bool) -> list[Case]:
        if is_quick:
            return [Case(label(s), s) for s in quick]
        return [Case(label(s), s, only) for s, only in machine_sizes(full, cpu)]
    return cases


def fmt_bytes(n: int) -> str:
    """16384 -> '16 KB'."""
    for unit, k in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= k and n % k == 0:
            return f"{n // k} {unit}"
    return f"{n} B"


def fmt_count(n: int) -> str:
    """1048576 -> '2^20'."""
    if n >= 1 << 10 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return str(n)
