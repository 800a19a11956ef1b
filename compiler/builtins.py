"""Builtins declared, not coded: one row per function of the kernel language.

Each row names the function, how it lowers to IR and what it computes on the host (so the
same `gr.sin` also works on Python numbers and numpy arrays outside kernels). The builtins that
are one IR op (gr.sin, gr.popcnt, ...) come from their op's row in compiler/ops.py. `gfxrt`
re-exports these objects; the frontend recognizes them by type when a kernel calls them.

A *form* (`form=True`) receives the call's AST instead of evaluated arguments: the atomics,
whose first argument is a place to update, not a value.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

from . import npcompat
from . import semantic as sem
from .frontend.deps import fingerprint
from .ir import Node, Op
from .npcompat import np
from .ops import BUILTIN_OPS, DEFS
from .types import DType


@dataclass(frozen=True, eq=False)
class Builtin:
    """A function usable inside kernels.

    `lower(fe, args, kwargs, loc)` returns a value; for a form, `lower(fe, call, loc, discard)`
    gets the ast.Call and whether its value is unused.
    """

    name: str
    lower: Callable
    host: Callable | None
    doc: str
    form: bool = False

    def __post_init__(self):
        # help(gr.sin) shows the builtin's own text (pydoc documents an instance with a __doc__
        # of its own; otherwise it shows this class)
        object.__setattr__(self, "__doc__", self.doc)

    def __call__(self, *args, **kwargs):
        if self.host is None:
            raise RuntimeError(f"gr.{self.name} can only be called inside a @gr.kernel or @gr.func")
        return self.host(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<gfxrt builtin {self.name}>"


def inline_module_func(fe, fn, args, kwargs, loc):
    """Inline `fn`, a module-level @gr.func of a library module (gr.math, gr.svd, ...), reached by a
    path the offline cache can re-check: its module and its name."""
    path = (("mod", fn.__module__), ("a", fn.__name__))
    fe.paths_add(fn, path)
    fe.deps[path] = fingerprint(fn)
    return fe.inline_func(fn, list(args), dict(kwargs), loc)


def _elementwise(fn):
    """Lift a scalar lowering over vector/matrix arguments (the frontend's `map_values`)."""
    def lower(fe, args, kwargs, loc):
        if kwargs:
            fe.error("this builtin takes no keyword arguments", loc)
        return fe.map_values(lambda *xs: fn(*xs, loc), args, loc)
    return lower


def _arity(n: int, name: str, lower):
    def checked(fe, args, kwargs, loc):
        if len(args) != n:
            fe.error(f"gr.{name}() takes {n} argument(s), got {len(args)}", loc)
        return lower(fe, args, kwargs, loc)
    return checked


def _op_row(op: Op):
    """The builtin an op row of compiler/ops.py declares: gr.sin(x) is Op.SIN, componentwise."""
    d = DEFS[op]
    lower = (lambda a, loc: sem.unary(op, a, loc)) if d.arity == 1 else (lambda a, b, loc: sem.binary(op, a, b, loc))
    host = d.host if d.py is None else npcompat.or_python(d.host, d.py)  # without numpy: the row's rule
    return _arity(d.arity, d.name.lower(), _elementwise(lower)), host, d.doc


def _clamp_lower(fe, args, kwargs, loc):
    if len(args) != 3:
        fe.error("clamp(x, lo, hi) takes three arguments", loc)
    return fe.map_values(
        lambda x, lo, hi: sem.binary(Op.MIN, sem.binary(Op.MAX, x, lo, loc), hi, loc), args, loc)


def _select_lower(fe, args, kwargs, loc):
    if len(args) != 3:
        fe.error("select(cond, a, b) takes three arguments", loc)
    return fe.map_values(lambda c, a, b: sem.select(c, a, b, loc), args, loc)


def _cast_lower(fe, args, kwargs, loc):
    if len(args) == 1 and "dtype" in kwargs:
        args = [args[0], kwargs.pop("dtype")]
    if len(args) != 2 or kwargs:
        fe.error("gr.cast(x, dtype) takes a value and a scalar dtype", loc)
    value, t = args[0], sem.as_dtype(args[1])
    if not isinstance(t, DType):
        fe.error(f"gr.cast needs a scalar dtype such as gr.f32 or gr.i32, not {fe.describe(t)}", loc)
    return fe.map_values(lambda x: sem.as_node(x, loc, t), (value,), loc)


def _cast_host(x, dtype):
    """As in kernels: float -> int truncates and saturates to the type's range, NaN -> 0. A
    gr.Vector / gr.Matrix stays one (`gr.cast(v, int)`, `gr.floor(v, int)`)."""
    a = np.asarray(x)
    if a.dtype.kind != "f" or not dtype.is_int:
        out = a.astype(dtype.numpy)
    else:
        lo, hi = dtype.int_range
        with np.errstate(invalid="ignore"):
            big, small, nan = a >= float(hi) + 1.0, a <= float(lo), np.isnan(a)
            out = np.trunc(np.where(big | small | nan, 0, a)).astype(dtype.numpy)
        out = np.where(big, hi, np.where(small, lo, out)).astype(dtype.numpy)
    return type(x)(out) if getattr(type(x), "__gfxrt_matrix__", False) else out[()]


def _static_lower(fe, args, kwargs, loc):
    from .frontend.values import GroupedValue, NdrangeValue, RangeValue, StaticValue
    if not args or kwargs:
        fe.error("gr.static(x) takes compile-time values", loc)
    if len(args) > 1:  # Taichi: gr.static(a, b) is the tuple (gr.static(a), gr.static(b))
        return tuple(_static_lower(fe, [a], {}, loc) for a in args)
    v = fe.known(args[0])  # a typed variable's known value is a compile-time value too
    if isinstance(v, (RangeValue, NdrangeValue, GroupedValue)):
        return StaticValue(fe.static_sequence(v, loc))
    if isinstance(v, tuple):
        return StaticValue(v)
    if _has_runtime_value(v):
        fe.error("gr.static(...) needs a value known at compile time (constants, template arguments, shapes "
                 "of fields); this one depends on run-time data", loc)
    return v


def _has_runtime_value(v) -> bool:
    from .frontend.values import Compound
    from .ir import Node
    if isinstance(v, Node):
        return True
    if isinstance(v, Compound):
        return any(_has_runtime_value(x) for x in v.items)
    return False


def _ndrange_lower(fe, args, kwargs, loc):
    from .frontend.values import NdrangeValue
    if kwargs:  # no argument at all: Taichi's 0-d space, one iteration (`gr.grouped(gr.ndrange())`)
        fe.error("gr.ndrange(n, (begin, end), ...) takes one extent or (begin, end) pair per dimension", loc)
    dims = []
    for a in args:
        if isinstance(a, tuple):
            if len(a) != 2:
                fe.error("each gr.ndrange dimension is an extent or a (begin, end) pair", loc)
            dims.append(tuple(_index(fe, x, loc) for x in a))
        else:
            dims.append((0, _index(fe, a, loc)))
    return NdrangeValue(tuple(dims))


def _index(fe, x, loc):
    from .types import i32
    x = fe.known(fe.scalar(x, loc))
    if sem.dtype_of(x).is_float:
        fe.error("gr.ndrange bounds must be integers", loc)
    return x if sem.is_const(x) else sem.as_node(x, loc, i32)


class HostNdrange:
    """`gr.ndrange(...)` in Python scope: iterates the index tuples, as Taichi's; a kernel that
    gets one from a plain Python function (`gr.grouped(make_range())`) iterates the same space."""

    def __init__(self, args: tuple):
        self.args = args

    def __iter__(self):
        return itertools.product(*[range(*a) if isinstance(a, (tuple, list)) else range(a) for a in self.args])

    def __repr__(self) -> str:
        return f"gr.ndrange{self.args!r}"


def _ndrange_host(*args):
    return HostNdrange(args)


def _grouped_lower(fe, args, kwargs, loc):
    from .frontend.values import ArrayValue, GroupedValue, NdrangeValue
    if len(args) != 1 or kwargs:
        fe.error("gr.grouped(x) takes one array or gr.ndrange(...)", loc)
    v = args[0]
    if type(v).__name__ == "StructArrayValue":  # a struct field: its members' index space
        v = v.first()
    if isinstance(v, ArrayValue):
        v = NdrangeValue(v.index_space(), v)
    elif hasattr(v, "__gfxrt_iter__") and not isinstance(v, (Node, int, float)):  # an SNode: its cells
        v = NdrangeValue(tuple((0, n) for n in v.__gfxrt_iter__[1]), v)
    if not isinstance(v, NdrangeValue):
        fe.error(f"gr.grouped() takes an array or gr.ndrange(...), not {fe.describe(v)}", loc)
    return GroupedValue(v)


def _atomic_form(op: str):
    def lower(fe, call, loc, discard):
        from .frontend.scope import NameLV, TupleLV
        if len(call.args) != 2 or call.keywords:
            fe.error(f"gr.atomic_{op}(target, value) takes two arguments", loc)
        lv = fe.lvalue(call.args[0], loc)
        if isinstance(lv, (NameLV, TupleLV)):
            fe.error(f"the first argument of gr.atomic_{op} must be an array element or a variable "
                     "(e.g. x[i] or a kernel-scope total)", loc)
        value = fe.visit(call.args[1])
        if fe.frame.readonly and getattr(getattr(lv, "var", None), "name", None) in fe.frame.readonly:
            fe.error("cannot update a loop variable", loc)
        return lv.atomic(fe, op, value, loc, want_old=not discard)
    return lower


def _items_and_dtype(fe, args, kwargs, loc, usage):
    """Taichi's `Vector(arr, dt=None)` / `Matrix(arr, dt=None)`: dt by keyword or second positional."""
    args = list(args)
    if len(args) == 2 and "dt" not in kwargs and "dtype" not in kwargs:
        kwargs = {**kwargs, "dt": args.pop()}
    dt = sem.as_dtype(kwargs.pop("dt", kwargs.pop("dtype", None)))
    if kwargs or len(args) != 1:
        fe.error(f"takes {usage}", loc)
    return args[0], dt


def _vector_lower(fe, args, kwargs, loc):
    items, dt = _items_and_dtype(fe, args, kwargs, loc, "gr.Vector([x, y, ...], dt=None)")
    return fe.make_vector(items, dt, loc)


def _matrix_lower(fe, args, kwargs, loc):
    items, dt = _items_and_dtype(fe, args, kwargs, loc, "gr.Matrix([[a, b], [c, d]], dt=None)")
    return fe.make_matrix(items, dt, loc)


def _loop_config_lower(fe, args, kwargs, loc):
    # Taichi's parallelize (CPU threads), block_dim_adaptive and bit_vectorize have no meaning here
    if args or set(kwargs) - {"block_dim", "serialize", "parallelize", "block_dim_adaptive", "bit_vectorize"}:
        fe.error("gr.loop_config(block_dim=None, serialize=False, parallelize=None, block_dim_adaptive=True, "
                 "bit_vectorize=False) takes keyword arguments only", loc)
    if kwargs.get("bit_vectorize"):
        fe.error("gr.loop_config(bit_vectorize=True) needs quantized (bit-packed) fields, which gfxrt does not have",
                 loc)
    if not fe.frame.kernel_level or fe.in_parallel:
        fe.error("gr.loop_config(...) configures the next top-level loop; call it at kernel scope", loc)
    bd = fe.known(kwargs.get("block_dim"))
    if bd is not None and (not isinstance(bd, int) or bd < 1 or bd > 256 or bd & (bd - 1)):
        fe.error(f"block_dim must be a power of two from 1 to 256, got {bd!r}", loc)
    ser = kwargs.get("serialize", False)
    if not isinstance(ser, bool):
        fe.error("serialize must be True or False", loc)
    fe.loop_config = {"block_dim": bd, "serialize": ser}


def _vector_host(items, dt=None):
    return np.asarray(items, dtype=None if dt is None else dt.numpy)


_NO_HOST = None

ROWS: dict[str, tuple] = {
    # name: (lowering, host function, doc[, form])
    **{name: _op_row(op) for name, op in BUILTIN_OPS.items()},
    "clamp": (_clamp_lower, lambda x, lo, hi: np.clip(x, lo, hi), "x limited to [lo, hi]."),
    "select": (_select_lower, lambda c, a, b: np.where(c, a, b),
               "a where cond is true, else b; both sides are evaluated."),
    "cast": (_cast_lower, _cast_host, "x converted to a scalar dtype: gr.cast(x, gr.i32) (floats truncate "
                                      "toward zero and saturate to the type's range; NaN gives 0)."),
    "static": (_static_lower, lambda x: x, "A compile-time value: `for i in gr.static(range(3))` unrolls, "
                                           "`if gr.static(flag)` picks a branch at compile time."),
    "ndrange": (_ndrange_lower, _ndrange_host, "A multi-dimensional range: gr.ndrange(n, (b, e), ...); "
                                               "`for i, j in gr.ndrange(n, m)`."),
    "grouped": (_grouped_lower, _NO_HOST, "Iterate an array or ndrange with one index vector: "
                                          "`for I in gr.grouped(x): x[I] = ...`."),
    "Vector": (_vector_lower, _vector_host, "A vector value: gr.Vector([x, y, z], dt=None)."),
    "Matrix": (_matrix_lower, _vector_host, "A matrix value: gr.Matrix([[a, b], [c, d]], dt=None)."),
    "loop_config": (_loop_config_lower, _NO_HOST, "Configure the next top-level loop: block_dim (threads per "
                                                  "block) and serialize (run it on one thread, in order)."),
}
ROWS["logical_not"] = (
    _arity(1, "logical_not", _elementwise(lambda a, loc: sem.as_node(sem.unary(Op.NOT, sem.truth(a, loc), loc),
                                                                     loc, sem.DEFAULTS["ip"]))),
    lambda x: np.logical_not(x).astype(np.int32),
    "Taichi's ti.logical_not(x): 1 where x is zero, else 0 (componentwise).")
ROWS["parallelize"] = (
    lambda fe, args, kwargs, loc: None, _NO_HOST,
    "Taichi's old ti.parallelize(n) (CPU threads for the next loop): accepted and ignored.")
for _op in ("add", "sub", "min", "max", "and", "or", "xor", "mul"):
    ROWS[f"atomic_{_op}"] = (_atomic_form(_op), _NO_HOST,
                             f"Atomically {_op} a value into x[i] (or a kernel-scope variable); returns the old "
                             "value.", True)

BUILTINS: dict[str, Builtin] = {name: Builtin(name, *row) for name, row in ROWS.items()}

__all__ = ["Builtin", "BUILTINS", "ROWS"]
