"""`print(...)` and f-strings inside kernels (docs/language.md, "Printing").

A print becomes a *record* appended to the runtime's print buffer (an internal binding of
kind 'print', u32 words): word 0 is the cursor (words used), word 1 counts dropped records,
records follow from word 2. A thread takes `1 + words` slots with one atomicAdd on the
cursor, then writes the print site's id and its values (bitcast, 64-bit values as two
words, low first). A record that does not fit is dropped and counted. The host decodes the
records at the next sync, in launch order (gfxrt/engine/printing.py), from each site's format:
a tuple of pieces, ("s", text) or ("v", dtype name, format spec, conversion).

Kernels without print have no print binding and pay nothing.
"""
from __future__ import annotations

import ast
import string
import zlib
from dataclasses import dataclass

from .. import semantic as sem
from ..ir import AtomicAttr, Loc, Node, Op, const, map_block
from ..types import i32, u1, u32, u64
from .values import Compound

PRINT_HEADER_WORDS = 2          # cursor, dropped records
PRINT_CAPACITY_WORDS = 1 << 16  # record words the buffer holds between syncs (256 KiB)


@dataclass(frozen=True)
class FStr:
    """An f-string with run-time values: pieces of text and (value, format spec, conversion)."""

    parts: tuple


class PrintMixin:
    """`print` and `f"..."` for the kernel visitor."""

    def visit_JoinedStr(self, node: ast.JoinedStr, loc: Loc):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
                continue
            value = self.visit(v.value)
            spec = ""
            if v.format_spec is not None:
                spec = self.visit(v.format_spec)
                if not isinstance(spec, str):
                    self.error("the format spec of an f-string field in a kernel must be a compile-time value "
                               "(f\"{x:.3f}\", not f\"{x:.{n}f}\" with a run-time n)", loc)
            conv = chr(v.conversion) if v.conversion != -1 else ""
            if isinstance(value, (str, bool, int, float)) or value is None:  # compile-time: format it now
                text = {"r": repr, "s": str, "a": ascii}[conv](value) if conv else value
                parts.append(self.format_now(text, spec, loc))
            else:
                parts.append((value, spec, conv))
        if all(isinstance(p, str) for p in parts):
            return "".join(parts)
        return FStr(tuple(parts))

    def format_now(self, value, spec: str, loc: Loc) -> str:
        """A compile-time value formatted while the kernel compiles; a spec Python's format()
        refuses is the program's error, not the compiler's."""
        try:
            return format(value, spec)
        except (ValueError, TypeError) as e:
            self.error(f"format spec {spec!r} does not apply to {value!r}: {e}", loc)

    def str_format(self, fmt: str, args, kwargs, loc: Loc):
        """`"x = {}, y = {:.2f}".format(x, y)` in a kernel (Taichi's print docs): the same value
        as the f-string; fields `{}`, `{0}`, `{name}` with a compile-time spec and `!r` / `!s`.
        As in Taichi, every positional argument must have a field, and `{}` and `{0}` may mix
        (`"{2} {1} {}".format(3, 2, 1)` is "1 2 3": `{}` counts the automatic fields only)."""
        parts, auto, used = [], 0, set()
        for literal, field, spec, conv in string.Formatter().parse(fmt):
            if literal:
                parts.append(literal)
            if field is None:
                continue
            if field == "" or field.isdigit():  # Taichi mixes them: `{}` counts the automatic fields only
                key, auto = (auto, auto + 1) if field == "" else (int(field), auto)
            elif field.isidentifier():
                key = field
            else:
                self.error(f"str.format in a kernel: the field {{{field}}} is not supported (use {{}}, {{0}} or "
                           "{name})", loc)
            if "{" in (spec or ""):
                self.error("str.format in a kernel: a format spec must be a compile-time text, not a nested field",
                           loc)
            if isinstance(key, int) and key >= len(args):
                self.error(f"str.format: the field {{{field}}} has no argument ({len(args)} given)", loc)
            if isinstance(key, str) and key not in kwargs:
                self.error(f"str.format: no keyword argument {key!r}", loc)
            used.add(key)
            value = self.known(args[key] if isinstance(key, int) else kwargs[key])
            conv, spec = conv or "", spec or ""
            if isinstance(value, (str, bool, int, float)) or value is None:  # compile-time: format it now
                parts.append(self.format_now({"r": repr, "s": str, "a": ascii}[conv](value) if conv else value, spec,
                                             loc))
            else:
                parts.append((value, spec, conv))
        npos = len([k for k in used if isinstance(k, int)])
        if len(args) != npos:
            self.error(f"Expected {npos} positional argument(s), but received {len(args)} instead.", loc)
        if all(isinstance(p, str) for p in parts):
            return "".join(parts)
        return FStr(tuple(parts))

    def kernel_print(self, args, kwargs, loc: Loc):
        """print(*values, sep=' ', end='\\n'): a record for the host to print at the next sync."""
        sep, end = kwargs.pop("sep", " "), kwargs.pop("end", "\n")
        kwargs.pop("flush", None)
        if kwargs:
            self.error(f"print() in a kernel takes sep= and end= only, not {', '.join(kwargs)} (the output "
                       "goes to sys.stdout at the next gr.sync())", loc)
        for name, v in (("sep", sep), ("end", end)):
            if not isinstance(v, str):
                self.error(f"print()'s {name}= must be a compile-time string in a kernel", loc)
        pieces: list = []
        values: list[Node] = []
        for k, a in enumerate(args):
            if k:
                pieces.append(("s", sep))
            self._print_piece(a, "", "", pieces, values, loc)
        pieces.append(("s", end))
        pieces = _merge_text(pieces)
        site = zlib.crc32(repr((self.name, loc.file if loc else None, loc.line if loc else None,
                                len(self._print_sites()), pieces)).encode()) | 1
        self._print_sites().append((site, tuple(pieces)))
        words: list[Node] = [const(site, u32, loc)]
        for n in values:
            words += as_words(n, loc)
        self._emit_record(words, loc)
        return None

    # -- pieces -----------------------------------------------------------------------------
    def _print_piece(self, a, spec: str, conv: str, pieces: list, values: list, loc: Loc) -> None:
        if isinstance(a, str):
            pieces.append(("s", format(a, spec)))
        elif isinstance(a, FStr):
            for p in a.parts:
                if isinstance(p, str):
                    pieces.append(("s", p))
                else:
                    self._print_piece(p[0], p[1], p[2], pieces, values, loc)
        elif isinstance(a, Compound):
            rows = [a.items[r * a.shape[1]:(r + 1) * a.shape[1]] for r in range(a.shape[0])] \
                if len(a.shape) == 2 else [a.items]
            pieces.append(("s", "[" if len(a.shape) == 1 else "[["))
            for r, row in enumerate(rows):
                if r:
                    pieces.append(("s", "], ["))
                for c, item in enumerate(row):
                    if c:
                        pieces.append(("s", ", "))
                    self._print_piece(item, spec, conv, pieces, values, loc)
            pieces.append(("s", "]" if len(a.shape) == 1 else "]]"))
        elif type(a).__name__ == "StructValue":  # {'a': 1.0, 'v': [1.0, 2.0]}
            pieces.append(("s", "{"))
            for k, (name, item) in enumerate(a.items.items()):
                pieces.append(("s", f"{', ' if k else ''}{name!r}: "))
                self._print_piece(item, spec, conv, pieces, values, loc)
            pieces.append(("s", "}"))
        elif sem.is_const(a) or a is None:
            text = {"r": repr, "s": str, "a": ascii}[conv](a) if conv else a
            pieces.append(("s", self.format_now(text, spec, loc)))
        elif isinstance(a, Node):
            if spec:
                try:  # check the spec on the host now, not at the sync
                    format(1.5 if a.dtype.is_float else 1, spec)
                except ValueError as e:
                    self.error(f"format spec {spec!r} does not apply to a {a.dtype} value: {e}", loc)
            pieces.append(("v", a.dtype.name, spec, conv))
            values.append(a)
        else:
            self.error(f"print() in a kernel prints numbers, vectors, matrices and strings, not "
                       f"{self.describe(a)}", loc)

    def _print_sites(self) -> list:
        buf = self.internal_buffer("print")
        if buf.source is None:
            buf.source = []
        return buf.source

    def _emit_record(self, words: list[Node], loc: Loc) -> None:
        buf = self.internal_buffer("print").name
        n = len(words)
        slot = self.new_local("print_slot", u32)
        self.emit(Node(Op.ATOMIC, attr=AtomicAttr("add", buf, slot), args=(const(0, i32, loc), const(n, u32, loc)),
                       loc=loc))
        base = Node(Op.VAR, u32, attr=slot, loc=loc)
        fits = Node(Op.LE, u1, (base, const(PRINT_CAPACITY_WORDS - n, u32, loc)), loc=loc)
        with self.block() as write:
            for k, w in enumerate(words):
                at = Node(Op.CAST, i32, (Node(Op.ADD, u32, (base, const(PRINT_HEADER_WORDS + k, u32, loc)), loc=loc),),
                          loc=loc)
                self.emit(Node(Op.STORE, attr=buf, args=(at, w), loc=loc))
        with self.block() as drop:
            dropped = self.new_local("print_dropped", u32)
            one = const(1, u32, loc)
            self.emit(Node(Op.ATOMIC, attr=AtomicAttr("add", buf, dropped), args=(const(1, i32, loc), one), loc=loc))
        self.emit(Node(Op.IF, args=(fits,), blocks=(tuple(write), tuple(drop)), loc=loc))


def _merge_text(pieces: list) -> list:
    out: list = []
    for p in pieces:
        if p[0] == "s" and out and out[-1][0] == "s":
            out[-1] = ("s", out[-1][1] + p[1])
        elif p[0] != "s" or p[1]:
            out.append(p)
    return out


def as_words(n: Node, loc: Loc) -> list[Node]:
    """A value as nodes of one u32 word each (print records, return values): itself, or a
    64-bit value's low and high halves."""
    n = sem.as_node(n, loc)
    if not n.dtype.wide:
        return [n]
    u = n if n.dtype == u64 else Node(Op.BITCAST, u64, (n,), loc=loc)
    hi = Node(Op.SHR, u64, (u, const(32, u32, loc)), loc=loc)
    return [Node(Op.CAST, u32, (u,), loc=loc), Node(Op.CAST, u32, (hi,), loc=loc)]


def strip_prints(ir):
    """The IR without its print records (gradient and forward-mode kernels do not print
    again what their primal printed); changes `ir` in place."""
    buf = next((b for b in ir.buffers if b.kind == "print"), None)
    if buf is None:
        return ir

    def stmt(s: Node):
        if s.op in (Op.STORE, Op.ATOMIC) and (s.attr == buf.name or getattr(s.attr, "buf", None) == buf.name):
            return []
        if s.op is Op.IF and not any(s.blocks):
            return []
        return [s]
    for t in ir.tasks:
        t.body = map_block(t.body, stmt)
    ir.buffers = [b for b in ir.buffers if b is not buf]
    return ir
