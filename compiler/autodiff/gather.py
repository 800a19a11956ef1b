"""Neighbour scatters of a grad task as gathers: no atomics, and loads that need not wait.

A stencil's item i reads x[t, i - 1], x[t, i] and x[t, i + 1], so the item of its grad kernel
adds into x.grad[t, i - 1 .. i + 1]: three atomics, two of them into elements other items add
into too, and every load of the next item's seeds waits behind them, since they may address
the same buffer (the ad_tape step's adjoint took 3.5x the step on an H100, 23.5 us at 2^20).
When every gradient access of the task addresses a column `i + c` (columns.py), the same sums
are formed per *target*: item j of the rewritten task runs the item body for each source
i = j - c in turn, keeping only the additions of offset c (which land in column j), summed
in locals; j then adds each sum into its element once, with a plain read-modify-write, since
no other item touches column j. The seeds that the item bodies zero (`y[i] = e` zeroes
y.grad[i] after reading it) are zeroed by a second task of the same launch, after every item
has read them.

    grad task (atomic)                      gather task, item j             zero task, item i
    a = g[t+1, i]; g[t+1, i] = 0            for c in offsets:               (the item body
    atomic g[t, i - 1] += a                   i = j - c; if i is an item:    without its
    atomic g[t, i] += a                         run it; keep += of offset c   additions)
    atomic g[t, i + 1] += a                 g[t, j] += the kept sum

Applies to a range task with the task's own injective item index of step 1, a body of
assignments, branches, gradient-buffer loads, zeroing stores and atomic adds (no loops, no
other side effects), and some offset c != 0; otherwise the task keeps its atomics. The
rewrite relies on the data access rule (no element both read and written by one launch, so
the elements that items add into are never seeds), and on the gradient buffers being
distinct: the kernel lists them in `assumes_distinct`, and launches that bind one array
twice use the kernel compiled without it (mode 'grad_alias').
"""
from __future__ import annotations

from dataclasses import replace

from ..ir import STMTS, Buffer, Node, Op, Task, map_block, map_exprs, node_key, walk
from ..types import i32, u1
from . import build as B
from .columns import column, is_uniform, loop_start

_STMTS = frozenset({Op.ASSIGN, Op.IF, Op.STORE, Op.ATOMIC})


def gather_tasks(task: Task, body: list[Node], buffers: dict[str, Buffer], grads: dict[str, str],
                 item: str | None, names: B.Names, items: int = 0) -> list[Task] | None:
    """[gather task, zero task (when the body zeroes seeds)] for the grad task (`task` with
    `body`) whose injective item local is `item`, or None when the rewrite does not apply.
    items > 0: both run only for launches of at least that many items (Task.items)."""
    plan = _plan(task, body, buffers, grads, item)
    if plan is None:
        return None
    at, begin, offsets, zeroes = plan
    j = names.new("ad.j", i32)
    jv = B.var(j, i32)
    lo, hi = min(offsets), max(offsets)
    sums: dict[tuple, tuple[str, str, Node, str]] = {}  # (buffer, row key) -> (sum, flag, index, buffer)

    def keep(c: int):
        def fn(s: Node) -> list[Node]:
            if s.op is Op.STORE and s.attr in grads.values():
                return []  # a seed's zeroing: the zero task's
            if s.op is not Op.ATOMIC:
                return [s]
            row, off = column(s.args[0], buffers[s.attr.buf], item)
            if off != c:
                return []
            key = (s.attr.buf, None if row is None else node_key(row))
            if key not in sums:
                t = s.args[1].dtype
                idx = jv if row is None else B.add(row, jv)
                sums[key] = (names.new("ad.gsum", t), names.new("ad.gset", u1), idx, s.attr.buf)
            total, flag, _, _ = sums[key]
            t = s.args[1].dtype
            return [B.assign(total, B.add(B.var(total, t), s.args[1]), s.loc), B.assign(flag, B.c(True, u1), s.loc)]
        return fn

    copies = []
    for c in sorted(offsets):
        src = B.sub(jv, B.c(c, i32))  # the source item's index value
        t_src = B.sub(src, begin)     # its position in the task's range
        ok = B.and_(B.cmp(Op.GE, t_src, B.c(0, i32)), B.cmp(Op.LT, t_src, task.extent))
        inner = [*body[:at], B.assign(item, src, body[at].loc), *map_block(body[at + 1:], keep(c))]
        copies.append((c, B.if_(ok, inner, (), task.loc)))
    init, flush = [], []
    for total, flag, idx, buf in sums.values():
        t = buffers[buf].dtype
        init += [B.assign(total, B.c(0, t)), B.assign(flag, B.c(False, u1))]
        update = B.store(buf, idx, B.add(B.load(buf, idx, t), B.var(total, t)))
        flush.append((None, B.if_(B.var(flag, u1), [update], ())))
    head = B.assign(j, B.add(B.add(begin, B.c(lo, i32)), B.var(task.index_var, i32)), task.loc)
    loads = _Loads(buffers, item, jv, names)
    rest = [loads.hoist(s, c) for c, s in copies + flush]
    extent = B.add(B.bin(Op.MAX, task.extent, B.c(0, i32)), B.c(hi - lo, i32))
    gather = replace(task, name=f"{task.name}_gather", body=tuple(_dce([head, *loads.pre, *init, *rest])),
                     extent=extent, items=(items + hi - lo, None) if items else None)  # its extent: E + hi - lo
    if not zeroes:
        return [gather]

    def no_adds(s: Node) -> list[Node]:
        return [] if s.op is Op.ATOMIC else [s]
    zero = replace(task, name=f"{task.name}_zero", body=tuple(_dce(map_block(body, no_adds))),
                   items=(items, None) if items else None)
    return [gather, zero]


class _Loads:
    """The gather task's loads, issued at the start of the item: every load of a copy whose
    index is a column of the item (or uniform) becomes a local loaded before the copies run.
    Left inside the copies' branches, a GPU issued each copy's loads only after the previous
    copy had used its own, and the item waited for memory once per copy. Nothing the task
    reads is written before its end (arrays are read-only in a grad kernel; the additions are
    stored last), and an index that is not valid for a copy that does not run reads (clamped
    into the buffer) a value that is never used."""

    def __init__(self, buffers: dict[str, Buffer], item: str, jv: Node, names: B.Names):
        self.buffers, self.item, self.jv, self.names = buffers, item, jv, names
        self.pre: list[Node] = []
        self.seen: dict[tuple, Node] = {}

    def hoist(self, s: Node, c: int | None) -> Node:
        """s (a copy of offset c, or a final update when c is None) reading hoisted locals."""
        def fn(n: Node) -> Node:
            return self._local(n, c) if n.op is Op.LOAD else n
        if s.blocks:
            s = s.with_(blocks=tuple(tuple(self.hoist(x, c) for x in b) for b in s.blocks))
        return s.with_(args=tuple(map_exprs(a, fn) for a in s.args)) if s.args else s

    def _local(self, n: Node, c: int | None) -> Node:
        buf = self.buffers[n.attr]
        col = column(n.args[0], buf, self.jv.attr) if c is None else column(n.args[0], buf, self.item)
        if col is not None:
            row, k = col
            k -= c or 0  # the copy's item is j - c
            key = (n.attr, None if row is None else node_key(row), k)
            idx = B.add(self.jv, B.c(k, i32)) if k else self.jv
            idx = idx if row is None else B.add(row, idx)
        elif is_uniform(n.args[0]):
            key, idx = (n.attr, node_key(n.args[0])), n.args[0]
        else:
            return n
        v = self.seen.get(key)
        if v is None:
            name = self.names.new("ad.ld", n.dtype)
            last = B.sub(Node(Op.LENGTH, i32, attr=n.attr), B.c(1, i32))
            inside = B.bin(Op.MIN, B.bin(Op.MAX, idx, B.c(0, i32)), last)  # even without bounds checks
            self.pre.append(B.assign(name, B.load(n.attr, inside, n.dtype, n.loc), n.loc))
            v = self.seen[key] = B.var(name, n.dtype, n.loc)
        return v


def _dce(block: list[Node]) -> list[Node]:
    """`block` without the assignments whose values nothing stored depends on (the item
    bodies' forward sweeps recompute values that a copy's kept additions may not need)."""
    return _live(block, set())[0]


def _live(block, live: set[str]) -> tuple[list[Node], set[str]]:
    out = []
    for s in reversed(block):
        if s.op is Op.ASSIGN:
            if s.attr not in live:
                continue
            live = live - {s.attr}
        elif s.op is Op.IF:
            a, la = _live(s.blocks[0], live)
            b, lb = _live(s.blocks[1], live)
            if not (a or b):
                continue
            s = s.with_(blocks=(tuple(a), tuple(b)))
            live = la | lb
        out.append(s)
        for e in s.args:
            live = live | B.vars_of(e)
    return out[::-1], live


def _plan(task: Task, body: list[Node], buffers: dict[str, Buffer], grads: dict[str, str], item: str | None):
    """(position of the item's assignment, range begin, offsets of the additions, zeroes
    seeds?) when the rewrite applies, else None."""
    if task.kind != "range" or item is None or task.extent is None or task.active is not None \
            or task.prologue or task.reductions or task.convergent:
        return None
    at = next((k for k, s in enumerate(body[:2]) if s.op is Op.ASSIGN and s.attr == item), None)
    if at is None:
        return None
    start = loop_start(body[at].args[0], task.index_var)
    if start is None or start[1] != 1 or not is_uniform(start[0]):
        return None
    begin = start[0]
    index_reads = sum(1 for n in walk(body) if n.op is Op.VAR and n.attr == task.index_var)
    if index_reads != 1:  # only the item's assignment reads the thread's index
        return None
    gbs = set(grads.values())
    offsets: set[int] = set()
    zeroes = False
    written: set[str] = set()
    uniform_reads: set[str] = set()
    for s in walk(body):
        if (s.op in STMTS and s.op not in _STMTS) or s.op in (Op.SUBGROUP, Op.SPECIAL):
            return None  # loops, jumps, barriers, the adstack, asserts; thread-dependent values
        if s.op is Op.LOAD and s.attr in gbs:
            if column(s.args[0], buffers[s.attr], item) is None:
                if not is_uniform(s.args[0]):
                    return None
                uniform_reads.add(s.attr)
        elif s.op is Op.LOAD and buffers[s.attr].kind not in ("arg", "field", "const"):
            return None
        elif s.op is Op.STORE:
            if s.attr not in gbs or not B.is_const(s.args[1], 0) or column(s.args[0], buffers[s.attr], item) is None:
                return None
            zeroes = True
            written.add(s.attr)
        elif s.op is Op.ATOMIC:
            a = s.attr
            if a.buf not in gbs or a.op != "add" or a.dest is not None:
                return None
            col = column(s.args[0], buffers[a.buf], item)
            if col is None:
                return None
            offsets.add(col[1])
            written.add(a.buf)
    if uniform_reads & written or not any(c != 0 for c in offsets):
        return None
    return at, begin, offsets, zeroes


__all__ = ["gather_tasks"]
