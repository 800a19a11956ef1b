"""Reverse mode: the adjoint kernel of a kernel, as an IR -> IR transform.

Each task of the kernel becomes one grad task (in reverse task order) whose per-item body
is a forward sweep followed by a backward sweep:

- The forward sweep re-executes the item's local computation (assignments, branches,
  loops) without global side effects; before a local is overwritten its old value is
  saved, and each branch decision and loop trip count is saved after the construct runs.
- The backward sweep walks the statements in reverse, restoring each saved value and
  propagating adjoints with the per-op table (rules.py):
    v = e          a = adj_v; adj_v = 0; v = <restore>; adj_u += de/du * a for u in e
    y[i] = e       a = y.grad[i]; y.grad[i] = 0; propagate a into e
    y[i] += e      propagate y.grad[i] into e (no zeroing)
    x[i] read      x.grad[i] += adjoint (atomic, or a plain update when the index is the
                   task's own loop index, which no other thread touches)
    if c           reverse the branch taken (c recomputed when the branch cannot change it)
    loops          a loop that qualifies (preacc.py: few carried floats, no output written,
                   no per-iteration differentiable reads) and that the cost rule prefers:
                   its Jacobian, built in the forward sweep, applied once (`_loop`);
                   otherwise run the reversed body as many times as the forward loop ran;
                   `range` loops whose bounds the body cannot change recompute their trip
                   count and walk the index backwards, so nothing is saved for them.
- `break`/`continue` are first rewritten into flags (jumps.py).
- Finally the gradient-buffer reads move to the start of the item (hoist.py).

Saves outside any loop go to fresh locals (they run at most once per item); saves inside a
loop are PUSHes onto the per-thread adstack (POP in the backward sweep), which the adstack
pass lowers onto the device heap. Only locals that the backward sweep actually reads are
saved: e.g. `v = sin(v) * 0.95 + 0.01` in a loop through the adstack saves one value per
iteration (the hoisted cos(v)) and nothing else.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..errors import CompileError
from ..hosteval import host_evaluable
from ..ir import STMTS, Block, Buffer, KernelIR, Node, Op, Task, assigned, node_key, walk, walk_node
from ..ops import EXPENSIVE
from ..types import f32, i32, u1
from . import build as B
from .columns import loop_start
from .gather import gather_tasks
from .hoist import hoist_adjoint_reads
from .jumps import JumpRemover
from .preacc import Preaccumulation, plan_loop
from .rules import partials

_LEAVES = (Op.CONST, Op.PARAM, Op.VAR, Op.LENGTH)


@dataclass(frozen=True, eq=False)
class _Mark:
    """A save (forward sweep) or restore (backward sweep) of local `var`, resolved once we
    know which locals the backward sweep reads. `needed`: the value can differ from what
    the backward sweep would otherwise see; `force`: a control value (always kept)."""

    kind: str  # 'save' | 'restore'
    var: str
    site: int
    depth: int
    needed: bool
    force: bool = False


def grad_buffers(ir: KernelIR, kind: str = "grad") -> dict[str, str]:
    """Add a `kind` ('grad' or 'dual') buffer for each float needs_grad array of `ir` and for
    its float cross-task locals ('temps': a reduction's gradient flows through them);
    returns primal buffer name -> its gradient buffer's name."""
    out = {}
    for b in list(ir.buffers):
        if b.kind == "temps":  # words of any dtype: the float slots' adjoints, one f32 each
            dtype = f32
        elif b.dtype.is_float and b.needs_grad and b.kind in ("arg", "field"):
            dtype = b.dtype
        else:
            continue
        name = f"{b.name}.{kind}"
        if not any(x.name == name for x in ir.buffers):  # `x.grad` read by the kernel itself binds it already
            ir.buffers.append(Buffer(name, dtype, kind, source=b.source, of=b.name, size=b.size, inner=b.inner))
        out[b.name] = name
    return out


def copy_kernel(ir: KernelIR, name: str) -> KernelIR:
    """A fresh KernelIR with the same params, buffers (access flags reset), locals and textures."""
    bufs = [replace(b, read=False, write=False, atomic=False) for b in ir.buffers]
    return KernelIR(name, list(ir.params), bufs, dict(ir.locals), [], [], ir.loc, textures=list(ir.textures))


def reverse(ir: KernelIR, loops: str = "auto", hoist: bool = True, gather: bool = True,
            gather_items: int = 0) -> KernelIR:
    """The adjoint (grad) kernel of `ir`, with PUSH/POP for the adstack.

    loops: "auto" (preaccumulate a loop's Jacobian where the cost rule of preacc.py prefers
    it to the adstack), "adstack" (never) or "jacobian" (wherever the loop qualifies).
    hoist: read gradient buffers at the start of each item (hoist.py); the kernel then lists
    the buffers it assumes unaliased in `assumes_distinct`.
    gather: turn a task's neighbour scatters into gathers where gather.py proves it exact
    (also listed in `assumes_distinct`; ignored without `hoist`). gather_items > 0: keep the
    atomic task too, for launches of fewer items than that (chosen at launch: Task.items),
    where the gather's second pass costs more than the atomics save."""
    g = copy_kernel(ir, f"{ir.name}.grad")
    grads = grad_buffers(g)
    names = B.Names(g)
    for task in reversed(ir.tasks):
        g.tasks.extend(_TaskReverser(g, names, grads, task, loops, hoist, gather and hoist, gather_items).run())
    prune_buffers(g)
    return g


def prune_buffers(ir: KernelIR) -> None:
    """Drop buffers no task uses (keeping the primal of every remaining grad/dual buffer)."""
    used = set()
    for t in ir.tasks:
        for n in (*walk(t.body), *walk(t.prologue)):
            if n.op in (Op.LOAD, Op.STORE, Op.LENGTH):
                used.add(n.attr)
            elif n.op is Op.ATOMIC:
                used.add(n.attr.buf)
    used |= {b.of for b in ir.buffers if b.name in used and b.of}
    ir.buffers[:] = [b for b in ir.buffers if b.name in used or b.kind not in ("arg", "field", "grad", "dual", "temps")]


def trip_count(begin: Node, end: Node, step: int | Node) -> Node:
    """Iterations of range(begin, end, step): max(0, ceil(span/|step|)); step a nonzero
    constant, or a node (a run-time step, whose sign picks the span)."""
    if isinstance(step, Node):
        up = B.bin(Op.FLOORDIV, B.add(B.sub(end, begin), B.sub(step, B.c(1, i32))), step)
        down = B.bin(Op.FLOORDIV, B.sub(B.sub(begin, end), B.add(step, B.c(1, i32))), B.neg(step))
        return B.bin(Op.MAX, B.select(B.cmp(Op.GT, step, B.c(0, i32)), up, down), B.c(0, i32))
    span = B.sub(end, begin) if step > 0 else B.sub(begin, end)
    k = abs(step)
    n = span if k == 1 else B.bin(Op.FLOORDIV, B.add(span, B.c(k - 1, i32)), B.c(k, i32))
    return B.bin(Op.MAX, n, B.c(0, i32))


class _TaskReverser:
    def __init__(self, g: KernelIR, names: B.Names, grads: dict[str, str], task: Task, loops: str = "auto",
                 hoist: bool = True, gather: bool = False, gather_items: int = 0):
        self.g = g
        self.names = names
        self.grads = grads
        self.task = task
        self.loops = loops
        self.hoist = hoist
        self.gather = gather
        self.gather_items = gather_items
        self.sites = 0
        self.adjoints: list[str] = []   # adjoint locals in order of first use (zeroed at the start)
        self._adjoint_set: set[str] = set()
        self.slots: dict[int, str] = {}

    # -- analysis ------------------------------------------------------------------------------
    def _analyze(self, body: Block) -> None:
        self.count: dict[str, int] = {}
        for n in walk(body):
            if n.op in (Op.ASSIGN, Op.FOR):
                self.count[n.attr] = self.count.get(n.attr, 0) + 1
            # gr.random()'s ticket (gfxrt/taichi/rng.py) is exempt: the gradient kernel draws new numbers
            if n.op is Op.ATOMIC and n.attr.dest and not n.attr.buf.startswith("gr_random_state"):
                raise CompileError("the value returned by an atomic operation cannot be recomputed in a "
                                   "gradient kernel; compute it in a separate kernel that is not differentiated",
                                   n.loc)
        self.outside_read = _loop_vars_read_outside(body)
        self.task_reads: dict[str, int] = {}
        for n in walk(body):
            if n.op is Op.VAR:
                self.task_reads[n.attr] = self.task_reads.get(n.attr, 0) + 1
        # pre-order position of each statement, and the first position where each local is read:
        # restoring a local at an assignment matters only if the statement or one before it reads it
        self.order: dict[int, int] = {}
        self.first_read: dict[str, int] = {}
        for k, n in enumerate(x for x in walk(body) if x.op in STMTS):
            self.order[id(n)] = k
            for a in n.args:
                for v in B.vars_of(a):
                    self.first_read.setdefault(v, k)
        self.injective = _injective_index(self.task, body, self.count)
        self.plain = {}
        for name in self.grads:
            idx = [n.args[0] for n in walk(body) if (n.op in (Op.LOAD, Op.STORE) and n.attr == name)
                   or (n.op is Op.ATOMIC and n.attr.buf == name)]
            self.plain[name] = self.injective is not None and all(
                i.op is Op.VAR and i.attr == self.injective for i in idx)

    # -- driver --------------------------------------------------------------------------------
    def run(self) -> list[Task]:
        """The grad task(s) of the task: one, or a gather and a zero task (gather.py)."""
        task = self.task
        body = JumpRemover(self.names).task_body(task.body, task.kind == "range")
        self._analyze(body)
        fwd, bwd = self.block(body, 0)
        zero = [B.assign(a, B.c(0, self.g.locals[a])) for a in self.adjoints]
        reads = _reads(bwd)
        zero = [z for z in zero if z.attr in reads]
        new_body = self._resolve([*fwd, *zero, *bwd], reads)
        grad = Task(f"{task.name}_grad", task.kind, tuple(new_body), task.extent, task.index_var, task.loc)
        if self.gather:
            buffers = {b.name: b for b in self.g.buffers}
            both = self.gather_items > 0 and task.extent is not None and host_evaluable(task.extent)
            tasks = gather_tasks(grad, new_body, buffers, self.grads, self.injective, self.names,
                                 self.gather_items if both else 0)
            if tasks is not None:
                self.g.assumes_distinct |= set(self.grads.values())
                if not both:
                    return tasks
                return [*tasks, replace(self._hoisted(new_body), items=(None, self.gather_items))]
        return [self._hoisted(new_body)]

    def _hoisted(self, body: list) -> Task:
        """The grad task of `body` (the item's sweeps), its gradient reads hoisted (hoist.py)."""
        task = self.task
        if self.hoist:
            body, assumed = hoist_adjoint_reads(body, self.grads, self.plain, self.injective, self.names)
            self.g.assumes_distinct |= assumed
        return Task(f"{task.name}_grad", task.kind, tuple(body), task.extent, task.index_var, task.loc)

    def _resolve(self, block, reads: set[str]) -> list[Node]:
        """Turn marks into saves/restores (fresh locals outside loops, PUSH/POP inside) or
        drop them where the backward sweep never reads the local."""
        out = []
        for s in block:
            if isinstance(s, _Mark):
                if not (s.force or (s.needed and s.var in reads)):
                    continue
                t = self.g.locals[s.var]
                if s.depth > 0:
                    out.append(Node(Op.PUSH, args=(B.var(s.var, t),)) if s.kind == "save"
                               else Node(Op.POP, attr=s.var))
                elif not s.force:
                    slot = self.slots.get(s.site)
                    if slot is None:
                        slot = self.slots[s.site] = self.names.new(f"{s.var}.s", t)
                    out.append(B.assign(slot, B.var(s.var, t)) if s.kind == "save"
                               else B.assign(s.var, B.var(slot, t)))
            elif s.blocks:
                out.append(s.with_(blocks=tuple(tuple(self._resolve(b, reads)) for b in s.blocks)))
            else:
                out.append(s)
        return out

    def _marks(self, var: str, depth: int, needed: bool, force: bool = False):
        self.sites += 1
        return (_Mark("save", var, self.sites, depth, needed, force),
                _Mark("restore", var, self.sites, depth, needed, force))

    # -- statements: each returns (forward sweep, backward sweep) --------------------------------
    def block(self, block: Block, depth: int) -> tuple[list, list]:
        fwd, bwd = [], []
        for s in block:
            f, b = self.stmt(s, depth)
            fwd.extend(f)
            bwd[:0] = b
        return fwd, bwd

    def stmt(self, s: Node, depth: int) -> tuple[list, list]:
        handler = getattr(self, f"_{s.op.name.lower()}", None)
        if handler is None:
            raise CompileError(f"reverse mode does not support {s.op.name} statements", s.loc)
        return handler(s, depth)

    def _assert(self, s, depth):
        return [], []  # checks belong to the primal launch

    def _assign(self, s: Node, depth: int):
        v = s.attr
        t = self.g.locals[v]
        earlier_read = self.first_read.get(v, len(self.order)) <= self.order[id(s)]
        save, restore = self._marks(v, depth, depth > 0 or (self.count.get(v, 0) > 1 and earlier_read))
        if not t.is_float:
            return [save, s], [restore]
        adj = self.adjoint(v)
        a = self.names.new("ad.a", t)
        hoist_f, hoist_b, rest = self.backprop(s.args[0], B.var(a, t), depth)
        b = [B.assign(a, B.var(adj, t), s.loc), B.assign(adj, B.c(0, t), s.loc), *hoist_b, restore]
        return [save, *hoist_f, s], b + rest

    def _store(self, s: Node, depth: int):
        idx, value = s.args[:2]
        gb = self.grads.get(s.attr)
        if gb is None or not value.dtype.is_float:
            return [], []
        t = value.dtype
        a = self.names.new("ad.a", t)
        hoist_f, hoist_b, rest = self.backprop(value, B.var(a, t), depth)
        b = [*hoist_b, B.assign(a, B.load(gb, idx, t, s.loc), s.loc), B.store(gb, idx, B.c(0, t), s.loc)]
        return hoist_f, b + rest

    def _texstore(self, s: Node, depth: int):
        return [], []  # textures have no gradients (nor in Taichi): a texture read is a constant

    def _atomic(self, s: Node, depth: int):
        idx, value = s.args[:2]
        gb = self.grads.get(s.attr.buf)
        op = s.attr.op
        if op == "mul" and gb is not None and value.dtype.is_float:
            raise CompileError("gr.atomic_mul is not differentiable (its gradient needs every other factor); "
                               "multiply in a local variable, or take logs and use gr.atomic_add", s.loc)
        if gb is None or not value.dtype.is_float or op not in ("add", "sub", "min", "max"):
            return [], []
        t = value.dtype
        a = self.names.new("ad.a", t)
        seed = B.load(gb, idx, t, s.loc)
        if op in ("min", "max"):  # the gradient goes to the value that won
            won = B.cmp(Op.EQ, value, B.load(s.attr.buf, idx, t, s.loc))
            seed = B.select(won, seed, B.c(0, t))
        seed_var = B.var(a, t)
        hoist_f, hoist_b, rest = self.backprop(value, B.neg(seed_var) if op == "sub" else seed_var, depth)
        return hoist_f, [*hoist_b, B.assign(a, seed, s.loc), *rest]

    def _if(self, s: Node, depth: int):
        fa, ba = self.block(s.blocks[0], depth)
        fb, bb = self.block(s.blocks[1], depth)
        cond = s.args[0]
        if not (B.vars_of(cond) & assigned(s.blocks[0] + s.blocks[1])):
            return [s.with_(blocks=(tuple(fa), tuple(fb)))], [s.with_(blocks=(tuple(ba), tuple(bb)))]
        cv = self.names.new("ad.c", u1)
        save, restore = self._marks(cv, depth, True, force=True)
        c = B.var(cv, u1, s.loc)
        fwd = [B.assign(cv, cond, s.loc), s.with_(args=(c,), blocks=(tuple(fa), tuple(fb))), save]
        return fwd, [restore, s.with_(args=(c,), blocks=(tuple(ba), tuple(bb)))]

    def _loop(self, s: Node, depth: int, adstack):
        """A loop's (forward, backward) sweeps: its Jacobian preaccumulated (preacc.py) where
        it qualifies and the cost rule prefers it, else `adstack(s, depth)`."""
        if self.loops == "adstack":
            return adstack(s, depth)
        plan = plan_loop(s, self.grads, self.g.locals, self.task_reads)
        if plan is None:
            return adstack(s, depth)
        if self.loops == "auto":
            mark = len(self.adjoints)  # adjoints are only appended: dropping the tail undoes the try
            fwd, bwd = adstack(s, depth)
            if not plan.cheaper(_stack_words(fwd, _reads(bwd), depth)):
                return fwd, bwd
            self._adjoint_set.difference_update(self.adjoints[mark:])
            del self.adjoints[mark:]
        return Preaccumulation(self, plan, depth).emit()

    def _while(self, s: Node, depth: int):
        return self._loop(s, depth, self._while_adstack)

    def _for(self, s: Node, depth: int):
        return self._loop(s, depth, self._for_adstack)

    def _while_adstack(self, s: Node, depth: int):
        fb, bb = self.block(s.blocks[0], depth + 1)
        n = self.names.new("ad.n", i32)
        nv = B.var(n, i32, s.loc)
        save, restore = self._marks(n, depth, True, force=True)
        fwd = [B.assign(n, B.c(0, i32), s.loc),
               s.with_(blocks=((*fb, B.assign(n, B.add(nv, B.c(1, i32)), s.loc)),)), save]
        loop = Node(Op.WHILE, args=(B.cmp(Op.GT, nv, B.c(0, i32)),),
                    blocks=((B.assign(n, B.sub(nv, B.c(1, i32)), s.loc), *bb),), loc=s.loc)
        return fwd, [restore, loop]

    def _for_adstack(self, s: Node, depth: int):
        j = s.attr
        begin, end, step_e = s.args
        fb, bb = self.block(s.blocks[0], depth + 1)
        save_j, restore_j = self._marks(j, depth, self.outside_read.get(j, False))
        fwd, bwd = [save_j], []
        if step_e.op is Op.CONST:
            step, trips = B.c(step_e.attr, i32), step_e.attr
        else:  # a run-time step: evaluated once before the loop, saved for the backward walk
            st_name = self.names.new("ad.step", i32)
            step = trips = B.var(st_name, i32, s.loc)
            save_st, restore_st = self._marks(st_name, depth, True, force=True)
            fwd.append(B.assign(st_name, step_e, s.loc))
        if step_e.op is Op.CONST and not ((B.vars_of(begin) | B.vars_of(end)) & (assigned(s.blocks[0]) | {j})):
            lo, n = begin, trip_count(begin, end, trips)
            fwd.append(s.with_(blocks=(tuple(fb),)))
        else:
            lo_name, n_name = self.names.new("ad.lo", i32), self.names.new("ad.n", i32)
            lo, n = B.var(lo_name, i32, s.loc), B.var(n_name, i32, s.loc)
            save_lo, restore_lo = self._marks(lo_name, depth, True, force=True)
            save_n, restore_n = self._marks(n_name, depth, True, force=True)
            fwd += [B.assign(lo_name, begin, s.loc), B.assign(n_name, trip_count(begin, end, trips), s.loc),
                    s.with_(args=(lo, B.add(lo, B.mul(n, step)), step), blocks=(tuple(fb),)),
                    save_lo, save_n]
            bwd += [restore_n, restore_lo]
        if step_e.op is not Op.CONST:
            fwd.append(save_st)
            bwd.insert(0, restore_st)
        last = B.add(lo, B.mul(B.sub(n, B.c(1, i32)), step))
        back = B.c(-step_e.attr, i32) if step_e.op is Op.CONST else B.neg(step)
        rev = Node(Op.FOR, attr=j, args=(last, B.sub(lo, step), back), blocks=(tuple(bb),), loc=s.loc)
        return fwd, bwd + [rev, restore_j]

    # -- expressions -----------------------------------------------------------------------------
    def adjoint(self, v: str) -> str:
        name = f"{v}.adj"
        if name not in self.g.locals:
            self.names.fixed(name, self.g.locals[v])
        if name not in self._adjoint_set:
            self._adjoint_set.add(name)
            self.adjoints.append(name)
        return name

    def backprop(self, e: Node, seed: Node, depth: int) -> tuple[list, list, list]:
        """Statements adding seed * de/du to the adjoint of every local and array element u
        that the expression e reads, as (forward sweep part, backward restores, backward part).

        Values of subexpressions that the partial derivatives need are computed once, into
        fresh locals, before the adjoint updates. Partial derivatives with a transcendental
        op (cos for sin, exp, 1/sqrt, ...) are instead hoisted: computed in the forward sweep,
        from the values e is evaluated with, next to e itself (nearly free where the device
        overlaps them) and saved, so the backward sweep neither recomputes them nor needs the
        operands restored for them."""
        if not e.dtype.is_float:
            return [], [], []
        hoist_f: list = []
        hoist_b: list = []
        hoisted: dict[str, Node] = {}

        def hoist(p: Node) -> Node:
            key = repr(p)
            v = hoisted.get(key)
            if v is None:
                name = self.names.new("ad.h", p.dtype)
                save, restore = self._marks(name, depth, True, force=True)
                hoist_f.extend([B.assign(name, p, p.loc), save])
                hoist_b.insert(0, restore)
                v = hoisted[key] = B.var(name, p.dtype, p.loc)
            return v
        order = _postorder(e)
        inner = {id(n) for n in order}
        active = self._active(order)
        values: dict[int, Node] = {}
        pre: list[Node] = []
        post: list[Node] = []

        def value(n: Node) -> Node:
            if n.op in _LEAVES:
                return n
            v = values.get(id(n))
            if v is None:
                expr = n.with_(args=tuple(value(a) for a in n.args))
                name = self.names.new("ad.v", n.dtype)
                pre.append(B.assign(name, expr, n.loc))
                v = values[id(n)] = B.var(name, n.dtype, n.loc)
            return v

        def subst(p: Node) -> Node:  # partials refer to the original nodes: use their values
            if id(p) in inner:
                return value(p)
            if not p.args:
                return p
            return p.with_(args=tuple(subst(a) for a in p.args))

        adj: dict[int, list[Node]] = {id(e): [seed]}
        # loads of one element in e (`v[i] + 0.1 * v[i]`): one gradient update with the sum of
        # their adjoints, at the place of the last one (an atomic or a read-modify-write each)
        reads: dict[tuple, tuple] = {}  # (buffer, index) -> (a load, its slot in post, adjoints)
        for n in reversed(order):
            contribs = adj.pop(id(n), None)
            if not contribs or not n.dtype.is_float:
                continue
            g = contribs[0]
            for x in contribs[1:]:
                g = B.add(g, x)
            if n.op is Op.VAR:
                a = self.adjoint(n.attr)
                post.append(B.assign(a, B.add(B.var(a, n.dtype), g), n.loc))
            elif n.op is Op.LOAD:
                if n.attr in self.grads:
                    key = (n.attr, node_key(n.args[0]))
                    prev = reads.get(key)
                    gs = [g]
                    if prev is not None:  # the update moves here
                        post[prev[1]] = None
                        gs = prev[2] + gs
                    reads[key] = (n, len(post), gs)
                    post.append(None)
            elif n.op not in _LEAVES:
                ps = partials(n.op, n, n.args)
                if sum(p is not None and id(x) in active for p, x in zip(ps, n.args)) > 1 and g.op not in _LEAVES:
                    name = self.names.new("ad.g", n.dtype)
                    post.append(B.assign(name, g, n.loc))
                    g = B.var(name, n.dtype, n.loc)
                for x, p in zip(n.args, ps):
                    if p is not None and id(x) in active:
                        p = hoist(p) if any(y.op in EXPENSIVE for y in walk_node(p)) else subst(p)
                        c = B.mul(p, g)
                        if c.dtype != x.dtype and x.dtype.is_float:  # through a cast: f32 <-> f64
                            c = B.cast(c, x.dtype)
                        adj.setdefault(id(x), []).append(c)
        for load, slot, gs in reads.values():
            g = gs[0]
            for x in gs[1:]:
                g = B.add(g, x)
            post[slot] = self._accumulate(load, g)
        return hoist_f, hoist_b, pre + [x for x in post if x is not None]

    def _active(self, order: list[Node]) -> set[int]:
        """Nodes (by id) whose value depends on a float local or an array with a gradient."""
        active: set[int] = set()
        for n in order:
            if (n.op is Op.VAR and n.dtype.is_float) or (n.op is Op.LOAD and n.attr in self.grads
                                                          and n.dtype.is_float) \
                    or any(id(a) in active for a in n.args):
                active.add(id(n))
        return active

    def _accumulate(self, load: Node, g: Node) -> Node:
        gb = self.grads[load.attr]
        idx = load.args[0]
        if g.dtype != load.dtype:  # the value went through a cast (an f64 array read into f32 math)
            g = B.cast(g, load.dtype)
        if self.plain[load.attr]:
            return B.store(gb, idx, B.add(B.load(gb, idx, load.dtype, load.loc), g), load.loc)
        return B.atomic("add", gb, idx, g, load.loc)


# -- helpers ------------------------------------------------------------------------------------

def _reads(block) -> set[str]:
    """Locals read by a statement list that may hold marks (which read nothing)."""
    out = set()
    for s in block:
        if isinstance(s, _Mark):
            continue
        for a in s.args:
            out |= {x.attr for x in walk_node(a) if x.op is Op.VAR}
        for b in s.blocks:
            out |= _reads(b)
    return out


def _stack_words(block, reads: set[str], depth: int) -> int:
    """How many values a forward sweep saves per iteration of a loop at `depth` (its marks
    deeper than `depth` that will become PUSHes)."""
    out = 0
    for s in block:
        if isinstance(s, _Mark):
            out += s.kind == "save" and s.depth > depth and (s.force or (s.needed and s.var in reads))
        else:
            for b in s.blocks:
                out += _stack_words(b, reads, depth)
    return out


def _postorder(e: Node) -> list[Node]:
    out, seen = [], set()

    def visit(n: Node):
        if id(n) in seen:
            return
        seen.add(id(n))
        for a in n.args:
            visit(a)
        out.append(n)
    visit(e)
    return out


def _loop_vars_read_outside(body: Block) -> dict[str, bool]:
    """For each loop variable: is it read anywhere outside the body of a loop over it?"""
    loop_vars = {n.attr for n in walk(body) if n.op is Op.FOR}
    out = dict.fromkeys(loop_vars, False)

    def visit(block, inside: frozenset):
        for s in block:
            for a in s.args:
                for x in walk_node(a):
                    if x.op is Op.VAR and x.attr in out and x.attr not in inside:
                        out[x.attr] = True
            if s.op is Op.FOR:
                # the bounds are evaluated before the loop assigns its variable
                visit(s.blocks[0], inside | {s.attr})
            else:
                for b in s.blocks:
                    visit(b, inside)
    visit(body, frozenset())
    return out


def _injective_index(task: Task, body: Block, count: dict[str, int]) -> str | None:
    """The local holding the task's loop index when it is `begin + t * step` (begin uniform,
    step a nonzero constant) and never reassigned: distinct items then have distinct values.
    It is assigned by the body's first statement, or its second after the flag of a `continue`
    of the parallel loop (jumps.py)."""
    if body and body[0].op is Op.ASSIGN and body[0].attr.startswith("ad.cont") and B.is_const(body[0].args[0]):
        body = body[1:]
    if task.kind != "range" or not body or body[0].op is not Op.ASSIGN:
        return None
    s = body[0]
    v = s.attr
    if count.get(v) != 1:
        return None
    start = loop_start(s.args[0], task.index_var)
    if start is None or any(x.op in (Op.VAR, Op.LOAD) for x in walk_node(start[0])):
        return None
    return v


__all__ = ["reverse", "grad_buffers", "copy_kernel", "prune_buffers", "assigned", "trip_count"]
