"""What gfxrt tells the user outside errors: the one line `gr.init()` prints when it opens a
device, its log level, and warnings that point at the user's line.

Log level (Taichi's names, lowest first): "trace", "debug", "info" (the default), "warn",
"error", "critical"; case-insensitive, "warning" too; Taichi's `ti.INFO` & co. are these
strings. `gr.init(log_level=...)` wins, else env GFXRT_LOG_LEVEL, else Taichi's TI_LOG_LEVEL.
At "warn" or above the device line is not printed. Messages go to stderr: program output
on stdout stays the program's own (Taichi prints its line to stdout).
"""
from __future__ import annotations

import sys
import warnings

from .tracebacks import ours

LEVELS = ("trace", "debug", "info", "warn", "error", "critical")
TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL = LEVELS


def level_name(value, source: str = "log_level") -> str:
    """`value` as one of LEVELS; ValueError naming `source` for anything else."""
    name = value.lower() if isinstance(value, str) else None
    name = "warn" if name == "warning" else name
    if name not in LEVELS:
        raise ValueError(f"{source} must be one of {', '.join(repr(n) for n in LEVELS)}, not {value!r}")
    return name


def resolve(requested=None, env: tuple | None = None) -> str:
    """The level in effect: `requested` (gr.init's log_level), else `env` (the variable and value
    of GFXRT_LOG_LEVEL, else TI_LOG_LEVEL: gfxrt/engine/init_options.py), else "info"."""
    if requested is not None:
        return level_name(requested)
    return level_name(env[1], env[0]) if env else INFO


def info(message: str, level: str) -> None:
    """Print `[gfxrt] message` on stderr when `level` lets "info" through."""
    if LEVELS.index(level) <= LEVELS.index(INFO):
        print(f"[gfxrt] {message}", file=sys.stderr, flush=True)


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """warnings.warn attributed to the first caller outside gfxrt and its compiler (the user's
    line calling gr.init, or the launch that initialized gfxrt), however deep the call came."""
    frame, level = sys._getframe(1), 2
    while frame is not None and ours(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
