"""`LOCK`, the process-wide re-entrant lock that makes the public API thread-safe, and
`locked` (see gfxrt/context.py). It lives below the runtime so that the runtime and the
blitter can hold it without importing the process state that creates them."""
from __future__ import annotations

import functools
import threading

LOCK = threading.RLock()


def locked(fn):
    """Run `fn` holding `LOCK` (for public entry points; re-entrant)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with LOCK:
            return fn(*args, **kwargs)
    return wrapper
