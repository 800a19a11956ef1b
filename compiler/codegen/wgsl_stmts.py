"""WGSL for IR statements: one emitter per statement op, and memory access through each
buffer's *view* (plain, native atomic, or u32 words with bitcasts and compare-and-swap)."""
from __future__ import annotations

from itertools import count

from ..errors import CompileError
from ..ir import AtomicAttr, Node, Op, walk
from ..types import DType, f16, f32, i32, u1, u32
from .wgsl_exprs import combine

_ATOMIC_FN = {"add": "atomicAdd", "sub": "atomicSub", "min": "atomicMin", "max": "atomicMax",
              "and": "atomicAnd", "or": "atomicOr", "xor": "atomicXor"}


class View:
    """How a buffer is declared and accessed.

    kind: 'plain' (array<T>), 'atomic' (array<atomic<T>>, native ops), 'words'
    (array<u32>, any 4-byte value bitcast), 'atomic_words' (array<atomic<u32>>: bitcasts,
    native ops where the bits allow, compare-and-swap otherwise).
    """

    def __init__(self, kind: str, dtype: DType, word: str = "u32"):
        self.kind, self.dtype, self.word = kind, dtype, word  # word: u64 for f64 atomics

    @property
    def atomic(self) -> bool:
        return self.kind in ("atomic", "atomic_words")

    @property
    def words(self) -> bool:
        return self.kind in ("words", "atomic_words")

    def elem_type(self) -> str:
        t = self.word if self.words else self.dtype.wgsl
        return f"atomic<{t}>" if self.atomic else t

    def decode(self, w: str, t: DType) -> str:
        """A stored element as a value of dtype t."""
        if not self.words:
            return w
        if self.word == "u64":
            return w if t.wgsl == "u64" else f"bitcast<{t.wgsl}>({w})"
        _no_wide_words(t)
        if t == u32:
            return w
        if t == u1:
            return f"({w} != 0u)"
        if t == f16:
            return f"f16(bitcast<f32>({w}))"
        return f"bitcast<{t.wgsl}>({w})"

    def encode(self, v: str, t: DType) -> str:
        if not self.words:
            return v
        if self.word == "u64":
            return v if t.wgsl == "u64" else f"bitcast<u64>({v})"
        _no_wide_words(t)
        if t == u32:
            return v
        if t == u1:
            return f"select(0u, 1u, {v})"
        if t == f16:
            return f"bitcast<u32>(f32({v}))"
        return f"bitcast<u32>({v})"

    def native(self, op: str, t: DType) -> bool:
        """Can `op` on a value of dtype t be one native atomic on this view?"""
        if op == "mul":  # WGSL has no atomicMul: always compare-and-swap
            return False
        if self.kind == "atomic":
            return not t.is_float or op in ("add", "sub")
        return t == u32 or (t == i32 and op in ("add", "sub", "and", "or", "xor"))

    def load(self, ref: str, t: DType) -> str:
        return self.decode(f"atomicLoad(&{ref})" if self.atomic else ref, t)

    def store(self, ref: str, v: str, t: DType) -> str:
        v = self.encode(v, t)
        return f"atomicStore(&{ref}, {v});" if self.atomic else f"{ref} = {v};"


def _no_wide_words(t: DType) -> None:
    if t.wide:
        raise CompileError(f"{t} values do not fit the 4-byte words that hold kernel-scope variables shared "
                           f"by several loops and their reductions (`s += v` in a parallel loop); keep the {t} "
                           f"value in a 0-d field or an array element (`total[None] += v`), or use 32 bits")


def emit_atomic(view: View, ref: str, op: str, value: str, t: DType, dest: str | None, ind: str,
                out: list[str], comment: str = "") -> None:
    """`dest = old; ref = old op value`, atomically."""
    assign = f"{dest} = " if dest else ""
    if view.native(op, t):
        call = f"{_ATOMIC_FN[op]}(&{ref}, {view.encode(value, t)})"
        out.append(f"{ind}{assign}{view.decode(call, t) if dest else call};{comment}")
        return
    # compare-and-swap on the bits
    out.append(f"{ind}{{{comment}")
    out.append(f"{ind}  let v_ = {value};")
    out.append(f"{ind}  var old_ = atomicLoad(&{ref});")
    out.append(f"{ind}  loop {{")
    new = view.encode(combine(op, view.decode("old_", t), "v_"), t)
    out.append(f"{ind}    let r_ = atomicCompareExchangeWeak(&{ref}, old_, {new});")
    out.append(f"{ind}    if (r_.exchanged) {{ break; }}")
    out.append(f"{ind}    old_ = r_.old_value;")
    out.append(f"{ind}  }}")
    if dest:
        out.append(f"{ind}  {dest} = {view.decode('old_', t)};")
    out.append(f"{ind}}}")


def choose_view(b, ops: set[tuple[str, DType]], target) -> View:
    """The view of a buffer given the atomic (op, value dtype) pairs applied to it."""
    if b.words:
        return View("atomic_words" if ops else "words", b.dtype)
    if b.dtype.narrow and b.kind not in ("shared", "private", "private_shared"):
        from .wgsl_types import PackedView
        return PackedView(b.dtype, b.write)
    if b.dtype.wide and ops:  # 64-bit atomics: wgpu-native's shader-int64-atomic-all-ops (checked in _atomic)
        if not target.has("shader-int64-atomic-all-ops") or b.kind in ("shared", "private", "private_shared"):
            return View("plain", b.dtype)
        return View("atomic", b.dtype) if b.dtype.is_int else View("atomic_words", b.dtype, "u64")
    if not ops:
        return View("plain", b.dtype)
    if b.dtype == f32:
        float_native = target.has("shader-float32-atomic") and b.kind != "shared"
        if float_native and all(op in ("add", "sub") for op, _ in ops):
            return View("atomic", f32)
        return View("atomic_words", f32)
    return View("atomic", b.dtype)


# -- statement emitters ------------------------------------------------------------------------
def _assign(e, n: Node, ind: str, out: list[str]) -> None:
    out.append(f"{ind}{e.local_names[n.attr]} = {e.expr(n.args[0])};{e.comment(n)}")


def _store(e, n: Node, ind: str, out: list[str]) -> None:
    view = e.views[n.attr]
    if view.kind == "packed":
        view.store_packed(e.buf_names[n.attr], e.expr(n.args[0]), e.expr(n.args[1]), ind, out, e.comment(n))
        return
    ref = e.ref(n.attr, n.args[0])
    out.append(f"{ind}{e.views[n.attr].store(ref, e.expr(n.args[1]), n.args[1].dtype)}{e.comment(n)}")


def _atomic(e, n: Node, ind: str, out: list[str]) -> None:
    a: AtomicAttr = n.attr
    t = n.args[1].dtype
    bt = e.buffers[a.buf].dtype
    if e.views[a.buf].kind == "packed":  # i8 / i16 / u8 / u16: compare-and-swap on the word
        dest = e.local_names[a.dest] if a.dest else None
        e.views[a.buf].atomic_packed(e.buf_names[a.buf], e.expr(n.args[0]), a.op, e.expr(n.args[1]), dest, ind, out,
                                     e.comment(n))
        return
    if bt.narrow and not e.buffers[a.buf].words:
        raise CompileError(f"atomic updates (`+=` on an element other threads may also update, gr.atomic_*) of "
                           f"{bt} shared arrays are not supported; use an i32 / u32 array", n.loc, e.ir.name)
    if bt.wide and not e.views[a.buf].atomic:
        raise CompileError(f"atomic updates (`+=` on an element other threads may also update, gr.atomic_*) of "
                           f"{bt} arrays need the adapter feature 'shader-int64-atomic-all-ops' (WebGPU itself has "
                           "32-bit atomics only)" + (", which this device lacks" if e.buffers[a.buf].kind != "shared"
                                                     else "; in a SharedArray they are not supported") +
                           "; use an f32 / i32 array, or write per-thread results and sum them serially",
                           n.loc, e.ir.name)
    if n.args[1].dtype.wide and e.buffers[a.buf].words:
        _no_wide_words(n.args[1].dtype)
    if e.buffers[a.buf].dtype == f16 and not e.buffers[a.buf].words:
        raise CompileError("atomic updates (`+=` on an element other threads may also update, gr.atomic_*) "
                           "of f16 arrays are not supported; use an f32 array", n.loc, e.ir.name)
    ref = e.ref(a.buf, n.args[0])
    dest = e.local_names[a.dest] if a.dest else None
    emit_atomic(e.views[a.buf], ref, a.op, e.expr(n.args[1]), t, dest, ind, out, e.comment(n))


def _if(e, n: Node, ind: str, out: list[str]) -> None:
    out.append(f"{ind}if ({e.expr(n.args[0])}) {{{e.comment(n)}")
    e.block(n.blocks[0], ind + "  ", out)
    if n.blocks[1]:
        out.append(f"{ind}}} else {{")
        e.block(n.blocks[1], ind + "  ", out)
    out.append(f"{ind}}}")


# -- loops on an adapter with a loop cap (Target.loop_cap) ----------------------------------------
# llvmpipe ends *every* loop of an invocation once all of them together have made 65535 passes
# (one counter per invocation, decremented at each back edge, never reset;
# bench/probes/loop_cap.py): splitting a loop into chunks cannot help, since the chunk loop's
# passes count too. What helps is more iterations per pass: each innermost loop is emitted with
# its body copied up to `loop_copies` times per pass (each copy behind the loop's own exit test;
# a `break` leaves the loop as written, a `continue` skips the rest of its copy through a flag),
# so the cap is reached only after ~cap * copies iterations; wgsl.py reports a launch that
# reached it instead of returning wrong results. The copies cost on lavapipe: LLVM compile time
# (about linear in the WGSL's size), so a task's innermost loops share COPY_NODES IR nodes of
# copied bodies; and run time, since llvmpipe runs every copy of a pass even when all lanes
# have left the loop (masked, no branch): N iterations with c copies cost ~c * ceil((N+1)/c)
# bodies (sin loop, 2^16 threads, 32 copies: 4 iterations 0.7 -> 7.0 ms, 64: 5.0 -> 11.4 ms,
# 4096: 4.7 -> 4.9 ms). Hence few copies where the bounds come from memory (per-element
# counts, short in practice) and exactly T for a constant trip count T <= FULL_COPIES.
# On GPUs (loop_cap 0) loops are emitted as written.
COPY_NODES = 2560   # IR nodes of the copied loop bodies of one task together
FULL_COPIES = 32    # a loop over constant bounds of at most this many iterations: one pass
MEMORY_COPIES = 4   # a loop whose bounds or test depend on memory (loop_copies)


def _own(block, op: Op) -> bool:
    """`block` holds an `op` (BREAK / CONTINUE) of the loop it is the body of, not of a nested loop."""
    for x in block:
        if x.op is op or (x.op is Op.IF and any(_own(b, op) for b in x.blocks)):
            return True
    return False


def _trip_count(n: Node) -> int | None:
    """The trip count of a `for` over constant bounds, else None."""
    if n.op is Op.FOR and all(a.op is Op.CONST for a in n.args) and n.args[2].attr:
        return len(range(*(a.attr for a in n.args)))
    return None


def _memory_dependent(stmts) -> set[str]:
    """Locals whose value may depend on memory (a load, an atomic's old value, a pop), also
    through control: assigned under an `if` or in a loop whose test does.

    One pass builds the dependencies (a local on the locals its assignments read and on the
    context they run in; a context on its parent and the locals its test reads), then the
    taint spreads from memory along them: linear, where re-walking the statements until
    nothing changed took one walk per link of the longest chain (`v0 = v1; v1 = v2; ...`)."""
    feeds: dict = {}     # a local, or a context (an int), -> what depends on it
    seeds: list = []     # what depends on memory directly

    def reads(nodes) -> tuple[bool, set[str]]:
        mem, names = False, set()
        for x in walk(nodes):
            if x.op in (Op.LOAD, Op.SUBGROUP):
                mem = True
            elif x.op is Op.VAR:
                names.add(x.attr)
        return mem, names

    def depends(target, ctx, nodes) -> None:
        mem, names = reads(nodes)
        if mem:
            seeds.append(target)
        for v in names:
            feeds.setdefault(v, []).append(target)
        if ctx is not None:
            feeds.setdefault(ctx, []).append(target)

    contexts = count()  # a branch's or loop's context: an int (locals are str)

    def context(parent, nodes) -> int:
        ctx = next(contexts)
        depends(ctx, parent, nodes)
        return ctx

    def visit(block, ctx) -> None:
        for x in block:
            if x.op is Op.ASSIGN:
                depends(x.attr, ctx, x.args)
            elif x.op is Op.POP or (x.op is Op.ATOMIC and x.attr.dest):
                seeds.append(x.attr if x.op is Op.POP else x.attr.dest)
            elif x.op is Op.IF:
                inner = context(ctx, x.args)
                for b in x.blocks:
                    visit(b, inner)
            elif x.op in (Op.FOR, Op.WHILE):
                inner = context(ctx, x.args)
                if x.op is Op.FOR:
                    feeds.setdefault(inner, []).append(x.attr)
                visit(x.blocks[0], inner)

    visit(stmts, None)
    reached, todo = set(seeds), list(seeds)
    while todo:
        for w in feeds.get(todo.pop(), ()):
            if w not in reached:
                reached.add(w)
                todo.append(w)
    return {v for v in reached if isinstance(v, str)}


# what one node of a copied body costs the driver's compiler, in plain nodes: gfxrt's own f32
# transcendentals (wgsl_exprs.F32_MATH) are functions of 15-40 operations that the driver
# inlines into every copy (lavapipe, bench compile kernel: 32 copies of a body with sin cost
# 189 ms cold / 47 ms warm against 40 / 8 uncopied)
_HEAVY = frozenset({Op.SIN, Op.COS, Op.TAN, Op.ASIN, Op.ACOS, Op.ATAN, Op.ATAN2, Op.TANH, Op.EXP, Op.LOG, Op.POW})
HEAVY_NODES = 32


def _cost(block) -> int:
    return sum(HEAVY_NODES if x.op in _HEAVY else 1 for x in walk(block))


def loop_copies(target, stmts) -> dict[int, int]:
    """id(loop) -> copies of its body per pass, for the innermost loops of a task's statements
    (every other loop: 1, emitted as written): the trip count T of a loop over constant bounds
    where T <= FULL_COPIES (one pass, no wasted copies); MEMORY_COPIES for a loop whose bounds
    or test depend on memory (`range(cnt[i])`: per-element counts, short in practice, and a
    short loop pays for every copy); Target.loop_copies for the rest. Within one budget for
    the task: the copied bodies total at most COPY_NODES nodes."""
    if not target.loop_cap:
        return {}
    inner = [x for x in walk(stmts) if x.op in (Op.FOR, Op.WHILE)
             and not any(y.op in (Op.FOR, Op.WHILE) for y in walk(x.blocks[0]))]
    if not inner:
        return {}
    budget = max(1, COPY_NODES // max(sum(_cost(x.blocks[0]) for x in inner), 1))
    tainted = _memory_dependent(stmts)
    copies = {}
    for x in inner:
        t = _trip_count(x)
        if t is not None and t <= FULL_COPIES:
            want = t
        elif any(y.op in (Op.LOAD, Op.SUBGROUP) or (y.op is Op.VAR and y.attr in tainted) for y in walk(x.args)):
            want = min(MEMORY_COPIES, target.loop_copies)
        else:
            want = target.loop_copies
        copies[id(x)] = max(1, min(budget, want))
    return copies


def _unrolled(e, n: Node, cond: str, step: str | None, copies: int, ind: str, out: list[str]) -> None:
    """`loop { if (!cond) {break;} body; step; ... copies times }`. A `break` of the body
    leaves the loop as written; a `continue` sets `cn_` and skips the rest of its copy."""
    body = n.blocks[0]
    cont = _own(body, Op.CONTINUE)
    out.append(f"{ind}loop {{  // {copies} iterations per pass: the adapter caps loop passes{e.comment(n)}")
    if cont:
        out.append(f"{ind}  var cn_ = false;")
    one = [f"{ind}  if (!({cond})) {{ break; }}"]
    if cont:
        one.append(f"{ind}  cn_ = false;")
        _guarded(e, body, ind + "  ", one)
    else:
        e.block(body, ind + "  ", one)
    if step:
        one.append(f"{ind}  {step}")
    out += one * copies  # emitted once: the emitters name nothing per copy (the body is innermost)
    out.append(f"{ind}}}")


def _guarded(e, block, ind: str, out: list[str]) -> None:
    """`block` with its own `continue`s as `cn_ = true` and what follows a possible continue
    behind `if (!cn_)` (a nested loop has its own `cn_`). Each stretch after a possible
    continue gets its own guard, one after the other: nested guards (one per `if ...: continue`
    of a long body) would pass WGSL's limit of 127 nested braces."""
    guarded = False
    for k, s in enumerate(block):
        if s.op is Op.CONTINUE:
            out.append(f"{ind}cn_ = true;{e.comment(s)}")
            break
        if s.op is Op.IF and _own((s,), Op.CONTINUE):
            out.append(f"{ind}if ({e.expr(s.args[0])}) {{{e.comment(s)}")
            _guarded(e, s.blocks[0], ind + "  ", out)
            if s.blocks[1]:
                out.append(f"{ind}}} else {{")
                _guarded(e, s.blocks[1], ind + "  ", out)
            out.append(f"{ind}}}")
            if guarded:
                ind = ind[:-2]
                out.append(f"{ind}}}")
            guarded = k + 1 < len(block)
            if guarded:
                out.append(f"{ind}if (!cn_) {{")
                ind += "  "
            continue
        e.block((s,), ind, out)
    if guarded:
        out.append(f"{ind[:-2]}}}")


def _while(e, n: Node, ind: str, out: list[str]) -> None:
    copies = e.loop_copies.get(id(n), 1)
    if copies > 1:
        _unrolled(e, n, e.expr(n.args[0]), None, copies, ind, out)
        return
    out.append(f"{ind}while ({e.expr(n.args[0])}) {{{e.comment(n)}")
    e.block(n.blocks[0], ind + "  ", out)
    out.append(f"{ind}}}")


def _for(e, n: Node, ind: str, out: list[str]) -> None:
    var = e.local_names[n.attr]
    begin, end, step = n.args
    if step.op is Op.CONST:
        cond = f"{var} < end_" if step.attr > 0 else f"{var} > end_"
    else:  # parenthesized: `a < b, c > d` inside a call would read as a template list
        cond = f"select(({var} > end_), ({var} < end_), (step_ > 0))"
    out.append(f"{ind}{{{e.comment(n)}")
    out.append(f"{ind}  let end_ = {e.expr(end)};")
    out.append(f"{ind}  let step_ = {e.expr(step)};")
    copies = e.loop_copies.get(id(n), 1)
    if copies > 1:
        out.append(f"{ind}  {var} = {e.expr(begin)};")
        _unrolled(e, n, cond, f"{var} = {var} + step_;", copies, ind + "  ", out)
    else:
        out.append(f"{ind}  for ({var} = {e.expr(begin)}; {cond}; {var} = {var} + step_) {{")
        e.block(n.blocks[0], ind + "    ", out)
        out.append(f"{ind}  }}")
    out.append(f"{ind}}}")


def _jump(word: str):
    def emit(e, n: Node, ind: str, out: list[str]) -> None:
        out.append(f"{ind}{word};{e.comment(n)}")
    return emit


def _assert(e, n: Node, ind: str, out: list[str]) -> None:
    code, _ = n.attr
    site = e.assert_site(n)
    status = e.buf_names[e.status_buffer]
    out.append(f"{ind}if (!({e.expr(n.args[0])})) {{{e.comment(n)}")
    out.append(f"{ind}  atomicOr(&{status}[0], {code}u);")
    out.append(f"{ind}  atomicAdd(&{status}[{site + 1}], 1u);")
    out.append(f"{ind}}}")


def _barrier(e, n: Node, ind: str, out: list[str]) -> None:
    fn = {"workgroup": "workgroupBarrier", "storage": "storageBarrier"}[n.attr]
    out.append(f"{ind}{fn}();{e.comment(n)}")


STMT_EMITTERS = {
    Op.ASSIGN: _assign, Op.STORE: _store, Op.ATOMIC: _atomic, Op.IF: _if, Op.WHILE: _while,
    Op.FOR: _for, Op.BREAK: _jump("break"), Op.CONTINUE: _jump("continue"), Op.ASSERT: _assert,
    Op.BARRIER: _barrier,
}
