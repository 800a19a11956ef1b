"""The adstack pass: lower PUSH/POP onto a heap buffer of per-thread stacks and size it.

A grad task that pushes becomes a capped-grid task (see `Task.active`):

    prologue   D = stack slots per thread: the compile-time depth, gr.init(adstack_size=N),
               or the maximum that the counting pre-pass wrote into meta[0]
    active     A = min(dispatched threads, heap words / D) physical threads take part
    push v     heap[sp * A + tid] = bits(v); sp += 1     (checked against D)
    pop  v     sp -= 1; v = value(heap[sp * A + tid])

The structure-of-arrays layout keeps neighbouring threads' slots adjacent, and since A
adapts to the heap the results are right whatever its size; only D > heap words is an
overflow (reported through the status protocol, compiler/spec.py).

Where the depth is a run-time value, two small tasks run first: one zeroes meta[0], the
other (the counting pre-pass) is the forward sweep with each PUSH replaced by a counter
increment, pruned to what the counter depends on, with `range` loops of constant-increment
bodies folded into one multiplication; e.g. `for j in range(cnt[i]): v = f(v)` only reads
cnt[i]. The grad task's thread 0 also records D in meta[1], from which the runtime learns
how large to make the heap for later launches.
"""
from __future__ import annotations

from ..ir import Block, Buffer, KernelIR, Node, Op, Task, walk, walk_node
from ..spec import STATUS_ADSTACK_OVERFLOW
from ..types import i32, u32
from . import build as B
from .reverse import trip_count

HEAP = "ad.heap"
META = "ad.meta"
META_WORDS = 4  # [0] depth of the current launch, [1] largest depth since the runtime last read it


def lower_adstack(g: KernelIR, forced: int | None = None) -> KernelIR:
    """Lower every PUSH/POP of `g` onto the heap; `forced` = gr.init(adstack_size=N)."""
    names = B.Names(g)
    tasks = []
    for t in g.tasks:
        if any(n.op in (Op.PUSH, Op.POP) for n in walk(t.body)):
            tasks.extend(_StackTask(g, names, t, forced).lower())
        else:
            tasks.append(t)
    g.tasks = tasks
    return g


def uses_adstack(g: KernelIR) -> bool:
    return any(b.name == HEAP for b in g.buffers)


def _ensure_buffers(g: KernelIR) -> None:
    if not uses_adstack(g):
        g.buffers.append(Buffer(HEAP, u32, "adstack_heap"))
        g.buffers.append(Buffer(META, u32, "adstack_meta"))


class _StackTask:
    def __init__(self, g: KernelIR, names: B.Names, task: Task, forced: int | None):
        self.g, self.names, self.task, self.forced = g, names, task, forced
        _ensure_buffers(g)
        self.sp = names.new("ad.sp", i32)
        self.tid = names.new("ad.tid", i32)
        self.active = names.new("ad.active", i32)
        self.depth = names.new("ad.depth", i32)
        kernel = g.name
        if forced:
            self.push_msg = (f"adstack overflow in {kernel}: a thread needed more than the "
                             f"gr.init(adstack_size={forced}) slots; raise adstack_size or leave it "
                             "unset for automatic sizing")
        else:
            self.push_msg = (f"adstack overflow in {kernel}: the counting pre-pass under-counted a "
                             "stack (a compiler bug, please report)")
        self.heap_msg = (f"adstack overflow in {kernel}: one thread's stack needs more slots than the "
                         "adstack heap holds; the heap has been enlarged for later launches: run the "
                         "launch again")

    def lower(self) -> list[Task]:
        t = self.task
        if t.kind == "serial":
            t = Task(t.name, "range", t.body, B.c(1, i32), self.names.new("ad.item", i32), t.loc)
        pre: list[Task] = []
        if self.forced:
            static = self.forced
        else:
            counting = counting_body(t.body, self.names)
            static = constant_depth(counting)
            if static is None:
                pre = self._prepass(t, counting)
        d = B.var(self.depth, i32)
        heap_words = Node(Op.LENGTH, i32, attr=HEAP)
        if static is not None:
            depth_value = B.c(max(static, 1), i32)
        else:
            depth_value = B.bin(Op.MAX, B.cast(B.load(META, B.c(0, i32), u32), i32), B.c(1, i32))
        prologue = [B.assign(self.depth, depth_value)]
        first = [Node(Op.ASSERT, args=(B.cmp(Op.LE, d, heap_words),),
                      attr=(STATUS_ADSTACK_OVERFLOW, self.heap_msg))]
        if static is None:
            first.append(B.atomic("max", META, B.c(1, i32), B.cast(d, u32)))
        prologue.append(B.if_(B.cmp(Op.EQ, B.var(self.tid, i32), B.c(0, i32)), first))
        body = (B.assign(self.sp, B.c(0, i32)), *self._block(t.body))
        main = Task(f"{t.name}", "range", body, t.extent, t.index_var, t.loc, tuple(prologue),
                    active=B.bin(Op.FLOORDIV, heap_words, d), thread_var=self.tid,
                    active_var=self.active, stack_depth=static or 0)
        return [*pre, main]

    def _prepass(self, t: Task, counting: list[Node]) -> list[Task]:
        cnt = B.cast(B.var(COUNTER, i32), u32)
        record = B.if_(B.cmp(Op.GT, cnt, B.load(META, B.c(0, i32), u32)),
                       [B.atomic("max", META, B.c(0, i32), cnt)])
        reset = Task(f"{t.name}_reset", "serial", (B.store(META, B.c(0, i32), B.c(0, u32)),), loc=t.loc)
        count = Task(f"{t.name}_count", "range", (*counting, record), t.extent, t.index_var, t.loc)
        return [reset, count]

    # -- lowering PUSH / POP --------------------------------------------------------------------
    def _slot(self) -> Node:
        sp, d = B.var(self.sp, i32), B.var(self.depth, i32)
        level = B.bin(Op.MIN, sp, B.sub(d, B.c(1, i32)))
        return B.add(B.mul(level, B.var(self.active, i32)), B.var(self.tid, i32))

    def _block(self, block: Block) -> list[Node]:
        out = []
        sp = B.var(self.sp, i32)
        for s in block:
            if s.op is Op.PUSH:
                ok = B.cmp(Op.LT, sp, B.var(self.depth, i32))
                out += [Node(Op.ASSERT, args=(ok,), attr=(STATUS_ADSTACK_OVERFLOW, self.push_msg), loc=s.loc),
                        B.store(HEAP, self._slot(), B.to_u32(s.args[0]), s.loc),
                        B.assign(self.sp, B.add(sp, B.c(1, i32)), s.loc)]
            elif s.op is Op.POP:
                t = self.g.locals[s.attr]
                out += [B.assign(self.sp, B.sub(sp, B.c(1, i32)), s.loc),
                        B.assign(s.attr, B.from_u32(B.load(HEAP, self._slot(), u32), t), s.loc)]
            elif s.blocks:
                out.append(s.with_(blocks=tuple(tuple(self._block(b)) for b in s.blocks)))
            else:
                out.append(s)
        return out


# -- the counting pre-pass ----------------------------------------------------------------------

COUNTER = "ad.count"


def counting_body(body: Block, names: B.Names) -> list[Node]:
    """The forward sweep of `body` reduced to computing COUNTER = number of PUSHes."""
    names.fixed(COUNTER, i32)
    last = max((k for k, s in enumerate(body) if any(n.op is Op.PUSH for n in walk((s,)))), default=-1)
    counting = [B.assign(COUNTER, B.c(0, i32)), *_count_pushes(body[:last + 1])]
    kept = _prune(counting)
    reads = {n.attr for n in walk(kept) if n.op is Op.VAR}
    return _fold(kept, reads)


def _count_pushes(block: Block) -> list[Node]:
    out = []
    for s in block:
        if s.op is Op.PUSH:
            out.append(_increment(B.c(1, i32)))
        elif s.op in (Op.POP, Op.STORE, Op.ATOMIC, Op.ASSERT):
            continue
        elif s.blocks:
            out.append(s.with_(blocks=tuple(tuple(_count_pushes(b)) for b in s.blocks)))
        else:
            out.append(s)
    return out


def _increment(k: Node) -> Node:
    return B.assign(COUNTER, B.add(B.var(COUNTER, i32), k))


def _increment_of(s: Node) -> Node | None:
    """k when s is `COUNTER = COUNTER + k` with k independent of COUNTER."""
    if s.op is not Op.ASSIGN or s.attr != COUNTER:
        return None
    e = s.args[0]
    if e.op is Op.ADD and e.args[0].op is Op.VAR and e.args[0].attr == COUNTER \
            and COUNTER not in B.vars_of(e.args[1]):
        return e.args[1]
    return None


def _prune(block: list[Node]) -> list[Node]:
    """Keep only what COUNTER depends on (flow-insensitive, to a fixpoint)."""
    needed = {COUNTER}
    while True:
        before = set(needed)
        kept = _keep(block, needed)
        if needed == before:
            return kept


def _keep(block, needed: set[str]) -> list[Node]:
    out = []
    for s in block:
        if s.op is Op.ASSIGN:
            if s.attr in needed:
                needed |= B.vars_of(s.args[0])
                out.append(s)
            continue
        if not s.blocks:
            continue
        blocks = tuple(tuple(_keep(b, needed)) for b in s.blocks)
        if any(blocks) or (s.op is Op.FOR and s.attr in needed):
            for a in s.args:
                needed |= B.vars_of(a)
            out.append(s.with_(blocks=blocks))
    return out


def _fold(block: list[Node], reads: set[str]) -> list[Node]:
    """Fold loops and branches whose body only adds a loop-invariant amount to COUNTER
    (`reads`: locals read anywhere, so a loop whose variable is used elsewhere stays)."""
    out = []
    for s in block:
        if s.blocks:
            s = s.with_(blocks=tuple(tuple(_fold(list(b), reads)) for b in s.blocks))
        if s.op is Op.FOR and len(s.blocks[0]) == 1:
            k = _increment_of(s.blocks[0][0])
            step = s.args[2]
            if k is not None and s.attr not in reads and step.op is Op.CONST:
                s = _increment(B.mul(trip_count(s.args[0], s.args[1], step.attr), k))
        elif s.op is Op.IF and all(len(b) <= 1 for b in s.blocks):
            ks = [_increment_of(b[0]) if b else B.c(0, i32) for b in s.blocks]
            if all(k is not None for k in ks):
                s = _increment(B.select(s.args[0], ks[0], ks[1]))
        out.append(s)
    return out


def constant_depth(counting: list[Node]) -> int | None:
    """The push count when it is a compile-time constant, else None."""
    from ..interp import Interpreter
    total = 0
    for s in counting:
        if s.op is not Op.ASSIGN or s.attr != COUNTER:
            return None
        k = _increment_of(s)
        e = s.args[0] if k is None else k
        if any(n.op in (Op.VAR, Op.PARAM, Op.LOAD, Op.LENGTH) for n in walk_node(e)):
            return None
        value = Interpreter(KernelIR("const"), {}, {}).eval(e, {})
        total = value if k is None else total + value
    return max(int(total), 0)


__all__ = ["lower_adstack", "uses_adstack", "counting_body", "constant_depth", "HEAP", "META",
           "META_WORDS", "COUNTER"]
