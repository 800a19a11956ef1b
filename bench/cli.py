"""`python -m bench`: every selected benchmark on gfxrt and on every installed peer, one worker
process per framework, run one after another; a progress bar; a JSON file per run; a table."""
from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import threading
import time

from . import report
from .frameworks import default_peers, parse_spec
from .progress import Progress
from .registry import select

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def parse_args(argv):
    """The command line, checked (framework specs parsed, defaults filled in)."""
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="small sizes and few repeats: 1-2 minutes on a 2-core CPU with the peers")
    ap.add_argument("--out", default=None,
                    help="folder for the run's JSON, logs and charts (default: bench/out under the working directory)")
    ap.add_argument("--only", default="", help="comma-separated benchmark names or prefixes (see --list)")
    ap.add_argument("--peers", default=",".join(default_peers()),
                    help="comma-separated peers, each KIND or KIND:BACKEND (numpy, torch[:cpu|cuda], "
                         "taichi[:vulkan|cuda|cpu], quadrants[:...], warp[:cpu|cuda]); 'none' for gfxrt alone")
    ap.add_argument("--no-peers", action="store_true",
                    help="gfxrt and the numpy reference only (same as --peers numpy)")
    ap.add_argument("--no-plots", action="store_true", help="do not draw the PNG charts beside the JSON")
    ap.add_argument("--ours", default="gfxrt",
                    help="gfxrt's spec; gfxrt:NAME picks the adapter whose name contains NAME")
    ap.add_argument("--case-timeout", type=float, default=None,
                    help="seconds one case may take before its worker is killed (default 300, quick 120)")
    ap.add_argument("--sizes", choices=("auto", "gpu", "cpu"), default="auto",
                    help="full-run sizes: gpu = every size; cpu = sizes that fit a CPU adapter's time and memory "
                         "(e.g. matmul up to 1024); auto (default) = cpu when gfxrt's adapter is a CPU (lavapipe)")
    ap.add_argument("--list", action="store_true", help="list benchmarks and their cases, then exit")
    args = ap.parse_args(argv)
    args.only = [s for s in args.only.split(",") if s]
    if args.no_peers:
        args.peers = "numpy"
    peers = [s.strip() for s in args.peers.split(",") if s.strip()]
    args.peers = [] if [p.lower() for p in peers] in ([], ["none"]) else peers
    for spec in [args.ours, *args.peers]:
        try:
            parse_spec(spec)
        except ValueError as e:
            ap.error(str(e))
    args.out = os.path.abspath(args.out or report.default_out())
    if args.case_timeout is None:
        args.case_timeout = 120.0 if args.quick else 300.0
    return args


class Runner:
    """Runs the workers, collects their events into the run dict and keeps the JSON current."""

    def __init__(self, args, benches, path, sizes=("gpu", "")):
        self.args = args
        self.benches = benches
        self.path = path
        self.machine = sizes[0]
        cases = [(b, c) for b in benches for c in b.cases_for(args.quick, self.machine)]
        self.keys = [f"{b.name}/{c.label}" for b, c in cases]
        self.meta = {f"{b.name}/{c.label}": (b, c) for b, c in cases}
        skipped = [f"{b.name}/{c.label}" for b in benches for c in b.cases(args.quick)
                   if c.only not in (None, self.machine)]
        self.run = {"schema": report.SCHEMA, "started": report.now(), "finished": None, "quick": args.quick,
                    "argv": sys.argv[1:], "git": report.git_info(), "machine": report.machine_info(),
                    "sizes": {"machine": self.machine, "why": sizes[1], "skipped": skipped},
                    "benchmarks": [b.name for b in benches],
                    "titles": {b.name: b.title for b in benches}, "notes": {b.name: b.note for b in benches if b.note},
                    "unlike": {b.name: list(b.unlike) for b in benches if b.unlike},
                    "frameworks": {}, "results": [], "derived": []}

    def save(self):
        """Rewrite the run's JSON file (after every result, so a cut-short run keeps its figures)."""
        report.write_json(self.path, self.run)

    def add(self, result: dict):
        """Record one case's result."""
        self.run["results"].append(result)
        self.save()

    def placeholder(self, spec: str, key: str, status: str, reason: str) -> dict:
        """A result for a case the worker could not report (crash, timeout)."""
        b, c = self.meta[key]
        return {"benchmark": b.name, "case": c.label, "framework": spec, "unit": b.unit,
                "higher_is_better": b.higher_is_better, "status": status, "reason": reason}

    def framework(self, spec: str, progress: Progress) -> None:
        """All cases of one framework, restarting its worker after a crash or a timeout."""
        done: set[str] = set()
        log_path = self.path[:-5] + f".{spec.replace(':', '-')}.log"
        fruitless = 0
        while len(done) < len(self.keys) and fruitless < 2:
            before = len(done)
            status = self._worker(spec, done, log_path, progress)
            if status == "unavailable":
                for k in self.keys:
                    if k not in done:
                        done.add(k)
                        progress.advance(f"{spec}: skipped")
                return
            fruitless = fruitless + 1 if len(done) == before else 0
        for k in self.keys:
            if k not in done:
                self.add(self.placeholder(spec, k, "error", f"worker for {spec} kept failing (see {log_path})"))
                progress.advance(k)

    def _worker(self, spec, done, log_path, progress) -> str:
        cmd = [sys.executable, "-m", "bench.worker", "--framework", spec, "--only", ",".join(self.args.only),
               "--skip", json.dumps(sorted(done)), "--machine", self.machine] + (["--quick"] if self.args.quick else [])
        with open(log_path, "a") as log:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True, cwd=ROOT, env=_worker_env())
            events: queue.Queue = queue.Queue()
            threading.Thread(target=_pump, args=(proc.stdout, events), daemon=True).start()
            current, deadline = None, time.monotonic() + self.args.case_timeout + 120  # start-up allowance
            while True:
                try:
                    ev = events.get(timeout=max(0.1, deadline - time.monotonic()))
                except queue.Empty:
                    proc.kill()
                    proc.wait()
                    if current is None:
                        return "died"
                    self._fail(spec, current, done, progress, f"timed out after {self.args.case_timeout:.0f} s")
                    return "timeout"
                if ev is None:
                    code = proc.wait()
                    if current is not None:
                        self._fail(spec, current, done, progress,
                                   f"worker died (exit code {code}) during this case: {_tail(log_path)}")
                    if spec not in self.run["frameworks"]:
                        self.run["frameworks"][spec] = {"ok": False, "reason": f"worker died (exit code {code}) "
                                                        f"while starting: {_tail(log_path)}"}
                        return "unavailable"
                    return "died"
                kind = ev.get("event")
                if kind == "framework":
                    self.run["frameworks"][spec] = ev
                    self.save()
                    if not ev["ok"]:
                        progress.note(f"{spec}: skipped ({ev['reason']})")
                        return "unavailable"
                elif kind == "start":
                    current = ev["key"]
                    deadline = time.monotonic() + self.args.case_timeout
                    progress.describe(f"{spec}  {current}")
                elif kind == "result":
                    self.add(ev["result"])
                    done.add(ev["key"])
                    current = None
                    progress.advance(ev["key"])
                elif kind == "done":
                    proc.wait()
                    return "done"

    def _fail(self, spec, key, done, progress, reason):
        self.add(self.placeholder(spec, key, "error", reason))
        done.add(key)
        progress.advance(key)

    def derive(self) -> None:
        """Derived figures (e.g. backward/forward ratios) from each framework's results."""
        for b in self.benches:
            if b.derived is None:
                continue
            rows: dict[str, dict] = {}
            for spec in self.run["frameworks"]:
                got = {r["case"]: r["value"] for r in self.run["results"]
                       if r["benchmark"] == b.name and r["framework"] == spec and r["status"] == "ok"}
                try:
                    figures = b.derived(got)
                except (KeyError, TypeError, ZeroDivisionError):
                    figures = {}
                for label, v in figures.items():
                    if v is not None:
                        rows.setdefault(label, {})[spec] = v
            for label, values in rows.items():
                self.run["derived"].append({"benchmark": b.name, "label": label, "unit": "x",
                                            "higher_is_better": False, "values": values})


def _worker_env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("XDG_RUNTIME_DIR", "/tmp")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def choose_sizes(args, benches) -> tuple[str, str]:
    """(machine, why): which cases marked `only` this run takes ("gpu" or "cpu"). `--sizes auto`
    starts gfxrt in a probe worker and asks whether its adapter is a CPU, unless no selected
    case is marked (then the answer changes nothing and the probe is skipped)."""
    if args.sizes != "auto":
        return args.sizes, f"--sizes {args.sizes}"
    if not any(c.only for b in benches for c in b.cases(args.quick)):
        return "gpu", "no selected case depends on the machine"
    spec = args.ours if parse_spec(args.ours)[0] == "gfxrt" else "gfxrt"
    cmd = [sys.executable, "-m", "bench.worker", "--framework", spec, "--probe"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=_worker_env(), timeout=180)
        events = [json.loads(ln) for ln in proc.stdout.splitlines() if ln.startswith("{")]
    except (OSError, subprocess.SubprocessError, ValueError) as e:
        events = []
        print(f"bench: probing {spec} failed ({e})", file=sys.stderr)
    fw = next((e for e in events if e.get("event") == "framework"), None)
    if not fw or not fw.get("ok"):
        why = fw.get("reason") if fw else "no answer"
        return "gpu", f"auto: {spec} did not start ({why}); GPU sizes"
    info = fw["info"]
    kind = "cpu" if info.get("cpu_adapter") else "gpu"
    return kind, f"auto: {spec} runs on a {kind.upper()} adapter, {info.get('device')}"


def _pump(stream, events: queue.Queue) -> None:
    for line in stream:
        line = line.strip()
        if line.startswith("{"):
            try:
                events.put(json.loads(line))
            except ValueError:
                pass
    events.put(None)


def _tail(path: str, n: int = 3) -> str:
    try:
        with open(path, errors="replace") as f:
            lines = [ln.strip() for ln in f.read().splitlines() if ln.strip()]
        return " | ".join(lines[-n:])[-400:]
    except OSError:
        return ""


def main(argv=None) -> int:
    """Run the selected benchmarks on gfxrt and every peer; print the table; write the JSON."""
    args = parse_args(argv)
    benches = select(args.only)
    if args.list:
        for b in benches:
            cases = ", ".join(c.label + (f" ({c.only} only)" if c.only else "") for c in b.cases(args.quick))
            print(f"{b.name:22s} {b.unit:8s} {b.title}  [{cases}]")
        return 0
    warning = report.busy(report.loadavg(), os.cpu_count())
    if warning:
        print("\n".join(report.wrap(f"bench: {warning}", report.terminal_width())), file=sys.stderr, flush=True)
    sizes = choose_sizes(args, benches)
    os.makedirs(args.out, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = os.path.join(args.out, f"bench-{stamp}-{report.socket.gethostname()}{'-quick' if args.quick else ''}.json")
    runner = Runner(args, benches, path, sizes)
    specs = [args.ours, *[p for p in args.peers if p != args.ours]]
    t0 = time.perf_counter()
    with Progress(total=len(runner.keys) * len(specs)) as progress:
        for spec in specs:
            runner.framework(spec, progress)
    for spec in specs:  # drop empty worker logs
        log = path[:-5] + f".{spec.replace(':', '-')}.log"
        if os.path.exists(log) and os.path.getsize(log) == 0:
            os.remove(log)
    runner.derive()
    runner.run["finished"] = report.now()
    runner.run["loadavg_end"] = report.loadavg()
    runner.run["wall_s"] = round(time.perf_counter() - t0, 1)
    runner.save()
    width = report.terminal_width()
    print(report.header(runner.run, width))
    print()
    print(report.table(runner.run, width=width))
    if report.device_rows(runner.run):
        print("\ndevice time (timestamp queries / CUDA events), same units:")
        print(report.table(runner.run, device=True, width=width))
    print(f"\nresults: {path}  ({runner.run['wall_s']} s)")
    if not args.no_plots:
        print(charts(path, runner.run))
    return 0


def charts(path: str, run: dict) -> str:
    """Draw the run's PNG charts beside its JSON (`<json name>-plots/`); what to print about them."""
    try:
        from .plot import plot_run
        out = path[: -len(".json")] + "-plots"
        paths = plot_run(run, out)
    except ImportError as e:
        return f"charts: not drawn ({e}; pip install matplotlib, then python -m bench.plot {path})"
    except Exception as e:  # noqa: BLE001 - a chart that fails must not lose the run's table
        return f"charts: failed ({type(e).__name__}: {e}); python -m bench.plot {path} retries"
    if not paths:
        return "charts: none (no figure to draw)"
    overview = [p for p in paths if os.path.basename(p) == "overview.png"]
    lines = [f"charts: {len(paths)} PNGs in {out}/"]
    lines += [f"  {p}" for p in overview + [p for p in paths if p not in overview]]
    return "\n".join(lines)
