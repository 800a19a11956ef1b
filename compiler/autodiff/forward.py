"""Forward mode: the Jacobian-vector-product kernel of a kernel, as an IR -> IR transform.

Every float local v gets a tangent local v.dot, every float needs_grad array a `.dual`
array. Each statement computes its tangent from the same derivative table as reverse mode
(dot_y = sum_k dy/dx_k * dot_x_k) just before the primal statement runs, so the kernel
computes primal and tangent values together; control flow is unchanged and nothing needs
saving, so loops of any kind need no adstack.
"""
from __future__ import annotations

from ..ir import Block, KernelIR, Node, Op, Task, map_block
from . import build as B
from .reverse import _postorder, copy_kernel, grad_buffers, prune_buffers
from .rules import partials

_LEAVES = (Op.CONST, Op.PARAM, Op.VAR, Op.LENGTH)


def forward(ir: KernelIR) -> KernelIR:
    """The forward-mode kernel of `ir`: primal results plus tangents in the `.dual` arrays."""
    g = copy_kernel(ir, f"{ir.name}.fwd")
    duals = grad_buffers(g, "dual")
    jvp = _Jvp(g, duals)
    for t in ir.tasks:
        body = jvp.block(t.body)
        zero = [B.assign(d, B.c(0, g.locals[d])) for d in jvp.take_new_tangents()]
        g.tasks.append(Task(t.name, t.kind, (*zero, *body), t.extent, t.index_var, t.loc))
    prune_buffers(g)
    return g


class _Jvp:
    def __init__(self, g: KernelIR, duals: dict[str, str]):
        self.g = g
        self.duals = duals
        self.names = B.Names(g)
        self._new: list[str] = []

    def take_new_tangents(self) -> list[str]:
        out, self._new = self._new, []
        return out

    def tangent_local(self, v: str) -> str:
        name = f"{v}.dot"
        if name not in self.g.locals:
            self.names.fixed(name, self.g.locals[v])
        if name not in self._new:
            self._new.append(name)
        return name

    def block(self, block: Block) -> Block:
        return map_block(block, self._stmt)

    def _stmt(self, s: Node) -> list[Node]:
        """A statement (its blocks already done), preceded by its tangent's."""
        if s.op is Op.ASSIGN and self.g.locals[s.attr].is_float:
            pre, dot = self.tangent(s.args[0])
            return [*pre, B.assign(self.tangent_local(s.attr), dot, s.loc), s]
        if s.op is Op.STORE and s.attr in self.duals and s.args[1].dtype.is_float:
            pre, dot = self.tangent(s.args[1])
            return [*pre, B.store(self.duals[s.attr], s.args[0], dot, s.loc), s]
        if s.op is Op.ATOMIC and s.attr.buf in self.duals and s.attr.op in ("add", "sub") and s.args[1].dtype.is_float:
            pre, dot = self.tangent(s.args[1])
            return [*pre, B.atomic(s.attr.op, self.duals[s.attr.buf], s.args[0], dot, s.loc), s]
        return [s]

    def tangent(self, e: Node) -> tuple[list[Node], Node]:
        """(statements, tangent of e): tangents of subexpressions go into fresh locals."""
        t = e.dtype
        pre: list[Node] = []
        dots: dict[int, Node | None] = {}
        for n in _postorder(e):
            dots[id(n)] = self._dot(n, dots, pre)
        d = dots[id(e)]
        return pre, d if d is not None else B.c(0, t)

    def _dot(self, n: Node, dots: dict, pre: list[Node]) -> Node | None:
        if not n.dtype.is_float or n.op in (Op.CONST, Op.PARAM, Op.LENGTH):
            return None
        if n.op is Op.VAR:
            return B.var(self.tangent_local(n.attr), n.dtype, n.loc)
        if n.op is Op.LOAD:
            dual = self.duals.get(n.attr)
            return None if dual is None else B.load(dual, n.args[0], n.dtype, n.loc)
        total = None
        for x, p in zip(n.args, partials(n.op, n, n.args)):
            dx = dots.get(id(x))
            if p is None or dx is None:
                continue
            term = B.mul(p, dx)
            total = term if total is None else B.add(total, term)
        if total is None or total.op in _LEAVES:
            return total
        name = self.names.new("ad.d", n.dtype)
        pre.append(B.assign(name, total, n.loc))
        return B.var(name, n.dtype, n.loc)


__all__ = ["forward"]
