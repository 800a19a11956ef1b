"""python -m tools.progfuzz.hang --seed S [--profile P] [--extreme] [--timeout T] [--time-limit L]
[--out DIR]

Shrinks a program that hangs: the long mode reports a seed whose worker gave no result in time
as a `hang` (on a GPU usually a dispatch that never finishes; killing it may lose the device of
every process on that GPU) and cannot shrink it in the worker. Here each candidate runs alone in
a fresh process that is killed after T seconds: a candidate that has not finished by then still
hangs. The smallest such program is written to DIR as `repro_hang_<profile>_<seed>.py`, a
script that prints "finished" unless the bug is there (run it under `timeout`). Candidates run
one after another, never beside each other, so one hang cannot take another candidate's device
with it. Every hanging candidate costs T seconds, so shrinking takes about T times the number of
steps that succeed plus a second or two per candidate that finishes."""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import tempfile
import time

import numpy as np

from .generate import generate
from .printer import KERNEL_NAME, source
from .repro import _array_literal
from .shrink import nodes, shrink


def _caps_child(conn):
    from .driver import adapter_caps
    conn.send(adapter_caps())


def _run_child(conn, program):
    from . import runner
    runner.run(program, tempfile.mkdtemp(prefix="progfuzz-hang-"))
    conn.send("done")


def in_child(target, args: tuple, timeout: float):
    """target(conn, *args) in a fresh 'spawn' process: (finished, what it sent or None). A child
    that has sent nothing after `timeout` seconds is killed: (False, None)."""
    ctx = mp.get_context("spawn")
    parent, child = ctx.Pipe()
    p = ctx.Process(target=target, args=(child, *args), daemon=True)
    p.start()
    child.close()
    try:
        if parent.poll(timeout):
            try:
                return True, parent.recv()
            except (EOFError, OSError):  # it died: finished, not hung
                return True, None
        return (not p.is_alive()), None
    finally:
        if p.is_alive():
            p.kill()
        p.join(10)
        parent.close()


def still_hangs(program, timeout: float, run=_run_child) -> bool:
    finished, _ = in_child(run, (program,), timeout)
    return not finished


def reproducer(program, timeout: float, n0: int) -> str:
    k = program.kernel
    doc = (f'"""progfuzz hang reproducer: seed {program.seed}, profile {program.profile}'
           f"{' (extreme values)' if program.extreme else ''}; shrunk from {n0} to {sum(1 for _ in nodes(program))} "
           f"nodes.\nIt did not finish within {timeout:g} s on the adapter it was shrunk on. Run it as\n"
           f'`timeout 60 python <this file>`: it prints "finished" unless the bug is there."""')
    src = source(program).replace("import gfxrt as gr\n", "")
    lines = [doc, "from math import inf, nan  # noqa: F401 - the values below may hold them", "",
             "import numpy as np", "", "import gfxrt as gr", "", "", src.strip("\n"), "", "", "INPUTS = {"]
    lines += [f"    {a.name!r}: {_array_literal(np.asarray(program.inputs[a.name]), a.dtype)}," for a in k.arrays]
    lines += ["}", f"ORDER = {[a.name for a in k.arrays]!r}", f"SCALARS = {[s.value for s in k.scalars]!r}", "", "",
              'if __name__ == "__main__":',
              f"    {KERNEL_NAME}(*[np.array(INPUTS[n], copy=True) for n in ORDER], *SCALARS)",
              "    gr.sync()", '    print("finished")', ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.progfuzz.hang", description=__doc__.split("\n\n")[1])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--profile", default="all")
    ap.add_argument("--extreme", action="store_true")
    ap.add_argument("--timeout", type=float, default=15.0, help="seconds after which a candidate hangs")
    ap.add_argument("--time-limit", type=float, default=600.0, help="seconds to spend shrinking")
    ap.add_argument("--out", default="progfuzz-out")
    a = ap.parse_args(argv)
    ok, caps = in_child(_caps_child, (), 120.0)
    if not ok or caps is None:
        print("could not open the adapter to read its features", flush=True)
        return 2
    program = generate(a.seed, a.profile, caps, a.extreme)
    t0 = time.monotonic()
    if not still_hangs(program, a.timeout):
        print(f"seed {a.seed} ({program.profile}) finished within {a.timeout:g} s: no hang to shrink", flush=True)
        return 0
    n0 = sum(1 for _ in nodes(program))
    small = shrink(program, lambda c: still_hangs(c, a.timeout), time_limit=a.time_limit,
                   log=lambda m: print(m, flush=True))
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, f"repro_hang_{small.profile}_{small.seed}.py")
    with open(path, "w") as f:
        f.write(reproducer(small, a.timeout, n0))
    print(f"seed {a.seed}: hang shrunk from {n0} to {sum(1 for _ in nodes(small))} nodes in "
          f"{time.monotonic() - t0:.0f} s: {path}", flush=True)
    return 1


if __name__ == "__main__":
    sys.exit(main())
