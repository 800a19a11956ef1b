"""Translate Taichi's Python tests to gfxrt, run them file by file, summarize.

    python -m tools.taichi_suite.run SRC_DIR [--out DIR] [--timeout S] [-k PAT,PAT] [--resume] [--json F] [--md F]

SRC_DIR holds Taichi's tests/python/test_*.py as fetched (see README.md); nothing is
downloaded here. Each file runs in its own pytest process under `timeout`, so a hang or a
crash costs one file. Outcomes: passed / failed / error / n/a (skipped by the shim: an arch
or extension gfxrt does not claim) / skipped (the test skipped itself) / not run (timeout
or crash before the test finished).
"""
import argparse
import ast
import collections
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))
from translate import translate_dir  # noqa: E402


def classify(msg: str) -> str:
    """A root-cause bucket from the crash line of a failed test."""
    m = re.search(r"module 'gfxrt(?:\.[\w.]+)?' has no attribute '(\w+)'", msg)
    if m:
        return f"missing API: gr.{m.group(1)}"
    m = re.search(r"'(\w+)' object has no attribute '(\w+)'", msg)
    if m:
        return f"missing API: {m.group(1)}.{m.group(2)}"
    m = re.search(r"type object '(\w+)' has no attribute '(\w+)'", msg)
    if m:
        return f"missing API: {m.group(1)}.{m.group(2)}"
    m = re.search(r"cannot import name '(\w+)' from '([\w.]+)'", msg)
    if m:
        return f"missing API: {m.group(2)}.{m.group(1)}"
    m = re.search(r"No module named '([\w.]+)'", msg)
    if m:
        return f"missing module: {m.group(1)}"
    if "DID NOT RAISE" in msg:
        return "expected an error, none raised: " + msg.split("DID NOT RAISE")[1].strip()[:60]
    m = re.match(r"(?:[\w.]+\.)?(CompileError|InternalCompilerError)", msg)
    if m:
        lines = [ln for ln in msg.split("\n")]
        carets = [i for i, ln in enumerate(lines) if re.fullmatch(r"\s*\^+\s*", ln)]
        if carets and carets[0] + 1 < len(lines):  # File "...", line N / source / ^ / message
            first = lines[carets[0] + 1]
        else:
            first = lines[0].split(":", 1)[1].strip() if ":" in lines[0] else lines[0]
        first = re.sub(r"'[^']*'", "'…'", first)
        first = re.sub(r"\d+", "N", first)
        return f"{m.group(1)}: {first[:90]}"
    if msg.startswith("AssertionError") or msg.startswith("assert ") or re.match(r"^assert", msg):
        return "wrong result (assertion)"
    m = re.match(r"([\w.]+(?:Error|Exception|Warning))\b:?\s*(.*)", msg, re.S)
    if m:
        kind = m.group(1).split(".")[-1]
        rest = re.sub(r"'[^']*'", "'…'", m.group(2).split("\n")[0])
        rest = re.sub(r"\d+", "N", rest)
        return f"{kind}: {rest[:90]}"
    return "other: " + msg.split("\n")[0][:90]


def count_tests(path: Path) -> int:
    """Test functions in a file (for files that fail to import: each counts as one error)."""
    try:
        tree = ast.parse(path.read_text())
    except SyntaxError:
        return 1
    return sum(1 for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")) or 1


def run_file(path: Path, out_dir: Path, timeout: int, python: str) -> dict:
    res_file = out_dir / (path.stem + ".jsonl")
    res_file.unlink(missing_ok=True)
    env = dict(os.environ)
    env["TAICHI_SUITE_RESULTS"] = str(res_file)
    extra = [env["PYTHONPATH"]] if env.get("PYTHONPATH") else []
    env["PYTHONPATH"] = os.pathsep.join([str(out_dir), str(REPO)] + extra)
    t0 = time.time()
    proc = subprocess.run(["timeout", "-k", "10", str(timeout), python, "-m", "pytest", "-p", "no:cacheprovider",
                           "-q", "--no-header", "-o", "console_output_style=classic", path.name],
                          cwd=out_dir, env=env, capture_output=True, text=True)
    wall = time.time() - t0
    recs = [json.loads(line) for line in res_file.read_text().splitlines()] if res_file.exists() else []
    tests = collections.OrderedDict()
    for r in recs:
        if r["when"] == "collect":  # the module did not import: each of its test functions errs
            for k in range(count_tests(path)):
                tests[f"{r['nodeid'] or path.name}#{k}"] = ("error", "collect: " + r["message"])
            continue
        prev = tests.get(r["nodeid"])
        if r["outcome"] == "skipped":
            outcome = "n/a" if r["message"].removeprefix("Skipped: ").startswith("n/a:") else "skipped"
        elif r["outcome"] == "failed":
            outcome = "failed" if r["when"] == "call" else "error"
        else:
            outcome = "passed"
        if prev is None or prev[0] == "passed":  # a teardown error overrides a pass
            tests[r["nodeid"]] = (outcome, r["message"])
    status = "ok"
    if proc.returncode in (124, 137):
        status = "timeout"
    elif proc.returncode not in (0, 1, 5):
        status = f"exit {proc.returncode}"
    return {"file": path.name, "status": status, "wall_s": round(wall, 1), "tests": tests,
            "tail": (proc.stdout + proc.stderr)[-1500:] if status != "ok" else ""}


def summarize(results: list[dict]) -> dict:
    per_file, causes, total = [], collections.Counter(), collections.Counter()
    examples = {}
    for r in results:
        c = collections.Counter(o for o, _ in r["tests"].values())
        for nodeid, (o, msg) in r["tests"].items():
            if o in ("failed", "error"):
                cause = classify(msg.replace("collect: ", ""))
                causes[cause] += 1
                examples.setdefault(cause, nodeid)
        total.update(c)
        per_file.append({"file": r["file"], "status": r["status"], "wall_s": r["wall_s"], **c})
    applicable = total["passed"] + total["failed"] + total["error"]
    return {"per_file": per_file, "total": dict(total), "applicable": applicable,
            "pass_rate": round(total["passed"] / applicable, 4) if applicable else None,
            "causes": causes.most_common(), "examples": examples}


def markdown(summary: dict) -> str:
    lines = ["| file | passed | failed | error | n/a | skipped | status |", "|---|---|---|---|---|---|---|"]
    for f in summary["per_file"]:
        lines.append(f"| {f['file']} | {f.get('passed', 0)} | {f.get('failed', 0)} | {f.get('error', 0)} | "
                     f"{f.get('n/a', 0)} | {f.get('skipped', 0)} | {f['status']} |")
    t = summary["total"]
    lines.append(f"| **total** | **{t.get('passed', 0)}** | **{t.get('failed', 0)}** | **{t.get('error', 0)}** | "
                 f"**{t.get('n/a', 0)}** | **{t.get('skipped', 0)}** | |")
    lines += ["", f"Pass rate over applicable cases (passed / (passed + failed + error)): "
              f"**{summary['total'].get('passed', 0)} / {summary['applicable']} = "
              f"{100 * (summary['pass_rate'] or 0):.1f}%**", "", "| cases | root cause | example |", "|---|---|---|"]
    for cause, n in summary["causes"]:
        lines.append(f"| {n} | {cause.replace('|', '/')} | {summary['examples'][cause]} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("--out", default="/tmp/taichi_suite_gr")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("-k", default=None, help="only files whose name contains one of these (comma-separated)")
    ap.add_argument("--resume", action="store_true",
                    help="reuse a file's recorded result in --out (<name>.result.json) instead of running it again")
    ap.add_argument("--json", default=None)
    ap.add_argument("--md", default=None)
    ap.add_argument("--python", default=sys.executable)
    a = ap.parse_args(argv)
    out = Path(a.out)
    files = translate_dir(Path(a.src), out)
    if a.k:
        keys = a.k.split(",")
        files = [f for f in files if any(k in f.name for k in keys)]
    results = []
    for f in files:
        saved = out / (f.stem + ".result.json")
        if a.resume and saved.exists():
            results.append(json.loads(saved.read_text()))
            continue
        r = run_file(f, out, a.timeout, a.python)
        saved.write_text(json.dumps(r))
        c = collections.Counter(o for o, _ in r["tests"].values())
        print(f"{f.name}: {dict(c)} {r['status']} {r['wall_s']}s", flush=True)
        if r["tail"]:
            print(r["tail"])
        results.append(r)
    s = summarize(results)
    if a.json:
        Path(a.json).write_text(json.dumps({"summary": s, "results": results}, indent=1, default=list))
    md = markdown(s)
    if a.md:
        Path(a.md).write_text(md)
    print(md)


if __name__ == "__main__":
    main()
