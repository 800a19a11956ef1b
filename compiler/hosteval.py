"""Turn an IR expression over params and constants into a Python function of the params.

The runtime sizes dispatches with these on the launch hot path, so the expression is
compiled once to a Python lambda rather than interpreted per launch.
"""
from __future__ import annotations

from . import opsem
from .ir import Node, Op, walk_node
from .types import SCALARS

_FMT = {
    Op.ADD: "({0} + {1})", Op.SUB: "({0} - {1})", Op.MUL: "({0} * {1})",
    Op.FLOORDIV: "_fdiv({0}, {1})", Op.MOD: "_fmod({0}, {1})", Op.MIN: "min({0}, {1})",
    Op.MAX: "max({0}, {1})", Op.NEG: "(-{0})",
    Op.SELECT: "({1} if {0} else {2})", Op.LT: "({0} < {1})", Op.LE: "({0} <= {1})",
    Op.GT: "({0} > {1})", Op.GE: "({0} >= {1})", Op.EQ: "({0} == {1})", Op.NE: "({0} != {1})",
    Op.AND: "({0} and {1})", Op.OR: "({0} or {1})", Op.NOT: "(not {0})",
}


def _fdiv(a, b):
    return a // b if b else 0


def _fmod(a, b):
    return a % b if b else 0


def _cvt(v, name: str):
    return opsem.convert(v, SCALARS[name])


def host_evaluable(n: Node) -> bool:
    """True when n uses only params, constants and integer arithmetic the host can do."""
    return all(x.op in _FMT or x.op in (Op.CONST, Op.PARAM, Op.CAST) for x in walk_node(n))


def compile_host_expr(n: Node, param_names: list[str]):
    """A function f(params) -> value for a host-evaluable node; params in `param_names` order."""
    index = {name: i for i, name in enumerate(param_names)}

    def render(x: Node) -> str:
        if x.op is Op.CONST:
            return repr(int(x.attr) if isinstance(x.attr, bool) else x.attr)
        if x.op is Op.PARAM:
            return f"p[{index[x.attr]}]"
        if x.op is Op.CAST:  # as the device converts (floats saturate, NaN -> 0; ints wrap)
            return f"_cvt({render(x.args[0])}, {x.dtype.name!r})"
        return _FMT[x.op].format(*map(render, x.args))

    src = f"lambda p: {render(n)}"
    fn = _COMPILED.get(src)
    if fn is None:  # pure functions of their argument: one per expression text
        if len(_COMPILED) >= 4096:
            _COMPILED.clear()
        fn = _COMPILED[src] = eval(src, {"_fdiv": _fdiv, "_fmod": _fmod, "min": min, "max": max,  # noqa: S307
                                         "_cvt": _cvt})
    return fn


_COMPILED: dict = {}
