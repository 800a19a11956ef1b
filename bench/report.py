"""Results: the run's environment (machine, git, versions), the JSON file, and tables.

`python -m bench.report RUN.json [RUN2.json ...] [--markdown]` prints the table of one run, or
of several runs merged (later files win per benchmark/case/framework), e.g. for bench/RESULTS.md.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import socket
import subprocess
import sys

SCHEMA = "gfxrt-bench/1"


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


def now() -> str:
    """The current UTC time, ISO 8601."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


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


def best_peer(row: dict, ours: str = "gfxrt") -> tuple[str, float] | None:
    """(framework, value) of the fastest peer with a right result in this row, or None."""
    ok = [(fw, c["value"]) for fw, c in row["cells"].items()
          if not fw.startswith(ours) and c.get("status") == "ok" and c.get("value")]
    if not ok:
        return None
    return (max if row["higher"] else min)(ok, key=lambda t: t[1])


def device_rows(run: dict) -> list[dict]:
    """Rows of device-time figures (timestamp queries, CUDA events), where any were measured."""
    out = []
    for row in rows(run):
        cells = {fw: {"status": "ok", "value": c["device_value"]} for fw, c in row["cells"].items()
                 if c.get("status") == "ok" and c.get("device_value")}
        if cells:
            out.append({**row, "cells": cells})
    return out


def short(reason: str, limit: int = 160) -> str:
    """A reason on one line, cut to `limit` characters."""
    reason = " ".join(reason.split())
    return reason if len(reason) <= limit else reason[: limit - 3] + "..."


def table(run: dict, markdown: bool = False, device: bool = False) -> str:
    """The results as a text (or markdown) table: one column per framework, and gfxrt's speed
    relative to the best peer (>1: gfxrt is faster). device=True: the device-time figures."""
    fws = frameworks_of(run)
    head = ["benchmark", "case", "unit", *fws, "gfxrt vs best peer"]
    body, notes = [], {}
    body_rows = device_rows(run) if device else rows(run)
    for row in body_rows:
        cells = []
        for fw in fws:
            c = row["cells"].get(fw)
            if c is None:
                cells.append("")
            elif c.get("status") in ("ok", "wrong"):
                mark = "!" if c["status"] == "wrong" else ""
                cells.append(fmt(c.get("value")) + mark)
            else:
                reason = short(c.get("reason", ""))
                n = notes.setdefault((fw, c["status"], reason), len(notes) + 1)
                cells.append(f"{c['status']}[{n}]")
        ours = next((row["cells"][f] for f in fws if f.startswith("gfxrt") and f in row["cells"]), None)
        bp = best_peer(row)
        ratio = ""
        if ours and ours.get("status") == "ok" and ours.get("value") and bp:
            ratio = f"{speed(ours['value'], bp[1], row['higher']):.2f}x ({bp[0]})"
        body.append([row["bench"], row["case"], row["unit"], *cells, ratio])
    text = _render(head, body, markdown)
    lines = [text]
    wrong = [] if device else [(row["bench"], row["case"], fw, short(c.get("reason", ""))) for row in rows(run)
                               for fw, c in row["cells"].items() if c.get("status") == "wrong"]
    item = "- " if markdown else "  "
    if wrong:
        lines.append(("\n" if markdown else "") + "! = wrong result (figure kept, not ranked):")
        lines += [f"{item}{b}/{c} {fw}: {why}" for b, c, fw, why in wrong]
    if notes:
        lines.append(("\n" if markdown else "") + "n/a and errors:")
        lines += [f"{item}[{n}] {fw}: {why}" for (fw, _, why), n in notes.items()]
    if not device:
        shown = {row["bench"] for row in body_rows}
        grouped: dict[str, list[str]] = {}  # note text -> benchmarks (bandwidth's three share one)
        for b, text in run.get("notes", {}).items():
            if b in shown and text:
                grouped.setdefault(" ".join(text.split()), []).append(b)
        if grouped:
            lines.append(("\n" if markdown else "") + "notes:")
            lines += [f"{item}{', '.join(bs)}: {text}" for text, bs in grouped.items()]
    return "\n".join(lines)


def _render(head, body, markdown) -> str:
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in body]
        return "\n".join(out)
    w = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    line = lambda r: "  ".join(str(x).rjust(k) if i >= 3 else str(x).ljust(k) for i, (x, k) in enumerate(zip(r, w)))
    return "\n".join([line(head), "  ".join("-" * k for k in w), *map(line, body)])


def header(run: dict) -> str:
    """The lines above the table: machine, commit, load, and each framework's backend and device."""
    m = run.get("machine", {})
    g = run.get("git", {})
    lines = [f"gfxrt bench {'--quick ' if run.get('quick') else ''}on {m.get('hostname')} "
             f"({m.get('cpu')}, {m.get('cores')} cores), git {str(g.get('commit'))[:10]}"
             f"{' (dirty)' if g.get('dirty') else ''}, {run.get('started')}"]
    if m.get("loadavg_start"):
        lines[0] += f", load average {m['loadavg_start'][0]} at start, {run.get('loadavg_end', ['?'])[0]} at end"
    sizes = run.get("sizes")
    if sizes and not run.get("quick"):
        skipped = len(sizes.get("skipped", []))
        lines.append(f"  sizes: {sizes.get('machine')} ({sizes.get('why')})"
                     + (f"; {skipped} case(s) for the other kind of machine left out" if skipped else ""))
    for spec, f in run.get("frameworks", {}).items():
        if f.get("ok"):
            i = f["info"]
            lines.append(f"  {spec:18s} {i.get('version', '')}, backend {i.get('backend')}, device {i.get('device')}")
        else:
            lines.append(f"  {spec:18s} skipped: {f.get('reason')}")
    return "\n".join(lines)


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


def main(argv=None) -> None:
    """Print the table of one run or of several merged."""
    ap = argparse.ArgumentParser(prog="python -m bench.report", description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    runs = []
    for path in args.files:
        with open(path) as f:
            runs.append(json.load(f))
    run = merge(runs) if len(runs) > 1 else runs[0]
    print(header(run))
    print()
    print(table(run, markdown=args.markdown))
    if device_rows(run):
        print("\ndevice time (timestamp queries / CUDA events):")
        print(table(run, markdown=args.markdown, device=True))


if __name__ == "__main__":
    main()
