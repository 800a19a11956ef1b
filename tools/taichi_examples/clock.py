"""A deterministic clock for the program under test: the same times in the Taichi run and the gfxrt run.

Programs animate on the wall clock (`iTime[None] = time.perf_counter() - t0`), so two runs of
one program on the real clock disagree by however much faster one library ran. The harness
gives the program itself (its own `import time` / `from time import ...`, not the libraries'
imports) a copy of the `time` module whose clocks advance by `STEP` seconds per call and whose
`sleep(s)` advances them by `s` without waiting. A program's busy-wait (`while time.time() < t:`)
still ends, and two readings never coincide (no division by zero in an fps counter).
"""
import builtins
import time as _time
import types

STEP = 1e-3  # seconds per reading


class _Clock:
    def __init__(self):
        self.t = 0.0

    def read(self) -> float:
        self.t += STEP
        return self.t


def module() -> types.ModuleType:
    """A fresh `time` module: the real one's names, its clocks replaced by one deterministic clock."""
    clock = _Clock()
    m = types.ModuleType("time", _time.__doc__)
    m.__dict__.update({k: v for k, v in vars(_time).items() if not k.startswith("__")})
    epoch, counter = 1_750_000_000.0, 1000.0  # time.time() looks like a date; the counters like an uptime

    def sleep(seconds):
        clock.t += max(0.0, float(seconds))

    m.time = lambda: epoch + clock.read()
    m.time_ns = lambda: int((epoch + clock.read()) * 1e9)
    for name in ("perf_counter", "monotonic", "process_time", "thread_time"):
        setattr(m, name, lambda: counter + clock.read())
        setattr(m, name + "_ns", lambda: int((counter + clock.read()) * 1e9))
    m.sleep = sleep
    return m


def program_builtins() -> dict:
    """`__builtins__` for the program's globals: `import time` there gives the deterministic clock."""
    fake = module()
    real_import = builtins.__import__

    def _import(name, globals=None, locals=None, fromlist=(), level=0):
        if name == "time" and level == 0:
            return fake
        return real_import(name, globals, locals, fromlist, level)

    b = dict(vars(builtins))
    b["__import__"] = _import
    return b
