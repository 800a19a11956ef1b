"""The textual form of the IR: `print_ir(ir)` writes it, `compiler.irparse.parse_ir` reads it
back (grammar: compiler/ir.lark). print -> parse -> print gives the same text, which is what
the golden tests compare.

    kernel "saxpy"
    param "a" f32 ["arg" 0]
    buffer "y" f32 "arg" 2 read write
    local "i" i32
    task "task0" range extent (param:i32="x.shape0") index "i.t" vars ["i"] {
      assign "i" (var:i32="i.t")
      store "y" (var:i32="i") (add:f32 (mul:f32 (param:f32="a") (load:f32="x" (var:i32="i"))) ...)
    }

Expressions are `(op:dtype=attr arg...)`; statements one per line, nested blocks in braces.
A texture argument is a header line `texture "name" source ndim "fmt" storage lod`; a texture
read `(texel:f32=["name" "method" channel] coordinates...)`, a write `texstore "name" args...`.
"""
from __future__ import annotations

import json
import math

from .ir import AtomicAttr, Block, Buffer, KernelIR, Node, Op, Task, TexelAttr

_FLAGS = ("read", "write", "atomic", "needs_grad")


def atom(v) -> str:
    """A Python value (None, bool, int, float, str, tuple) in the textual form."""
    if v is None:
        return "none"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        r = repr(v)
        return r if ("." in r or "e" in r) else r + ".0"
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, (tuple, list)):
        return "[" + " ".join(atom(x) for x in v) + "]"
    if isinstance(v, TexelAttr):  # a texture read: [texture method channel]
        return atom((v.tex, v.method, v.channel))
    raise TypeError(f"no textual form for {type(v).__name__} {v!r}")


def expr_text(n: Node) -> str:
    head = f"{n.op.name.lower()}:{n.dtype.name}"
    if n.attr is not None:
        head += "=" + atom(n.attr)
    if not n.args:
        return f"({head})"
    return f"({head} {' '.join(expr_text(a) for a in n.args)})"


def _loc(n, locs: bool) -> str:
    if not locs or n.loc is None:
        return ""
    return f" @{json.dumps(n.loc.file)}:{n.loc.line}"


def _stmt(s: Node, ind: str, out: list[str], locs: bool) -> None:
    op, at = s.op, _loc(s, locs)
    args = " ".join(expr_text(a) for a in s.args)
    if op is Op.ASSIGN:
        out.append(f"{ind}assign {atom(s.attr)} {args}{at}")
    elif op is Op.STORE:
        out.append(f"{ind}store {atom(s.attr)} {args}{at}")
    elif op is Op.ATOMIC:
        a: AtomicAttr = s.attr
        dest = f" -> {atom(a.dest)}" if a.dest else ""
        out.append(f"{ind}atomic {a.op} {atom(a.buf)} {args}{dest}{at}")
    elif op is Op.IF:
        out.append(f"{ind}if {args}{at} {{")
        _block(s.blocks[0], ind + "  ", out, locs)
        if s.blocks[1]:
            out.append(f"{ind}}} else {{")
            _block(s.blocks[1], ind + "  ", out, locs)
        out.append(f"{ind}}}")
    elif op is Op.WHILE:
        out.append(f"{ind}while {args}{at} {{")
        _block(s.blocks[0], ind + "  ", out, locs)
        out.append(f"{ind}}}")
    elif op is Op.FOR:
        out.append(f"{ind}for {atom(s.attr)} {args}{at} {{")
        _block(s.blocks[0], ind + "  ", out, locs)
        out.append(f"{ind}}}")
    elif op in (Op.BREAK, Op.CONTINUE):
        out.append(f"{ind}{op.name.lower()}{at}")
    elif op is Op.ASSERT:
        out.append(f"{ind}assert {args} {atom(s.attr[0])} {atom(s.attr[1])}{at}")
    elif op is Op.BARRIER:
        out.append(f"{ind}barrier {s.attr}{at}")
    elif op is Op.TEXSTORE:
        out.append(f"{ind}texstore {atom(s.attr)} {args}{at}")
    else:
        raise TypeError(f"not a statement: {s!r}")


def _block(block: Block, ind: str, out: list[str], locs: bool) -> None:
    for s in block:
        _stmt(s, ind, out, locs)


def _buffer(b: Buffer) -> str:
    flags = [f for f in _FLAGS if getattr(b, f)]
    if b.of is not None:
        flags.append(f"of={atom(b.of)}")
    if b.size is not None:
        flags.append(f"size={b.size}")
    if b.lanes != 1:
        flags.append(f"lanes={b.lanes}")
    if b.inner is not None:
        flags.append(f"inner={atom(b.inner)}")
    if b.chunks != 1:
        flags.append(f"chunks={b.chunks}")
    if b.elems is not None:
        flags.append(f"elems={b.elems}")
    return " ".join([f"buffer {atom(b.name)} {b.dtype.name} {atom(b.kind)} {atom(b.source)}", *flags])


def task_text(t: Task, locs: bool = False) -> str:
    head = [f"task {atom(t.name)} {t.kind}"]
    if t.extent is not None:
        head.append(f"extent {expr_text(t.extent)}")
    if t.index_var is not None:
        head.append(f"index {atom(t.index_var)}")
    if t.loop_vars:
        head.append(f"vars {atom(t.loop_vars)}")
    if t.workgroup_size is not None:
        head.append(f"wg {t.workgroup_size}")
    if t.convergent:
        head.append("convergent")
    if t.items is not None:
        head.append(f"items {atom(t.items[0])} {atom(t.items[1])}")
    for r in t.reductions:
        head.append(f"reduce {atom(r.acc)} {atom(r.op)} {atom(r.buf)} {expr_text(r.index)} {r.dtype.name}")
    if locs and t.loc is not None:
        head.append(f"@{json.dumps(t.loc.file)}:{t.loc.line}")
    out = [" ".join(head) + " {"]
    _block(t.body, "  ", out, locs)
    out.append("}")
    return "\n".join(out)


def print_ir(ir: KernelIR, locs: bool = False) -> str:
    """The whole kernel as text; `locs=True` appends `@"file":line` to statements."""
    out = [f"kernel {atom(ir.name)}"]
    out += [f"param {atom(p.name)} {p.dtype.name} {atom(p.source)}" for p in ir.params]
    out += [_buffer(b) for b in ir.buffers]
    out += [f"texture {atom(t.name)} {t.source} {t.ndim} {atom(t.fmt.name)} {atom(t.storage)} {t.lod}"
            for t in ir.textures]
    out += [f"local {atom(name)} {t.name}" for name, t in ir.locals.items()]
    if ir.returns or ir.return_shapes:
        out.append(f"returns {atom([t.name for t in ir.returns])} {atom(ir.return_shapes)} "
                   f"{atom(ir.return_tuple)}")
    out += [task_text(t, locs) for t in ir.tasks]
    return "\n".join(out) + "\n"
