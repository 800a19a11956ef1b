"""One framework's benchmarks in a process of its own: `python -m bench.worker --framework SPEC`.

The parent (bench.cli) starts one worker per framework so that frameworks never share a process
(Taichi and Quadrants each own a runtime; a crash or an abort costs one framework's remaining
cases, not the run). Events go to the original stdout as JSON lines; everything the frameworks
print goes to stderr.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
import traceback

from .frameworks import Unavailable, make
from .registry import NA, Benchmark, select
from .timing import Config, measure, stats


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}".strip()


def run_case(b: Benchmark, case, fw, cfg: Config) -> dict:
    """Set up, check and time one case on one started framework; never raises."""
    out = {"benchmark": b.name, "case": case.label, "framework": fw.spec, "unit": b.unit,
           "higher_is_better": b.higher_is_better, "status": "ok"}
    setup = b.impls.get(fw.kind)
    if setup is None:
        return {**out, "status": "n/a", "reason": b.na.get(fw.kind, f"no {fw.kind} implementation")}
    stage = "setup"
    try:
        work = setup(fw, case.param)
        out["impl"] = work.impl
        if work.note:
            out["note"] = work.note
        stage = "run"
        if work.samples is not None:
            host, device = stats(work.samples(cfg.repeats)), None
        else:
            work.run()
            fw.sync()
            if work.check is not None:
                stage = "check"
                problem = work.check()
                if problem:
                    out["status"] = "wrong"
                    out["reason"] = f"result differs from the reference: {problem}"
            stage = "timing"
            host, device = measure(work.run, fw.sync, cfg, fw.device_timer())
    except NA as e:
        return {**out, "status": "n/a", "reason": str(e)}
    except fw.unsupported as e:
        return {**out, "status": "n/a", "reason": f"{fw.kind} cannot do this yet ({_first_line(e)})"}
    except Exception as e:  # noqa: BLE001 - a failing case is a result, not a crash
        tb = traceback.format_exc(limit=-3)
        print(tb, file=sys.stderr)
        return {**out, "status": "error", "reason": f"{stage}: {_first_line(e)}"}
    finally:
        gc.collect()
    out["host_s"] = host
    out["device_s"] = device
    out["value"] = b.value(host["median"], work.amount)
    out["device_value"] = b.value(device["median"], work.amount) if device else None
    out["amount"] = work.amount
    return out


def run(spec: str, names: list[str] | None, quick: bool, skip: set[str], emit, machine: str = "gpu",
        probe: bool = False) -> None:
    """Start framework `spec` and run the selected benchmarks' cases for `machine` ("gpu" or
    "cpu"), emitting events; with `probe`, only start it and report what it runs on."""
    fw = make(spec)
    t = time.perf_counter()
    try:
        fw.start()
    except Unavailable as e:
        emit({"event": "framework", "framework": spec, "ok": False, "reason": str(e)})
        return
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        emit({"event": "framework", "framework": spec, "ok": False, "reason": f"start failed: {_first_line(e)}"})
        return
    emit({"event": "framework", "framework": spec, "ok": True, "info": fw.info(),
          "start_s": round(time.perf_counter() - t, 3)})
    if probe:
        return
    cfg = Config.quick() if quick else Config()
    for b in select(names):
        for case in b.cases_for(quick, machine):
            key = f"{b.name}/{case.label}"
            if key in skip:
                continue
            emit({"event": "start", "key": key})
            t = time.perf_counter()
            r = run_case(b, case, fw, cfg)
            r["wall_s"] = round(time.perf_counter() - t, 3)
            emit({"event": "result", "key": key, "result": r})


def main(argv=None) -> None:
    """Entry point of a worker process (started by bench.cli)."""
    ap = argparse.ArgumentParser(prog="python -m bench.worker")
    ap.add_argument("--framework", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip", default="[]", help="JSON list of bench/case keys already done")
    ap.add_argument("--machine", choices=("gpu", "cpu"), default="gpu", help="which cases marked `only` to run")
    ap.add_argument("--probe", action="store_true", help="start the framework, report it, run nothing")
    args = ap.parse_args(argv)
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything the frameworks print (C or Python) goes to stderr
    sys.stdout = sys.stderr

    def emit(ev: dict) -> None:
        proto.write(json.dumps(ev) + "\n")
        proto.flush()

    only = [s for s in args.only.split(",") if s] or None
    run(args.framework, only, args.quick, set(json.loads(args.skip)), emit, args.machine, args.probe)
    emit({"event": "done"})
    proto.flush()
    sys.stderr.flush()
    os._exit(0)  # skip framework atexit teardown (slow or crashy); results are already sent


if __name__ == "__main__":
    main()
