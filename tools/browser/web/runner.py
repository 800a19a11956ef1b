"""The page's Python side (docs/browser.md, "The page"): runs a visitor's program as a fresh
`__main__` and hands what it passes to `show(x)` to the page, which draws it.

`show(x, title="")` takes a gr.field / gr.ndarray (read back with `to_list()`), a numpy array where
numpy is present, or (nested) lists / tuples / array.array of numbers:
  - shape (n,): a line plot of the n values against their index;
  - shape (w, h): a grey image, (w, h, 3) / (w, h, 4): RGB / RGBA, as Taichi's `gui.set_image`:
    x[i, j] is the pixel i from the left and j from the bottom, values 0..1 (clamped).
Each call adds a view named by its title; showing under the title of an earlier view redraws that
view instead (a loop that shows a frame at a time animates). The same file runs a program on the desktop:
`python tools/browser/web/runner.py PROGRAM.py` prints its output, then what it showed as JSON.
No numpy, no browser imports: the page passes `sink`, a JavaScript function (page.js, `draw`).
"""
from __future__ import annotations

import array
import json
import linecache
import os
import runpy
import sys
import tempfile
import time
import traceback

FILE = "main.py"  # the program's name in tracebacks and compile errors


def shape_of(x) -> tuple[int, ...]:
    """The shape of nested sequences `x` of numbers; ValueError where they are ragged."""
    shape, level = [], [x]
    while isinstance(level[0], (list, tuple, array.array, memoryview, range)):
        n = len(level[0])
        if any(len(v) != n or not isinstance(v, (list, tuple, array.array, memoryview, range)) for v in level):
            raise ValueError("show(): the rows differ in length (a ragged list)")
        shape.append(n)
        if n == 0:
            break
        level = [e for v in level for e in v]
    return tuple(shape)


def view(x, title: str = "") -> dict:
    """What show(x) draws: {'kind': 'plot' | 'image', 'shape', 'data': array('f') of the values, flat
    in x's order, 'title'}; TypeError / ValueError for what it cannot draw."""
    if hasattr(x, "to_list"):    # gr.field / gr.ndarray
        x = x.to_list()
    elif hasattr(x, "tolist"):   # numpy, where present
        x = x.tolist()
    if not isinstance(x, (list, tuple, array.array, memoryview, range)):
        raise TypeError(f"show() takes a gr.field / gr.ndarray or a (nested) list of numbers, not {type(x).__name__}")
    shape = shape_of(x)
    if len(shape) == 1:
        kind = "plot"
    elif len(shape) == 2 or (len(shape) == 3 and shape[2] in (3, 4)):
        kind = "image"
    else:
        raise ValueError(f"show() draws shape (n,) as a plot and (w, h), (w, h, 3) or (w, h, 4) as an image, "
                         f"not {shape}")
    if 0 in shape:
        raise ValueError(f"show(): nothing to draw (shape {shape})")
    flat = x
    for _ in shape[1:]:
        flat = [e for v in flat for e in v]
    try:
        data = array.array("f", flat)
    except TypeError:
        raise TypeError("show() draws numbers only") from None
    return {"kind": kind, "shape": shape, "data": data, "title": str(title)}


def error_text(e: BaseException, path: str) -> str:
    """The error as a visitor reads it: the program's own frames (none of the runner's or gfxrt's),
    then the exception; a gr.CompileError's message holds its line and caret."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == path]
    head = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames)) if frames else ""
    return (head + "".join(traceback.format_exception_only(type(e), e))).replace(path, FILE)


def run(source: str, sink, workdir: str | None = None) -> bool:
    """Run the program `source` as `__main__` with `show` defined; each show(x) calls
    sink(kind, shape, data, title) (see view()). print() goes to sys.stdout, an error's text
    (error_text) to sys.stderr. True when the program ran to its end."""
    workdir = workdir or tempfile.gettempdir()
    path = os.path.join(workdir, FILE)
    with open(path, "w") as f:  # a file: gr.kernel reads its source (inspect), errors quote its lines
        f.write(source)
    linecache.cache.pop(path, None)  # the last run's lines, whatever the file's time stamp says

    def show(x, title: str = "") -> None:
        v = view(x, title)
        sink(v["kind"], v["shape"], v["data"], v["title"])

    try:
        runpy.run_path(path, init_globals={"show": show}, run_name="__main__")
    except SystemExit as e:  # exit() / sys.exit(): the program ended; a non-zero status says so
        if e.code not in (None, 0):
            sys.stderr.write(f"exit status {e.code}\n")
            return False
    except BaseException as e:  # noqa: BLE001 (the page shows whatever the program raised)
        sys.stdout.flush()
        sys.stderr.write(error_text(e, path))
        return False
    finally:
        sys.stdout.flush()
    return True


def main(argv: list[str]) -> int:
    """Desktop: run a program as the page does; print its output, then one JSON line with
    {'ok', 'seconds', 'views': [{'kind', 'shape', 'title', 'data': [...], 'count': times shown}]}."""
    views = {}  # by title, as the page keeps them: the last of each title, in the order first shown

    def sink(kind, shape, data, title):
        count = views[title]["count"] + 1 if title in views else 1
        views[title] = {"kind": kind, "shape": list(shape), "title": title, "data": data.tolist(), "count": count}

    t0 = time.perf_counter()
    with open(argv[0]) as f, tempfile.TemporaryDirectory() as tmp:
        ok = run(f.read(), sink, tmp)
    print(json.dumps({"ok": ok, "seconds": time.perf_counter() - t0, "views": list(views.values())}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
