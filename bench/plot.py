"""`python -m bench.plot [RUN.json ...] [--out DIR]`: PNG charts of a run (several runs are merged).

One chart per benchmark: for each case, each framework's speed relative to the best of gfxrt and
its peers (1 = best; log scale; numpy and torch on the CPU, the reference, hatched and left out of
"best"), labelled with its figure in the benchmark's unit; and an overview chart of gfxrt's speed
relative to the best peer on its own driver (like for like: Taichi and Quadrants on Vulkan) and to
the best other peer (e.g. on CUDA) in every case. `python -m bench` draws them after every run,
beside its JSON. Without a file, the newest JSON in bench/out (under the working
directory) is plotted.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re

from . import report

COLORS = {"gfxrt": "#d62728", "numpy": "#7f7f7f", "torch": "#ff7f0e", "taichi": "#1f77b4", "quadrants": "#17becf",
          "warp": "#2ca02c"}


def _color(spec: str, i: int):
    """The framework kind's colour; a second backend of a kind (e.g. taichi:cuda beside
    taichi:vulkan) a lighter shade of it."""
    import matplotlib.colors as mc
    kind, _, backend = spec.partition(":")
    base = COLORS.get(kind)
    if base is None:
        import matplotlib
        return matplotlib.colormaps["tab20"](i % 20)
    if backend in ("", "vulkan", "cpu", "metal", "dx12"):
        return base
    r, g, b = mc.to_rgb(base)
    return (r + (1 - r) * 0.5, g + (1 - g) * 0.5, b + (1 - b) * 0.5)


def relative(row: dict, run: dict | None = None) -> dict[str, float]:
    """{framework: speed relative to the best framework of this row} over ok cells; with `run`,
    relative to the best of gfxrt and its peers, the CPU reference (numpy, torch on the CPU) left
    out of "best" (its bars may then pass 1)."""
    ok = {fw: c["value"] for fw, c in row["cells"].items() if c.get("status") == "ok" and c.get("value")}
    ranked = [v for fw, v in ok.items() if run is None or report.role(run, fw) != "ref"] or list(ok.values())
    if not ranked:
        return {}
    best = (max if row["higher"] else min)(ranked)
    return {fw: report.speed(v, best, row["higher"]) for fw, v in ok.items()}


_REFUSED = re.compile(r"refuse|not[_ ]supported|unsupported", re.I)


def failure(cell: dict | None) -> str | None:
    """Why a framework has no ranked figure in a cell: "wrong", "refused the device" (it declined
    this adapter), "failed" (an error), "n/a" (it has no such operation); None when it has one."""
    if not cell or cell.get("status") == "ok":
        return None
    status = cell.get("status")
    if status == "wrong":
        return "wrong"
    if _REFUSED.search(cell.get("reason", "")):
        return "refused the device"
    return "failed" if status == "error" else "n/a"


def failed_peers(row: dict, peers) -> dict[str, str]:
    """{peer: failure} for the peers (among `peers`) that were wrong, failed or refused the device
    in this row (a plain n/a, an operation the peer lacks, is no failure)."""
    out = {}
    for fw in peers:
        why = failure(row["cells"].get(fw))
        if why not in (None, "n/a"):
            out[fw] = why
    return out


def only_ours_right(row: dict, peers) -> str:
    """The overview's label for a row where gfxrt is right and no peer is: why each peer is not,
    e.g. "only gfxrt right (peers: refused the device)" or "(taichi: wrong; quadrants: refused the
    device)"; "" when gfxrt's result is not ok or no peer failed."""
    ours = next((c for f, c in row["cells"].items() if f.startswith("gfxrt")), {})
    failed = failed_peers(row, peers)
    if ours.get("status") != "ok" or not failed:
        return ""
    if len(failed) > 1 and len(set(failed.values())) == 1:
        return f"only gfxrt right (peers: {next(iter(failed.values()))})"
    return "only gfxrt right (" + "; ".join(f"{fw}: {why}" for fw, why in failed.items()) + ")"


def plot_run(run: dict, out: str) -> list[str]:
    """Write the charts of `run` into folder `out`; return their paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(out, exist_ok=True)
    fws = [what for kind, what in report.columns(run) if kind == "fw"]  # gfxrt, its peers, the reference
    all_rows = [r for r in report.rows(run) if r["unit"] != "x"]
    paths = []
    for bench in run.get("benchmarks", []):
        rows = [r for r in all_rows if r["bench"] == bench]
        if not rows or not any(relative(r, run) for r in rows):
            continue
        fig, ax = plt.subplots(figsize=(max(7, 1.6 * len(rows) * max(1, len(fws)) / 3), 4.4))
        width = 0.8 / max(1, len(fws))
        other_class = False
        for k, fw in enumerate(fws):
            xs, ys, labels = [], [], []
            star = "*" if fw.split(":")[0] in report.unlike(run, bench) else ""
            for i, r in enumerate(rows):
                x = i + (k - (len(fws) - 1) / 2) * width
                rel = relative(r, run).get(fw)
                if rel is not None:
                    xs.append(x)
                    ys.append(rel)
                    labels.append(report.fmt(r["cells"][fw]["value"]) + star)
                    other_class = other_class or bool(star)
                elif failure(r["cells"].get(fw)):  # its mark where its bar would stand
                    c = r["cells"][fw]
                    mark = failure(c) + (f" ({report.fmt(c['value'])}!)" if c.get("value") else "")
                    ax.text(x, 0.02, mark, transform=ax.get_xaxis_transform(), rotation=90, ha="center",
                            va="bottom", fontsize=6, color=_color(fw, k))
            ref = report.role(run, fw) == "ref"
            bars = ax.bar(xs, ys, width, label=fw + star + (" (CPU ref)" if ref else ""), color=_color(fw, k),
                          hatch="//" if ref else None, alpha=0.6 if ref else 1.0)
            if xs:
                ax.bar_label(bars, labels=labels, fontsize=6, rotation=90, padding=2)
        ax.set_yscale("log")
        top = max([v for r in rows for v in relative(r, run).values()] + [1.0])
        ax.set_ylim(top=3 * top)
        ax.axhline(1.0, color="black", linewidth=0.6)
        ax.set_xticks(range(len(rows)), [r["case"] for r in rows], fontsize=8)
        unit = rows[0]["unit"]
        ax.set_ylabel(f"speed relative to the best peer or gfxrt\n(1 = best; CPU reference hatched)\n"
                      f"bar labels: {unit}")
        if other_class:
            ax.set_xlabel(report.UNLIKE_NOTE, fontsize=7)
        ax.set_title(run.get("titles", {}).get(bench, bench), fontsize=10)
        ax.legend(fontsize=7, ncol=min(4, len(fws)), loc="lower center", bbox_to_anchor=(0.5, 1.08))
        fig.tight_layout()
        path = os.path.join(out, f"{bench}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    groups = report.ratio_columns(run)
    # (row label, [(ratio, peer, other class) or None per ratio column], [why no ratio per column], failed peers)
    overview = []
    for r in all_rows:
        got = [report.ratio(run, r, peers) for _, peers in groups]
        # where gfxrt is right and a column's peers were wrong, failed or refused the device: say so there
        whys = ["" if g else only_ours_right(r, peers) for g, (_, peers) in zip(got, groups)]
        if any(got) or any(whys):
            overview.append((f"{r['bench']} {r['case']}", got, whys,
                             failed_peers(r, [f for _, ps in groups for f in ps])))
    if overview:
        fig, ax = plt.subplots(figsize=(8, 0.2 * len(overview) * len(groups) + 1.6))
        height = 0.8 / len(groups)
        styles = [("#2ca02c", "#d62728"), ("#98df8a", "#ff9896")]  # (gfxrt faster, slower) per column
        for k, (title, _) in enumerate(groups):
            ys, vals, colors, labels = [], [], [], []
            for i, (_, got, _, failed) in enumerate(overview):
                if got[k] is None:
                    continue
                v, peer, other_class = got[k]
                ys.append(i + (k - (len(groups) - 1) / 2) * height)
                vals.append(v)
                colors.append(styles[min(k, 1)][0 if v >= 1 else 1])
                marks = [f"{f} {w}" for f, w in failed.items() if f in groups[k][1]]  # peers not ranked, and why
                labels.append(f"{v:.2f}x vs {peer}" + ("*" if other_class else "")
                              + (f" ({'; '.join(marks)})" if marks else ""))
            bars = ax.barh(ys, vals, height, color=colors, edgecolor="black" if k == 0 else "none", linewidth=0.3,
                           label=title[len("gfxrt vs "):])
            ax.bar_label(bars, labels=labels, fontsize=6, padding=2)
        ax.set_yticks(range(len(overview)), [name for name, *_ in overview], fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        vals = [g[0] for _, got, *_ in overview for g in got if g] or [1.0]
        lo, hi = min(vals), max(vals)
        ax.set_xlim(min(0.5, lo / 2), max(2.0, hi * 8))
        for i, (_, _, whys, _) in enumerate(overview):
            for k, why in enumerate(whys):
                if why:
                    ax.text(0.01, i + (k - (len(groups) - 1) / 2) * height, why, fontsize=6, va="center",
                            color="#2ca02c", transform=ax.get_yaxis_transform())  # from the left edge
        ax.axvline(1.0, color="black", linewidth=0.6)
        ax.set_xlabel("gfxrt speed / the best peer's speed (>1: gfxrt faster; * = another algorithm class)")
        where = str(next((f.get("info", {}).get("device") for s, f in run.get("frameworks", {}).items()
                          if s.startswith("gfxrt") and f.get("ok")), "") or "")
        ax.set_title("gfxrt against " + " and ".join(t[len("gfxrt vs "):] for t, _ in groups)
                     + (f"\n{where}" if where else ""), fontsize=9)
        if len(groups) > 1:
            ax.legend(fontsize=7, loc="lower right")
        fig.tight_layout()
        path = os.path.join(out, "overview.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def main(argv=None) -> None:
    """Draw the charts of the given (or newest) run."""
    ap = argparse.ArgumentParser(prog="python -m bench.plot", description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", help="run JSON files (default: the newest in ./bench/out)")
    ap.add_argument("--out", default=None, help="folder for the PNGs (default: beside the first JSON, <name>-plots)")
    args = ap.parse_args(argv)
    files = args.files
    if not files:
        found = sorted(glob.glob(os.path.join(report.default_out(), "bench-*.json")),
                       key=os.path.getmtime)
        if not found:
            raise SystemExit("no run JSON given and none in ./bench/out: run `python -m bench --quick` first")
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
