"""Loop Jacobian preaccumulation: reverse mode through a loop without an adstack.

A loop maps the float locals it carries, its *state* s (k of them), and the float values
it only reads, its *inputs* w (locals computed before the loop, and elements of
differentiable arrays at loop-invariant indices), to the state after it:
s_out = F(s_in, w). Instead of saving values on the adstack every iteration and walking the
iterations backwards, the grad kernel's forward sweep runs the loop once with k x (k + m)
tangents, J[a][c] = d s_a / d column c (forward mode, columns = the state on entry then
the inputs), and its backward sweep applies the transpose once:

    adj_s_b  = sum_a adj_s_a(out) * J[a][b]       (the state's adjoints are replaced)
    adj_w_c += sum_a adj_s_a(out) * J[a][k + c]   (input locals; array inputs accumulate into .grad)

Nothing is saved per iteration and the loop does not run backwards, so a run-time trip count
costs no stack memory and no counting pre-pass. Locals the loop assigns are saved once before
it (and restored after its backward sweep) where the rest of the backward sweep reads them;
inside an outer adstack loop the Jacobian entries go on the stack, once per outer iteration.

A loop qualifies (`plan_loop`) when its body writes no array whose gradient is taken (an
output adjoint would enter mid-loop), reads differentiable arrays only at indices the loop
does not change, carries at most MAX_STATE float locals (locals written before they are
read in every iteration and not read after the loop are temporaries, not state) and has at
most MAX_COLUMNS columns. Integer and boolean locals, branches, nested loops, `while`,
`break` and `continue` (already flags, jumps.py) are replayed as they are.

The cost rule (`LoopPlan.cheaper`): per iteration, the tangents cost (columns - 1) x P more
multiply-adds than the adstack's backward sweep (P: the partial-derivative products of the
body, one direction), while the adstack saves S words per iteration, each a store and a
load of stack memory. Preaccumulate when (columns - 1) * P <= STACK_WORD_COST * S; a loop
with one column (k = 1, no inputs, e.g. `v = sin(v) * 0.95 + 0.01`) always qualifies.
STACK_WORD_COST = 16 multiply-adds is conservative: on an H100 one pushed and popped word per
iteration of the sin loop cost 0.4-0.77 ms over 2^24 items, ~50-100 multiply-adds of
throughput (/work/briefs/findings.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..ir import Block, Node, Op, assigned, map_block, node_key, walk, walk_node
from . import build as B
from .rules import PARTIALS, partials

MAX_STATE = 4
MAX_COLUMNS = 8
STACK_WORD_COST = 16
_LEAVES = (Op.CONST, Op.PARAM, Op.VAR, Op.LENGTH)


@dataclass
class LoopPlan:
    """What preaccumulating one loop needs: its state, temporaries, input columns, the
    locals it assigns (saved around it) and P, the partial products of its body."""

    loop: Node
    state: list[str]
    temps: list[str]
    inputs: list[str]
    loads: list[Node]
    assigned: list[str]
    products: int = 0
    columns: int = field(init=False)

    def __post_init__(self):
        self.columns = len(self.state) + len(self.inputs) + len(self.loads)

    def cheaper(self, stack_words: int) -> bool:
        """The cost rule: tangent work no more than the adstack traffic it replaces."""
        return (self.columns - 1) * self.products <= STACK_WORD_COST * stack_words


def _reads(nodes) -> dict[str, int]:
    out: dict[str, int] = {}
    for n in nodes:
        if n.op is Op.VAR:
            out[n.attr] = out.get(n.attr, 0) + 1
    return out


def _written_first(body: Block, v: str) -> bool:
    """v is assigned unconditionally at the top level of the body before anything reads it."""
    for s in body:
        if v in _reads(x for a in s.args for x in walk_node(a)):
            return False
        if s.op is Op.ASSIGN and s.attr == v:
            return True
        inner = tuple(x for b in s.blocks for x in b)
        if v in _reads(walk(inner)) or v in assigned(inner) or (s.op is Op.FOR and s.attr == v):
            return False
    return False


def plan_loop(loop: Node, grads: dict[str, str], local_types: dict, task_reads: dict[str, int]) -> LoopPlan | None:
    """The preaccumulation plan of a FOR/WHILE loop, or None when it does not qualify.
    `grads`: primal buffer -> gradient buffer; `task_reads`: how often each local is read
    in the whole task body (to tell whether the loop's result is read after it)."""
    body = loop.blocks[0]
    written = list(dict.fromkeys([*([loop.attr] if loop.op is Op.FOR else []), *assigned(body)]))
    changed = set(written)
    cond = loop.args if loop.op is Op.WHILE else ()  # a while condition runs with every iteration
    inputs: dict[str, None] = {}
    loads: dict[tuple, Node] = {}
    for n in (*walk(body), *(x for c in cond for x in walk_node(c))):
        op = n.op
        if op is Op.STORE and n.attr in grads and n.args[1].dtype.is_float:
            return None  # an output adjoint would enter in the middle of the loop
        if op is Op.ATOMIC and n.attr.buf in grads and n.args[1].dtype.is_float:
            return None
        if op in (Op.BARRIER, Op.PUSH, Op.POP, Op.BREAK, Op.CONTINUE):
            return None
        if op is Op.LOAD and n.attr in grads and n.dtype.is_float:  # (an int word of 'temps' is no data)
            if B.vars_of(n.args[0]) & changed:
                return None  # differentiable data that changes per iteration
            loads.setdefault(node_key(n), n)
        elif op is Op.VAR and n.dtype.is_float and n.attr not in changed:
            inputs[n.attr] = None
    inner = _reads(x for s in body for x in walk((s,)))
    cond_reads = _reads(x for c in cond for x in walk_node(c))
    state, temps = [], []
    for v in written:
        if not local_types[v].is_float:
            continue
        outside = task_reads.get(v, 0) > inner.get(v, 0) + cond_reads.get(v, 0)
        if not outside and v not in cond_reads and _written_first(body, v):
            temps.append(v)
        else:
            state.append(v)
    plan = LoopPlan(loop, state, temps, list(inputs), list(loads.values()), written)
    if len(state) > MAX_STATE or plan.columns > MAX_COLUMNS:
        return None
    plan.products = _products(body, local_types, grads)
    return plan


def _products(body: Block, local_types: dict, grads: dict) -> int:
    """P: multiply-adds of one direction of derivative propagation through the body."""
    def active(a: Node) -> bool:
        return any(x.dtype.is_float and (x.op is Op.VAR or (x.op is Op.LOAD and x.attr in grads))
                   for x in walk_node(a))
    count = 0
    for s in walk(body):
        if s.op is Op.ASSIGN and local_types[s.attr].is_float:
            seen = set()
            for n in walk_node(s.args[0]):
                if id(n) in seen or not n.dtype.is_float or n.op not in PARTIALS:
                    continue
                seen.add(id(n))
                count += sum(1 for a in n.args if a.dtype.is_float and active(a))
    return count


class Preaccumulation:
    """Emits (forward sweep, backward sweep) of a planned loop for a `_TaskReverser` `rv`
    (its locals, fresh names, save/restore marks, adjoints and gradient accumulation)."""

    def __init__(self, rv, plan: LoopPlan, depth: int):
        self.rv, self.plan, self.depth = rv, plan, depth
        self.types = rv.g.locals
        self.C = plan.columns
        k = len(plan.state)
        self.var_col = {v: c for c, v in enumerate(plan.state + plan.inputs)}
        self.load_col = {node_key(n): k + len(plan.inputs) + j for j, n in enumerate(plan.loads)}
        self.tan = {v: [rv.names.new(f"{v}.J", self.types[v]) for _ in range(self.C)]
                    for v in plan.state + plan.temps}

    def emit(self) -> tuple[list, list]:
        rv, plan, depth = self.rv, self.plan, self.depth
        # a loop variable's value after its loop matters only where it is read outside the loop
        marks = [rv._marks(v, depth, rv.outside_read.get(v, True)) for v in plan.assigned]
        jac = [name for a in plan.state for name in self.tan[a]]
        jac_marks = [rv._marks(name, depth, True, force=True) for name in jac]
        init = [B.assign(self.tan[a][c], B.c(1 if c == r else 0, self.types[a]))
                for r, a in enumerate(plan.state) for c in range(self.C)]
        loop = plan.loop.with_(blocks=(tuple(self.block(plan.loop.blocks[0])),))
        fwd = [*(m[0] for m in marks), *init, loop, *(m[0] for m in jac_marks)]
        bwd = [*(m[1] for m in reversed(jac_marks)), *self.transpose(), *(m[1] for m in reversed(marks))]
        return fwd, bwd

    # -- backward: the transposed Jacobian, once ---------------------------------------------
    def transpose(self) -> list[Node]:
        rv, plan = self.rv, self.plan
        loc = plan.loop.loc
        outs = []
        out: list[Node] = []
        for a in plan.state:
            t = self.types[a]
            o = rv.names.new("ad.o", t)
            out.append(B.assign(o, B.var(rv.adjoint(a), t), loc))
            outs.append((o, a))

        def column(c: int, t) -> tuple[Node | None, list[Node]]:
            terms = [B.mul(B.var(o, self.types[a]), B.var(self.tan[a][c], self.types[a])) for o, a in outs]
            terms = [B.cast(x, t) for x in terms]
            total = None
            for x in terms:
                total = x if total is None else B.add(total, x)
            return total, [B.var(self.tan[a][c], self.types[a]) for _, a in outs]

        for c, a in enumerate(plan.state):
            t = self.types[a]
            total, _ = column(c, t)
            out.append(B.assign(rv.adjoint(a), total if total is not None else B.c(0, t), loc))
        for j, w in enumerate(plan.inputs):
            t = self.types[w]
            total, _ = column(len(plan.state) + j, t)
            if total is not None:
                adj = rv.adjoint(w)
                out.append(B.assign(adj, B.add(B.var(adj, t), total), loc))
        for n in plan.loads:
            total, entries = column(self.load_col[node_key(n)], n.dtype)
            if total is None:
                continue
            # the load ran (its index is valid) iff it reached some Jacobian entry
            ran = None
            for e in entries:
                ne = B.cmp(Op.NE, e, B.c(0, e.dtype))
                ran = ne if ran is None else Node(Op.OR, ne.dtype, (ran, ne))
            out.append(B.if_(ran, [rv._accumulate(n, total)], loc=loc))
        return out

    # -- forward: the loop with its tangents -----------------------------------------------
    def block(self, block: Block) -> Block:
        return map_block(block, self._stmt)

    def _stmt(self, s: Node) -> list[Node]:
        if s.op is Op.ASSIGN and s.attr in self.tan:
            pre, dots = self.tangents(s.args[0])
            t = self.types[s.attr]
            return [*pre, *(B.assign(name, B.cast(d, t) if d is not None else B.c(0, t), s.loc)
                            for name, d in zip(self.tan[s.attr], dots)), s]
        if s.op in (Op.STORE, Op.ATOMIC, Op.ASSERT):
            return []  # a grad kernel writes no primal memory; checks belong to the primal launch
        return [s]

    def tangents(self, e: Node) -> tuple[list[Node], list[Node | None]]:
        """(statements, the C tangents of e): partials used by several columns and
        non-trivial tangents of subexpressions go into fresh locals."""
        pre: list[Node] = []
        dots: dict[int, list] = {}
        order, seen = [], set()

        def visit(n: Node):
            if id(n) not in seen:
                seen.add(id(n))
                for a in n.args:
                    visit(a)
                order.append(n)
        visit(e)
        for n in order:
            dots[id(n)] = self._dot(n, dots, pre)
        return pre, dots[id(e)]

    def _bind(self, value: Node, pre: list[Node], hint: str) -> Node:
        name = self.rv.names.new(hint, value.dtype)
        pre.append(B.assign(name, value, value.loc))
        return B.var(name, value.dtype, value.loc)

    def _dot(self, n: Node, dots: dict, pre: list[Node]) -> list:
        none = [None] * self.C
        if not n.dtype.is_float or n.op in (Op.CONST, Op.PARAM, Op.LENGTH, Op.SPECIAL):
            return none
        if n.op is Op.VAR:
            if n.attr in self.tan:
                return [B.var(name, n.dtype, n.loc) for name in self.tan[n.attr]]
            return self._onehot(self.var_col.get(n.attr), n.dtype)
        if n.op is Op.LOAD:
            return self._onehot(self.load_col.get(node_key(n)), n.dtype)
        terms: list[list[Node]] = [[] for _ in range(self.C)]
        for x, p in zip(n.args, partials(n.op, n, n.args)):
            dx = dots.get(id(x))
            if p is None or dx is None or all(d is None for d in dx):
                continue
            if sum(d is not None for d in dx) > 1 and p.op not in _LEAVES:
                p = self._bind(p, pre, "ad.p")
            for c, d in enumerate(dx):
                if d is not None:
                    terms[c].append(B.mul(p, B.cast(d, p.dtype)))
        out = []
        for ts in terms:
            total = None
            for x in ts:
                total = x if total is None else B.add(total, x)
            if total is not None and total.op not in _LEAVES:
                total = self._bind(total, pre, "ad.d")
            out.append(total)
        return out

    def _onehot(self, c: int | None, t) -> list:
        out = [None] * self.C
        if c is not None:
            out[c] = B.c(1, t)
        return out


__all__ = ["plan_loop", "LoopPlan", "Preaccumulation", "MAX_STATE", "MAX_COLUMNS", "STACK_WORD_COST"]
