"""The adstack pass: lower PUSH/POP onto per-thread stacks and size them.

Each stack is two-level: its first K slots (the first level) live in workgroup memory, slot
s of thread t at [s * block size + t] (buffer kind 'private_shared': per-thread semantics, a
layout the code generator applies; stack tasks then run SHARED_WG-thread blocks, and K is
what fits in SHARED_STACK_BYTES beside the kernel's own shared arrays in the adapter's
max-compute-workgroup-storage-size, at most PRIVATE_SLOTS), or where that does not fit or is
not asked for (`shared_bytes` 0: CPU drivers) in thread-private memory (`var<private>`,
K = PRIVATE_SLOTS); the slots from K on in a heap buffer shared by all threads. Both first
levels are much cheaper than a storage buffer. On an H100 (sin loop with a stack,
experiments/ad_time.py, gfxrt's own sin), grad kernel at 2^24 / 2^18 items: 16 slots in
workgroup memory 1.27 ms / 27 us, 32 there 1.67 ms / 32 us, 32 private 1.18 ms / 33 us.
When the depth D is a compile-time
constant <= K (constant loops) the task is an ordinary range task and needs no heap.
Otherwise it becomes a capped-grid task (see `Task.active`):

    prologue   D = the compile-time depth, gr.init(adstack_size=N), or the maximum that
               the counting pre-pass wrote into meta[0]; DH = max(D - K, 1) heap slots
    active     A = min(dispatched threads, heap words / DH) physical threads take part
    push v     slot sp < K: first[sp] = bits(v); else heap[(sp - K) * A + tid] = bits(v);
               a 64-bit v takes two slots, its low word first
    pop  v     the reverse; sp <= D is checked once per item, indices are clamped

The structure-of-arrays heap layout keeps neighbouring threads' slots adjacent, and since A
adapts to the heap the results are right whatever its size; only DH > heap words is an
overflow (reported through the status protocol, compiler/spec.py).

Where the depth is a run-time value, a small task runs first (the counting pre-pass): the
forward sweep with each PUSH replaced by a counter increment, pruned to what the counter
depends on, with `range` loops of constant-increment bodies folded into one multiplication
(e.g. `for j in range(cnt[i]): v = f(v)` only reads cnt[i]); each block's largest count goes
into meta[0] with one atomic max. meta[0] is not zeroed per launch: it holds the largest
depth counted since the runtime last zeroed it (at each sync, gfxrt/ad/adstack.py), an upper
bound of this launch's depth, which is all the layout needs (the heap is sized for the
largest depth seen anyway). The grad task's thread 0 records DH in meta[1], from which the
runtime learns how large to make the heap for later launches. (Reading meta[0] once per
block into workgroup memory instead of once per thread measured no faster on an H100, and
slower with the first level in workgroup memory.)
"""
from __future__ import annotations

from itertools import count

from ..ir import Block, Buffer, KernelIR, Node, Op, Task, map_block, map_exprs, walk, walk_node
from ..passes.simplify import simplify_expr
from ..spec import STATUS_ADSTACK_OVERFLOW
from ..types import i32, u32
from . import build as B
from .reverse import prune_buffers, trip_count

HEAP = "ad.heap"
META = "ad.meta"
PRIVATE = "ad.stack"
PRIVATE_SLOTS = 32  # the first-level slots of each stack (workgroup or thread-private memory)
META_WORDS = 4  # [0] depth of the current launch, [1] largest depth since the runtime last read it
SHARED_WG = 64  # threads per block of a task whose first level is in workgroup memory
# workgroup memory a block's first levels may take: on an H100, 4 KiB (16 slots at 64 threads)
# beat 8 KiB (32 slots) by 1.6-1.3x at 2^18-2^24 items, even with half the sin loop's stack on
# the heap then (more blocks fit per SM; experiments/ad_time.py)
SHARED_STACK_BYTES = 4096
MIN_SHARED_SLOTS = 4  # fewer first-level slots than this fit in workgroup memory: use private memory
REDUCTION_RESERVE = 3 * 256 * 4  # workgroup bytes left for block reductions (3 dtypes, 256-thread blocks)


def counting_tasks(g: KernelIR) -> KernelIR:
    """The grad kernel's counting pre-passes alone (mode grad_probe): the runtime zeroes
    meta[0] and runs them once to size the heap before a grad kernel's first launch."""
    g.tasks = [t for t in g.tasks if t.active is None and t.kind == "range"
               and any(n.op is Op.ATOMIC and n.attr.buf == META for n in walk(t.body))]
    g.name = g.name.removesuffix(".grad") + ".grad_probe"
    prune_buffers(g)
    return g


def lower_adstack(g: KernelIR, forced: int | None = None, private: int = PRIVATE_SLOTS,
                  shared_bytes: int = 0) -> KernelIR:
    """Lower every PUSH/POP of `g`; `forced` = gr.init(adstack_size=N); `private` = how many
    first-level slots each stack has before the heap takes over; `shared_bytes` = the
    workgroup memory a block may use (0: the first level in thread-private memory)."""
    names = B.Names(g)
    tasks = []
    level1 = first_level(g, private, shared_bytes)
    for t in g.tasks:
        if any(n.op in (Op.PUSH, Op.POP) for n in walk(t.body)):
            tasks.extend(_StackTask(g, names, t, forced, level1).lower())
        else:
            tasks.append(t)
    g.tasks = tasks
    return g


def first_level(g: KernelIR, slots: int, shared_bytes: int) -> tuple[str, int, int | None]:
    """(buffer kind, slots, block size) of the stacks' first level: in workgroup memory when
    at least MIN_SHARED_SLOTS slots per thread of a SHARED_WG-thread block fit beside the
    kernel's own shared arrays (at most SHARED_STACK_BYTES per block), else `slots` private
    slots (block size: the target's)."""
    if slots and shared_bytes:
        own = sum((b.size or 0) * b.dtype.size for b in g.buffers if b.kind == "shared")
        fit = min(shared_bytes - own - REDUCTION_RESERVE, SHARED_STACK_BYTES) // (4 * SHARED_WG)
        if min(slots, fit) >= MIN_SHARED_SLOTS:
            return "private_shared", min(slots, fit), SHARED_WG
    return "private", slots, None


def uses_adstack(g: KernelIR) -> bool:
    """True when the kernel binds the adstack heap."""
    return any(b.name == HEAP for b in g.buffers)


def _add_buffer(g: KernelIR, buf: Buffer) -> None:
    if not any(b.name == buf.name for b in g.buffers):
        g.buffers.append(buf)


class _StackTask:
    def __init__(self, g: KernelIR, names: B.Names, task: Task, forced: int | None, level1: tuple):
        self.g, self.names, self.task, self.forced = g, names, task, forced
        self.level1_kind, self.k, self.wg = level1
        self.sp = names.new("ad.sp", i32)
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
        if self.k:
            _add_buffer(self.g, Buffer(PRIVATE, u32, self.level1_kind, source=self.k))
        self.heap = static is None or static > self.k
        if not self.heap:  # the whole stack fits in the first level: an ordinary range task
            self.depth = B.c(max(static, 1), i32)
            return [Task(t.name, "range", self._body(t.body), t.extent, t.index_var, t.loc,
                         workgroup_size=self.wg, stack_level1=self.k)]
        _add_buffer(self.g, Buffer(HEAP, u32, "adstack_heap"))
        _add_buffer(self.g, Buffer(META, u32, "adstack_meta"))
        self.tid, self.active = self.names.new("ad.tid", i32), self.names.new("ad.active", i32)
        depth, heap_depth = self.names.new("ad.depth", i32), self.names.new("ad.heap_depth", i32)
        self.depth, self.heap_depth = B.var(depth, i32), B.var(heap_depth, i32)
        heap_words = Node(Op.LENGTH, i32, attr=HEAP)
        if static is not None:
            depth_value = B.c(static, i32)
        else:
            depth_value = B.bin(Op.MAX, B.cast(B.load(META, B.c(0, i32), u32), i32), B.c(1, i32))
        prologue = [B.assign(depth, depth_value),
                    B.assign(heap_depth, B.bin(Op.MAX, B.sub(self.depth, B.c(self.k, i32)), B.c(1, i32)))]
        first = [Node(Op.ASSERT, args=(B.cmp(Op.LE, self.heap_depth, heap_words),),
                      attr=(STATUS_ADSTACK_OVERFLOW, self.heap_msg))]
        if static is None:
            first.append(B.atomic("max", META, B.c(1, i32), B.cast(self.heap_depth, u32)))
        prologue.append(B.if_(B.cmp(Op.EQ, B.var(self.tid, i32), B.c(0, i32)), first))
        return [*pre, Task(t.name, "range", self._body(t.body), t.extent, t.index_var, t.loc,
                           workgroup_size=self.wg, prologue=tuple(prologue),
                           active=B.bin(Op.FLOORDIV, heap_words, self.heap_depth),
                           thread_var=self.tid, active_var=self.active,
                           stack_depth=None if static is None else max(static - self.k, 1), stack_level1=self.k)]

    def _body(self, body: Block) -> tuple[Node, ...]:
        # pushes all happen in the forward sweep, before any pop: one check of the stack
        # pointer after the last pushing statement covers the item (pushes past the depth are
        # clamped into the thread's own slots meanwhile, so nothing else is overwritten)
        last = _last_pushing(body)
        ok = B.cmp(Op.LE, B.var(self.sp, i32), self.depth)
        check = Node(Op.ASSERT, args=(ok,), attr=(STATUS_ADSTACK_OVERFLOW, self.push_msg), loc=self.task.loc)
        return (B.assign(self.sp, B.c(0, i32)), *self._block(body[:last + 1]), check, *self._block(body[last + 1:]))

    def _prepass(self, t: Task, counting: list[Node]) -> list[Task]:
        # an atomic max per item: the reductions pass (compiler/passes) turns it into a
        # per-thread maximum and one atomic per block
        record = B.atomic("max", META, B.c(0, i32), B.cast(B.var(COUNTER, i32), u32))
        return [Task(f"{t.name}_count", "range", (*counting, record), t.extent, t.index_var, t.loc)]

    # -- lowering PUSH / POP --------------------------------------------------------------------
    def _heap_slot(self) -> Node:
        sp = B.var(self.sp, i32)
        level = B.bin(Op.MIN, B.sub(sp, B.c(self.k, i32)), B.sub(self.heap_depth, B.c(1, i32)))
        return B.add(B.mul(level, B.var(self.active, i32)), B.var(self.tid, i32))

    def _access(self, make, loc) -> list[Node]:
        """The statement(s) reaching slot sp, `make(buffer, index)` each: private below k,
        heap from k on."""
        sp = B.var(self.sp, i32)
        if not self.heap:
            return [make(PRIVATE, B.bin(Op.MIN, sp, B.sub(self.depth, B.c(1, i32))))]
        if not self.k:
            return [make(HEAP, self._heap_slot())]
        return [B.if_(B.cmp(Op.LT, sp, B.c(self.k, i32)), [make(PRIVATE, sp)], [make(HEAP, self._heap_slot())],
                      loc=loc)]

    def _push(self, s: Node) -> list[Node]:
        out = []
        for word in B.to_words(s.args[0]):  # one slot per 32-bit word, the low word first
            out += [*self._access(lambda buf, i, w=word: B.store(buf, i, w, s.loc), s.loc),
                    B.assign(self.sp, B.add(B.var(self.sp, i32), B.c(1, i32)), s.loc)]
        return out

    def _pop(self, s: Node) -> list[Node]:
        t = self.g.locals[s.attr]
        down = B.assign(self.sp, B.sub(B.var(self.sp, i32), B.c(1, i32)), s.loc)
        if B.words(t) == 1:
            return [down, *self._access(lambda buf, i: B.assign(s.attr, B.from_words([B.load(buf, i, u32)], t),
                                                                     s.loc), s.loc)]
        hi = self.names.fixed("ad.hi", u32)  # the high word, popped first
        return [down, *self._access(lambda buf, i: B.assign(hi, B.load(buf, i, u32), s.loc), s.loc), down,
                *self._access(lambda buf, i: B.assign(s.attr, B.from_words([B.load(buf, i, u32), B.var(hi, u32)], t),
                                                      s.loc), s.loc)]

    def _block(self, block: Block) -> Block:
        return map_block(block, lambda s: self._push(s) if s.op is Op.PUSH else self._pop(s) if s.op is Op.POP
                         else (s,))


# -- the counting pre-pass ----------------------------------------------------------------------

COUNTER = "ad.count"


def _last_pushing(body: Block) -> int:
    """Index of the last top-level statement that pushes (the forward sweep ends there)."""
    return max((k for k, s in enumerate(body) if any(n.op is Op.PUSH for n in walk((s,)))), default=-1)


def counting_body(body: Block, names: B.Names) -> list[Node]:
    """The forward sweep of `body` reduced to computing COUNTER = number of PUSHes."""
    names.fixed(COUNTER, i32)
    last = _last_pushing(body)
    counting = [B.assign(COUNTER, B.c(0, i32)), *_count_pushes(body[:last + 1])]
    kept = _prune(counting)
    reads = {n.attr for n in walk(kept) if n.op is Op.VAR}
    return _fold(kept, reads)


def _count_pushes(block: Block) -> Block:
    def one(s: Node):
        if s.op is Op.PUSH:
            return (_increment(B.c(B.words(s.args[0].dtype), i32)),)
        return () if s.op in (Op.POP, Op.STORE, Op.ATOMIC, Op.ASSERT) else (s,)
    return map_block(block, one)


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
    """Keep only what COUNTER depends on (flow-insensitive): `_keep` from the closure of
    COUNTER's dependencies, which `_needed` finds in one pass (calling `_keep` until nothing
    changed took one pass per link of a chain assigned in reverse order)."""
    return _keep(block, _needed(block))


def _needed(block: list[Node]) -> set[str]:
    """The least set holding COUNTER and closed under `_keep`'s rules: an assignment of a
    needed local needs what its value reads; a branch or loop that keeps something (an
    assignment of a needed local inside, or its own loop variable needed) needs what its
    test or bounds read. Branches and loops are ints in the dependency graph."""
    deps: dict = {}   # a local or a branch/loop -> what it needs once it is needed
    ids = count()

    def visit(stmts, parent) -> None:
        for s in stmts:
            if s.op is Op.ASSIGN:
                deps.setdefault(s.attr, []).extend(B.vars_of(s.args[0]))
                if parent is not None:
                    deps[s.attr].append(parent)  # keeping it keeps the branches around it
            elif s.blocks:
                me = next(ids)
                deps[me] = [v for a in s.args for v in B.vars_of(a)]
                if parent is not None:
                    deps[me].append(parent)
                if s.op is Op.FOR:
                    deps.setdefault(s.attr, []).append(me)
                for b in s.blocks:
                    visit(b, me)

    visit(block, None)
    reached, todo = {COUNTER}, [COUNTER]
    while todo:
        for w in deps.get(todo.pop(), ()):
            if w not in reached:
                reached.add(w)
                todo.append(w)
    return {v for v in reached if isinstance(v, str)}


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
    def one(s: Node):
        if s.op is Op.FOR and len(s.blocks[0]) == 1:
            k = _increment_of(s.blocks[0][0])
            step = s.args[2]
            if k is not None and s.attr not in reads and step.op is Op.CONST:
                s = _increment(B.mul(trip_count(s.args[0], s.args[1], step.attr), k))
        elif s.op is Op.IF and all(len(b) <= 1 for b in s.blocks):
            ks = [_increment_of(b[0]) if b else B.c(0, i32) for b in s.blocks]
            if all(k is not None for k in ks):
                s = _increment(B.select(s.args[0], ks[0], ks[1]))
        return (s,)
    return list(map_block(block, one))


def constant_depth(counting: list[Node]) -> int | None:
    """The push count when it is a compile-time constant, else None (folded as the device
    computes: passes/simplify.py, on Python numbers)."""
    total = 0
    for s in counting:
        if s.op is not Op.ASSIGN or s.attr != COUNTER:
            return None
        k = _increment_of(s)
        e = s.args[0] if k is None else k
        if any(n.op in (Op.VAR, Op.PARAM, Op.LOAD, Op.LENGTH) for n in walk_node(e)):
            return None
        folded = map_exprs(e, simplify_expr)
        if folded.op is not Op.CONST:
            return None
        value = folded.attr
        total = value if k is None else total + value
    return max(int(total), 0)


__all__ = ["lower_adstack", "first_level", "uses_adstack", "counting_body", "constant_depth", "HEAP", "META",
           "PRIVATE", "PRIVATE_SLOTS", "META_WORDS", "COUNTER", "SHARED_WG", "SHARED_STACK_BYTES"]
