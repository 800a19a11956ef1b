"""python -m bench.probes.fork_device [--timeout S]

Can a process forked after gfxrt opened a device use a device of its own? gfxrt says no
(gr.ForkedProcessError, docs/runtime.md "Processes"): on lavapipe a device opened in the
forked child computes right, and the child then hangs at its exit in the driver's teardown
(a new wgpu instance), or its first wait never returns (the parent's instance). This probe
measures that on the machine's adapter, bypassing the guard in the child: each case forks,
the child opens a device, launches, reads back and exits normally (sys.exit, so the
interpreter's and the driver's teardown run), and the parent reports how far it got.

    case           what the child does
    new-instance   gfxrt's own path: a fresh wgpu instance, adapter and device
    guard          no bypass: the first gfxrt call must raise gr.ForkedProcessError at once

Output: one line per case: ok / hung at work / hung at exit / crashed (signal) / error.
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import time

import gfxrt as gr
from gfxrt import context

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)


@gr.kernel
def add1(x: F1):
    for i in range(x.shape[0]):
        x[i] += 1.0


def _child(case: str, w: int) -> None:
    def say(msg: str) -> None:
        os.write(w, (msg + "\n").encode())
    try:
        if case == "guard":
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
    sys.exit(0)


def run_case(case: str, timeout: float) -> str:
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
            return "ok" if text == "work done" else text
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    text = out.decode().strip()
    return "hung at exit" if text == "work done" else f"hung at work; child said: {text!r}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args()
    x = gr.ndarray(gr.f32, 1 << 20)
    add1(x)
    assert (x.to_numpy() == 1).all()
    print(f"adapter: {gr.device().name}")
    for case in ("guard", "new-instance"):
        add1(x)
        gr.runtime().flush()  # work in flight in the parent at the fork
        print(f"{case:14s} {run_case(case, args.timeout)}", flush=True)
    assert (x.to_numpy() == 3).all(), "the parent was harmed"
    print("parent ok")


if __name__ == "__main__":
    main()
