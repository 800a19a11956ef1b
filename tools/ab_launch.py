"""Before/after host cost of launches, graph replays and a warm compile, two checkouts
interleaved on one machine: `python tools/ab_launch.py OLD_CHECKOUT NEW_CHECKOUT [rounds]`.

Each round runs, in each checkout and in fresh processes, the repository's own
`python -m experiments.micro_runtime --quick`, `python -m experiments.micro_graph --quick` (`bench.*`
in a checkout from before they moved) and
`python -m bench --only compile --peers none`, alternating old and new, then prints the
median and the minimum of each host figure and the new/old ratio of the medians. Make the
old checkout with `git worktree add /tmp/d-old <commit>`.
"""
from __future__ import annotations

import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

KEYS = ("launch_record_us", "launch_us", "launch_sustained_us", "numpy_launch_us", "same_eager_record_us",
        "same_replay_record_us", "mixed_eager_record_us", "mixed_replay_record_us", "same_replay_us",
        "mixed_replay_us")


def run(root: str, out: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    py = sys.executable
    home = "experiments" if os.path.exists(os.path.join(root, "experiments", "micro_runtime.py")) else "bench"
    for mod in ("micro_runtime", "micro_graph"):
        subprocess.run([py, "-m", f"{home}.{mod}", "--quick", "--json", f"{out}/{mod}.json"], cwd=root, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=600)
    subprocess.run([py, "-m", "bench", "--only", "compile", "--peers", "none", "--no-plots", "--out", f"{out}/suite"],
                   cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, timeout=600)
    got = {}
    for mod in ("micro_runtime", "micro_graph"):
        got.update({k: v for k, v in json.load(open(f"{out}/{mod}.json")).items() if k in KEYS})
    for f in glob.glob(f"{out}/suite/*.json"):
        for r in json.load(open(f))["results"]:
            if r.get("status") == "ok" and r["benchmark"] == "compile":
                got[f"compile {r['case']} ms"] = r["value"]
    return got


def main() -> None:
    old, new = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
    figures: dict[str, dict[str, list]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(rounds):
            for side, root in (("old", old), ("new", new)):
                out = f"{tmp}/{side}-{i}"
                os.makedirs(out)
                for k, v in run(os.path.abspath(root), out).items():
                    figures.setdefault(k, {}).setdefault(side, []).append(v)
    print(f"{'figure':28s} {'old med':>9s} {'new med':>9s} {'new/old':>8s} {'old min':>9s} {'new min':>9s}")
    for k, v in figures.items():
        o, n = v.get("old", []), v.get("new", [])
        if o and n:
            mo, mn = statistics.median(o), statistics.median(n)
            print(f"{k:28s} {mo:9.3f} {mn:9.3f} {mn / mo:8.3f} {min(o):9.3f} {min(n):9.3f}")
    print("\nevery round (a process's figures can be bimodal: the minimum is the steadier comparison)")
    for k, v in figures.items():
        for side in ("old", "new"):
            print(f"{k:28s} {side} " + " ".join(f"{x:.3f}" for x in v.get(side, [])))


if __name__ == "__main__":
    main()
