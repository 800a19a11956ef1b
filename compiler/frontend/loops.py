"""Loops: parallel tasks (top-level `for`), serial loops, and compile-time unrolling.

Every iterable is first turned into an iteration space: `range(...)`, `gr.ndrange(...)`,
an array (`for i, j in x`: its index space), `gr.grouped(space)` (one index vector),
or a compile-time sequence (`gr.static(...)`, tuples) that is unrolled.
"""
from __future__ import annotations

import ast

from .. import semantic as sem
from ..ir import CONVERGENT, Loc, Node, Op, Task, walk
from ..spec import STATUS_RANGE_STEP
from ..types import i32
from .scope import _is_static_call
from .values import (
    ArrayValue,
    Compound,
    CompoundVar,
    GroupedValue,
    NdrangeValue,
    RangeValue,
    ScalarVar,
    ShapeValue,
    StaticValue,
    TextureValue,
)


def _count(begin, end, step, loc: Loc):
    """Trip count of range(begin, end, step), never negative."""
    if sem.is_const(step):
        if step > 0:
            n = sem.binary(Op.FLOORDIV, sem.binary(Op.ADD, sem.binary(Op.SUB, end, begin, loc), step - 1, loc),
                           step, loc)
        else:
            n = sem.binary(Op.FLOORDIV, sem.binary(Op.ADD, sem.binary(Op.SUB, begin, end, loc), -step - 1, loc),
                           -step, loc)
    else:
        up = sem.binary(Op.FLOORDIV, sem.binary(Op.SUB, sem.binary(Op.ADD, sem.binary(Op.SUB, end, begin, loc),
                                                                   step, loc), 1, loc), step, loc)
        down = sem.binary(Op.FLOORDIV, sem.binary(Op.SUB, sem.binary(Op.SUB, sem.binary(Op.SUB, begin, end, loc),
                                                                     step, loc), 1, loc),
                          sem.unary(Op.NEG, step, loc), loc)
        # a step of 0 runs nothing (check_step reports it)
        n = sem.select(sem.binary(Op.GT, step, 0, loc), up,
                       sem.select(sem.binary(Op.LT, step, 0, loc), down, 0, loc), loc)
    return sem.binary(Op.MAX, n, 0, loc)


class LoopMixin:
    # -- iteration spaces --------------------------------------------------------------------
    def iteration_space(self, it: ast.expr, loc: Loc):
        v = self.visit(it)
        if type(v).__name__ == "StructArrayValue":
            v = v.first()  # a struct field iterates over its members' common index space
        if isinstance(v, ArrayValue):
            return NdrangeValue(v.index_space(), v)
        if isinstance(v, TextureValue):  # `for i, j in tex`: every texel (Taichi's struct-for over a rw_texture)
            return NdrangeValue(tuple((0, n) for n in v.shape))
        if hasattr(v, "__gfxrt_iter__") and not isinstance(v, (Node, int, float)):  # an SNode: its cells
            return NdrangeValue(tuple((0, n) for n in v.__gfxrt_iter__[1]), v)
        if isinstance(v, ShapeValue):
            self.error("iterate over the array itself (`for i, j in x`) or gr.ndrange(*x.shape)", loc)
        if isinstance(v, (RangeValue, NdrangeValue, GroupedValue, StaticValue, tuple)):
            return v
        if isinstance(v, Compound):
            return tuple(v.items) if len(v.shape) == 1 else tuple(
                Compound((v.shape[1],), v.items[r * v.shape[1]:(r + 1) * v.shape[1]]) for r in range(v.shape[0]))
        if isinstance(v, range):
            return tuple(v)
        self.error(f"cannot iterate over {self.describe(v)} in a kernel (use range, gr.ndrange, an array, "
                   "gr.grouped or gr.static)", loc)

    def check_step(self, space, loc: Loc) -> None:
        """A range() whose step is known only at run time: a step of 0 (Python's ValueError,
        `range() arg 3 must not be zero`) skips the loop and sets the kernel's device status
        (compiler/spec.py), which the runtime raises at the next sync or readback. Emitted
        where the loop starts: before a parallel task, as kernel-scope serial code."""
        inner = space.space if isinstance(space, GroupedValue) else space
        if not isinstance(inner, RangeValue) or sem.is_const(inner.step):
            return
        ok = sem.as_node(sem.binary(Op.NE, inner.step, 0, loc), loc)
        msg = (f"range() arg 3 must not be zero: in kernel {self.name!r} the loop at {loc.file}:{loc.line} "
               f"(`{loc.text.strip()}`) ran with a step of 0 and was skipped (Python raises ValueError here); "
               "pass a non-zero step")
        self.emit(Node(Op.ASSERT, args=(ok,), attr=(STATUS_RANGE_STEP, msg), loc=loc))

    def dims(self, space, loc: Loc) -> list[tuple]:
        """(begin, count, step) per dimension of a range or ndrange space."""
        if isinstance(space, RangeValue):
            return [(space.begin, _count(space.begin, space.end, space.step, loc), space.step)]
        return [(b, _count(b, e, 1, loc), 1) for b, e in space.dims]

    def index_values(self, t, dims, loc: Loc) -> list:
        """The per-dimension loop values of flat iteration t (row-major)."""
        out, stride = [], 1
        strides = []
        for _, count, _ in reversed(dims):
            strides.append(stride)
            stride = sem.binary(Op.MUL, stride, count, loc)
        strides.reverse()
        for k, (begin, count, step) in enumerate(dims):
            v = t if strides[k] == 1 else sem.binary(Op.FLOORDIV, t, strides[k], loc)
            if k > 0:
                v = sem.binary(Op.MOD, v, count, loc)
            out.append(sem.binary(Op.ADD, begin, sem.binary(Op.MUL, v, step, loc), loc))
        return out, stride

    def bind_loop_targets(self, target: ast.expr, space, values: list, loc: Loc) -> list[ScalarVar]:
        """Declare the loop variables (read-only), assign them, return them in order."""
        grouped = isinstance(space, GroupedValue)
        if grouped:
            if not isinstance(target, ast.Name):
                self.error("gr.grouped(...) gives one index vector: use a single name (`for I in gr.grouped(x)`)",
                           loc)
        elif isinstance(target, ast.Name):
            if len(values) != 1:
                self.error(f"this loop has {len(values)} dimensions but one loop variable: write "
                           f"`for {', '.join('ijkl'[:len(values)])} in ...` or use gr.grouped(...)", loc)
        elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            if len(target.elts) != len(values):
                self.error(f"this loop has {len(values)} dimension(s) but {len(target.elts)} loop variables", loc)
        else:
            self.error("a loop target must be a name or a tuple of names", loc)
        names = [target.id] * len(values) if grouped else \
            ([target.id] if isinstance(target, ast.Name) else [e.id for e in target.elts])
        vars_ = []
        for k, (name, v) in enumerate(zip(names, values)):
            base = f"{name}.{k}" if grouped else name
            var = ScalarVar(self.new_local(base, i32), i32)
            self.emit(Node(Op.ASSIGN, attr=var.name, args=(sem.as_node(v, loc, i32),), loc=loc))
            vars_.append(var)
        if grouped:
            self.frame.scope[target.id] = CompoundVar((len(vars_),), tuple(vars_))
        else:
            for name, var in zip(names, vars_):
                self.frame.scope[name] = var
        self.frame.readonly.update(set(names))
        return vars_

    # -- kernel level ---------------------------------------------------------------------------
    def kernel_for(self, node: ast.For, loc: Loc) -> None:
        if node.orelse:
            self.error("for/else is not supported in kernels", loc)
        config, self.loop_config = self.loop_config, {}
        space = self.iteration_space(node.iter, loc)
        if isinstance(space, (StaticValue, tuple)):
            self.unroll(node, space, loc, kernel_level=True)
        elif config.get("serialize") or (not config and _one_iteration(space) and not _uses_simt(node)):
            # a top-level loop of one iteration runs on one thread anyway: as a serial loop,
            # it may also update kernel-scope variables (Taichi's `for _ in range(1):` idiom)
            self.serial_for(node, space, loc)
        else:
            self.parallel_task(node, space, loc, config)

    def kernel_if(self, node: ast.If, loc: Loc) -> None:
        if not _is_static_call(node.test):
            self.visit_If(node, loc)  # a run-time branch: serial code (loops inside run serially)
            return
        cond = self.visit(node.test)
        self.kernel_block(node.body if cond else node.orelse)
        if self._returned:
            self._returned_statically = True  # code after this `if` is dead in this specialization

    def parallel_task(self, node: ast.For, space, loc: Loc, config: dict) -> None:
        inner = space.space if isinstance(space, GroupedValue) else space
        if isinstance(inner, ArrayValue):
            inner = NdrangeValue(tuple((0, n) for n in inner.shape), inner)
        self.check_step(space, loc)  # (kernel-scope serial code, before the task)
        dims = self.dims(inner, loc)
        wg = config.get("block_dim")
        fr = self.frame
        saved_scope, saved_readonly = dict(fr.scope), set(fr.readonly)
        private = [name for name, v in fr.scope.items() if _kernel_scope_var(v) and _written_first(node.body, name)]
        for name in private:  # each iteration assigns it before reading it: a thread-private copy in the loop
            del fr.scope[name]
        with self.task_context(parallel=True):
            index = self.new_local("t", i32)
            with self.block() as body:
                values, extent = self.index_values(Node(Op.VAR, i32, attr=index, loc=loc), dims, loc)
                loop_vars = self.bind_loop_targets(node.target, space, values, loc)
                self.struct_for_body(inner, loop_vars, node.body, loc)
            convergent = any(n.op in CONVERGENT for n in walk(body))
            self.ir.tasks.append(Task(f"task{len(self.ir.tasks)}", "range", tuple(body),
                                      extent=sem.as_node(extent, loc, i32), index_var=index, loc=loc,
                                      loop_vars=tuple(v.name for v in loop_vars), workgroup_size=wg,
                                      convergent=convergent))
        for name in set(fr.scope) - set(saved_scope):
            self.vanished.setdefault(name, loc)
        fr.scope, fr.readonly = saved_scope, saved_readonly
        for name in private:  # the kernel-scope variable holds no thread's value now: reading it is an error
            self.loop_private[name] = (loc, saved_scope[name])

    def struct_for_body(self, space, loop_vars: list, body: list, loc: Loc) -> None:
        """The loop body; over a field under sparse SNodes (a struct-for), only where the
        element's cells are active (frontend/sparse.py)."""
        guard = self.sparse_guard(getattr(space, "source", None), [Node(Op.VAR, i32, attr=v.name, loc=loc)
                                                                    for v in loop_vars], loc)
        if guard is None:
            for s in body:
                self.visit(s)
            return
        with self.block() as then:
            for s in body:
                self.visit(s)
        self.emit(Node(Op.IF, args=(sem.as_node(guard, loc),), blocks=(tuple(then), ()), loc=loc))

    # -- serial loops ----------------------------------------------------------------------------
    def visit_For(self, node: ast.For, loc: Loc) -> None:
        if node.orelse:
            self.error("for/else is not supported in kernels", loc)
        space = self.iteration_space(node.iter, loc)
        if isinstance(space, (StaticValue, tuple)):
            self.unroll(node, space, loc)
        else:
            self.serial_for(node, space, loc)

    def serial_for(self, node: ast.For, space, loc: Loc) -> None:
        inner = space.space if isinstance(space, GroupedValue) else space
        self.check_step(space, loc)
        fr = self.frame
        readonly_before = set(fr.readonly)
        fr.loop_depth += 1
        try:
            if isinstance(inner, RangeValue) and isinstance(node.target, ast.Name) and not isinstance(space,
                                                                                                   GroupedValue):
                name = node.target.id
                prev = fr.scope.get(name)
                args = tuple(sem.as_node(v, loc, i32) for v in (inner.begin, inner.end, inner.step))
                if _read_after(fr.src, node, name):
                    # Python semantics after the loop: the last value taken (also after a break),
                    # or the old one if no iteration ran. The loop runs on a hidden counter.
                    keep = isinstance(prev, ScalarVar) and prev.dtype == i32 and not prev.kernel_scope
                    var = prev if keep else ScalarVar(self.new_local(name, i32), i32)
                    counter = self.new_local(f"{name}.it", i32)
                    if not keep and isinstance(prev, ScalarVar) and prev.dtype == i32:
                        # a kernel-scope variable is not the loop's: its copy starts at its value
                        self.emit(Node(Op.ASSIGN, attr=var.name, args=(Node(Op.VAR, i32, attr=prev.name, loc=loc),),
                                       loc=loc))
                    elif not keep and (isinstance(prev, Node) and prev.dtype == i32
                                       or isinstance(prev, int) and not isinstance(prev, bool)):
                        self.emit(Node(Op.ASSIGN, attr=var.name, args=(sem.as_node(prev, loc, i32),), loc=loc))
                else:
                    var = ScalarVar(self.new_local(name, i32), i32)
                    counter = var.name
                fr.scope[name] = var
                fr.readonly.add(name)
                with self.block() as body:
                    if counter != var.name:
                        self.emit(Node(Op.ASSIGN, attr=var.name, args=(Node(Op.VAR, i32, attr=counter, loc=loc),),
                                       loc=loc))
                    for s in node.body:
                        self.visit(s)
                loop = Node(Op.FOR, attr=counter, args=args, blocks=(tuple(body),), loc=loc)
            else:  # several dimensions: one flat loop, indices computed from the flat counter
                dims = self.dims(inner, loc)
                flat = self.new_local("flat", i32)
                with self.block() as body:
                    values, extent = self.index_values(Node(Op.VAR, i32, attr=flat, loc=loc), dims, loc)
                    loop_vars = self.bind_loop_targets(node.target, space, values, loc)
                    self.struct_for_body(inner, loop_vars, node.body, loc)
                loop = Node(Op.FOR, attr=flat, args=(sem.as_node(0, loc, i32), sem.as_node(extent, loc, i32),
                                                     sem.as_node(1, loc, i32)), blocks=(tuple(body),), loc=loc)
        finally:
            fr.loop_depth -= 1
            fr.readonly = readonly_before
        self.emit(loop)
        self.after_loop(loc)

    @staticmethod
    def _loop_target_names(target: ast.expr) -> set[str]:  # noqa: D102
        return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}

    def unroll(self, node: ast.For, space, loc: Loc, kernel_level: bool = False) -> None:
        """A compile-time loop: the body is lowered once per element."""
        seq = space.value if isinstance(space, StaticValue) else space
        if isinstance(seq, (RangeValue, NdrangeValue, GroupedValue)):
            seq = self.static_sequence(seq, loc)
        try:
            items = list(seq)
        except TypeError:
            self.error(f"gr.static loops need a compile-time sequence, not {self.describe(seq)}", loc)
        fr = self.frame
        names = self._loop_target_names(node.target)
        fr.static_loops.append(fr.loop_depth)
        self._static_blocks = [*getattr(self, "_static_blocks", []), len(self._blocks)]
        try:
            for item in items:
                fr.readonly.difference_update(names)
                if isinstance(node.target, ast.Name):
                    fr.scope[node.target.id] = item
                else:
                    elts = node.target.elts if isinstance(node.target, ast.Tuple) else None
                    if elts is None or not all(isinstance(e, ast.Name) for e in elts):
                        self.error("a gr.static loop target must be a name or a tuple of names", loc)
                    for e, v in zip(elts, self.unpack(item, len(elts), loc)):
                        fr.scope[e.id] = v
                fr.readonly.update(names)
                try:
                    if kernel_level:
                        self.kernel_block(node.body)
                    else:
                        for s in node.body:
                            self.visit(s)
                except StaticJump as jump:  # a compile-time `break` / `continue` (Taichi's rule)
                    if jump.kind == "break":
                        break
        finally:
            self._static_blocks = self._static_blocks[:-1]
            fr.static_loops.pop()
            fr.readonly.difference_update(names)

    def static_jump(self, kind: str, loc: Loc) -> None:
        """`break` / `continue` directly in a gr.static loop: decided at compile time, so it may
        sit under compile-time `if`s only (as in Taichi)."""
        if len(self._blocks) != self._static_blocks[-1]:
            self.error(f"`{kind}` of a gr.static loop (unrolled at compile time) cannot depend on a run-time "
                       f"condition; make the condition compile-time (`if gr.static(...)`), or use a run-time loop "
                       "(`for j in range(...)`)", loc)
        raise StaticJump(kind)

    def static_sequence(self, space, loc: Loc) -> list:
        """The elements of a range / ndrange with compile-time bounds."""
        inner = space.space if isinstance(space, GroupedValue) else space
        if isinstance(inner, RangeValue):
            parts = tuple(self.known(p) for p in (inner.begin, inner.end, inner.step))
            if not all(isinstance(p, int) for p in parts):
                self.error("gr.static(range(...)) needs compile-time bounds", loc)
            return list(range(*parts))
        ranges = []
        for b, e in inner.dims:
            b, e = self.known(b), self.known(e)
            if not (isinstance(b, int) and isinstance(e, int)):
                self.error("gr.static(gr.ndrange(...)) needs compile-time bounds", loc)
            ranges.append(range(b, e))
        import itertools
        out = list(itertools.product(*ranges))
        if isinstance(space, GroupedValue):
            return [Compound((len(t),), tuple(t)) for t in out]
        return [t[0] for t in out] if len(ranges) == 1 else out


class StaticJump(BaseException):  # noqa: N818 - control flow, not an error: passes the visit() wrapper
    """Unwinds the rest of an unrolled iteration at a compile-time break / continue."""

    def __init__(self, kind: str):
        self.kind = kind


def _kernel_scope_var(v) -> bool:
    return isinstance(v, ScalarVar) and v.kernel_scope or isinstance(v, CompoundVar) and v.vars[0].kernel_scope


def _written_first(body: list[ast.stmt], name: str) -> bool:
    """The first statement of a loop body that mentions `name` is a plain assignment to it
    (`r = ...`, `r, s = ...`) that does not read it: every iteration writes it before reading it."""
    for stmt in body:
        mentions = [n for n in ast.walk(stmt) if isinstance(n, ast.Name) and n.id == name]
        if not mentions:
            continue
        if not isinstance(stmt, ast.Assign) or any(not isinstance(n.ctx, ast.Store) for n in mentions):
            return False
        return any(isinstance(t, ast.Name) and t.id == name or isinstance(t, (ast.Tuple, ast.List)) and any(
            isinstance(e, ast.Name) and e.id == name for e in t.elts) for t in stmt.targets)
    return False


def _read_after(src, loop: ast.For, name: str) -> bool:
    """The loop variable `name` is read somewhere after `loop` in the function's source
    (`src`: its FunctionSource, which finds the last read of each name once, not per loop)."""
    end = (loop.end_lineno or loop.lineno, loop.end_col_offset or 0)
    return src.last_read(name) > end


def _one_iteration(space) -> bool:
    """A range with compile-time bounds and exactly one iteration."""
    if not isinstance(space, RangeValue):
        return False
    b, e, st = space.begin, space.end, space.step
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (b, e, st)) or st == 0:
        return False
    return len(range(b, e, st)) == 1


def _uses_simt(node: ast.AST) -> bool:
    """Does the loop body use block / subgroup operations (which need a real parallel launch)?"""
    return any(isinstance(n, ast.Attribute) and n.attr == "simt" for n in ast.walk(node))

