"""python -m tools.progfuzz [--count N] [--seed S] [--jobs J] [--time-limit T] [--profile P]
[--out DIR] [--extreme] [--shrink-time S] [--no-grads] [-v]

Generates random programs, runs each on the current gfxrt adapter and in the reference
evaluator, and writes every mismatch, minimized, as a standalone reproducer into DIR. Prints
one summary line; the exit status is 1 when anything was found."""
from __future__ import annotations

import argparse
import sys

from .driver import Options, run
from .profiles import PROFILES


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.progfuzz", description=__doc__.split("\n\n")[1])
    ap.add_argument("--count", type=int, default=200, help="programs to run (seeds S .. S+N-1)")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--jobs", type=int, default=0, help="worker processes (0: run in this process)")
    ap.add_argument("--time-limit", type=float, default=None, help="stop starting programs after T seconds")
    ap.add_argument("--profile", default="all", choices=["all", *PROFILES], help="program kind (all: mixed by seed)")
    ap.add_argument("--out", default="progfuzz-out", help="directory for reproducers")
    ap.add_argument("--extreme", action="store_true",
                    help="also extreme operator values (huge float %% and //, shifts >= width, NaN, pow of "
                         "negative bases, out-of-range casts): checked against SEMANTICS.md")
    ap.add_argument("--shrink-time", type=float, default=120.0, help="seconds to minimize each finding (0: off)")
    ap.add_argument("--no-grads", action="store_true", help="do not check gradients")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    opts = Options(count=a.count, seed=a.seed, profile=a.profile, jobs=a.jobs, time_limit=a.time_limit, out=a.out,
                   extreme=a.extreme, shrink_time=a.shrink_time, grads=not a.no_grads, verbose=a.verbose)
    s = run(opts, emit=lambda m: print(m, flush=True))
    print(s.line(), flush=True)
    if s.findings:
        print(f"reproducers in {opts.out}/", flush=True)
    return 1 if s.bad else 0


if __name__ == "__main__":
    sys.exit(main())
