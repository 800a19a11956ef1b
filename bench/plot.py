"""`python -m bench.plot [RUN.json ...] [--out DIR]`: PNG charts of a run (several runs are merged).

One chart per benchmark: for each case, each framework's speed relative to the best framework
of that case (1 = best; log scale), labelled with its figure in the benchmark's unit; and an
overview chart of gfxrt's speed relative to the best peer in every case. Without a file, the
newest JSON in bench/out is plotted.
"""
from __future__ import annotations

import argparse
import glob
import json
import os

from . import report

COLORS = {"gfxrt": "#d62728", "numpy": "#7f7f7f", "torch": "#ff7f0e", "taichi": "#1f77b4", "quadrants": "#17becf",
          "warp": "#2ca02c"}


def _color(spec: str, i: int) -> str:
    base = COLORS.get(spec.split(":")[0])
    if base and ":" not in spec:
        return base
    import matplotlib
    return matplotlib.colormaps["tab20"](i % 20)


def relative(row: dict) -> dict[str, float]:
    """{framework: speed relative to the best framework of this row} over ok cells."""
    ok = {fw: c["value"] for fw, c in row["cells"].items() if c.get("status") == "ok" and c.get("value")}
    if not ok:
        return {}
    best = (max if row["higher"] else min)(ok.values())
    return {fw: report.speed(v, best, row["higher"]) for fw, v in ok.items()}


def plot_run(run: dict, out: str) -> list[str]:
    """Write the charts of `run` into folder `out`; return their paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(out, exist_ok=True)
    fws = report.frameworks_of(run)
    all_rows = [r for r in report.rows(run) if r["unit"] != "x"]
    paths = []
    for bench in run.get("benchmarks", []):
        rows = [r for r in all_rows if r["bench"] == bench]
        if not rows or not any(relative(r) for r in rows):
            continue
        fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(rows) * max(1, len(fws)) / 3), 4.2))
        width = 0.8 / max(1, len(fws))
        for k, fw in enumerate(fws):
            xs, ys, labels = [], [], []
            for i, r in enumerate(rows):
                rel = relative(r).get(fw)
                if rel is not None:
                    xs.append(i + (k - (len(fws) - 1) / 2) * width)
                    ys.append(rel)
                    labels.append(report.fmt(r["cells"][fw]["value"]))
            if xs:
                bars = ax.bar(xs, ys, width, label=fw, color=_color(fw, k))
                ax.bar_label(bars, labels=labels, fontsize=6, rotation=90, padding=2)
        ax.set_yscale("log")
        ax.set_ylim(top=3)
        ax.axhline(1.0, color="black", linewidth=0.6)
        ax.set_xticks(range(len(rows)), [r["case"] for r in rows], fontsize=8)
        unit = rows[0]["unit"]
        ax.set_ylabel(f"speed relative to the best (1 = best)\nbar labels: {unit}")
        ax.set_title(run.get("titles", {}).get(bench, bench), fontsize=10)
        ax.legend(fontsize=7, ncol=min(6, len(fws)), loc="lower center", bbox_to_anchor=(0.5, 1.08))
        fig.tight_layout()
        path = os.path.join(out, f"{bench}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    overview = [(f"{r['bench']} {r['case']}", report.speed(r["cells"][o]["value"], bp[1], r["higher"]), bp[0])
                for r in all_rows
                for o in [next((f for f in fws if f.startswith("gfxrt") and f in r["cells"]), None)]
                if o and r["cells"][o].get("status") == "ok" and r["cells"][o].get("value")
                for bp in [report.best_peer(r)] if bp]
    if overview:
        fig, ax = plt.subplots(figsize=(7, 0.3 * len(overview) + 1.2))
        ys = range(len(overview))
        vals = [v for _, v, _ in overview]
        ax.barh(ys, vals, color=["#2ca02c" if v >= 1 else "#d62728" for v in vals])
        ax.set_yticks(ys, [f"{name} (vs {peer})" for name, _, peer in overview], fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.axvline(1.0, color="black", linewidth=0.6)
        ax.set_xlabel("gfxrt speed / best peer's speed (>1: gfxrt faster)")
        ax.set_title("gfxrt against the best peer", fontsize=10)
        fig.tight_layout()
        path = os.path.join(out, "overview.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def main(argv=None) -> None:
    """Draw the charts of the given (or newest) run."""
    ap = argparse.ArgumentParser(prog="python -m bench.plot", description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="run JSON files (default: the newest in bench/out)")
    ap.add_argument("--out", default=None, help="folder for the PNGs (default: beside the first JSON, <name>-plots)")
    args = ap.parse_args(argv)
    files = args.files
    if not files:
        found = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", "bench-*.json")),
                       key=os.path.getmtime)
        if not found:
            raise SystemExit("no run JSON given and none in bench/out: run `python -m bench --quick` first")
        files = [found[-1]]
    runs = []
    for path in files:
        with open(path) as f:
            runs.append(json.load(f))
    run = report.merge(runs) if len(runs) > 1 else runs[0]
    out = args.out or files[0][: -len(".json")] + "-plots"
    for p in plot_run(run, out):
        print(p)


if __name__ == "__main__":
    main()
