"""python -m experiments.fork_device [--timeout S] [--case NAME]

What does os.fork() after gfxrt opened a device do to the child and to the parent, on this
machine's adapter? gfxrt's answer (gr.ForkedProcessError, docs/runtime.md "Processes") is that
the child may not use a device; this probe checks that the child's *exit* is safe too and that
the parent goes on unharmed. Each case runs in a fresh parent process (a parent whose device
the child destroyed may be aborted by wgpu-native at its next submit), which opens a device,
leaves work in flight, forks, waits for the child, then launches and reads back again.

    case            what the child does
    guard-exit      its first gfxrt call must raise gr.ForkedProcessError; then sys.exit(0), so
                    the interpreter's and the C library's exit handlers (the driver's) run
    guard-osexit    the same, then os._exit(0): no exit handlers
    untouched-exit  no gfxrt call at all, then sys.exit(0)
    new-instance    bypasses the guard and opens a device of its own (a new wgpu instance)
    pool            a multiprocessing 'fork' pool: one task uses no gfxrt, one calls gfxrt
                    (ForkedProcessError expected); pool workers end with os._exit

Output: one line per case: the child's outcome (ok / hung at work / hung at exit / crashed
(signal) / error), then the parent's (parent ok / parent wrong / parent raised / parent died).
On lavapipe a device opened in the child computes right and the child then hangs at exit. On
the H100 (driver 580) the guarded child crashed with SIGSEGV in its exit and the parent's
device was lost with it, until gfxrt ended forked children with os._exit (context.py).
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import subprocess
import sys
import time

import gfxrt as gr
from gfxrt.engine import context

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
CASES = ("guard-exit", "guard-osexit", "untouched-exit", "new-instance", "pool")


@gr.kernel
def add1(x: F1):
    for i in range(x.shape[0]):
        x[i] += 1.0


def _child(case: str, w: int) -> None:
    def say(msg: str) -> None:
        os.write(w, (msg + "\n").encode())
    try:
        if case == "untouched-exit":
            say("work done")
        elif case.startswith("guard"):
            try:
                gr.ndarray(gr.f32, 4)
            except gr.ForkedProcessError:
                say("work done")
            else:
                say("error: no ForkedProcessError")
        else:
            context._state["forked_from"] = None  # bypass the guard: what gr.init() in the child would do
            gr.init()
            y = gr.ndarray(gr.f32, 1024)
            add1(y)
            add1(y)
            ok = bool((y.to_numpy() == 2).all())
            say("work done" if ok else "error: wrong result")
    except BaseException as e:  # noqa: BLE001
        say(f"error: {e!r}"[:300])
    if case == "guard-osexit":
        os._exit(0)
    sys.exit(0)


def _fork_case(case: str, timeout: float) -> str:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        _child(case, w)
    os.close(w)
    os.set_blocking(r, False)
    out, end = b"", time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            out += os.read(r, 4096)
        except BlockingIOError:
            pass
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            try:
                out += os.read(r, 4096)
            except BlockingIOError:
                pass
            text = out.decode().strip()
            if os.WIFSIGNALED(status):
                return f"crashed (signal {os.WTERMSIG(status)}); child said: {text!r}"
            code = os.waitstatus_to_exitcode(status)
            return ("ok" if text == "work done" else text) + ("" if code == 0 else f" (exit {code})")
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    text = out.decode().strip()
    return "hung at exit" if text == "work done" else f"hung at work; child said: {text!r}"


def _plain_task(k: int) -> int:
    return k * k


def _gfxrt_task(k: int) -> str:
    try:
        gr.ndarray(gr.f32, 4)
    except gr.ForkedProcessError:
        return "ForkedProcessError"
    return "no error"


def _pool_case(timeout: float) -> str:
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(2) as pool:
        a = pool.map_async(_plain_task, range(4)).get(timeout)
        b = pool.apply_async(_gfxrt_task, (0,)).get(timeout)
    return "ok" if a == [0, 1, 4, 9] and b == "ForkedProcessError" else f"error: {a} {b}"


def run_one(case: str, timeout: float) -> int:
    x = gr.ndarray(gr.f32, 1 << 20)
    add1(x)
    assert (x.to_numpy() == 1).all()
    add1(x)
    gr.runtime().flush()  # work in flight in the parent at the fork
    try:
        child = _pool_case(timeout) if case == "pool" else _fork_case(case, timeout)
    except Exception as e:  # noqa: BLE001
        child = f"error: {e!r}"[:300]
    print(f"child: {child}", flush=True)
    try:
        add1(x)
        good = bool((x.to_numpy() == 3).all())
        print("parent ok" if good else "parent wrong", flush=True)
    except Exception as e:  # noqa: BLE001
        print(f"parent raised {e!r}"[:300], flush=True)
    return 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--case", choices=CASES, default=None)
    args = ap.parse_args()
    if args.case:
        sys.exit(run_one(args.case, args.timeout))
    print(f"adapter: {gr.device().name}", flush=True)
    for case in CASES:
        try:
            p = subprocess.run([sys.executable, "-m", "experiments.fork_device", "--case", case,
                                "--timeout", str(args.timeout)], capture_output=True, text=True,
                               timeout=2 * args.timeout + 60)
            lines = [ln for ln in p.stdout.splitlines() if ln.startswith(("child", "parent"))]
            tail = "" if p.returncode == 0 else f"; parent died (exit {p.returncode}): " + \
                " | ".join(p.stderr.strip().splitlines()[-3:])[:300]
            print(f"{case:15s} " + "; ".join(lines) + tail, flush=True)
        except subprocess.TimeoutExpired:
            print(f"{case:15s} parent hung", flush=True)


if __name__ == "__main__":
    main()
