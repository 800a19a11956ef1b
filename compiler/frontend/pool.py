"""Elements of a pooled dynamic SNode in kernels: the table lookup of an element's chunk.

A dynamic node whose lists live in a chunk pool (gfxrt/data/pool.py has the layout: `keys`,
a table of `capacity` slots, and `count` = [taken, lost, capacity]) stores element k of list L
in the chunk with key L * chunks_per_list + k // chunk + 1, at k % chunk; the chunk in table
slot h is storage chunk h + 1. A lookup probes from the key's hash, `(key * HASH mod 2^32) mod
capacity` in u32, by linear probing, at most MAX_PROBES slots:

- a read stops at the key (found) or at a free slot (missing: the null chunk 0, which reads 0);
- a write takes the first free slot with a compare-exchange from 0 to its key, and uses the
  slot when the exchange returns 0 or its key (another thread took it for the same chunk); a
  write that finds no slot gets the trash chunk (capacity + 1) and counts the loss in count[1]
  for the host to report.
"""
from __future__ import annotations

from .. import semantic as sem
from ..ir import AtomicAttr, Loc, Node, Op
from ..sparse import POOL_HASH as HASH
from ..sparse import POOL_MAX_PROBES as MAX_PROBES
from ..sparse import SparseField
from ..types import i32, u32
from .scope import _emit_atomic


class PoolMixin:
    def pool_index(self, sf: SparseField, idx: list, loc: Loc, take: bool) -> Node:
        """The storage element (an i32 node) of the element at `idx` (0-based, one per field
        axis) of a field in sf.node's pool; `take`: a write, which takes its chunk if missing."""
        n = sf.node
        pool = n.pool
        point = dict(zip(sf.axes, idx))
        k = self.temp(sem.as_node(point[n.dyn_axis], loc, i32), loc)
        lst = self._meta_index(n, point, loc)
        b = lambda op, x, y: sem.binary(op, x, y, loc)  # noqa: E731
        key = self.temp(sem.as_node(b(Op.ADD, b(Op.ADD, b(Op.MUL, lst, pool.per_list), b(Op.FLOORDIV, k, pool.chunk)),
                                      1), loc, i32), loc)
        keys = self.bind_field(pool.keys, "pool_keys", None).buf
        count = self.bind_field(pool.count, "pool_count", None).buf
        cap = self.temp(Node(Op.LOAD, i32, (sem.as_node(2, loc, i32),), attr=count, loc=loc), loc)
        h = self.new_local("slot", i32)
        hv = Node(Op.VAR, i32, attr=h, loc=loc)
        hashed = b(Op.MOD, b(Op.MUL, sem.cast(key, u32), HASH), sem.cast(cap, u32))  # in u32, as the host's
        self.emit(Node(Op.ASSIGN, attr=h, args=(sem.cast(hashed, i32),), loc=loc))
        c = self.new_local("chunk", i32)
        cv = Node(Op.VAR, i32, attr=c, loc=loc)
        zero, one = sem.as_node(0, loc, i32), sem.as_node(1, loc, i32)
        found = sem.as_node(b(Op.ADD, hv, 1), loc, i32)
        trash = sem.as_node(b(Op.ADD, cap, 1), loc, i32)
        self.emit(Node(Op.ASSIGN, attr=c, args=(trash if take else zero,), loc=loc))
        probe = self.new_local("probe", i32)
        with self.block() as body:
            at = self.temp(Node(Op.LOAD, i32, (hv,), attr=keys, loc=loc), loc)
            if take:
                with self.block() as free:  # claim it; the exchange returns 0 (ours now) or the key someone put
                    old = self.new_local("claimed", i32)
                    self.emit(Node(Op.ATOMIC, attr=AtomicAttr("cas", keys, old), args=(hv, key, zero), loc=loc))
                    self.emit(Node(Op.ASSIGN, attr=at.attr, args=(Node(Op.VAR, i32, attr=old, loc=loc),), loc=loc))
                    with self.block() as mine:
                        _emit_atomic(self, "add", count, zero, one, loc, False)
                        self.emit(Node(Op.ASSIGN, attr=at.attr, args=(key,), loc=loc))
                    self.emit(Node(Op.IF, args=(b(Op.EQ, at, 0),), blocks=(tuple(mine), ()), loc=loc))
                self.emit(Node(Op.IF, args=(b(Op.EQ, at, 0),), blocks=(tuple(free), ()), loc=loc))
            with self.block() as hit:
                self.emit(Node(Op.ASSIGN, attr=c, args=(found,), loc=loc))
                self.emit(Node(Op.BREAK, loc=loc))
            self.emit(Node(Op.IF, args=(b(Op.EQ, at, key),), blocks=(tuple(hit), ()), loc=loc))
            if not take:
                with self.block() as miss:
                    self.emit(Node(Op.BREAK, loc=loc))
                self.emit(Node(Op.IF, args=(b(Op.EQ, at, 0),), blocks=(tuple(miss), ()), loc=loc))
            step = sem.as_node(b(Op.ADD, hv, 1), loc, i32)
            self.emit(Node(Op.ASSIGN, attr=h, args=(sem.select(b(Op.EQ, step, cap), zero, step, loc),), loc=loc))
        self.emit(Node(Op.FOR, attr=probe, args=(zero, sem.as_node(MAX_PROBES, loc, i32), one),
                       blocks=(tuple(body),), loc=loc))
        if take:  # no slot within MAX_PROBES: the trash chunk, and the loss counted
            with self.block() as lost:
                _emit_atomic(self, "add", count, one, one, loc, False)
            self.emit(Node(Op.IF, args=(b(Op.EQ, cv, trash),), blocks=(tuple(lost), ()), loc=loc))
        return sem.as_node(b(Op.ADD, b(Op.MUL, cv, pool.chunk), b(Op.MOD, k, pool.chunk)), loc, i32)
