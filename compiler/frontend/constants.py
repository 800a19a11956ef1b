"""Typed constants: what a name assigned a number holds, and what the compiler knows of it.

Taichi's rule (docs/language.md, "Variables and kernel scope"): a name assigned in a kernel or a
@gr.func is a variable of a fixed type, taken from its first value: a Python int is a
`default_ip` (i32) value, a float a `default_fp` (f32) one, a bool a u1. So `v = 0` binds `v`
to an i32 CONST node, not to the Python int 0, and everything computed from it is typed IR that
the folder (passes/simplify.py) folds with the type's fixed-width semantics, never with Python's
unbounded ints and float64. Not typed: `x = gr.static(...)` (a compile-time value, as in Taichi)
and values that are not numbers (tuples, dtypes, funcs, arrays); captured Python values and
template arguments are not assignments at all.

Where the compiler needs a value at compile time (an `if` it decides, a vector component, a
static loop's bounds, a shape), `known` folds an expression of constants with that folder and
hands back its Python value; an expression the folder leaves for run time (`v // 0`) stays a
node.
"""
from __future__ import annotations

from .. import semantic as sem
from ..ir import VARYING, Node, Op, map_exprs, walk_node
from ..passes.simplify import simplify_expr
from ..structs import StructValue
from ..types import DType
from .values import Compound


def typed(v, loc):
    """An assigned value with its Python numbers (also inside vectors, matrices and structs)
    made typed constants; other values unchanged."""
    if sem.is_const(v):
        return sem.as_node(v, loc)
    if isinstance(v, Compound):
        return Compound(v.shape, tuple(typed(x, loc) for x in v.items))
    if isinstance(v, StructValue):
        return StructValue(v.type, {k: typed(x, loc) for k, x in v.items.items()})
    return v


def note_type(types: dict, name: str, value) -> None:
    """Remember in `types` (a frame's) the type a name took: a scalar's dtype, a vector's shape
    and dtypes; forget it for other values."""
    if isinstance(value, Node):
        types[name] = value.dtype
    elif isinstance(value, Compound):
        types[name] = (value.shape, tuple(sem.dtype_of(x) for x in value.items))
    else:
        types.pop(name, None)


def keep_type(t, value, loc):
    """A value assigned to a name whose type is t (see note_type), converted to it: a variable
    keeps its type (`c = 7; c = c / 2` leaves the i32 3). A value of another kind or shape is
    returned as it is: it re-binds the name (Python's rule at the top level)."""
    if isinstance(t, DType) and isinstance(value, Node):
        return sem.as_node(value, loc, t)
    if isinstance(t, tuple) and isinstance(value, Compound) and value.shape == t[0]:
        return Compound(value.shape, tuple(sem.as_node(x, loc, d) for x, d in zip(value.items, t[1])))
    return value


def _constant_leaves(n: Node) -> bool:
    """Every leaf of n is a CONST (no variable, argument, memory read or thread id)."""
    return all(x.op is Op.CONST or (x.args and x.op not in VARYING) for x in walk_node(n))


def fold(v):
    """v with an expression of constants folded as the device computes it (a CONST node where
    the folder folds it all); anything else unchanged."""
    if isinstance(v, Node) and v.op is not Op.CONST and _constant_leaves(v):
        return map_exprs(v, simplify_expr)
    if isinstance(v, Compound):
        return Compound(v.shape, tuple(fold(x) for x in v.items))
    return v


def known(v):
    """The Python value of a scalar known at compile time (a Python number, or a typed constant
    expression that folds), for the places that need one; v itself otherwise. Tuples and
    vectors item by item."""
    if isinstance(v, Node):
        f = fold(v)
        return f.attr if f.op is Op.CONST else v
    if isinstance(v, tuple):
        return tuple(known(x) for x in v)
    if isinstance(v, Compound):
        return Compound(v.shape, tuple(known(x) for x in v.items))
    return v
