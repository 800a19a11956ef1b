"""The adstack heap: the device memory behind every grad kernel's per-thread stacks.

One heap per runtime, shared by all grad kernels (their launches run one after another).
An adstack task (TaskSpec.capped) runs a grid-stride loop over at most `threads` physical
threads; on the device it uses A = min(threads, heap words / D) of them, D being its stack
depth (compiler/autodiff/adstack.py), so it is correct whatever the heap size as long as one
stack fits (D <= heap words). For speed the heap should hold `threads * D` words:

- compile-time depths (constant loops, or gr.init(adstack_size=N)) are ensured before the
  launch;
- run-time depths: before a grad kernel's first launch the runtime runs its counting
  pre-pass alone and reads the depth back (one round trip per specialization, like its
  compilation); afterwards each launch's depth is recorded on the device (meta[1]) and read
  at the next sync (in the same round trip as the status words the sync reads anyway), and
  the next launch grows the heap to fit.

The counting pre-passes max their depth into meta[0] without zeroing it first (that took a
dispatch per launch): between two syncs meta[0] holds the largest depth counted, an upper
bound of each launch's own, and the sync zeroes it (the queue is idle then).

Growth doubles; the old heap goes into `rt.ctx_buffers` and is released through the
retirement FIFO once the work that used it is done.
"""
from __future__ import annotations

import array
import contextlib

from ..engine.backend import calls as ffi
from ..engine.launch import MISS

THREADS_GPU = 1 << 18       # enough resident threads to fill an H100 (132 SMs x 2048)
THREADS_CPU = 1 << 11       # lavapipe: few cores; a small heap stays in cache
INITIAL_WORDS_GPU = 1 << 22  # 16 MiB
INITIAL_WORDS_CPU = 1 << 18  # 1 MiB
MAX_HEAP_BYTES = 1 << 30
_ZERO = array.array("I", [0])  # the meta word zeroed after a read (a buffer-protocol object)


class AdstackHeap:
    """The heap buffer, the small `meta` buffer (u32 words: [0] the largest depth the
    pre-passes counted since the last sync, [1] the largest heap depth the grad tasks used
    since the last sync) and the sizing policy."""

    def __init__(self, rt):
        self.rt = rt
        cpu = rt.dev.is_cpu
        self.threads = THREADS_CPU if cpu else THREADS_GPU
        limits = rt.dev.limits
        limit = min(int(limits.get("max-storage-buffer-binding-size", MAX_HEAP_BYTES)),
                    int(limits.get("max-buffer-size", MAX_HEAP_BYTES)), MAX_HEAP_BYTES)
        self.max_words = limit // 4
        self.words = min(INITIAL_WORDS_CPU if cpu else INITIAL_WORDS_GPU, self.max_words)
        self.initial_words = self.words  # where doubling starts (tests derive expected sizes from it)
        self.heap = self._alloc(4 * self.words)
        self.meta = self._alloc(16)
        self.depth = 0           # the largest per-thread heap depth seen so far
        self.grown = 0           # number of times the heap grew
        self._unread = False     # a run-time-depth launch since the last read of meta[1]
        self._probed: set[int] = set()

    def _alloc(self, size: int):
        return self.rt.alloc_zeroed(size, what="the adstack heap")

    def release(self) -> None:
        """Give the heap back (gr.init() changed the options it was sized under)."""
        self.rt.free_later(self.heap)
        self.rt.free_later(self.meta)

    # -- sizing ----------------------------------------------------------------------------
    def ensure(self, depth: int) -> None:
        """Grow (by doubling) so that `threads` stacks of `depth` slots fit, within the limit."""
        want = min(self.threads * max(depth, 1), self.max_words)
        if want <= self.words:
            return
        words = self.words
        while words < want:
            words *= 2
        words = min(words, self.max_words)
        self.rt.free_later(self.heap)  # in-flight work may still use it: retired through the FIFO
        self.heap = self._alloc(4 * words)
        self.words = words
        self.grown += 1

    def max_groups(self, workgroup_size: int) -> int:
        """The most workgroups an adstack task is dispatched with."""
        return max(1, self.threads // workgroup_size)

    def learn(self, depth: int) -> None:
        """Record a per-thread heap depth that a launch needed."""
        self.depth = max(self.depth, int(depth))

    # -- launches ----------------------------------------------------------------------------
    def prepare(self, kernel, compiled, args, kwargs) -> None:
        """Before launching a kernel with adstack tasks: size the heap for it (running its
        counting pre-pass first on the first launch of a run-time-depth specialization)."""
        tasks = [t for t in compiled.spec.tasks if t.capped]
        if any(t.stack_depth is None for t in tasks) and id(compiled) not in self._probed:
            self._probed.add(id(compiled))
            with capture_suspended(self.rt):  # inside gr.graph(): probe now, on the data as it is
                self.rt.clear(self.meta, 0, 4)  # this launch's count alone
                kernel._launch(args, kwargs, "grad_probe")
                level1 = min(t.stack_level1 for t in tasks)
                self.learn(int(self.read_meta()[0]) - level1)  # the pre-pass counts first-level slots too
        self.ensure(max([self.depth] + [t.stack_depth or 0 for t in tasks]))

    def launched(self, spec) -> None:
        """After a launch: a run-time depth is to be read back at the next sync."""
        if any(t.capped and t.stack_depth is None for t in spec.tasks):
            self._unread = True

    def read_meta(self) -> array.array:
        """The meta words, after all work recorded so far (a round trip)."""
        words = array.array("I", bytes(16))
        self.rt.blitter.device_to_host([(self.meta, 0, 16, words)], check=False)  # errors: at the user's readback
        return words

    def on_sync(self) -> None:
        """After a sync that followed a run-time-depth launch: learn the depth it used and
        zero meta[0]. The read carries the watched kernels' status words too (and raises their
        errors, as the sync would next), so the sync makes no extra round trip for it."""
        if not self._unread:
            return
        self._unread = False
        words = array.array("I", bytes(16))
        try:
            self.rt.blitter.device_to_host([(self.meta, 0, 16, words)], check=True)
        finally:
            self.learn(words[1])
            if self.rt.alive:  # the queue is idle: the write lands before any later submission
                ffi.queue_write(self.rt.queue, self.meta, 0, _ZERO, 4)


def fast_launcher(rt, compiled, fast):
    """The fast path of a grad launch with adstack tasks, for a call shape the checked path
    launched before: what `prepare` and `launched` do for it, around the launcher's generated
    fast path `fast`. MISS (back to the checked path) while the heap has not probed this
    specialization yet (a run-time depth is counted on its first launch)."""
    tasks = [t for t in compiled.spec.tasks if t.capped]
    fixed = max(t.stack_depth or 0 for t in tasks)
    counted = any(t.stack_depth is None for t in tasks)
    key = id(compiled)

    def launch(*args):
        h = rt.adstack
        if h is None or (counted and key not in h._probed):
            return MISS
        h.ensure(max(h.depth, fixed))
        r = fast(*args)
        if r is not MISS and counted:
            h._unread = True  # (launched(): the depth it used is read at the next sync)
        return r
    return launch


@contextlib.contextmanager
def capture_suspended(rt):
    """Run the block eagerly even while a graph captures: the runtime's own sizing work
    (the adstack's counting pre-pass and its readback), not part of any graph."""
    cap = rt.capture
    if cap is None:
        yield
        return
    rt.capture = None  # this thread's capture only (gfxrt/engine/threadstate.py)
    try:
        yield
    finally:
        rt.capture = cap


def heap(rt) -> AdstackHeap:
    """The runtime's adstack heap, created on first use."""
    if rt.adstack is None:
        rt.adstack = AdstackHeap(rt)
    return rt.adstack


__all__ = ["AdstackHeap", "heap"]
