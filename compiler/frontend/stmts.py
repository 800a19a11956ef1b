"""Statements: assignment, augmented assignment, if, while, break/continue, return, assert."""
from __future__ import annotations

import ast

from .. import semantic as sem
from ..ir import Loc, Node, Op
from ..spec import STATUS_USER_ASSERT
from .exprs import BINOPS
from .scope import CompoundLV, MemLV, NameLV, SelectLV, VarLV, _is_static_call
from .triplets import TripletLV
from .values import Compound

# augmented operators that are atomic on memory (and reductions on kernel-scope variables)
_ATOMIC_AUG = {ast.Add: "add", ast.Sub: "sub", ast.BitAnd: "and", ast.BitOr: "or", ast.BitXor: "xor"}


class StmtMixin:
    def visit_Pass(self, node, loc):
        pass

    def visit_Expr(self, node: ast.Expr, loc: Loc) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # a string statement (comment)
        self._discard = node.value  # a call whose value is unused (atomics then return nothing)
        self.visit(node.value)

    def visit_Assign(self, node: ast.Assign, loc: Loc) -> None:
        # `a = b = v`: v is evaluated once, then assigned to each target left to right (Python's order)
        value = self.visit(node.value)
        static = _is_static_call(node.value)  # `n = gr.static(...)`: a compile-time value, as in Taichi
        for target in node.targets:
            self.assign_to(target, value, loc, static=static)

    def visit_AnnAssign(self, node: ast.AnnAssign, loc: Loc) -> None:
        if node.value is None:
            self.error("a declaration needs a value: `x: gr.f32 = 0.0`", loc)
        if not isinstance(node.target, ast.Name):
            self.error("only plain names can be declared with a type", loc)
        t = self.visit(node.annotation)
        self.assign_to(node.target, self.visit(node.value), loc, declare_type=t)

    def visit_AugAssign(self, node: ast.AugAssign, loc: Loc) -> None:
        op = BINOPS[type(node.op)]  # None: `@=`, a matrix product
        lv = self.lvalue(node.target, loc)
        if isinstance(lv, NameLV):
            name = lv.name
            if name not in self.frame.scope:
                self.error(f"{name!r} is updated with an augmented assignment before it is assigned", loc)
            if name in self.frame.readonly:
                self.error(f"cannot update the kernel argument or loop variable {name!r}; copy it into a "
                           f"new variable first (`{name}2 = {name}`)", loc)
            self.error(f"{name!r} is bound to {self.describe(self.frame.scope[name])} and cannot be updated", loc)
        if isinstance(lv, VarLV) and lv.var.name in self.frame.readonly:
            self.error(f"cannot assign to the loop variable {lv.label!r}", loc)
        rhs = self.visit(node.value)
        atomic = _ATOMIC_AUG.get(type(node.op))
        if atomic and isinstance(lv, (MemLV, CompoundLV, SelectLV, VarLV, TripletLV)) and self._atomic_target(lv):
            lv.atomic(self, atomic, rhs, loc, want_old=False)
            return
        current = lv.load(self, loc)
        lv.store(self, self.binop(op, current, rhs, loc), loc)

    def _atomic_target(self, lv) -> bool:
        """Is an update of this lvalue shared between threads (memory, or a kernel-scope
        variable inside a parallel loop)?"""
        if isinstance(lv, (MemLV, TripletLV)):
            return True
        if isinstance(lv, VarLV):
            return lv.var.kernel_scope and self.in_parallel
        return all(self._atomic_target(x) for x in lv.leaves)

    def visit_If(self, node: ast.If, loc: Loc) -> None:
        cond = self.condition(node.test, loc)
        if sem.is_const(cond):  # compile-time branch
            for s in (node.body if cond else node.orelse):
                self.visit(s)
            return
        with self.block() as then:
            for s in node.body:
                self.visit(s)
        with self.block() as other:
            for s in node.orelse:
                self.visit(s)
        self.emit(Node(Op.IF, args=(cond,), blocks=(tuple(then), tuple(other)), loc=loc))

    def condition(self, test: ast.expr, loc: Loc):
        """The truth of `test`: a Python bool where it is known at compile time (an `if` on
        constants is decided now), else a u1 node."""
        if isinstance(test, ast.BoolOp):
            return self.bool_op(test, loc, truth_only=True)
        v = self.known(self.visit(test))
        if isinstance(v, Compound):
            self.error("the truth value of a vector is ambiguous; use .all() / .any() or compare components", loc)
        return self.known(sem.truth(self.scalar(v, loc), loc)) if not sem.is_const(v) else bool(v)

    def visit_While(self, node: ast.While, loc: Loc) -> None:
        if node.orelse:
            self.error("while/else is not supported in kernels", loc)
        with self.block() as pre:
            cond = self.condition(node.test, loc)
        if cond is False and not pre:
            return
        self.frame.loop_depth += 1
        try:
            with self.block() as body:
                if pre:  # the condition needs statements: evaluate it at the top of each iteration
                    for s in pre:
                        self.emit(s)
                    if cond is not True:
                        stop = Node(Op.IF, args=(sem.unary(Op.NOT, cond, loc),),
                                    blocks=((Node(Op.BREAK, loc=loc),), ()), loc=loc)
                        self.emit(stop)
                for s in node.body:
                    self.visit(s)
        finally:
            self.frame.loop_depth -= 1
        test = sem.as_node(True, loc) if pre or cond is True else cond
        self.emit(Node(Op.WHILE, args=(test,), blocks=(tuple(body),), loc=loc))
        self.after_loop(loc)

    def visit_Break(self, node, loc):
        if self.frame.static_loops and self.frame.static_loops[-1] == self.frame.loop_depth:
            self.static_jump("break", loc)
        if not self.frame.loop_depth:
            self.error("`break` cannot leave a parallel loop: every iteration runs on its own thread. "
                       "Use `continue` to skip an iteration, or loop serially (gr.loop_config(serialize=True))",
                       loc)
        self.emit(Node(Op.BREAK, loc=loc))

    def visit_Continue(self, node, loc):
        if self.frame.static_loops and self.frame.static_loops[-1] == self.frame.loop_depth:
            self.static_jump("continue", loc)
        if not self.frame.loop_depth and not (self.in_parallel and self.frame.kernel_level):
            self.error("`continue` outside a loop", loc)
        self.emit(Node(Op.CONTINUE, loc=loc))

    def visit_Return(self, node: ast.Return, loc: Loc) -> None:
        value = self.visit(node.value) if node.value is not None else None
        if self.frame.ret is not None:
            self.func_return(value, loc)
        elif value is None:
            self.kernel_end(loc)  # `return` / `return None`: the kernel ends here
        else:
            self.kernel_return(value, loc)

    def visit_Assert(self, node: ast.Assert, loc: Loc) -> None:
        if not self.debug:
            return  # like Python -O: asserts are checked only with gr.init(debug=True)
        msg = node.msg.value if isinstance(node.msg, ast.Constant) else None
        cond = self.condition(node.test, loc)
        if cond is True:
            return
        text = f"assertion failed in kernel {self.name!r} at {loc.file}:{loc.line}: `{loc.text.strip()}`"
        if msg:
            text += f": {msg}"
        self.emit(Node(Op.ASSERT, args=(sem.as_node(cond, loc),), attr=(STATUS_USER_ASSERT, text), loc=loc))
