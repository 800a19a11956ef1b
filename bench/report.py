"""Results: the run's environment (machine, git, versions), the JSON file, and tables.

`python -m bench.report RUN.json [RUN2.json ...] [--markdown]` prints the table of one run, or
of several runs merged (later files win per benchmark/case/framework), e.g. for bench/RESULTS.md;
`--spread` instead prints, for runs of the same command, each figure's median [min - max].
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import re
import shutil
import socket
import subprocess
import sys
import textwrap

SCHEMA = "gfxrt-bench/1"
WIDTH = 100  # the text output's columns when the terminal's are unknown (a pipe, a file)
BUSY = 0.5   # a 1-minute load average above this many per core: the machine is busy
# `*` means one thing wherever it appears (a figure, a peer's name in a ratio, a chart's label):
UNLIKE_NOTE = "* that peer runs an algorithm of another class than gfxrt's (e.g. a naive matmul against a tiled one)"


def git_info() -> dict:
    """The project's git commit, branch and whether tracked files differ from it."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def git(*args):
        try:
            return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""
    return {"commit": git("rev-parse", "HEAD") or None, "branch": git("rev-parse", "--abbrev-ref", "HEAD") or None,
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


def machine_info() -> dict:
    """Host name, platform, CPU model, cores, memory, Python version and load average."""
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu)
    except OSError:
        pass
    mem = None
    try:
        mem = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        pass
    return {"hostname": socket.gethostname(), "platform": platform.platform(), "cpu": cpu,
            "cores": os.cpu_count(), "memory_gib": mem, "python": sys.version.split()[0], "loadavg_start": loadavg()}


def loadavg() -> list[float] | None:
    """The 1/5/15-minute load averages: other work on the machine skews CPU-backend figures."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def busy(load: list[float] | None, cores: int | None) -> str | None:
    """A warning when the 1-minute load average says other work shares the machine (CPU
    adapters and the CPU reference then measure the other work too), else None."""
    if not load or not cores or load[0] <= BUSY * cores:
        return None
    return (f"warning: the machine is busy (load average {load[0]:g} on {cores} cores, above {BUSY:g} per core): "
            "figures of CPU adapters (lavapipe) and the CPU reference are slower and vary more; "
            "rerun on an idle machine to compare them")


def terminal_width() -> int:
    """The terminal's columns (at least 80), or WIDTH when the output is not a terminal."""
    return max(80, shutil.get_terminal_size((WIDTH, 24)).columns)


def wrap(text: str, width: int = WIDTH, indent: str = "", hang: str = "    ") -> list[str]:
    """One line of output as lines of at most `width` columns (continuations indented by `hang`
    more than the first line); words are never split."""
    return textwrap.wrap(text, width=width, initial_indent=indent, subsequent_indent=indent + hang,
                         break_long_words=False, break_on_hyphens=False) or [indent]


def now() -> str:
    """The current UTC time, ISO 8601."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def default_out(cwd: str | None = None) -> str:
    """Where a run's files go without --out: bench/out under the working directory (in a clone's
    root, the ignored bench/out/), never inside the installed package (site-packages)."""
    return os.path.join(os.path.abspath(cwd or os.getcwd()), "bench", "out")


def write_json(path: str, run: dict) -> None:
    """Write the run atomically (a reader never sees half a file)."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(run, f, indent=1)
    os.replace(tmp, path)


# -- figures ---------------------------------------------------------------------------------
def fmt(v: float | None) -> str:
    """A figure with about three significant digits."""
    if v is None:
        return "-"
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def speed(v: float, ref: float, higher: bool) -> float:
    """How many times faster `v` is than `ref` (>1: faster)."""
    return v / ref if higher else ref / v


def rows(run: dict) -> list[dict]:
    """One row per (benchmark, case) in run order, plus derived rows: {bench, case, unit,
    higher, cells: {framework: result}}."""
    out: dict[tuple, dict] = {}
    for r in run["results"]:
        key = (r["benchmark"], r["case"])
        row = out.setdefault(key, {"bench": r["benchmark"], "case": r["case"], "unit": r["unit"],
                                   "higher": r["higher_is_better"], "cells": {}})
        row["cells"][r["framework"]] = r
    result = list(out.values())
    for d in run.get("derived", []):
        result.append({"bench": d["benchmark"], "case": d["label"], "unit": d["unit"], "higher": d["higher_is_better"],
                       "cells": {fw: {"status": "ok", "value": v} for fw, v in d["values"].items()}})
    result.sort(key=lambda row: _order(run, row))
    return result


def _order(run, row):
    names = run.get("benchmarks", [])
    i = names.index(row["bench"]) if row["bench"] in names else len(names)
    return (i,)


def frameworks_of(run: dict) -> list[str]:
    """Frameworks that started (or have results), gfxrt first, then in run order."""
    with_results = {r["framework"] for r in run["results"]}
    fws = [f for f, info in run.get("frameworks", {}).items() if info.get("ok") or f in with_results]
    for r in run["results"]:
        if r["framework"] not in fws:
            fws.append(r["framework"])
    return sorted(fws, key=lambda f: (not f.startswith("gfxrt"), fws.index(f)))


# -- who is compared with whom ---------------------------------------------------------------
# A peer is "same" (like for like: a kernel language on gfxrt's graphics API, e.g. Taichi and
# Quadrants on Vulkan), "other" (a GPU peer on another API, e.g. CUDA, or a kernel language on
# the CPU), or "ref" (numpy and torch on the CPU: the CPU reference, shown apart, never a ratio).
ROLES = ("ours", "same", "other", "ref")
# Runs written before benchmarks declared `unlike` (the peers whose algorithm is of another class).
LEGACY_UNLIKE = {"matmul": ["taichi", "quadrants", "warp"], "histogram": ["taichi", "quadrants", "warp"]}


def ours_api(run: dict) -> str:
    """gfxrt's graphics API in this run ("vulkan", "metal", "dx12"), from its backend "wgpu/<api>"."""
    for spec, f in run.get("frameworks", {}).items():
        if spec.startswith("gfxrt") and f.get("ok"):
            backend = str(f.get("info", {}).get("backend", ""))
            if backend.startswith("wgpu/"):
                return backend[5:]
    return "vulkan"


def role(run: dict, spec: str) -> str:
    """"ours", "same", "other" or "ref" (see ROLES) for framework `spec` of `run`."""
    if spec.startswith("gfxrt"):
        return "ours"
    kind, backend = spec.partition(":")[0], spec.partition(":")[2]
    info = run.get("frameworks", {}).get(spec, {}).get("info") or {}
    backend = str(info.get("backend") or backend or ("cpu" if kind == "numpy" else "")).lower()
    if kind in ("numpy", "torch") and backend in ("cpu", ""):
        return "ref"
    if backend == ours_api(run):
        return "same"
    return "other"


def roles_of(run: dict) -> dict[str, list[str]]:
    """{role: [framework specs]} over the frameworks shown in the tables."""
    out: dict[str, list[str]] = {r: [] for r in ROLES}
    for fw in frameworks_of(run):
        out[role(run, fw)].append(fw)
    return out


API_NAMES = {"vulkan": "Vulkan", "metal": "Metal", "dx12": "D3D12", "d3d12": "D3D12", "gl": "OpenGL"}


def ratio_columns(run: dict) -> list[tuple[str, list[str]]]:
    """The ratio columns of the table: (heading, the peers it ranks), like for like first.
    numpy and torch on the CPU (the reference) never get one."""
    groups = roles_of(run)
    cols = []
    if groups["same"]:
        cols.append((f"gfxrt vs best {API_NAMES.get(ours_api(run), ours_api(run))} peer", groups["same"]))
    if groups["other"]:
        cols.append(("gfxrt vs best other peer", groups["other"]))
    return cols


def unlike(run: dict, bench: str) -> list[str]:
    """Framework kinds whose implementation of `bench` is of a different algorithmic class than gfxrt's."""
    return (run.get("unlike") or LEGACY_UNLIKE).get(bench, [])


def best_peer(row: dict, ours: str = "gfxrt", among=None) -> tuple[str, float] | None:
    """(framework, value) of the fastest peer with a right result in this row (only those in
    `among`, when given), or None."""
    ok = [(fw, c["value"]) for fw, c in row["cells"].items()
          if not fw.startswith(ours) and c.get("status") == "ok" and c.get("value")
          and (among is None or fw in among)]
    if not ok:
        return None
    return (max if row["higher"] else min)(ok, key=lambda t: t[1])


def ratio(run: dict, row: dict, among) -> tuple[float, str, bool] | None:
    """(gfxrt's speed / the best peer's among `among`, that peer, whether it runs another
    algorithm class) for one row, or None."""
    ours = next((c for f, c in row["cells"].items() if f.startswith("gfxrt")), None)
    bp = best_peer(row, among=among)
    if not (ours and ours.get("status") == "ok" and ours.get("value") and bp):
        return None
    return speed(ours["value"], bp[1], row["higher"]), bp[0], bp[0].split(":")[0] in unlike(run, row["bench"])


def device_rows(run: dict) -> list[dict]:
    """Rows of device-time figures (timestamp queries, CUDA events), where any were measured."""
    out = []
    for row in rows(run):
        cells = {fw: {"status": "ok", "value": c["device_value"]} for fw, c in row["cells"].items()
                 if c.get("status") == "ok" and c.get("device_value")}
        if cells:
            out.append({**row, "cells": cells})
    return out


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[`'\"])")


def short(reason: str, limit: int = 160) -> str:
    """A reason on one line: its whole sentences up to about `limit` characters, never a sentence
    cut in the middle (the first one is kept whole however long; the JSON has the rest)."""
    reason = " ".join(reason.split())
    if len(reason) <= limit:
        return reason
    out = ""
    for sentence in _SENTENCE.split(reason):
        if out and len(out) + 1 + len(sentence) > limit:
            return out + " [...]"
        out = f"{out} {sentence}" if out else sentence
    return out


def columns(run: dict) -> list[tuple[str, object]]:
    """The table's figure columns, in order: ("fw", spec) or ("ratio", (heading, peers)).
    gfxrt, the peers on its driver and their ratio, other peers and theirs, then the CPU
    reference (numpy, torch on the CPU) without a ratio."""
    groups = roles_of(run)
    cols = dict(ratio_columns(run))
    out: list[tuple[str, object]] = [("fw", f) for f in groups["ours"]]
    for key in ("same", "other"):
        out += [("fw", f) for f in groups[key]]
        heading = next((h for h, peers in cols.items() if peers == groups[key]), None)
        if heading:
            out.append(("ratio", (heading, groups[key])))
    out += [("fw", f) for f in groups["ref"]]
    return out


def heading(run: dict, col) -> str:
    """A column's heading: the framework spec (CPU reference marked) or the ratio's title."""
    kind, what = col
    if kind == "ratio":
        return what[0]
    return f"{what} (CPU ref)" if role(run, what) == "ref" else what


def table(run: dict, markdown: bool = False, device: bool = False, width: int = WIDTH) -> str:
    """The results as a text (or markdown) table: one column per framework, and gfxrt's speed
    relative to the best peer on its own driver (like for like) and to the best other peer
    (>1: gfxrt is faster); numpy and torch on the CPU are the reference, shown without a ratio.
    device=True: the device-time figures. Text wider than `width` is split into parts that
    each repeat the benchmark, case, unit and gfxrt columns; notes wrap."""
    cols = columns(run)
    head = ["benchmark", "case", "unit", *(heading(run, c) for c in cols)]
    body, notes = [], {}
    starred = False
    body_rows = device_rows(run) if device else rows(run)
    for row in body_rows:
        cells = []
        for kind, what in cols:
            if kind == "ratio":
                r = ratio(run, row, what[1])
                text = ""
                if r:
                    text = f"{r[0]:.2f}x ({r[1]}{'*' if r[2] else ''})"
                    starred = starred or r[2]
                cells.append(text)
                continue
            c = row["cells"].get(what)
            if c is None:
                cells.append("")
            elif c.get("status") in ("ok", "wrong"):
                other = what.split(":")[0] in unlike(run, row["bench"])
                starred = starred or other
                cells.append(fmt(c.get("value")) + ("*" if other else "") + ("!" if c["status"] == "wrong" else ""))
            else:
                reason = short(c.get("reason", ""))
                n = notes.setdefault((what, c["status"], reason), len(notes) + 1)
                cells.append(f"{c['status']}[{n}]")
        body.append([row["bench"], row["case"], row["unit"], *cells])
    text = _render(head, body, markdown, width, groups=_groups(cols))
    lines = [text]
    item = "- " if markdown else "  "

    def out(line: str) -> list[str]:  # one item of a list below the table, wrapped (markdown: as is)
        return [line] if markdown else wrap(line, width, hang="      ")
    if starred:
        lines += out(("\n" if markdown else "") + UNLIKE_NOTE + ": see the benchmark's note")
    wrong = [] if device else [(row["bench"], row["case"], fw, short(c.get("reason", ""))) for row in rows(run)
                               for fw, c in row["cells"].items() if c.get("status") == "wrong"]
    if wrong:
        lines.append(("\n" if markdown else "") + "! = wrong result (figure kept, not ranked):")
        lines += [ln for b, c, fw, why in wrong for ln in out(f"{item}{b}/{c} {fw}: {why}")]
    if notes:
        lines.append(("\n" if markdown else "") + "n/a and errors:")
        lines += [ln for (fw, _, why), n in notes.items() for ln in out(f"{item}[{n}] {fw}: {why}")]
    if not device:
        shown = {row["bench"] for row in body_rows}
        grouped: dict[str, list[str]] = {}  # note text -> benchmarks (bandwidth's three share one)
        for b, text in run.get("notes", {}).items():
            if b in shown and text:
                grouped.setdefault(" ".join(text.split()), []).append(b)
        if grouped:
            lines.append(("\n" if markdown else "") + "notes:")
            lines += [ln for text, bs in grouped.items() for ln in out(f"{item}{', '.join(bs)}: {text}")]
    return "\n".join(lines)


def _groups(cols) -> list[list[int]]:
    """Column indexes (after benchmark, case, unit and gfxrt's) that stay together when a wide
    table is split: the peers of one kind with their ratio; the CPU reference."""
    out: list[list[int]] = []
    start = 1  # cols[0], gfxrt's own column, repeats in every part; cols[i] is the table's column i + 3
    for i, (kind, _) in enumerate(cols):
        if i and (kind == "ratio" or i == len(cols) - 1):
            out.append(list(range(start + 3, i + 4)))
            start = i + 1
    return [g for g in out if g] if len(cols) > 1 else []


def _head_lines(h: str, cell: int) -> list[str]:
    """A heading on at most two lines, at least as wide as the column's cells."""
    w = max(cell, max(len(x) for x in h.split()), math.ceil(len(h) / 2))
    while len(lines := textwrap.wrap(h, w, break_long_words=False)) > 2:
        w += 1
    return lines


def _render(head, body, markdown, width: int = WIDTH, keep: int = 4, groups=None) -> str:
    """A table as markdown, or as text columns. Text wider than `width`: headings on two lines,
    and then, still too wide, several tables of the first `keep` columns and as many `groups`
    of the others (lists of column indexes, kept together where they fit) as fit the width."""
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(out)
    n = len(head)
    w = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    heads = [[str(h)] for h in head]
    if sum(w) + 2 * (n - 1) > width:
        cells = [max([len(str(r[i])) for r in body], default=0) for i in range(n)]
        heads = [_head_lines(str(h), cells[i]) for i, h in enumerate(head)]
        w = [max([cells[i]] + [len(x) for x in heads[i]]) for i in range(n)]
    keep = min(keep, n)
    covered = {i for g in (groups or []) for i in g}
    units = [g for g in (groups or [])] + [[i] for i in range(keep, n) if i not in covered]
    units.sort(key=lambda g: g[0])
    fixed = sum(w[:keep]) + 2 * (keep - 1)
    parts: list[list[int]] = [[]]
    for unit in units:
        need = sum(w[i] + 2 for i in unit)
        if parts[-1] and fixed + sum(w[i] + 2 for i in parts[-1]) + need > width:
            parts.append([])
        for i in unit:  # a unit wider than a part on its own is split
            if parts[-1] and fixed + sum(w[j] + 2 for j in parts[-1]) + w[i] + 2 > width:
                parts.append([])
            parts[-1].append(i)
    def line(r, idx):
        return "  ".join(str(r[i]).rjust(w[i]) if i >= 3 else str(r[i]).ljust(w[i]) for i in idx).rstrip()
    out = []
    for part in parts:
        idx = list(range(keep)) + part
        depth = max(len(heads[i]) for i in idx)
        for k in range(depth):  # headings bottom-aligned
            out.append(line([(heads[i][k - depth + len(heads[i])] if k >= depth - len(heads[i]) else "")
                             for i in range(n)], idx))
        out.append("  ".join("-" * w[i] for i in idx))
        out += [line(r, idx) for r in body]
        out.append("")
    return "\n".join(out[:-1])


def header(run: dict, width: int = WIDTH) -> str:
    """The lines above the table: machine, commit, load (a warning when the machine was busy at
    the start), and each framework's backend and device; wrapped to `width` columns."""
    m = run.get("machine", {})
    g = run.get("git", {})
    lines = [f"gfxrt bench {'--quick ' if run.get('quick') else ''}on {m.get('hostname')} "
             f"({m.get('cpu')}, {m.get('cores')} cores), git {str(g.get('commit'))[:10]}"
             f"{' (dirty)' if g.get('dirty') else ''}, {run.get('started')}"]
    if m.get("loadavg_start"):
        lines[0] += f", load average {m['loadavg_start'][0]} at start, {run.get('loadavg_end', ['?'])[0]} at end"
        warning = busy(m["loadavg_start"], m.get("cores"))
        if warning:
            lines.append("  " + warning)
    sizes = run.get("sizes")
    if sizes and not run.get("quick"):
        skipped = len(sizes.get("skipped", []))
        lines.append(f"  sizes: {sizes.get('machine')} ({sizes.get('why')})"
                     + (f"; {skipped} case(s) for the other kind of machine left out" if skipped else ""))
    what = {"ours": "ours", "same": "like for like", "other": "other peer", "ref": "CPU reference"}
    for spec, f in run.get("frameworks", {}).items():
        if f.get("ok"):
            i = f["info"]
            lines.append(f"  {spec:18s} {what[role(run, spec)]:14s} {i.get('version', '')}, "
                         f"backend {i.get('backend')}, device {i.get('device')}")
        else:
            lines.append(f"  {spec:18s} {'did not run':14s} {f.get('reason')}")
    groups = roles_of(run)
    api = API_NAMES.get(ours_api(run), ours_api(run))
    if groups["same"]:
        lines.append(f"  ratios: gfxrt against the best peer on the same driver ({api}: {', '.join(groups['same'])})"
                     + (f" and the best other peer ({', '.join(groups['other'])})" if groups["other"] else "")
                     + "; numpy and torch on the CPU are the reference, shown without a ratio")
    else:
        lines.append(f"  no peer ran on {api} (the like-for-like comparison): install Taichi and Quadrants "
                     "(`bash dev.sh bench` does) to see it")
    out = []
    for line in lines:
        indent = len(line) - len(line.lstrip())
        out += wrap(line.strip(), width, indent=" " * indent)
    return "\n".join(out)


def merge(runs: list[dict]) -> dict:
    """Several runs as one (later runs win per benchmark/case/framework; derived rows too)."""
    out = {**runs[0], "results": [], "derived": [], "frameworks": {}, "merged_from": [],
           "benchmarks": list(runs[0].get("benchmarks", [])), "notes": {}}
    seen: dict[tuple, dict] = {}
    dseen: dict[tuple, dict] = {}
    for run in runs:
        out["merged_from"].append({"started": run.get("started"), "git": run.get("git"),
                                   "machine": run.get("machine", {}).get("hostname")})
        for spec, f in run.get("frameworks", {}).items():
            if f.get("ok") or spec not in out["frameworks"]:
                out["frameworks"][spec] = f
        for b in run.get("benchmarks", []):
            if b not in out["benchmarks"]:
                out["benchmarks"].append(b)
        out["notes"].update(run.get("notes", {}))
        for r in run["results"]:
            seen[(r["benchmark"], r["case"], r["framework"])] = r
        for d in run.get("derived", []):
            key = (d["benchmark"], d["label"])
            dseen.setdefault(key, {**d, "values": {}})["values"].update(d["values"])
    out["results"] = list(seen.values())
    out["derived"] = list(dseen.values())
    return out


def spread(runs: list[dict], markdown: bool = False) -> str:
    """How much the same command's runs differ: per row, gfxrt's figure and each like-for-like
    ratio as median [min - max] over the runs (what "reproduces within noise" means here)."""
    per: dict[tuple, dict[str, list[float]]] = {}
    order: list[tuple] = []
    heads: list[str] = []
    for run in runs:
        cols = ratio_columns(run)
        for h, _ in cols:
            if h not in heads:
                heads.append(h)
        for row in rows(run):
            key = (row["bench"], row["case"], row["unit"])
            if key not in per:
                per[key] = {}
                order.append(key)
            ours = next((c for f, c in row["cells"].items() if f.startswith("gfxrt")), None)
            if ours and ours.get("status") == "ok" and ours.get("value"):
                per[key].setdefault("gfxrt", []).append(ours["value"])
            for h, peers in cols:
                r = ratio(run, row, peers)
                if r:
                    per[key].setdefault(h, []).append(r[0])

    def cell(vs: list[float] | None, x: bool) -> str:
        if not vs:
            return ""
        f = (lambda v: f"{v:.2f}x") if x else fmt
        med = sorted(vs)[len(vs) // 2] if len(vs) % 2 else (sorted(vs)[len(vs) // 2 - 1] + sorted(vs)[len(vs) // 2]) / 2
        return f"{f(med)} [{f(min(vs))} - {f(max(vs))}]" if len(vs) > 1 else f(med)
    head = ["benchmark", "case", "unit", f"gfxrt (median [min - max] of {len(runs)} runs)", *heads]
    body = [[*key, cell(per[key].get("gfxrt"), False), *(cell(per[key].get(h), True) for h in heads)]
            for key in order]
    return _render(head, body, markdown)


def main(argv=None) -> None:
    """Print the table of one run or of several merged (or, with --spread, how they differ)."""
    ap = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--spread", action="store_true",
                    help="the files are runs of one command: print each figure's median [min - max] over them")
    args = ap.parse_args(argv)
    runs = []
    for path in args.files:
        with open(path) as f:
            runs.append(json.load(f))
    if args.spread:
        print(spread(runs, markdown=args.markdown))
        return
    run = merge(runs) if len(runs) > 1 else runs[0]
    width = terminal_width()
    print(header(run, width))
    print()
    print(table(run, markdown=args.markdown, width=width))
    if device_rows(run):
        print("\ndevice time (timestamp queries / CUDA events):")
        print(table(run, markdown=args.markdown, device=True, width=width))


if __name__ == "__main__":
    main()
