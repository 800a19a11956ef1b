"""Taichi's own example programs, run by gfxrt and by Taichi 1.7.4, final states compared.

    python -m tools.taichi_examples.run [--examples DIR] [--taichi-python PY] [-k PATTERN]
           [--frames N] [--timeout S] [-j JOBS] [--out DIR] [--md FILE] [--json FILE] [--refresh] [--draw] [--window]

The examples come from an installed taichi (`--taichi-python`, default: env TAICHI_PYTHON, else
the first `python` on PATH that imports taichi) or `--examples`; nothing of Taichi's is
committed here. Each selected program (selection.py) is translated `ti` -> `gr`
(translate.py) and run headless for `--frames` frames (harness.py), each run in its own
process under `timeout`: by gfxrt (this python, this repository first on PYTHONPATH) and by
Taichi on Vulkan (lavapipe here) and on its CPU backend. The Taichi runs are cached in --out
(keyed by the program text, the frame count and HARNESS_VERSION) until --refresh. Taichi's Vulkan state is
the reference (its CPU state where Taichi's Vulkan backend cannot run the program), and the
gap between Taichi's two backends sets each array's tolerance (compare.py). Where Taichi's
Vulkan backend cannot run the program (sparse SNodes, f64 atan2, ...), the calibration partner
is Taichi's CPU backend again with `fast_math=False`: the same program, rounded differently.

A program whose state differs is run once more by Taichi's CPU backend with `debug=True`;
when Taichi's bounds check stops it, the program reads or writes outside a field, which
Taichi leaves undefined (it reads a neighbouring field's memory; gfxrt stays in the field's buffer),
and its row says `undefined` with Taichi's message instead of `differs`.
"""
import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
HARNESS_VERSION = 1  # bump when harness.py or headless.py change what a run does: Taichi's cached runs go
REPO = HERE.parent.parent
sys.path.insert(0, str(REPO))
from gfxrt.gui.png import read_png  # noqa: E402
from tools.taichi_examples.compare import calibrate, compare  # noqa: E402
from tools.taichi_examples.selection import frames_for, select  # noqa: E402
from tools.taichi_examples.translate import translate_example  # noqa: E402


def find_taichi_python(explicit=None):
    cands = [explicit, os.environ.get("TAICHI_PYTHON"), sys.executable, shutil.which("python3")]
    for py in cands:
        if py and Path(py).exists():
            r = subprocess.run([py, "-c", "import taichi, os; print(os.path.dirname(taichi.__file__))"],
                               capture_output=True, text=True)
            if r.returncode == 0:
                return py, Path(r.stdout.strip().splitlines()[-1]) / "examples"
    return None, None


def prepare(examples: Path, out: Path):
    """out/ti: the examples as shipped; out/gr: translated (data files copied alongside)."""
    for side in ("ti", "gr"):
        shutil.rmtree(out / side, ignore_errors=True)
    shutil.copytree(examples, out / "ti", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(examples, out / "gr", ignore=shutil.ignore_patterns("__pycache__"))
    for p in (out / "gr").rglob("*.py"):
        p.write_text(translate_example(p.read_text()))


def run_one(python, lib, arch, root: Path, rel: str, state: Path, frames: int, timeout: int, extra=(),
            draw=None) -> dict:
    prog = root / rel
    state.parent.mkdir(parents=True, exist_ok=True)
    for suffix in (".npz", ".json", ".log"):
        state.with_suffix(suffix).unlink(missing_ok=True)
    env = dict(os.environ)
    env.setdefault("XDG_RUNTIME_DIR", "/tmp")
    inherited = [d for d in env.get("PYTHONPATH", "").split(os.pathsep) if d]   # e.g. where wgpu was installed
    env["PYTHONPATH"] = os.pathsep.join(([str(REPO)] if lib == "gfxrt" else []) + [str(root)] + inherited)
    env["MPLBACKEND"] = "Agg"
    t0 = time.time()
    cmd = ["timeout", "-k", "10", str(timeout), python, str(HERE / "harness.py"), "--lib", lib, "--arch", arch,
           "--frames", str(frames), "--out", str(state.with_suffix(".npz")), *extra] \
        + (["--draw", str(draw)] if draw else []) + [str(prog)]
    with open(state.with_suffix(".log"), "w") as log:
        proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=prog.parent)
    wall = round(time.time() - t0, 1)
    meta_file = state.with_suffix(".json")
    if meta_file.exists():
        meta = json.loads(meta_file.read_text())
    else:
        tail = state.with_suffix(".log").read_text(errors="replace").strip().splitlines()[-1:] or [""]
        why = "timeout" if proc.returncode in (124, 137) else f"crashed (exit {proc.returncode})"
        meta = {"status": "error", "error": f"{why}: {tail[0][:200]}" if why != "timeout" else f"timeout ({timeout} s)"}
        meta_file.write_text(json.dumps(meta))
    meta["wall_s"] = wall
    return meta


def load_state(state: Path) -> dict:
    out = {}
    with np.load(state.with_suffix(".npz")) as z:
        for k in z.files:
            try:
                out[k] = z[k]
            except ValueError:  # an object array (a field of nested struct members): not compared
                pass
    return out


def first_line(msg: str) -> str:
    """An error's own first line; for a CompileError (File / source / caret / message) the message and its line."""
    lines = (msg or "").strip().splitlines()
    if not lines:
        return ""
    carets = [i for i, ln in enumerate(lines) if re.fullmatch(r"\s*\^+\s*", ln)]
    where = re.search(r'File "[^"]*/([^/"]+)", line (\d+)', lines[0])
    if carets and carets[0] + 1 < len(lines) and where:
        kind = lines[0].split(":", 1)[0]
        return f"{kind}: {lines[carets[0] + 1].strip()[:140]} ({where.group(1)}:{where.group(2)})"
    return lines[0][:160]


# Taichi's out-of-bounds message under debug=True (fields: "Accessing field ... with indices ...")
OUT_OF_BOUNDS = re.compile(r"Accessing field .* with indices|[Oo]ut of bound")


def calibration(st: Path, metas: dict, ref_key) -> dict | None:
    """Each array's (mode, tolerance) from the gap between Taichi's two runs of the program."""
    if metas["ti-cpu"]["status"] == "error":
        return None
    if ref_key == "ti-vulkan":
        return calibrate(load_state(st / "ti-cpu"), load_state(st / "ti-vulkan"))
    partner = metas.get("ti-cpu-fm0")
    if partner is None or partner["status"] == "error":
        return None
    return calibrate(load_state(st / "ti-cpu-fm0"), load_state(st / "ti-cpu"))


def verdict(rel, st: Path, metas: dict) -> dict:
    gr, tv, tc = metas["gr"], metas["ti-vulkan"], metas["ti-cpu"]
    ref_key = "ti-vulkan" if tv["status"] != "error" else "ti-cpu" if tc["status"] != "error" else None
    row = {"program": rel, "ref": ref_key, "gr_s": gr.get("wall_s"), "ti_s": (metas.get(ref_key) or {}).get("wall_s")}
    if ref_key is None:
        return {**row, "status": "skipped", "detail": "Taichi fails (CPU backend): " + first_line(tc.get("error"))}
    if gr["status"] == "error":
        return {**row, "status": "error", "detail": first_line(gr.get("error"))}
    ref = load_state(st / ref_key)
    cal = calibration(st, metas, ref_key)
    v = compare(load_state(st / "gr"), ref, cal)
    if not ref:
        return {**row, "status": "match", "detail": "no fields or ndarrays to compare: ran to the end"}
    if v["match"]:
        k, err, tol, mode = v["worst"]
        return {**row, "status": "match", "detail": f"worst {k}: {err:.1e} (tol {tol:.0e}, {mode})"
                + ("" if cal else "; uncalibrated: Taichi ran it on one backend only")
                + ("; calibrated with Taichi's CPU backend at fast_math=False" if cal and ref_key == "ti-cpu" else "")}
    if v["missing"]:
        k = v["missing"][0]
        why = gr.get("unread", {}).get(k.removesuffix(".grad").split(".")[0], "not found")
        return {**row, "status": "differs", "detail": f"{len(v['missing'])} arrays missing, first {k}: {why}"[:200]}
    k, err, tol, mode = v["worst"]
    return {**row, "status": "differs", "detail": f"{k}: {err:.2e} > tol {tol:.0e} ({mode})"}


def program_key(prog: Path, frames: int, draw: bool = False) -> str:
    """A Taichi run is reused while the program, the frame count, --draw and HARNESS_VERSION stay the same."""
    tail = f"|{frames}|{HARNESS_VERSION}" + ("|draw" if draw else "")
    return hashlib.sha256(prog.read_bytes() + tail.encode()).hexdigest()[:16]


def frames_detail(st: Path) -> str:
    """With --draw: how many frames each library drew, and how far gfxrt's last frame of each
    window is from Taichi's (mean absolute difference of the 8-bit channels, and the share of
    pixels off by more than 32 in some channel)."""
    gr = sorted((st / "gr-frames").glob("*.png"))
    ti = {p.name: p for p in (st / "ti-vulkan-frames").glob("*.png")}
    parts = [f"frames: gfxrt {len(gr)}, taichi {len(ti)}"]
    last = {}
    for p in gr:
        last[p.name.split("-")[0]] = p
    for _, p in sorted(last.items()):
        if p.name in ti:
            a, b = read_png(p).astype(np.int16), read_png(ti[p.name]).astype(np.int16)
            if a.shape == b.shape:
                d = np.abs(a - b)
                far = (d.max(axis=2) > 32).mean()
                parts.append(f"{p.name}: mean |diff| {d.mean():.2f}/255, {far:.1%} of pixels > 32")
    return "; ".join(parts)


# Taichi's runs of a program: name -> (arch, extra harness arguments)
TAICHI_RUNS = {"ti-vulkan": ("vulkan", ()), "ti-cpu": ("cpu", ()),
               "ti-cpu-fm0": ("cpu", ("--fast-math", "0")),   # the calibration partner where Vulkan cannot run it
               "ti-cpu-debug": ("cpu", ("--debug",))}         # Taichi's bounds check, for a program that differs


def taichi_run(name, rel, a, out, taichi_python) -> dict:
    """Taichi's run `name` of the program, from the cache in --out where the program is unchanged."""
    st = out / "state" / rel.removesuffix(".py")
    frames = frames_for(rel, a.frames)
    key = program_key(out / "ti" / rel, frames, a.draw and name == "ti-vulkan")
    meta_file = (st / name).with_suffix(".json")
    if not a.refresh and meta_file.exists():
        m = json.loads(meta_file.read_text())
        if m.get("key") == key:
            return m
    arch, extra = TAICHI_RUNS[name]
    draw = st / f"{name}-frames" if a.draw and name == "ti-vulkan" else None   # Taichi's frames to compare with
    if draw is not None:
        shutil.rmtree(draw, ignore_errors=True)
    m = run_one(taichi_python, "taichi", arch, out / "ti", rel, st / name, frames, a.timeout, extra, draw)
    m["key"] = key
    meta_file.write_text(json.dumps(m, indent=1))
    return m


def run_program(rel, a, out, taichi_python) -> dict:
    st = out / "state" / rel.removesuffix(".py")
    metas = {name: taichi_run(name, rel, a, out, taichi_python) for name in ("ti-vulkan", "ti-cpu")}
    if metas["ti-vulkan"]["status"] == "error" and metas["ti-cpu"]["status"] != "error":
        metas["ti-cpu-fm0"] = taichi_run("ti-cpu-fm0", rel, a, out, taichi_python)
    if a.draw:
        shutil.rmtree(st / "gr-frames", ignore_errors=True)
    metas["gr"] = run_one(sys.executable, "gfxrt", "vulkan", out / "gr", rel, st / "gr", frames_for(rel, a.frames),
                          a.timeout, ("--window",) if a.window else (), draw=st / "gr-frames" if a.draw else None)
    row = verdict(rel, st, metas)
    if row["status"] == "differs":
        row = undefined_if_out_of_bounds(row, taichi_run("ti-cpu-debug", rel, a, out, taichi_python))
    if a.draw:
        row["frames"] = frames_detail(st)
        if a.window:
            row["frames"] += f"; in a window: {metas['gr'].get('frames_in_window', 0)}"
    return row


def undefined_if_out_of_bounds(row: dict, debug_meta: dict) -> dict:
    """A differing row becomes `undefined` where Taichi's debug run stopped at its bounds check."""
    error = (debug_meta.get("error") or "") if debug_meta.get("status") == "error" else ""
    where = next((ln.strip() for ln in error.splitlines() if OUT_OF_BOUNDS.search(ln)), None)
    if where is None:
        return row
    return {**row, "status": "undefined",
            "detail": f"{row['detail']}; out of bounds, undefined in Taichi: its debug mode says {where}"[:300]}


def markdown(rows, skipped) -> str:
    n_match = sum(r["status"] == "match" for r in rows)
    n_undef = sum(r["status"] == "undefined" for r in rows)
    undef = f" {n_undef} more read outside a field (undefined in Taichi: its debug mode stops them)." if n_undef else ""
    lines = [f"**{n_match} of {len(rows)} run and match** Taichi 1.7.4.{undef}", "",
             "| program | status | detail |", "|---|---|---|"]
    for r in rows:
        detail = r["detail"] + (f"; {r['frames']}" if r.get("frames") else "")
        lines.append(f"| {r['program']} | {r['status']} | {detail.replace('|', '/')} |")
    if skipped:
        lines += ["", "Not in the corpus:", "", "| program | reason |", "|---|---|"]
        lines += [f"| {p} | {why} |" for p, why in skipped]
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--examples", type=Path, default=None)
    ap.add_argument("--taichi-python", default=None)
    ap.add_argument("-k", default=None, help="only programs whose path contains this (or one of a,b,c)")
    ap.add_argument("--frames", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("/tmp/taichi_examples_gr"))
    ap.add_argument("--md", default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--refresh", action="store_true", help="rerun Taichi too (its runs are cached in --out)")
    ap.add_argument("--draw", action="store_true",
                    help="the programs' GUIs (ti.GUI / gr.GUI, ti.ui / gr.ui) draw off-screen: frames in "
                         "<out>/state/<program>/*-frames/, "
                         "gfxrt's last frames compared with Taichi's")
    ap.add_argument("--window", action="store_true",
                    help="with --draw: gfxrt's GUIs draw in real windows (on $DISPLAY; without one, on an Xvfb "
                         "started here)")
    a = ap.parse_args(argv)
    a.draw = a.draw or a.window
    taichi_python, found = find_taichi_python(a.taichi_python)
    examples = a.examples or found
    if taichi_python is None or examples is None or not examples.is_dir():
        sys.exit("no python with taichi found: pass --taichi-python (and/or --examples)")
    out = a.out.resolve()
    prepare(examples, out)
    programs, skipped = select(out / "ti")
    if a.k:
        keys = a.k.split(",")
        programs = [p for p in programs if any(k in p for k in keys)]
        skipped = [s for s in skipped if any(k in s[0] for k in keys)]
    rows = []
    xvfb = virtual_display() if a.window and not os.environ.get("DISPLAY") else None
    try:
        rows = run_all(programs, a, out, taichi_python)
    finally:
        if xvfb is not None:
            xvfb.terminate()
            xvfb.wait(10)
    md = markdown(rows, skipped)
    if a.md:
        Path(a.md).write_text(md)
    if a.json:
        Path(a.json).write_text(json.dumps({"rows": rows, "skipped": skipped}, indent=1))
    print(md)
    return rows


def virtual_display():
    """An Xvfb server (Debian's `xvfb`) on a free display number, $DISPLAY set to it for the runs."""
    if shutil.which("Xvfb") is None:
        sys.exit("--window needs a display: set DISPLAY or install Xvfb (apt-get install xvfb)")
    num = next(n for n in range(99, 300) if not os.path.exists(f"/tmp/.X11-unix/X{n}")
               and not os.path.exists(f"/tmp/.X{n}-lock"))
    proc = subprocess.Popen(["Xvfb", f":{num}", "-screen", "0", "1280x1024x24"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while not os.path.exists(f"/tmp/.X11-unix/X{num}") and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.environ["DISPLAY"] = f":{num}"
    return proc


def run_all(programs, a, out, taichi_python) -> list:
    rows = []
    with cf.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(run_program, rel, a, out, taichi_python): rel for rel in programs}
        for f in cf.as_completed(futs):
            r = f.result()
            print(f"{r['program']}: {r['status']}  {r['detail']}  (gfxrt {r['gr_s']} s, Taichi {r['ti_s']} s)",
                  flush=True)
            rows.append(r)
    rows.sort(key=lambda r: r["program"])
    return rows


if __name__ == "__main__":
    main()
