"""Rewrite `break` and `continue` into flags, so that only IF and loops remain.

    while c:                      brk = False
        a()                       while not brk and c:
        if d:                         a()
            break          ->         if d:
        b()                               brk = True
                                      if not brk:
                                          b()

A `for` loop with `continue` only keeps its shape (the flag is reset at each iteration);
one with `break` becomes a `while` over its loop variable, so it still stops early. The
top-level body of a parallel task is a loop body too (`continue` skips the item).
"""
from __future__ import annotations

from ..ir import Block, Node, Op
from ..types import i32, u1
from . import build as B


def has_jump(block: Block, kind: Op) -> bool:
    """True when `block` holds a `kind` jump that belongs to the loop around it
    (jumps inside nested loops belong to those)."""
    for s in block:
        if s.op is kind:
            return True
        if s.op is Op.IF and any(has_jump(b, kind) for b in s.blocks):
            return True
    return False


class JumpRemover:
    """Applies the rewrite to a task body; flags are fresh bool locals from `names`."""

    def __init__(self, names: B.Names):
        self.names = names

    def task_body(self, body: Block, parallel: bool) -> Block:
        if parallel and has_jump(body, Op.CONTINUE):
            cont = self.names.new("ad.cont", u1)
            return (B.assign(cont, B.c(False, u1)), *self._guard(body, None, cont))
        return self.block(body)

    def block(self, block: Block) -> Block:
        return tuple(x for s in block for x in self._stmt(s))

    def _stmt(self, s: Node) -> list[Node]:
        if s.op is Op.IF:
            return [s.with_(blocks=tuple(self.block(b) for b in s.blocks))]
        if s.op is Op.WHILE:
            return self._while(s)
        if s.op is Op.FOR:
            return self._for(s)
        return [s]

    def _flags(self, body: Block):
        brk = self.names.new("ad.brk", u1) if has_jump(body, Op.BREAK) else None
        cont = self.names.new("ad.cont", u1) if has_jump(body, Op.CONTINUE) else None
        return brk, cont

    def _body(self, body: Block, brk, cont) -> list[Node]:
        out = [B.assign(cont, B.c(False, u1))] if cont else []
        return out + self._guard(body, brk, cont)

    def _while(self, s: Node) -> list[Node]:
        body = s.blocks[0]
        brk, cont = self._flags(body)
        if not brk and not cont:
            return [s.with_(blocks=(self.block(body),))]
        new_body = tuple(self._body(body, brk, cont))
        cond = s.args[0] if not brk else B.and_(B.not_(B.var(brk, u1)), s.args[0])
        loop = s.with_(args=(cond,), blocks=(new_body,))
        return ([B.assign(brk, B.c(False, u1), s.loc)] if brk else []) + [loop]

    def _for(self, s: Node) -> list[Node]:
        body = s.blocks[0]
        brk, cont = self._flags(body)
        if not brk:
            new_body = self._body(body, None, cont) if cont else self.block(body)
            return [s.with_(blocks=(tuple(new_body),))]
        # for j in range(b, e, step) with break -> j = b; while not brk and j < e: ...; j += step
        # (the bounds and the step are evaluated once, before the loop, as Python's range does)
        begin, end, step = s.args
        j = s.attr
        end_var = self.names.new("ad.end", i32)
        jv, ev = B.var(j, i32, s.loc), B.var(end_var, i32)
        pre = [B.assign(end_var, end, s.loc)]
        if step.op is Op.CONST:
            more = B.cmp(Op.LT if step.attr > 0 else Op.GT, jv, ev)
        else:  # a run-time step: its sign picks the test
            step_var = self.names.new("ad.step", i32)
            pre.append(B.assign(step_var, step, s.loc))
            step = B.var(step_var, i32)
            more = B.select(B.cmp(Op.GT, step, B.c(0, i32)), B.cmp(Op.LT, jv, ev), B.cmp(Op.GT, jv, ev))
        cond = B.and_(B.not_(B.var(brk, u1)), more)
        step_stmt = B.if_(B.not_(B.var(brk, u1)), [B.assign(j, B.add(jv, step), s.loc)], loc=s.loc)
        new_body = (*self._body(body, brk, cont), step_stmt)
        pre += [B.assign(j, begin, s.loc), B.assign(brk, B.c(False, u1), s.loc)]
        return pre + [Node(Op.WHILE, args=(cond,), blocks=(new_body,), loc=s.loc)]

    def _guard(self, block: Block, brk, cont) -> list[Node]:
        """The statements of a loop body with its own jumps replaced by flag assignments and
        everything after a possible jump guarded by `not (brk or cont)`: each stretch after
        one gets its own guard, one after the other (a flag once set stays set), not nested
        in the one before (n `if ...: continue` lines would nest n deep)."""
        out: list[Node] = []
        stretch = out  # where the statements go: `out`, or the open guard's body
        for k, s in enumerate(block):
            if s.op is Op.BREAK:
                stretch.append(B.assign(brk, B.c(True, u1), s.loc))
                break
            if s.op is Op.CONTINUE:
                stretch.append(B.assign(cont, B.c(True, u1), s.loc))
                break
            if s.op is Op.IF and any(has_jump(b, j) for j in (Op.BREAK, Op.CONTINUE) for b in s.blocks):
                stretch.append(s.with_(blocks=tuple(tuple(self._guard(b, brk, cont)) for b in s.blocks)))
                if stretch is not out:
                    out.append(B.if_(self._not_jumped(brk, cont), stretch, loc=stretch[0].loc))
                stretch = [] if k + 1 < len(block) else out
                continue
            stretch.extend(self._stmt(s))
        if stretch is not out and stretch:
            out.append(B.if_(self._not_jumped(brk, cont), stretch, loc=stretch[0].loc))
        return out

    @staticmethod
    def _not_jumped(brk, cont) -> Node:
        flags = [B.var(f, u1) for f in (brk, cont) if f]
        cond = flags[0]
        for f in flags[1:]:
            cond = Node(Op.OR, u1, (cond, f))
        return B.not_(cond)


__all__ = ["JumpRemover", "has_jump"]
