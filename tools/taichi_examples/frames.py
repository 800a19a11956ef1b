"""Taichi's GGUI example programs, translated to gfxrt, run with the real `gr.ui` (off-screen, or
in a window where a display is found) for a few frames; the last frame is saved as PNG.

    python -m tools.taichi_examples.frames [--taichi-python PY | --examples DIR] [-k ggui] [--frames 3] --out DIR

Unlike the state comparison (run.py, whose headless stand-ins replace the windows), this draws
every frame with gfxrt's render pipelines: it shows that the programs' drawing runs and what it
looks like. Each program runs in its own process; `window.show()` number `--frames` saves the
picture (`window.save_image`) and ends the program.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class FramesDone(BaseException):
    """Ends the program after its last frame (a BaseException: `except Exception` lets it through)."""


def _child(program: Path, png: Path, frames: int) -> None:
    import gfxrt as gr

    shown = {"n": 0}
    real_show = gr.ui.Window.show

    def show(self):
        real_show(self)
        shown["n"] += 1
        if shown["n"] >= frames:
            self.save_image(str(png))
            raise FramesDone()

    gr.ui.Window.show = show
    os.chdir(program.parent)
    sys.path.insert(0, str(program.parent))
    sys.argv = [str(program)]
    g = {"__name__": "__main__", "__file__": str(program)}
    try:
        exec(compile(program.read_text(), str(program), "exec"), g)
    except FramesDone:
        pass
    if not png.exists():
        raise SystemExit(f"{program.name} ended after {shown['n']} frames without reaching {frames}")


def run(programs: list[Path], out: Path, frames: int, timeout: int) -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    for prog in programs:
        png = out / (prog.stem + ".png")
        png.unlink(missing_ok=True)
        t0 = time.time()
        r = subprocess.run([sys.executable, "-m", "tools.taichi_examples.frames", "--one", str(prog), "--png", str(png),
                            "--frames", str(frames)], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=timeout)
        row = {"program": prog.name, "ok": r.returncode == 0 and png.exists(), "s": round(time.time() - t0, 1),
               "png": str(png)}
        if not row["ok"]:
            row["error"] = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["?"]
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def translated(examples: Path, pattern: str, dest: Path) -> list[Path]:
    """The example programs whose path contains `pattern`, translated into `dest`."""
    from tools.taichi_examples.translate import translate_example

    dest.mkdir(parents=True, exist_ok=True)
    progs = []
    for p in sorted(examples.rglob("*.py")):
        rel = p.relative_to(examples)
        if pattern in str(rel) and not p.name.startswith("_"):
            d = dest / rel
            d.parent.mkdir(parents=True, exist_ok=True)
            for data in p.parent.iterdir():  # data files beside the program
                if data.is_file() and data.suffix != ".py" and not (d.parent / data.name).exists():
                    (d.parent / data.name).write_bytes(data.read_bytes())
            d.write_text(translate_example(p.read_text()))
            progs.append(d)
    return progs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--png", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--taichi-python")
    ap.add_argument("--examples", type=Path)
    ap.add_argument("-k", default="ggui_examples/")
    ap.add_argument("--frames", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--out", type=Path, default=Path("/tmp/gfxrt_ui_frames"))
    a = ap.parse_args(argv)
    if a.one:
        _child(a.one, a.png, a.frames)
        return None
    examples = a.examples
    if examples is None:
        from tools.taichi_examples.run import find_taichi_python

        examples = find_taichi_python(a.taichi_python)[1]
    if examples is None or not examples.is_dir():
        sys.exit("no Taichi examples found: pass --taichi-python or --examples")
    return run(translated(examples, a.k, a.out / "gr"), a.out, a.frames, a.timeout)


if __name__ == "__main__":
    main()
