"""Runs many seeds: in this process (jobs=0) or in worker processes started with the *spawn*
method, each with its own gfxrt runtime. A worker that hangs past the time allowed for one
program, or dies, is counted as a finding for its seed (a hang or a crash of the process is a
bug too) and replaced. Each finding is shrunk and written as a reproducer by the worker that
found it."""
from __future__ import annotations

import multiprocessing as mp
import os
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from multiprocessing.connection import wait

from .generate import generate
from .profiles import ALL_ORDER
from .verdict import ERROR, FORWARD, GRADIENT, INVALID, judge

PROGRAM_TIMEOUT = 90.0      # seconds one program may take before its worker counts as hung


@dataclass
class Options:
    count: int = 100
    seed: int = 0
    profile: str = "all"
    jobs: int = 0
    time_limit: float | None = None
    out: str = "progfuzz-out"
    extreme: bool = False
    shrink_time: float = 120.0
    grads: bool = True
    verbose: bool = False


@dataclass
class Summary:
    run: int = 0
    forward: int = 0
    gradient: int = 0
    errors: int = 0
    invalid: int = 0
    unstable: int = 0            # programs with at least one skipped (unstable / out-of-profile) element
    seconds: float = 0.0
    compared: int = 0            # values (array elements, returns, gradients) compared
    skipped: int = 0             # values not compared (unstable or out of profile)
    findings: list = field(default_factory=list)   # (seed, kind, reproducer path or message)
    by_profile: dict = field(default_factory=dict)

    def add(self, r: dict):
        self.run += 1
        kind = r["kind"]
        self.by_profile[r["profile"]] = self.by_profile.get(r["profile"], 0) + 1
        if kind == FORWARD:
            self.forward += 1
        elif kind == GRADIENT:
            self.gradient += 1
        elif kind in (ERROR, "hang", "crash"):
            self.errors += 1
        elif kind == INVALID:
            self.invalid += 1
        if r.get("skipped"):
            self.unstable += 1
        self.compared += r.get("compared", 0)
        self.skipped += r.get("n_skipped", 0)
        if kind in (FORWARD, GRADIENT, ERROR, "hang", "crash", INVALID):
            self.findings.append((r["seed"], kind, r.get("repro") or r.get("detail", "")))

    @property
    def bad(self) -> int:
        return self.forward + self.gradient + self.errors + self.invalid

    def line(self) -> str:
        rate = self.run / self.seconds if self.seconds else 0.0
        profiles = ", ".join(f"{k} {v}" for k, v in sorted(self.by_profile.items()))
        return (f"progfuzz: {self.run} programs ({profiles}) in {self.seconds:.1f} s, {rate:.2f} programs/s: "
                f"{self.forward} forward mismatches, {self.gradient} gradient mismatches, "
                f"{self.errors} compile/internal errors, {self.invalid} invalid programs (generator bugs), "
                f"{self.unstable} with unstable instances skipped ({self.compared} values compared, "
                f"{self.skipped} skipped)")


def adapter_caps() -> dict:
    import gfxrt as gr
    from gfxrt.engine.context import device
    gr.init(offline_cache=False)
    feats = set(device().features)
    return {"f64": "shader-f64" in feats, "i64": "shader-int64" in feats,
            "atomic64": {"shader-int64", "shader-int64-atomic-all-ops"} <= feats}


def run_seed(seed: int, opts: Options, caps: dict, workdir: str, log=None) -> dict:
    """Check one seed; shrink and write a reproducer when it is a finding."""
    from .finding import report
    t0 = time.perf_counter()
    try:
        program = generate(seed, opts.profile, caps, opts.extreme)
    except Exception:
        return dict(seed=seed, kind=INVALID, profile=_profile(opts, seed), detail=traceback.format_exc(limit=3),
                    seconds=time.perf_counter() - t0)
    v = judge(program, workdir, grads=opts.grads)
    r = dict(seed=seed, kind=v.kind, profile=program.profile, skipped=v.skipped > 0, detail=v.detail[:2000],
             seconds=v.seconds, compared=v.compared, n_skipped=v.skipped)
    if v.finding:
        try:
            r["repro"] = report(program, v, workdir, opts.out, opts.shrink_time, log=log)
        except Exception:
            r["detail"] += "\n(writing the reproducer failed: " + traceback.format_exc(limit=4) + ")"
    return r


def _worker(conn, opts: Options):
    try:
        caps = adapter_caps()
        workdir = tempfile.mkdtemp(prefix="progfuzz-")
        conn.send(("ready", caps))
        while True:
            seed = conn.recv()
            if seed is None:
                break
            conn.send(("done", run_seed(seed, opts, caps, workdir)))
    except (EOFError, KeyboardInterrupt):
        pass


class _Pool:
    def __init__(self, opts: Options):
        self.opts = opts
        self.ctx = mp.get_context("spawn")
        self.workers = {}        # conn -> [process, seed or None, started]

    def start_one(self):
        parent, child = self.ctx.Pipe()
        p = self.ctx.Process(target=_worker, args=(child, self.opts), daemon=True)
        p.start()
        child.close()
        self.workers[parent] = [p, None, time.monotonic()]
        return parent

    def stop(self, conn):
        p = self.workers.pop(conn)[0]
        if p.is_alive():
            p.kill()
        p.join(5)
        conn.close()


def _profile(opts: Options, seed: int) -> str:
    """The profile of a seed's program, without generating it (a worker that hung or died)."""
    return ALL_ORDER[seed % len(ALL_ORDER)] if opts.profile == "all" else opts.profile


def run(opts: Options, emit=print) -> Summary:
    os.makedirs(opts.out, exist_ok=True)
    s = Summary()
    t0 = time.monotonic()
    deadline = t0 + opts.time_limit if opts.time_limit else None
    seeds = iter(range(opts.seed, opts.seed + opts.count))

    last = [t0]

    def note(r):
        s.add(r)
        if r["kind"] not in ("ok",) or opts.verbose:
            emit(f"seed {r['seed']} ({r['profile']}): {r['kind']} {r.get('repro') or r.get('detail', '')[:300]}")
        if time.monotonic() - last[0] > 60:       # a heartbeat for long runs
            last[0] = time.monotonic()
            emit(f"... {s.run} programs in {last[0] - t0:.0f} s, {s.bad} finding(s)")

    if opts.jobs <= 0:
        caps = adapter_caps()
        workdir = tempfile.mkdtemp(prefix="progfuzz-")
        for seed in seeds:
            if deadline and time.monotonic() > deadline:
                break
            note(run_seed(seed, opts, caps, workdir, log=emit if opts.verbose else None))
        s.seconds = time.monotonic() - t0
        return s
    pool = _Pool(opts)
    for _ in range(opts.jobs):
        pool.start_one()
    limit = PROGRAM_TIMEOUT + opts.shrink_time + 60
    exhausted = False
    while pool.workers:
        for conn in wait(list(pool.workers), timeout=5.0):
            entry = pool.workers[conn]
            try:
                tag, payload = conn.recv()
            except (EOFError, OSError):
                if entry[1] is not None:
                    note(dict(seed=entry[1], kind="crash", profile=_profile(opts, entry[1]),
                              detail=f"the worker process died (exit code {entry[0].exitcode})"))
                pool.stop(conn)
                if not exhausted:
                    pool.start_one()
                continue
            if tag == "done":
                note(payload)
            entry[1] = None
            nxt = None
            if not exhausted and not (deadline and time.monotonic() > deadline):
                nxt = next(seeds, None)
            if nxt is None:
                exhausted = True
                conn.send(None)
                pool.stop(conn)
            else:
                entry[1], entry[2] = nxt, time.monotonic()
                conn.send(nxt)
        now = time.monotonic()
        for conn, (_p, seed, started) in list(pool.workers.items()):
            if seed is not None and now - started > limit:
                note(dict(seed=seed, kind="hang", profile=_profile(opts, seed),
                          detail=f"no result after {limit:.0f} s (a hang in compile, launch or readback)"))
                pool.stop(conn)
                if not exhausted:
                    pool.start_one()
    s.seconds = time.monotonic() - t0
    return s
