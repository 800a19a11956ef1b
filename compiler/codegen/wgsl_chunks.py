"""Arrays larger than one storage binding: bound as k windows, one binding each.

An array whose bytes exceed `Target.max_binding` is declared as k storage arrays
`NAME_0 .. NAME_{k-1}`, window j holding elements j*C .. j*C + C - 1 (C =
`Target.chunk_elems`; the runtime binds each window's byte range of the one buffer, see
BindingSpec.chunk). WGSL cannot index bindings dynamically, so an access to element i picks
its window with a switch on i / C and addresses element i % C there:

- a load is a call of a helper function per (array, dtype), which returns the element;
- a store, an atomic and a reduction's block atomic are the same statement, emitted once per
  window inside the switch (the value is evaluated once, before it).

Gradient, tangent and access-shadow buffers (`Buffer.of`) are windowed as their primal: the
same flat index addresses them. The window count of an array argument comes from its ArgSpec
(the runtime chose it from the array's size); a field's from its element count.
"""
from __future__ import annotations

from ..ir import Buffer, KernelIR
from ..target import Target
from ..types import DType
from .wgsl_exprs import wgsl_type

_BOUND = frozenset({"arg", "field", "grad", "dual", "access_shadow"})


def chunking(ir: KernelIR, target: Target) -> dict[str, tuple[int, int]]:
    """Buffer name -> (k windows, C elements per window) for each buffer bound in windows."""
    by_name = {b.name: b for b in ir.buffers}
    out = {}
    for b in ir.buffers:
        if b.kind not in _BOUND:
            continue
        p = b
        while p.of is not None and p.of in by_name:
            p = by_name[p.of]
        k = p.chunks if p.kind == "arg" else target.chunks(p.elems, p.dtype.size) if p.elems else 1
        if k > 1:
            out[b.name] = (k, target.chunk_elems(p.dtype.size))
    return out


def _value_type(view, t: DType) -> str:
    """The WGSL type of a loaded element (what `view.load` / `load_packed` give)."""
    if view.kind == "packed":
        return "i32" if view.dtype.kind == "int" else "u32"
    return wgsl_type(t)


def load(e, buf: str, index: str, t: DType) -> str:
    """The expression of element `index` of windowed buffer `buf`, as dtype t."""
    k, c = e.chunks[buf]
    name, view = e.buf_names[buf], e.views[buf]
    fn = f"gr_ld_{name}_{t.name}"
    if fn not in e.chunk_fns:
        lines = [f"fn {fn}(i_: i32) -> {_value_type(view, t)} {{", f"  let o_ = i_ % {c};",
                 f"  var r_: {_value_type(view, t)};", f"  switch (i_ / {c}) {{"]
        for j in range(k):
            ref = view.load_packed(f"{name}_{j}", "o_") if view.kind == "packed" else view.load(f"{name}_{j}[o_]", t)
            lines.append(f"    {'default' if j == k - 1 else f'case {j}'}: {{ r_ = {ref}; }}")
        lines += ["  }", "  return r_;", "}"]
        e.chunk_fns[fn] = "\n".join(lines)
    return f"{fn}({index})"


def access(e, buf: str, index: str, value: str | None, ind: str, out: list[str], emit_one) -> None:
    """Emit `emit_one(name, idx, value, ind, out)` for element `index` of `buf`: directly, or
    for a windowed buffer once per window inside a switch (`value` evaluated once, before)."""
    if buf not in e.chunks:
        emit_one(e.buf_names[buf], index, value, ind, out)
        return
    k, c = e.chunks[buf]
    name = e.buf_names[buf]
    out.append(f"{ind}{{")
    out.append(f"{ind}  let ci_ = {index};")
    if isinstance(value, tuple):  # compare-exchange: (value, expected)
        for j, v in enumerate(value):
            out.append(f"{ind}  let cv{j}_ = {v};")
        value = tuple(f"cv{j}_" for j in range(len(value)))
    elif value is not None:
        out.append(f"{ind}  let cv_ = {value};")
        value = "cv_"
    out.append(f"{ind}  let co_ = ci_ % {c};")
    out.append(f"{ind}  switch (ci_ / {c}) {{")
    for j in range(k):
        out.append(f"{ind}    {'default' if j == k - 1 else f'case {j}'}: {{")
        emit_one(f"{name}_{j}", "co_", value, ind + "      ", out)
        out.append(f"{ind}    }}")
    out.append(f"{ind}  }}")
    out.append(f"{ind}}}")


def length(e, buf: str) -> str:
    """arrayLength of a windowed buffer: the sum over its windows."""
    k, _ = e.chunks[buf]
    name = e.buf_names[buf]
    return "i32(" + " + ".join(f"arrayLength(&{name}_{j})" for j in range(k)) + ")"


def binding_windows(b: Buffer, chunks: dict) -> list[tuple[int, int] | None]:
    """The BindingSpec.chunk of each binding of buffer b: [None], or (j, C) for each window."""
    if b.name not in chunks:
        return [None]
    k, c = chunks[b.name]
    return [(j, c) for j in range(k)]
