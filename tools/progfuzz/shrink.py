"""Minimizes a program while a finding persists: greedy passes that drop statements, unwrap
branches and loops, shorten loops, replace subexpressions by one of their operands or by a
constant, and drop what is no longer used (funcs, arrays, scalars). `still_fails(candidate)`
decides; a candidate that is not a valid program is simply not kept (the predicate runs the
oracle, which rejects it)."""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from .program import Assign, Call, Const, Expr, For, If, Load, NdFor, Program, Shape, Stmt, Store, Var


def _get(p: Program, path):
    node = p.funcs[path[0][1]] if path[0][0] == "funcs" else p.kernel
    for f, k in path[1:]:
        node = getattr(node, f) if k is None else getattr(node, f)[k]
    return node


def _set(p: Program, path, new) -> Program:
    """p with the node at path replaced (new=None removes a statement from its block)."""
    def rebuild(node, rest):
        if not rest:
            return new
        f, k = rest[0]
        if k is None:
            return replace(node, **{f: rebuild(getattr(node, f), rest[1:])})
        seq = list(getattr(node, f))
        if len(rest) == 1 and new is None:
            del seq[k]
        else:
            seq[k] = rebuild(seq[k], rest[1:])
        return replace(node, **{f: tuple(seq)})
    head, rest = path[0], path[1:]
    if head[0] == "funcs":
        funcs = list(p.funcs)
        funcs[head[1]] = rebuild(funcs[head[1]], rest)
        return replace(p, funcs=tuple(funcs))
    return replace(p, kernel=rebuild(p.kernel, rest))


def _walk(node, path):
    yield path, node
    for f, k, child in node.children():
        yield from _walk(child, path + [(f, k)])


def nodes(p: Program):
    for i, f in enumerate(p.funcs):
        yield from _walk(f, [("funcs", i)])
    yield from _walk(p.kernel, [("kernel", None)])


def _size(p: Program) -> int:
    """Nodes, plus the threads that run and the nonzero input elements (so that fewer of
    either is progress too)."""
    threads = 0
    for s in p.kernel.body:
        if isinstance(s, For):
            b = _bounds(p, s.args)
            threads += (b[1] - b[0]) if b else 0
        elif isinstance(s, NdFor) and all(isinstance(e, Const) for e in s.extents):
            threads += s.extents[0].value * s.extents[1].value
    data = sum(int(np.count_nonzero(np.asarray(v))) for v in p.inputs.values())
    return sum(1 for _ in nodes(p)) * 100 + threads * 50 + data


def statement_candidates(p: Program):
    """Remove a statement; replace an if by its branch, a loop by a shorter one."""
    for path, node in sorted(nodes(p), key=lambda x: -_size_of(x[1])):
        if not isinstance(node, Stmt) or len(path) < 2:
            continue
        yield _set(p, path, None)
        if isinstance(node, If):
            parent = _get(p, path[:-1])
            f, k = path[-1]
            for branch in (node.body, node.orelse):
                seq = list(getattr(parent, f))
                seq[k:k + 1] = list(branch)
                yield _set(p, path[:-1], replace(parent, **{f: tuple(seq)}))
            if node.orelse:
                yield _set(p, path, replace(node, orelse=()))
        if isinstance(node, For) and len(path) > 2:
            for n in (1, 2):
                yield _set(p, path, replace(node, args=(Const(n),)))
            parent = _get(p, path[:-1])
            f, k = path[-1]
            seq = list(getattr(parent, f))
            start = node.args[0] if len(node.args) > 1 else Const(0)
            seq[k:k + 1] = [Assign(node.var, start), *node.body]      # one iteration, inlined
            yield _set(p, path[:-1], replace(parent, **{f: tuple(seq)}))


def _size_of(node) -> int:
    return sum(1 for _ in _walk(node, []))


def _bounds(p: Program, args) -> tuple | None:
    """(lo, hi) of a top-level loop over range(*args) with constant bounds (any step)."""
    vals = []
    for a in args:
        if isinstance(a, Const):
            vals.append(a.value)
        elif isinstance(a, Shape):
            vals.append(p.array(a.arr).shape[a.dim])
        else:
            return None
    r = range(*vals)
    return (min(r), max(r) + 1) if len(r) else None


def thread_candidates(p: Program):
    """Run fewer threads of a parallel loop: halves of its range (threads do not depend on each
    other's order, so any window is a valid program)."""
    for k, s in enumerate(p.kernel.body):
        path = [("kernel", None), ("body", k)]
        if isinstance(s, For):
            b = _bounds(p, s.args)
            if b is None or b[1] - b[0] < 2:
                continue
            lo, hi = b
            mid = (lo + hi) // 2
            for a, c in ((lo, mid), (mid, hi), (lo, lo + 1), (hi - 1, hi)):
                yield _set(p, path, replace(s, args=(Const(a), Const(c))))
        elif isinstance(s, NdFor) and all(isinstance(e, Const) for e in s.extents):
            for d in range(2):
                n = s.extents[d].value
                if n > 1:
                    ext = list(s.extents)
                    ext[d] = Const(max(1, n // 2))
                    yield _set(p, path, replace(s, extents=tuple(ext)))


def input_candidates(p: Program):
    """Simpler initial contents: an array of zeros, or zeros in one half of it."""
    for a in p.kernel.arrays:
        v = np.asarray(p.inputs[a.name])
        if v.size == 0 or not v.any():
            continue
        flat = v.reshape(-1)
        nz = np.flatnonzero(flat)
        for part in (nz, nz[: len(nz) // 2], nz[len(nz) // 2:]):
            if len(part) == 0:
                continue
            w = flat.copy()
            w[part] = 0
            yield replace(p, inputs={**p.inputs, a.name: w.reshape(v.shape)})


def _leaves_for(e: Expr):
    yield Const(0)
    yield Const(1)
    yield Const(0.5)
    if isinstance(e, Load) and any(not isinstance(k, Const) for k in e.idx):
        yield replace(e, idx=tuple(Const(0) for _ in e.idx))


def expression_candidates(p: Program):
    """Replace an expression by one of its operands or by a constant."""
    for path, node in sorted(nodes(p), key=lambda x: -_size_of(x[1])):
        if not isinstance(node, Expr) or isinstance(node, (Const, Var, Shape)):
            continue
        kids = [c for _, _, c in node.children() if isinstance(c, Expr)]
        if isinstance(node, Load):
            kids = []
        for c in kids:
            yield _set(p, path, c)
        for leaf in _leaves_for(node):
            yield _set(p, path, leaf)


def _used_names(p: Program) -> tuple[set, set]:
    arrays, funcs = set(), set()
    for _, node in nodes(p):
        if isinstance(node, (Load, Shape)):
            arrays.add(node.arr)
        elif isinstance(node, Store):
            arrays.add(node.arr)
        elif isinstance(node, Call):
            funcs.add(node.func)
        elif isinstance(node, Var):
            arrays.add(node.name)
    return arrays, funcs


def prune(p: Program) -> Program:
    """Drop funcs that nothing calls, arrays and scalars that nothing names."""
    used, calls = _used_names(p)
    funcs = tuple(f for f in p.funcs if f.name in calls)
    keep = tuple(a for a in p.kernel.arrays if a.name in used or a.role == "loss" or a.needs_grad)
    scalars = tuple(s for s in p.kernel.scalars if s.name in used)
    inputs = {k: v for k, v in p.inputs.items() if any(a.name == k for a in keep)}
    return replace(p, funcs=funcs, kernel=replace(p.kernel, arrays=keep, scalars=scalars), inputs=inputs)


def shrink(p: Program, still_fails, time_limit: float = 120.0, max_tries: int = 600, log=None) -> Program:
    """The smallest program found that still fails (`still_fails(program) -> bool`)."""
    t_end = time.monotonic() + time_limit
    tries = 0
    best = p
    pruned = prune(best)
    if pruned != best and still_fails(pruned):
        best = pruned
    progress = True
    while progress and time.monotonic() < t_end and tries < max_tries:
        progress = False
        for gen in (thread_candidates, statement_candidates, expression_candidates, input_candidates):
            for cand in gen(best):
                if cand is None:
                    continue
                if time.monotonic() > t_end or tries >= max_tries:
                    break
                tries += 1
                cand = prune(cand)
                if _size(cand) >= _size(best):
                    continue
                if still_fails(cand):
                    best = cand
                    progress = True
                    if log:
                        log(f"shrink: {sum(1 for _ in nodes(best))} nodes after {tries} tries")
                    break
            if progress:
                break
    return best

