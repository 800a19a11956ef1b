"""What belongs to one thread: the blocks that change how that thread's launches run.

docs/runtime.md "Threads": Tape and graph capture belong to the thread that opened them; other
threads run eagerly. `THREAD` holds, per thread, the graph it captures into, the Tape it records and
the FwdMode block it is in. Every reader goes through it: `GfxRuntime.capture` (a property
over `THREAD.capture`, for the runtime the graph belongs to) and gfxrt/ad/autodiff.py for the
Tape and forward mode; no call site keeps state of its own.

What stays shared between threads is guarded by LOCK (gfxrt/engine/lock.py) as before: the
runtime's open command encoder and pass (eager work of every thread goes there, in the
order the lock admits it), the memory pool (a graph's pins hold whichever thread frees a
buffer), the retirement FIFO and the queue (a readback in one thread waits for the queue
while another captures: capture encodes nothing, so the wait cannot disturb it).
"""
from __future__ import annotations

import threading


class ThreadState(threading.local):
    """Per-thread slots; a thread that never set one reads the class default, None."""

    capture = None  # the gr.graph() this thread captures into (gfxrt/graph.py)
    tape = None     # the gr.Tape this thread records (or gfxrt/ad/ad_custom.py's stand-in)
    fwd = None      # the gr.ad.FwdMode block this thread is in


THREAD = ThreadState()
# Tape and FwdMode blocks open in any thread (changed under LOCK). While it is 0 no thread has
# one, so a launch need not look at its own slots: the launch fast path reads this one word
# instead of two thread-local attributes. (Graph capture has its own count per runtime,
# `rt._captures`, which sends every thread's launches to the checked path.)
AD_BLOCKS = [0]
