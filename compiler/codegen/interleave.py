"""Two iterations of a parallel loop per grid-stride step, loads of both issued first.

A plain grid-stride loop issues one iteration's loads, waits for them, stores, and only
then starts the next iteration's loads: on an H100 that caps saxpy at ~2750 GB/s. Iterations
of a parallel loop may interleave in any order, so a thread may run the *prefix* of two
iterations (the pure computations up to the first memory side effect, loads included)
before the rest of either. Measured on an H100 (hand-written WGSL, 2^26 f32 saxpy): one
iteration per step 2754 GB/s, two with hoisted loads 2979 GB/s (torch: 3003).

`plan(body)` returns (prefix, rest, temps) or None when the body does not qualify: no
load to overlap, a `continue` of the parallel loop itself (it would skip the other
iteration's rest), a body too large to duplicate, or one holding a run-time loop (a
`while`, or a `for` whose bounds are not constants). Such a body is compute-bound per item,
its two loops would run one after the other anyway, and the body's three copies (two
interleaved, one for an odd last iteration) triple what the driver compiles. Measured on an
H100 (bench compile kernel, a `while` loop of sin: experiments/compile_profile.py
--variants): 28.0 ms cold interleaved, 16.6 ms not, run time at 2^22 items 0.117 / 0.119 ms.
"""
from __future__ import annotations

from ..ir import Block, Node, Op, walk

MAX_NODES = 400  # above this, duplicating the body costs more compile time than it gains


def _has_load(nodes) -> bool:
    return any(n.op is Op.LOAD for n in walk(nodes))


def _top_level_continue(block: Block) -> bool:
    """A CONTINUE that ends the parallel loop's iteration (not one of a nested loop)."""
    for s in block:
        if s.op is Op.CONTINUE:
            return True
        if s.op in (Op.IF,) and any(_top_level_continue(b) for b in s.blocks):
            return True
    return False


def _runtime_loop(body: Block) -> bool:
    return any(n.op is Op.WHILE or (n.op is Op.FOR and any(a.op is not Op.CONST for a in n.args))
               for n in walk(body))


def plan(body: Block):
    """Split a parallel body into (prefix, rest, temps): prefix is pure (ASSIGNs only),
    temps maps new local names to dtypes (the first store's operands, hoisted)."""
    if _top_level_continue(body) or sum(1 for _ in walk(body)) > MAX_NODES or _runtime_loop(body):
        return None
    k = 0
    while k < len(body) and body[k].op is Op.ASSIGN:
        k += 1
    prefix, rest, temps = list(body[:k]), list(body[k:]), {}
    if rest and rest[0].op is Op.STORE:  # hoist the first store's loads into the prefix
        store = rest[0]
        args = []
        for j, a in enumerate(store.args):
            if _has_load([a]):
                name = f"il{j}_"
                temps[name] = a.dtype
                prefix.append(Node(Op.ASSIGN, attr=name, args=(a,), loc=store.loc))
                a = Node(Op.VAR, a.dtype, attr=name, loc=store.loc)
            args.append(a)
        rest[0] = store.with_(args=tuple(args))
    if not _has_load(prefix):
        return None
    return tuple(prefix), tuple(rest), temps

