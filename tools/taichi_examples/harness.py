"""Run one example program headless and dump the final state of its fields and ndarrays.

    python harness.py --lib taichi|gfxrt [--arch vulkan|cpu] [--fast-math 0|1] [--debug]
                      --frames N --out STATE.npz [--draw DIR [--window]] PROGRAM.py

Runs in the process of whichever python has the library (Taichi's venv or gfxrt's). The
program runs as `__main__` in its own directory with `sys.argv = [PROGRAM]`, Python's and
numpy's random generators seeded, its own `import time` a deterministic clock (clock.py),
GUI / GGUI / matplotlib replaced by headless stand-ins (headless.py; with --draw DIR the
libraries' own 2D GUIs draw off-screen, frames into DIR;
with --window as well, in real windows where the library opens one: a display is needed).
For Taichi, `ti.init`'s `arch` is replaced by `--arch`; gfxrt runs the program as written (its
`gr.init` defaults are Taichi's, `fast_math=True` included). `--fast-math` and `--debug` override
`ti.init` / `gr.init` (the corpus's calibration run and its out-of-bounds check, run.py).

When the program ends, or its (N+1)-th frame is requested, every field and ndarray
reachable from the program's globals, from the locals of its frames still running, and from
one level of its own objects, lists and dicts is dumped with `to_numpy()` (and its `.grad`
where it has one) into STATE.npz; STATE.json says how the program ended, and which
containers could not be read (more than MAX_ELEMENTS cells, or `to_numpy()` failed).
"""
import argparse
import json
import math
import os
import random
import sys
import time
import traceback
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import clock  # noqa: E402
import headless  # noqa: E402

MAX_ELEMENTS = 1 << 26


def _is_container(v) -> bool:
    return (not isinstance(v, (type, types.ModuleType, types.FunctionType))
            and callable(getattr(type(v), "to_numpy", None)) and hasattr(v, "shape")
            and type(v).__module__.split(".")[0] in ("taichi", "gfxrt"))


def _children(v):
    """Values one level inside a program's own object, list, tuple or dict."""
    if isinstance(v, (list, tuple)):
        return [(f"[{i}]", x) for i, x in enumerate(v)]
    if isinstance(v, dict):
        return [(f"[{k!r}]", x) for k, x in v.items() if isinstance(k, (str, int))]
    if type(v).__module__ == "__main__" and hasattr(v, "__dict__") and not isinstance(v, type):
        return [(f".{k}", x) for k, x in sorted(vars(v).items())]
    return []


def collect(scopes) -> dict:
    """name -> container, first name wins, scopes visited in the order given, names sorted."""
    found, seen = {}, set()

    def visit(name, v, depth):
        if _is_container(v):
            if id(v) not in seen:
                seen.add(id(v))
                found[name] = v
            return
        if depth < 2:
            for k, x in _children(v):
                visit(name + k, x, depth + 1)

    for prefix, d in scopes:
        for k in sorted(d):
            if not k.startswith("__"):
                visit(prefix + k, d[k], 0)
    return found


def to_arrays(name, c) -> dict:
    import numpy as np
    out = {}
    a = c.to_numpy()
    if isinstance(a, dict):  # struct field
        for k, x in a.items():
            out[f"{name}.{k}"] = np.asarray(x)
    else:
        out[name] = np.asarray(a)
    try:
        g = getattr(c, "grad", None)
    except Exception:
        g = None
    if g is not None and _is_container(g):
        try:
            out.update(to_arrays(name + ".grad", g))
        except Exception:  # noqa: BLE001 - a gradient that was never allocated has no state
            pass
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", choices=("taichi", "gfxrt"), required=True)
    ap.add_argument("--arch", default="vulkan")
    ap.add_argument("--frames", type=int, default=3)
    ap.add_argument("--out", required=True)
    ap.add_argument("--fast-math", type=int, choices=(0, 1), default=None)
    ap.add_argument("--debug", action="store_true")
    ap.add_argument("--draw", default=None, help="ti.GUI / gr.GUI draw off-screen, frames as PNG files here")
    ap.add_argument("--window", action="store_true", help="with --draw: real windows (needs a display)")
    ap.add_argument("program")
    a = ap.parse_args()
    out = Path(a.out).resolve()
    prog = Path(a.program).resolve()
    meta = {"lib": a.lib, "arch": a.arch, "frames": a.frames, "status": "ok", "error": None}

    random.seed(0)
    import numpy as np
    np.random.seed(0)
    forced = {"fast_math": bool(a.fast_math)} if a.fast_math is not None else {}
    if a.debug:
        forced["debug"] = True
    if a.lib == "taichi":
        import taichi as lib
        real_init = lib.init

        def init(arch=None, **kwargs):
            kwargs.pop("device_memory_GB", None)
            kwargs.pop("device_memory_fraction", None)
            return real_init(arch=getattr(lib, a.arch), **{**kwargs, **forced})
    else:
        import gfxrt as lib
        lib.__all__  # noqa: B018  load the public API now: loaded later, it would bind gr.GUI over the stand-in
        real_init = lib.init

        def init(*args, **kwargs):
            return real_init(*args, **{**kwargs, **forced})
    lib.init = init
    headless.install(lib, a.frames, a.draw and str(Path(a.draw).resolve()), window=a.window)

    os.chdir(prog.parent)
    sys.path.insert(0, str(prog.parent))
    sys.argv = [str(prog)]
    module = types.ModuleType("__main__")  # the program is __main__, as under `python PROGRAM.py`
    module.__file__ = str(prog)
    sys.modules["__main__"] = module
    g = module.__dict__
    g["__builtins__"] = clock.program_builtins()  # the program's own `import time` reads a deterministic clock
    scopes = [("", g)]
    t0 = time.time()
    try:
        code = compile(prog.read_text(), str(prog), "exec")
        exec(code, g)
    except (headless.FramesDone, SystemExit, KeyboardInterrupt) as e:
        if isinstance(e, headless.FramesDone):
            meta["status"] = "frames"
        tb = e.__traceback__
        while tb is not None:  # locals of the program's functions still running (a main())
            f = tb.tb_frame
            if f.f_code.co_filename == str(prog) and f.f_locals is not g:
                scopes.append((f.f_code.co_name + ":", dict(f.f_locals)))
            tb = tb.tb_next
    except BaseException as e:  # noqa: BLE001 - any failure of the program is its result
        meta["status"] = "error"
        lines = traceback.format_exception(e)
        msg = f"{type(e).__name__}: {e}".strip()
        meta["error"] = msg
        meta["traceback"] = "".join(lines)[-6000:]
    meta["run_s"] = round(time.time() - t0, 2)
    meta["frames_shown"] = headless.frames_shown()
    meta["frames_in_window"] = headless.frames_in_window()
    arrays, unread = {}, {}
    if meta["status"] != "error":
        for name, c in collect(scopes).items():
            try:
                if math.prod(c.shape) > MAX_ELEMENTS:  # a sparse field's full index space, say
                    raise MemoryError(f"shape {tuple(c.shape)} is beyond {MAX_ELEMENTS} elements")
                arrays.update(to_arrays(name, c))
            except Exception as e:  # noqa: BLE001 - left out of the comparison, and said so
                unread[name] = f"{type(e).__name__}: {e}"[:300]
    meta["unread"] = unread
    np.savez(out, **{k: v for k, v in arrays.items()})
    meta["arrays"] = {k: [list(v.shape), str(v.dtype)] for k, v in arrays.items()}
    out.with_suffix(".json").write_text(json.dumps(meta, indent=1))
    sys.stdout.flush()
    os._exit(0)  # skip interpreter teardown: a library's exit hooks must not change the verdict


if __name__ == "__main__":
    main()
