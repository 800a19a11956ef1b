"""Read the textual IR (grammar: compiler/ir.lark) back into a `KernelIR`."""
from __future__ import annotations

import json
import os
from functools import lru_cache

from lark import Lark, Transformer, v_args

from .ir import AtomicAttr, Buffer, KernelIR, Loc, Node, Op, Param, Reduction, Task, TexelAttr
from .textures import TextureSlot, format_of
from .types import SCALARS

_OPS = {op.name.lower(): op for op in Op}


@lru_cache(maxsize=1)
def _parser() -> Lark:
    with open(os.path.join(os.path.dirname(__file__), "ir.lark")) as f:
        return Lark(f.read(), parser="lalr", maybe_placeholders=False)


def _num(tok: str):
    if tok in ("inf", "-inf", "nan"):
        return float(tok)
    return float(tok) if any(c in tok for c in ".eE") else int(tok)


def _dtype(tok):
    return SCALARS[str(tok)]


class _Build(Transformer):
    # -- atoms
    def a_str(self, t):
        return t[0]  # already decoded by STRING

    def a_num(self, t):
        return _num(str(t[0]))

    def a_none(self, _):
        return None

    def a_true(self, _):
        return True

    def a_false(self, _):
        return False

    def a_tuple(self, items):
        return tuple(items)

    def STRING(self, t):
        return json.loads(t)

    def INT(self, t):
        return int(t)

    # -- expressions and statements
    def loc(self, t):
        return Loc(t[0], t[1])

    def dest(self, t):
        return ("dest", t[0])

    def expr(self, t):
        name, dtype, rest = str(t[0]), _dtype(t[1]), t[2:]
        attr = None
        if rest and not isinstance(rest[0], Node):
            attr, rest = rest[0], rest[1:]
        if _OPS[name] is Op.TEXEL:  # [texture method channel]
            attr = TexelAttr(*attr)
        return Node(_OPS[name], dtype, tuple(rest), attr)

    def block(self, stmts):
        return tuple(stmts)

    @staticmethod
    def _split(t):
        """(items, loc): a trailing Loc is the statement's location."""
        if t and isinstance(t[-1], Loc):
            return list(t[:-1]), t[-1]
        return list(t), None

    def s_assign(self, t):
        (name, value), loc = self._split(t)
        return Node(Op.ASSIGN, args=(value,), attr=name, loc=loc)

    def s_store(self, t):
        (name, idx, value), loc = self._split(t)
        return Node(Op.STORE, args=(idx, value), attr=name, loc=loc)

    def s_atomic(self, t):
        items, loc = self._split(t)
        dest = items.pop()[1] if isinstance(items[-1], tuple) and items[-1][:1] == ("dest",) else None
        op, buf, idx, value = items
        return Node(Op.ATOMIC, args=(idx, value), attr=AtomicAttr(str(op), buf, dest), loc=loc)

    def s_if(self, t):
        cond, rest = t[0], list(t[1:])
        loc = rest.pop(0) if rest and isinstance(rest[0], Loc) else None
        then = rest[0]
        other = rest[1] if len(rest) > 1 else ()
        return Node(Op.IF, args=(cond,), blocks=(then, other), loc=loc)

    def s_while(self, t):
        loc = t[1] if isinstance(t[1], Loc) else None
        return Node(Op.WHILE, args=(t[0],), blocks=(t[-1],), loc=loc)

    def s_for(self, t):
        loc = t[4] if isinstance(t[4], Loc) else None
        return Node(Op.FOR, args=tuple(t[1:4]), attr=t[0], blocks=(t[-1],), loc=loc)

    def s_break(self, t):
        return Node(Op.BREAK, loc=t[0] if t else None)

    def s_continue(self, t):
        return Node(Op.CONTINUE, loc=t[0] if t else None)

    def s_assert(self, t):
        (*args, code, msg), loc = self._split(t)  # (cond,) or (cond, index, extent)
        return Node(Op.ASSERT, args=tuple(args), attr=(code, msg), loc=loc)

    def s_barrier(self, t):
        (kind,), loc = self._split(t)
        return Node(Op.BARRIER, attr=str(kind), loc=loc)

    def s_texstore(self, t):
        (name, *args), loc = self._split(t)
        return Node(Op.TEXSTORE, args=tuple(args), attr=name, loc=loc)

    # -- tasks and headers
    def t_extent(self, t):
        return ("extent", t[0])

    def t_index(self, t):
        return ("index_var", t[0])

    def t_vars(self, t):
        return ("loop_vars", tuple(t[0]))

    def t_wg(self, t):
        return ("workgroup_size", t[0])

    def t_convergent(self, t):
        return ("convergent", True)

    def t_items(self, t):
        return ("items", (t[0], t[1]))

    def t_reduce(self, t):
        return ("reduce", Reduction(t[0], t[1], t[2], t[3], _dtype(t[4])))

    def t_loc(self, t):
        return ("loc", t[0])

    def task(self, t):
        name, kind, items, body = t[0], str(t[1]), t[2:-1], t[-1]
        kw, reds = {}, []
        for key, value in items:
            if key == "reduce":
                reds.append(value)
            else:
                kw[key] = value
        return Task(name, kind, body, reductions=tuple(reds), **kw)

    def kernel(self, t):
        return ("name", t[0])

    def param(self, t):
        return ("param", Param(t[0], _dtype(t[1]), tuple(t[2])))

    def bflag(self, t):
        return (str(t[0]), t[1] if len(t) > 1 else True)

    def buffer(self, t):
        name, dtype, kind, source, flags = t[0], _dtype(t[1]), t[2], t[3], dict(t[4:])
        return ("buffer", Buffer(name, dtype, kind, source, **flags))

    def texture(self, t):
        name, source, ndim, fmt, storage, lod = t
        return ("texture", TextureSlot(name, source, ndim, format_of(fmt), storage, lod))

    def local(self, t):
        return ("local", (t[0], _dtype(t[1])))

    def returns(self, t):
        return ("returns", ([SCALARS[n] for n in t[0]], [tuple(s) for s in t[1]], t[2]))

    def start(self, items):
        ir = KernelIR("")
        for it in items:
            if isinstance(it, Task):
                ir.tasks.append(it)
                continue
            key, value = it
            if key == "name":
                ir.name = value
            elif key == "param":
                ir.params.append(value)
            elif key == "buffer":
                ir.buffers.append(value)
            elif key == "local":
                ir.locals[value[0]] = value[1]
            elif key == "texture":
                ir.textures.append(value)
            elif key == "returns":
                ir.returns, ir.return_shapes, ir.return_tuple = value
        return ir


_BUILD = v_args(inline=False)(_Build)()


def parse_ir(text: str) -> KernelIR:
    """Parse the textual IR printed by `compiler.printer.print_ir`."""
    return _BUILD.transform(_parser().parse(text))
