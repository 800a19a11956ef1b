"""Workgroup arrays of vectors (`SharedArray(shape, vec4)`, `Buffer.lanes`) as WGSL vectors.

The IR addresses every buffer by scalar: component c of element X of a vec4 shared array is
`X * 4 + c`. A scalar `array<f32, N>` leaves the driver to find that four such accesses form
one aligned 16-byte access, which it may not do (a 128 x 128 matmul tile read with 32-bit
workgroup loads spends most of its issue slots on them). So a shared array of vectors of 2 or
4 four-byte components is declared `array<vec4<T>, N / 4>` and:

- a scalar access whose index is `X * L + c` (c a constant, as the frontend builds component
  indices) is `b[X][c]`; any other index `i` is `b[u32(i) / L][u32(i) % L]`;
- L consecutive `local = load(b, X * L + c)` statements, c = 0 .. L-1 (what `v = s[i, j]`
  lowers to), become one vector load `let v_ = b[X];` and L component reads;
- L consecutive stores to `X * L + c`, c = 0 .. L-1 (`s[i, j] = v`), become one vector store.

Atomic shared arrays keep the scalar layout (`Buffer.lanes` is ignored for them).
"""
from __future__ import annotations

from ..ir import Node, Op, walk
from ..printer import expr_text
from .wgsl_exprs import wgsl_type

_COMPONENTS = "xyzw"


def lanes_of(ir, views) -> dict[str, int]:
    """buffer name -> lanes, for the shared arrays declared as arrays of vectors."""
    return {b.name: b.lanes for b in ir.buffers
            if b.kind == "shared" and b.lanes > 1 and views[b.name].kind == "plain" and b.size % b.lanes == 0}


def split(index: Node, lanes: int):
    """(X, c) when `index` is X * lanes + c with a constant 0 <= c < lanes (X a node, or an int
    when the index is a constant); else None."""
    if index.op is Op.CONST and isinstance(index.attr, int) and index.attr >= 0:
        return index.attr // lanes, index.attr % lanes
    c = 0
    if index.op is Op.ADD and index.args[1].op is Op.CONST and isinstance(index.args[1].attr, int):
        index, c = index.args[0], index.args[1].attr
        if not 0 <= c < lanes:
            return None
    if index.op is Op.MUL:
        a, b = index.args
        if b.op is Op.CONST and b.attr == lanes:
            return a, c
        if a.op is Op.CONST and a.attr == lanes:
            return b, c
    return None


def decl(name: str, b, lanes: int) -> str:
    return f"var<workgroup> {name}: array<vec{lanes}<{wgsl_type(b.dtype)}>, {b.size // lanes}>;"


def zero(name: str, b, lanes: int, wg: int) -> str:
    t = f"vec{lanes}<{wgsl_type(b.dtype)}>"
    return f"  for (var z_ = lid_; z_ < {b.size // lanes}u; z_ = z_ + {wg}u) {{ {name}[z_] = {t}(); }}"


def ref(e, buf: str, index: Node) -> str:
    """The WGSL reference of one scalar of a vector shared array."""
    lanes, name = e.lanes[buf], e.buf_names[buf]
    s = split(index, lanes)
    if s is None:
        i = f"u32({e.expr(index)})"
        return f"{name}[{i} / {lanes}u][{i} % {lanes}u]"
    x, c = s
    return f"{name}[{x if isinstance(x, int) else e.expr(x)}][{c}]"


def _element(e, n: Node, buf: str):
    """(X's text, c) when `n` (a LOAD's or STORE's index) addresses component c of element X of
    buf, else None."""
    s = split(n, e.lanes[buf])
    if s is None:
        return None
    return (str(s[0]) if isinstance(s[0], int) else expr_text(s[0])), s[1]


def _reads(nodes, buf: str) -> bool:
    return any(x.op is Op.LOAD and x.attr == buf for x in walk(nodes))


def vector_run(e, stmts, i: int, ind: str, out: list[str]) -> int:
    """Emit stmts[i:i + L] as one vector load or store when they move the L components of one
    element (in any order); return how many statements were emitted (0: none)."""
    s = stmts[i]
    if s.op is Op.ASSIGN and s.args[0].op is Op.LOAD:
        buf, first = s.args[0].attr, s.args[0].args[0]
    elif s.op is Op.STORE:
        buf, first = s.attr, s.args[0]
    else:
        return 0
    lanes = e.lanes.get(buf)
    if not lanes or i + lanes > len(stmts) or _element(e, first, buf) is None:
        return 0
    run = stmts[i:i + lanes]
    key = _element(e, first, buf)[0]
    if s.op is Op.ASSIGN:
        ok = all(t.op is Op.ASSIGN and t.args[0].op is Op.LOAD and t.args[0].attr == buf for t in run)
        elems = [_element(e, t.args[0].args[0], buf) for t in run] if ok else []
    else:
        ok = all(t.op is Op.STORE and t.attr == buf for t in run)
        elems = [_element(e, t.args[0], buf) for t in run] if ok else []
    if not ok or any(el is None or el[0] != key for el in elems) or sorted(c for _, c in elems) != list(range(lanes)):
        return 0
    x = split(first, lanes)[0]
    xs = str(x) if isinstance(x, int) else e.expr(x)
    name = e.buf_names[buf]
    if s.op is Op.ASSIGN:
        targets = {t.attr for t in run}  # the element's index must not read what the run assigns
        if not isinstance(x, int) and any(v.op is Op.VAR and v.attr in targets for v in walk((x,))):
            return 0
        parts = " ".join(f"{e.local_names[t.attr]} = v_.{_COMPONENTS[c]};" for t, (_, c) in zip(run, elems))
        out.append(f"{ind}{{ let v_ = {name}[{xs}]; {parts} }}{e.comment(s)}")
        return lanes
    if _reads([t.args[1] for t in run], buf) or (not isinstance(x, int) and _reads((x,), buf)):
        return 0  # a value or the index reads the array the run writes: keep the order of the scalars
    by_component = {c: t.args[1] for t, (_, c) in zip(run, elems)}
    values = ", ".join(e.expr(by_component[c]) for c in range(lanes))
    out.append(f"{ind}{name}[{xs}] = vec{lanes}<{wgsl_type(e.buffers[buf].dtype)}>({values});{e.comment(s)}")
    return lanes
