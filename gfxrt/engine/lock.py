"""`LOCK`, the process-wide re-entrant lock that makes the public API thread-safe, and
`locked` (see gfxrt/engine/context.py). It lives below the runtime so that the runtime and the
blitter can hold it without importing the process state that creates them."""
from __future__ import annotations

import functools
import os
import threading

LOCK = threading.RLock()
# a child of os.fork() has only the forking thread: a lock another thread held at the fork
# would stay held forever there (gfxrt/engine/context.py says what else a forked child drops)
os.register_at_fork(after_in_child=LOCK._at_fork_reinit)


def locked(fn):
    """Run `fn` holding `LOCK` (for public entry points; re-entrant)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with LOCK:
            return fn(*args, **kwargs)
    return wrapper
