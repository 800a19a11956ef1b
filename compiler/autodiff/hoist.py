"""Adjoint-read hoisting: a grad task's gradient-buffer reads issued at the start of the item.

The backward sweep of `y[i] = v` reads y.grad[i] and zeroes it, and a read of x[i]
accumulates `x.grad[i] = x.grad[i] + a`: loads that, left where the backward sweep meets
them (after the forward sweep's loops), wait for each other in series. On an H100 the
run-time sin loop's grad kernel took 1.155 ms with those loads after the loop and 0.264 ms
with them before it (/work/briefs/findings.md). Two rewrites move them to the start:

- **Privatization.** A gradient buffer whose every access in the task is at the task's own
  injective index (`_TaskReverser.plain`: no other item touches that element) is read once
  into a local right after the index is computed; every access becomes a local read or
  write, and the local is stored back once at the end of the item (if the task writes it).
  Where no access is unconditional (all inside branches or loops), the index may lie past
  the buffer's end for some items: the read is then clamped and selected away, and the
  write-back skipped, for indices outside the bound buffer.
- **Seed hoisting.** Otherwise, a top-level read `a = y.grad[idx]` (the seed of a store or
  `+=` at the top level of the task, not inside a loop or branch) moves up to just after
  the last assignment of a local that `idx` reads, when those locals are assigned exactly
  once, at the top level, and nothing else in the task touches y.grad but that read and
  its zeroing store. Primal arrays are read-only in a grad kernel, so loads inside `idx` see
  the same values wherever they are evaluated.

Both assume that no other gradient binding of the launch is the same buffer (one array
passed as two arguments): the kernel lists the buffers it privatized or hoisted in
`KernelIR.assumes_distinct`, and the runtime launches a variant compiled without hoisting
(mode 'grad_alias') when a launch binds one of them twice.
"""
from __future__ import annotations

from ..ir import Node, Op, map_block, map_exprs, node_key, walk
from ..types import i32, u32
from . import build as B


def _touches(n: Node, buf: str) -> bool:
    return (n.op in (Op.LOAD, Op.STORE) and n.attr == buf) or (n.op is Op.ATOMIC and n.attr.buf == buf)


def _is_var(n: Node, name: str) -> bool:
    return n.op is Op.VAR and n.attr == name


def hoist_adjoint_reads(body: list[Node], grads: dict[str, str], plain: dict[str, bool], injective: str | None,
                        names: B.Names) -> tuple[list[Node], set[str]]:
    """(rewritten task body, gradient buffers the rewrite assumes unaliased)."""
    body = list(body)
    assumed: set[str] = set()
    # the index is assigned by the first statement (the second after a `continue` flag)
    at = next((k for k, s in enumerate(body[:2]) if s.op is Op.ASSIGN and s.attr == injective), None)
    if injective and at is not None:
        for primal, gb in grads.items():
            if plain.get(primal):
                t = _privatize(body, gb, injective, at, names)
                if t is not None:
                    body = t
                    assumed.add(gb)
    for gb in grads.values():
        if gb not in assumed and _hoist_seed(body, gb):
            assumed.add(gb)
    return body, assumed


def _privatize(body: list[Node], gb: str, index: str, at: int, names: B.Names) -> list[Node] | None:
    uses = [n for n in walk(body) if _touches(n, gb)]
    if not uses or any(n.op is Op.ATOMIC or not _is_var(n.args[0], index) for n in uses):
        return None
    t = next(n.dtype if n.op is Op.LOAD else n.args[1].dtype for n in uses)
    acc = names.new("ad.acc", t)
    written = any(n.op is Op.STORE for n in uses)

    def expr(n: Node) -> Node:
        return B.var(acc, t, n.loc) if n.op is Op.LOAD and n.attr == gb else n

    def stmt(s: Node) -> list[Node]:
        args = tuple(map_exprs(a, expr) for a in s.args)
        if s.op is Op.STORE and s.attr == gb:
            return [B.assign(acc, args[1], s.loc)]
        return [s.with_(args=args) if any(a is not b for a, b in zip(args, s.args)) else s]
    loc = body[at].loc
    idx = B.var(index, i32, loc)
    load = B.load(gb, idx, t, loc)
    store = B.store(gb, idx, B.var(acc, t), body[-1].loc)
    if not any(_touches(n, gb) for s in body for n in walk((s.with_(blocks=()),))):
        # every access is conditional (in a branch or loop): the item's index may be past the
        # end of the buffer, so only read (clamped) and write back an element that exists
        length = Node(Op.LENGTH, i32, attr=gb)
        inside = B.cmp(Op.LT, B.cast(idx, u32), B.cast(length, u32))
        clamped = B.bin(Op.MIN, B.bin(Op.MAX, idx, B.c(0, i32)), B.sub(length, B.c(1, i32)))
        load = B.select(inside, B.load(gb, clamped, t, loc), B.c(0, t))
        store = B.if_(inside, [store], loc=store.loc)
    out = [*body[:at + 1], B.assign(acc, load, loc), *map_block(tuple(body[at + 1:]), stmt)]
    if written:
        out.append(store)
    return out


def _assign_counts(body: list[Node]) -> dict[str, int]:
    out: dict[str, int] = {}
    for n in walk(body):
        name = n.attr if n.op in (Op.ASSIGN, Op.FOR, Op.POP) else (
            n.attr.dest if n.op is Op.ATOMIC else None)
        if name:
            out[name] = out.get(name, 0) + 1
    return out


def _hoist_seed(body: list[Node], gb: str) -> bool:
    """Move the one top-level read of gb up (in place); True when it moved."""
    pos = next((k for k, s in enumerate(body) if s.op is Op.ASSIGN and s.args[0].op is Op.LOAD
                and s.args[0].attr == gb), None)
    if pos is None:
        return False
    load = body[pos].args[0]
    key = node_key(load.args[0])
    for n in walk(body):
        if not _touches(n, gb) or n is load:
            continue
        if not (n.op is Op.STORE and node_key(n.args[0]) == key and B.is_const(n.args[1], 0)):
            return False  # another access of the same gradient: order matters
    counts = _assign_counts(body)
    first = 0
    for v in B.vars_of(load.args[0]):
        k = next((j for j, s in enumerate(body[:pos]) if s.op is Op.ASSIGN and s.attr == v), None)
        if k is None or counts.get(v) != 1:
            return False
        first = max(first, k + 1)
    if first >= pos:
        return False
    body.insert(first, body.pop(pos))
    return True


__all__ = ["hoist_adjoint_reads"]
