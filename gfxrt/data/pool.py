"""The chunk pool behind a large `dynamic` SNode: its lists' memory, taken on demand.

WebGPU has no device allocator, so each pooled dynamic node owns one pool: every field placed
under the node keeps `(capacity + 2) * chunk` elements (not `lists * list capacity`). Element
k of list L lies in the list's chunk number s = k // chunk, at k % chunk; a chunk is found
through one table, open addressing with linear probing:

- `keys` (i32, `capacity` slots): slot h holds the key L * chunks_per_list + s + 1 of the chunk
  stored in storage chunk h + 1, or 0 where the slot is free;
- `count` (i32 words): [0] chunks taken, [1] writes that found no free slot, [2] capacity.

A key's probe starts at its hash `(key * 0x9E3779B1 mod 2^32) mod capacity` and looks at most
MAX_PROBES slots. The chunk is gfxrt's granule, not Taichi's `chunk_size` (a hint that changes
nothing a program sees): 64 bytes of the node's first field, at most chunk_size elements, so a
short list takes little room and a long one costs one lookup per access all the same.

Storage chunk 0 is the *null* chunk: never handed out, so it stays zero and a read of an
element whose chunk was never taken reads 0 (the sparse invariant, compiler/sparse.py).
Storage chunk capacity + 1 is the *trash* chunk: a write that found no free slot lands there
and is lost; no key names it, so no read sees it.

A write takes its chunk where it is missing (compiler/frontend/pool.py): a compare-exchange of
the first free slot from 0 to the key. Threads racing for one chunk agree on it: the loser's
exchange returns the same key and it uses that slot, so a race leaves nothing unused (a chain
of chunks linked by compare-exchange would leave the losers' chunks behind).

A pool starts with room for INITIAL_BYTES of its first field (at most the device's largest
storage binding; 128 MiB is WebGPU's default), or a quarter more than the dense backing where
that is less. Growth happens on the host, between launches: before a kernel that may take
chunks runs, and before a host read, the pool reads count back if such a kernel ran since (one
round trip); once more than half is in use it grows to three times the chunks in use (keys
rehashed, chunks moved on the host), up to the binding limit. A single launch that fills the
rest loses the writes that found no slot: the check after it grows the pool and raises
`GfxrtError` (Taichi's CUDA backend stops at its preallocated pool the same way). Deactivating
a list keeps its chunks for its next elements (zeroed); `deactivate_all` empties the pool.
"""
from __future__ import annotations

import math
import weakref

from gfxrt.compiler.npcompat import np
from gfxrt.compiler.sparse import POOL_HASH as HASH
from gfxrt.compiler.sparse import POOL_MAX_PROBES as MAX_PROBES  # the table is at most half full at a launch
from gfxrt.compiler.types import i32

from ..engine import context
from ..errors import GfxrtError
from .field import Field
from .ndarray import Ndarray

POOL_THRESHOLD_BYTES = 128 << 20  # dense storage above WebGPU's default storage binding: pooled
INITIAL_BYTES = 128 << 20         # a new pool's storage for its first field (see above)
CHUNK_BYTES = 64                  # gfxrt's chunk: 64 bytes of the first field (at most chunk_size elements)
DENSE_READ_LIMIT = 1 << 32        # to_numpy() of a pooled field builds the dense array: refused above
KEYS_SHAPE = (1 << 30,)           # the keys' logical extent: kernels index them up to the largest table


class ChunkPool:
    """The pool of one dynamic node: `lists` lists of at most `cap` elements, in chunks of
    `chunk` elements (see the module docstring)."""

    def __init__(self, node, lists_shape: tuple, cap: int, chunk: int, elem_bytes: int):
        elem_bytes = max(elem_bytes, 1)
        self.node, self.cap = node, cap
        self.chunk = max(1, min(int(chunk), cap, CHUNK_BYTES // elem_bytes))
        self.lists_shape = lists_shape
        self.lists = math.prod(lists_shape)
        self.per_list = -(-cap // self.chunk)  # chunks per list
        if self.lists * self.per_list >= 1 << 31:
            raise GfxrtError(f"{node!r}: {self.lists} lists of {self.per_list} chunks are too many to number in 32 "
                             "bits; use a larger chunk_size")
        budget = min(INITIAL_BYTES, _binding_limit(context.runtime())) // (self.chunk * elem_bytes) - 2
        self.capacity = max(2 * MAX_PROBES, min(budget, self.lists * self.per_list * 5 // 4 + 1))
        self.members: list = []
        self.keys = _field(KEYS_SHAPE, (self.capacity,))
        self.count = _field((4,))
        self.count._counts = self  # kernels that bind it may take chunks (gfxrt/kernel.py checks them)
        self._write_count(0)
        self.dirty = False  # a kernel that may take chunks ran since count was last read
        self.grown = 0

    @property
    def slots(self) -> int:
        """Chunks of storage: the null chunk, one per table slot, the trash chunk."""
        return self.capacity + 2

    def add(self, f) -> None:
        self.members.append(f)

    def _write_count(self, used: int) -> None:
        write_raw(self.count, np.array([used, 0, self.capacity, 0], np.int32))

    def read_count(self) -> np.ndarray:
        return raw(self.count)

    # -- growth ------------------------------------------------------------------------------
    def check(self) -> None:
        """Before a launch that may take chunks, or a host read: if such a launch ran since the
        last check, read count back; grow while more than half is in use; report a launch
        that found no free slot."""
        if not self.dirty:
            return
        self.dirty = False
        used, overflow = (int(v) for v in self.read_count()[:2])
        if overflow:
            self.grow(2 * max(used, self.capacity))
            raise GfxrtError(f"the chunk pool of {self.node!r} ran out of room in one launch: {overflow} writes that "
                             f"needed a new chunk of {self.chunk} elements were lost. The pool has grown to "
                             f"{self.capacity} chunks; run the program again from its start, or take fewer "
                             "elements per launch")
        if 2 * used > self.capacity:
            self.grow(3 * used, must=False)

    def grow(self, want: int, must: bool = True) -> None:
        """Room for `want` chunks, or as many as the largest storage binding allows; keys
        rehashed, chunks moved. `must`: raise where the limit allows no growth at all."""
        rt = context.runtime()
        limit = _binding_limit(rt)
        esize = max((f.nbytes // (self.slots * self.chunk) for f in self.members), default=4)
        cap = min(max(want, self.capacity + 1), limit // (self.chunk * esize) - 2)
        if cap <= self.capacity:
            if not must:
                return
            raise GfxrtError(f"the chunk pool of {self.node!r} needs more than {self.capacity} chunks of "
                             f"{self.chunk} elements, and more would exceed this device's largest storage binding "
                             f"({limit} bytes)")
        keys = raw(self.keys)
        old = np.nonzero(keys)[0]
        new = _place(keys[old].astype(np.int64), cap)
        for f in self.members:
            data = raw(f).reshape((self.slots, self.chunk) + f.element_shape)
            moved = np.zeros((cap + 2, self.chunk) + f.element_shape, data.dtype)
            moved[new + 1] = data[old + 1]
            _reallocate(f, rt, (cap + 2) * self.chunk)
            write_raw(f, moved)
        table = np.zeros(cap, np.int32)
        table[new] = keys[old]
        _reallocate(self.keys, rt, cap)
        write_raw(self.keys, table)
        self.capacity = cap
        self._write_count(len(old))
        self.grown += 1

    def reset(self) -> None:
        """Every list empty, every chunk free (deactivate_all)."""
        self.dirty = False
        Ndarray.fill(self.keys, 0)
        for f in self.members:
            Ndarray.fill(f, 0)
        self._write_count(0)

    # -- host access -------------------------------------------------------------------------
    def key(self, lst, k):
        return lst * self.per_list + k // self.chunk + 1

    def chunks_of(self, keys: np.ndarray) -> np.ndarray:
        """The storage chunk of each key (0, the null chunk, for a key without a slot)."""
        self.check()
        table = raw(self.keys).astype(np.int64)
        slots = np.nonzero(table)[0]
        order = np.argsort(table[slots])
        sk, ss = table[slots][order], slots[order]
        at = np.minimum(np.searchsorted(sk, keys), max(len(sk) - 1, 0))
        found = (sk[at] == keys) if len(sk) else np.zeros(keys.shape, bool)
        return np.where(found, ss[at] + 1 if len(sk) else 0, 0)

    def locate(self, idx: tuple) -> tuple[int, int]:
        """(list, position) of a field element's index (0-based; the list axis is the last)."""
        lst = 0
        for v, e in zip(idx[:-1], self.lists_shape):
            lst = lst * e + v
        return lst, idx[-1]

    def address(self, idx: tuple, take: bool) -> int:
        """The storage element holding field element `idx` (0-based): for a write (`take`) its
        chunk is taken first; a read of an element without a chunk gets the null chunk."""
        lst, k = self.locate(idx)
        key = self.key(lst, k)
        c = self._probe(key)
        if c == 0 and take:
            c = int(self._take(np.array([key], np.int64))[0])
        return c * self.chunk + k % self.chunk

    def _probe(self, key: int) -> int:
        """The storage chunk of one key (0: none), reading only the slots its probe looks at."""
        self.check()
        h = int(_hash(np.array([key], np.int64), self.capacity)[0])
        n = min(MAX_PROBES, self.capacity)
        slots = np.empty(n, np.int32)
        first = min(n, self.capacity - h)
        reads = [(self.keys._buffer, 4 * h, 4 * first, slots[:first])]
        if first < n:
            reads.append((self.keys._buffer, 0, 4 * (n - first), slots[first:]))
        self.keys._runtime().blitter.device_to_host(reads)
        for j, v in enumerate(slots.tolist()):
            if v == key:
                return (h + j) % self.capacity + 1
            if v == 0:
                break
        return 0

    def _take(self, keys: np.ndarray) -> np.ndarray:
        """Give distinct keys without a chunk a slot each, from the host (host writes), in
        order with launched kernels: their storage chunks."""
        used = int(self.read_count()[0])
        if 2 * (used + len(keys)) > self.capacity:
            self.grow(3 * (used + len(keys)))
        table = raw(self.keys)
        out = np.empty(len(keys), np.int64)
        for n, (key, h) in enumerate(zip(keys.tolist(), _hash(keys, self.capacity).tolist())):
            while table[h]:
                h = (h + 1) % self.capacity
            table[h] = key
            out[n] = h + 1
        write_raw(self.keys, table)
        self._write_count(used + len(keys))
        return out

    def active(self, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(list, position, storage element) of every active element, from the lists' lengths."""
        lens = np.minimum(lengths.reshape(-1).astype(np.int64), self.cap)
        lst = np.repeat(np.arange(self.lists, dtype=np.int64), lens)
        k = np.arange(lst.size, dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
        return lst, k, self.chunks_of(self.key(lst, k)) * self.chunk + k % self.chunk

    def dense(self, f) -> np.ndarray:
        """Field f as its dense array (to_numpy): the active elements, zeros elsewhere."""
        nbytes = math.prod(f._np_shape) * f._scalar.size
        if nbytes > DENSE_READ_LIMIT:
            raise GfxrtError(f"{f!r} is backed by a chunk pool; its dense form would take {nbytes} bytes: read "
                             "elements (x[i, j, k]) or copy the active ones out in a kernel")
        lst, k, addr = self.active(self.node.meta.to_numpy())
        out = np.zeros((self.lists, self.cap) + f.element_shape, f._scalar.numpy)
        out[lst, k] = raw(f)[addr]
        return out.reshape(f._np_shape)

    def scatter(self, f, a: np.ndarray) -> None:
        """Write dense array a's active elements into f (from_numpy; fill with `a` one element:
        Taichi writes active elements only)."""
        lst, k, addr = self.active(self.node.meta.to_numpy())
        if (addr < self.chunk).any():  # active elements without a chunk (below a write by index): take them
            self._take(np.unique(self.key(lst, k)[addr < self.chunk]))
            lst, k, addr = self.active(self.node.meta.to_numpy())
        data = raw(f)
        if a.shape == f._np_shape:
            a = a.reshape((self.lists, self.cap) + f.element_shape)[lst, k]
        data[addr] = a
        write_raw(f, data)


def _field(shape, storage=None):
    f = Field(i32, shape, storage_shape=storage)
    Ndarray.fill(f, 0)
    return f


def _hash(keys: np.ndarray, cap: int) -> np.ndarray:
    """Where a key's probe starts (the kernels' formula, compiler/frontend/pool.py)."""
    return ((keys * HASH) & 0xFFFFFFFF) % cap


def _place(keys: np.ndarray, cap: int) -> np.ndarray:
    """Slots for distinct keys in an empty table of `cap` slots, by linear probing (in rounds:
    each round, of the keys wanting one free slot the first takes it)."""
    slots = np.full(len(keys), -1, np.int64)
    want = _hash(keys, cap)
    taken = np.zeros(cap, bool)
    todo = np.arange(len(keys))
    while len(todo):
        free = ~taken[want[todo]]
        first = np.unique(want[todo[free]], return_index=True)[1]
        won = todo[free][first]
        slots[won] = want[won]
        taken[want[won]] = True
        rest = np.setdiff1d(todo, won, assume_unique=True)
        want[rest] = (want[rest] + 1) % cap
        todo = rest
    return slots


def raw(f) -> np.ndarray:
    """What f's device buffer holds (its storage, not its logical shape), read back."""
    out = np.empty(f._storage_shape + f.element_shape, f._scalar.numpy)
    if f.nbytes:
        f._runtime().blitter.device_to_host([(f._buffer, 0, f.nbytes, out)])
    return out


def write_raw(f, a: np.ndarray) -> None:
    """Write f's whole device buffer (its storage) from `a`."""
    a = np.ascontiguousarray(a, f._scalar.numpy)
    if a.nbytes != f.nbytes:
        raise ValueError(f"{a.nbytes} bytes for a buffer of {f.nbytes}")
    f._runtime().blitter.host_to_device(f._buffer, a)


def _binding_limit(rt) -> int:
    limits = rt.dev.limits
    return min(int(limits.get("max-storage-buffer-binding-size", 1 << 27)), int(limits.get("max-buffer-size", 1 << 28)))


def _reallocate(f, rt, elements: int) -> None:
    """Give array f a buffer of `elements` elements (its contents: written next)."""
    per = f.nbytes // max(1, math.prod(f._storage_shape))
    new = rt.alloc_zeroed(elements * per, what=f"the chunk pool of {f!r}")
    f._finalizer.detach()
    rt.free_later(f._buffer)
    f._buffer, f._storage_shape, f.nbytes = new, (elements,), elements * per
    f._finalizer = weakref.finalize(f, rt.free_later, new)
    f._finalizer.atexit = False
