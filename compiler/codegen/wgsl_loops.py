"""WGSL for IR loops (`for` over a range, `while`): the form every adapter runs right.

**Python's range, counted.** A `for j in range(b, e, s)` runs on a hidden unsigned counter over
its trip count, computed once on entry (`n = ceil((e - b) / s)` in u32, exact for every pair of
i32 bounds), and `j = b + k * s` at the top of each pass. Python's range never overflows, so a
loop near the i32 limits (`range(2**31 - 10, 2**31 - 1, 5)`) runs exactly its iterations; the
textbook `for (j = b; j < e; j += s)` wraps past 2^31 and runs on.

**The NVIDIA loop-analysis workaround.** The NVIDIA Vulkan driver (H100, 580.159.04) computes
wrong trip counts for loops whose bounds or induction variables are affine in values it can see
elsewhere (the thread index above all): `for j in range(i, 8 - i): if i == 0: break` ran 8 passes
in every thread; `for j in range(3, -i, -1)` stopped after 5 in threads 3..39; `for j in
range(i + 3, 9 - i % 4): if i > j: break` left thread 0 after one pass (the break never fires).
The SPIR-V naga hands it is right (spirv-val, lavapipe, and a raw-Vulkan run of the same
binary agree with Python; docs/language.md "Loops on NVIDIA GPUs"; experiments/loopbreak/).
So every loop *launders* what ties it to the rest of the program on entry: its non-constant
bounds and step, and the integer locals it reads or carries, are XORed with
`OPAQUE_ZERO`, a run-time 0 the driver cannot fold. Values are unchanged; the driver's analysis
sees fresh unknowns and has nothing to get wrong. Loops over constant bounds keep them (so they
still unroll), and the cost is one XOR per bound and integer local per loop entry.
"""
from __future__ import annotations

from itertools import count

from ..ir import VARYING, Node, Op, walk, walk_node
from ..ir import assigned as ir_assigned
from ..ops import HEAVY

# 0 at run time, unknown to the driver's compiler: every dispatch gfxrt records has z = 1
# workgroups (gfxrt/engine/recorder.py dispatches (x, y, 1)).
OPAQUE_ZERO = "(nwg_.z - 1u)"
_INTS = {"i32": "i32", "u32": "", "i64": "i64", "u64": "u64"}


def launder(value: str, dtype_name: str) -> str:
    """`value` (a WGSL integer expression of type `dtype_name`) XOR the opaque zero."""
    cast = _INTS[dtype_name]
    return f"({value} ^ {cast}{OPAQUE_ZERO})" if cast else f"({value} ^ {OPAQUE_ZERO})"


def _launder_entry(e, n: Node, ind: str, out: list[str]) -> None:
    """`v = v ^ 0` for each integer local the loop reads or assigns (its own loop variable aside):
    the locals it carries, and the ones its exit tests compare with (`while w < 5 - i` ran forever
    on the H100 with `w` laundered and `i`, the thread's index, not)."""
    skip = n.attr if n.op is Op.FOR else None
    used = {m.attr for m in walk_node(n) if m.op is Op.VAR} | ir_assigned(n.blocks[0])
    for v in sorted(used):
        t = e.ir.locals.get(v)
        if v != skip and t is not None and t.name in _INTS and v in e.local_names:
            name = e.local_names[v]
            out.append(f"{ind}{name} = {launder(name, t.name)};")


# -- loops on an adapter with a loop cap (Target.loop_cap) ----------------------------------------
# llvmpipe ends *every* loop of an invocation once all of them together have made 65535 passes
# (one counter per invocation, decremented at each back edge, never reset;
# experiments/loop_cap.py): splitting a loop into chunks cannot help, since the chunk loop's
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
            if x.op in VARYING:
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
# transcendentals (ops.HEAVY) are functions of 15-40 operations that the driver
# inlines into every copy (lavapipe, bench compile kernel: 32 copies of a body with sin cost
# 189 ms cold / 47 ms warm against 40 / 8 uncopied)
HEAVY_NODES = 32


def _cost(block) -> int:
    return sum(HEAVY_NODES if x.op in HEAVY else 1 for x in walk(block))


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
        elif any(y.op in VARYING or (y.op is Op.VAR and y.attr in tainted) for y in walk(x.args)):
            want = min(MEMORY_COPIES, target.loop_copies)
        else:
            want = target.loop_copies
        copies[id(x)] = max(1, min(budget, want))
    return copies


def _unrolled(e, n: Node, cond: str, head: str | None, step: str | None, copies: int, ind: str,
              out: list[str]) -> None:
    """`loop { if (!cond) {break;} head; body; step; ... copies times }`. A `break` of the body
    leaves the loop as written; a `continue` sets `cn_` and skips the rest of its copy."""
    body = n.blocks[0]
    cont = _own(body, Op.CONTINUE)
    out.append(f"{ind}loop {{  // {copies} iterations per pass: the adapter caps loop passes{e.comment(n)}")
    if cont:
        out.append(f"{ind}  var cn_ = false;")
    one = [f"{ind}  if (!({cond})) {{ break; }}"]
    if head:
        one.append(f"{ind}  {head}")
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
    _launder_entry(e, n, ind, out)
    copies = e.loop_copies.get(id(n), 1)
    if copies > 1:
        _unrolled(e, n, e.expr(n.args[0]), None, None, copies, ind, out)
        return
    out.append(f"{ind}while ({e.expr(n.args[0])}) {{{e.comment(n)}")
    e.block(n.blocks[0], ind + "  ", out)
    out.append(f"{ind}}}")


def _bound(e, x: Node) -> str:
    """A loop bound: a constant as it is, anything else laundered (i32)."""
    return e.expr(x) if x.op is Op.CONST else launder(e.expr(x), "i32")


def _trips(step: Node) -> str:
    """The trip count of range(b_, end_, step_) as a u32 expression, exact for all i32 bounds
    (the differences are taken in u32, where they cannot overflow); a zero step runs nothing."""
    up = "select(0u, (bitcast<u32>(end_) - bitcast<u32>(b_) - 1u) / {s} + 1u, end_ > b_)"
    down = "select(0u, (bitcast<u32>(b_) - bitcast<u32>(end_) - 1u) / {s} + 1u, b_ > end_)"
    if step.op is Op.CONST:
        if step.attr == 1:
            return "select(0u, bitcast<u32>(end_) - bitcast<u32>(b_), end_ > b_)"
        if step.attr > 0:
            return up.format(s=f"{step.attr}u")
        return down.format(s=f"{-step.attr}u")  # (a constant step 0 is a compile error)
    return (f"select(select({down.format(s='(0u - bitcast<u32>(step_))')}, "
            f"{up.format(s='bitcast<u32>(step_)')}, step_ > 0i), 0u, step_ == 0i)")


def _for(e, n: Node, ind: str, out: list[str]) -> None:
    """Python's range on a counter over its trip count (see the module's docstring)."""
    var = e.local_names[n.attr]
    begin, end, step = n.args
    out.append(f"{ind}{{{e.comment(n)}")
    out.append(f"{ind}  let b_ = {_bound(e, begin)};")
    out.append(f"{ind}  let end_ = {_bound(e, end)};")
    out.append(f"{ind}  let step_ = {_bound(e, step)};")
    out.append(f"{ind}  let n_ = {_trips(step)};")
    _launder_entry(e, n, ind + "  ", out)
    if step.op is Op.CONST and step.attr == 1:
        head = f"{var} = b_ + bitcast<i32>(k_);"
    else:
        head = f"{var} = bitcast<i32>(bitcast<u32>(b_) + k_ * bitcast<u32>(step_));"
    copies = e.loop_copies.get(id(n), 1)
    if copies > 1:
        out.append(f"{ind}  var k_ = 0u;")
        _unrolled(e, n, "k_ < n_", head, "k_ = k_ + 1u;", copies, ind + "  ", out)
    else:
        out.append(f"{ind}  for (var k_ = 0u; k_ < n_; k_ = k_ + 1u) {{")
        out.append(f"{ind}    {head}")
        e.block(n.blocks[0], ind + "    ", out)
        out.append(f"{ind}  }}")
    out.append(f"{ind}}}")
