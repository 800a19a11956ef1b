"""Taichi's smaller `ti.*` functions that gfxrt had no name for, as kernel builtins (gfxrt/taichi/ops.py
names them and adds `randn`, which draws on gr.random's device state).

Compile-time helpers: `static_assert(cond, msg=None)` (a false condition stops the compile
with `gr.StaticAssertionError`, both a `gr.CompileError` and an `AssertionError`, as
Taichi's raises AssertionError) and `static_print(...)` (prints when the kernel compiles,
so once per specialization and process: such kernels skip the offline cache). Hints with no effect on WebGPU
return their value: `assume_in_range`, `loop_unique`, and `block_local`, `cache_read_only`,
`mesh_local`, `no_activate` are no-ops. Arithmetic: `round(x, dtype=None)` (halves away
from zero, as Taichi's LLVM backends), `floor` / `ceil` with Taichi's optional dtype (all three are
gr.math's, compiler/mathlib.py), `sign` (gr.math.sign), `raw_div` / `raw_mod` (C semantics: integer division truncates
toward zero and the remainder takes the dividend's sign; on floats `raw_div` is `/` and
`raw_mod` is C's fmod) and `bit_cast(x, dtype)` (the 32 bits reinterpreted).
"""
from __future__ import annotations

import builtins as _py
import functools

from . import mathlib as _gm
from . import semantic as sem
from .builtins import BUILTINS as _B
from .builtins import Builtin, _has_runtime_value, inline_module_func
from .errors import CompileError
from .frontend.values import ArrayValue, Compound
from .func import func
from .ir import Node, Op
from .npcompat import np
from .simt import BLOCK as _SIMT
from .types import DType, i32, u32, u64

select = _B["select"]
dtype_arg, round, floor, ceil = _gm.dtype_arg, _gm.round, _gm.floor, _gm.ceil  # noqa: A001  (one copy: gr.math's)


class StaticAssertionError(CompileError, AssertionError):
    """A false gr.static_assert: a compile error, and an AssertionError as in Taichi."""


def _compile_time(fe, v, what, loc):
    v = fe.known(v)  # a typed variable whose value the compiler knows counts
    if _has_runtime_value(v):
        fe.error(f"{what} needs a value known at compile time (constants, template arguments, shapes); this one "
                 "depends on run-time data (use `assert` with gr.init(debug=True) for run-time checks)", loc)
    return v


def _static_assert_lower(fe, args, kwargs, loc):
    if not 1 <= len(args) + len(kwargs) <= 2 or set(kwargs) - {"cond", "msg"}:
        fe.error("gr.static_assert(cond, msg=None)", loc)
    cond = kwargs.get("cond", args[0] if args else None)
    msg = kwargs.get("msg", args[1] if len(args) > 1 else None)
    cond = _compile_time(fe, cond, "gr.static_assert", loc)
    if not cond:
        raise StaticAssertionError(f"static assertion failed{': ' + str(msg) if msg is not None else ''}", loc,
                                   fe.name)


def _static_assert_host(cond, msg=None):
    if msg is not None:
        assert cond, msg
    else:
        assert cond


def _static_print_lower(fe, args, kwargs, loc):
    fe.cacheable = False  # print in every process, not only in the one that filled the offline cache
    shown = []
    for v in args:
        v = fe.known(v)
        if isinstance(v, Node):
            shown.append(f"<{v.dtype} value>")
        elif isinstance(v, Compound):
            shown.append(f"<{fe.describe(v)}>")
        elif isinstance(v, ArrayValue):
            shown.append(f"<{fe.describe(v)}: {v.elem}, shape {v.shape}>")
        else:
            shown.append(v)
    _py.print(*shown, **{k: v for k, v in kwargs.items() if k in ("sep", "end")})


def _hint_lower(name, nargs):
    def lower(fe, args, kwargs, loc):
        if len(args) != nargs and nargs >= 0:
            fe.error(f"gr.{name}() takes {nargs} arguments", loc)
        return args[0] if nargs > 0 else None
    return lower


@func
def _trunc_div_int(a, b):
    q = a // b
    return q + select((a % b != 0) and ((a < 0) != (b < 0)), 1, 0)


@func
def _fmod(a, b):
    r = abs(a) % abs(b)  # Python's % of non-negative floats is C's fmod, exact
    return select(a < 0, -r, r)


@func
def _trunc_mod_int(a, b):
    return a - b * _trunc_div_int(a, b)


def _raw_lower(name, int_fn, float_op):
    def one(fe, a, b, loc):
        ta, tb = sem.operand_types(a, b)
        if ta.is_float or tb.is_float:
            return float_op(fe, a, b, loc)
        if sem.is_const(a) and sem.is_const(b):
            q = _py.abs(a) // _py.abs(b) * (1 if (a < 0) == (b < 0) else -1)
            return q if name == "raw_div" else a - b * q
        return inline_module_func(fe, int_fn, (a, b), {}, loc)

    def lower(fe, args, kwargs, loc):
        if len(args) != 2 or kwargs:
            fe.error(f"gr.{name}(a, b) takes two arguments", loc)
        return fe.map_values(lambda a, b: one(fe, a, b, loc), args, loc)
    return lower


def _c_div_host(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":
        return (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b)))[()]
    return (a / b)[()]


def _c_mod_host(a, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":
        return (a - b * _c_div_host(a, b))[()]
    return np.fmod(a, b)[()]


def _bit_cast_lower(fe, args, kwargs, loc):
    dt = dtype_arg(fe, dict(kwargs), args, 1, "bit_cast", loc)
    if len(args) < 1 or dt is None:
        fe.error("gr.bit_cast(x, dtype) takes a value and a scalar dtype", loc)

    def one(x):
        x = sem.as_node(x, loc) if sem.is_const(x) else x
        src = x.dtype
        if src.size != dt.size:
            fe.error(f"gr.bit_cast: {src} and {dt} have different sizes ({src.size} and {dt.size} bytes)", loc)
        if src.size != 4:
            fe.error(f"gr.bit_cast reinterprets 32-bit values (f32, i32, u32), not {src}", loc)
        return x if src == dt else Node(Op.BITCAST, dt, (x,), loc=loc)
    return fe.map_values(one, (args[0],), loc)


def _bit_cast_host(x, dtype):
    a = np.asarray(x)
    if a.dtype.kind == "f":
        a = a.astype(np.float32)
    elif a.dtype.kind in "iu" and a.dtype.itemsize != np.dtype(dtype.numpy).itemsize:
        a = a.astype(np.int32)
    return a.view(dtype.numpy)[()]


static_assert = Builtin("static_assert", _static_assert_lower, _static_assert_host,
                        "Stop the compile unless cond (a compile-time value) holds: gr.static_assert(cond, msg=None).")
static_print = Builtin("static_print", _static_print_lower, _py.print,
                       "Print compile-time values when the kernel compiles (once per specialization).")
assume_in_range = Builtin("assume_in_range", _hint_lower("assume_in_range", 4), lambda v, base, lo, hi: v,
                          "Taichi's range hint for its scratch-pad optimization: returns val unchanged.")
loop_unique = Builtin("loop_unique", lambda fe, args, kwargs, loc: args[0] if args else None,
                      lambda v, covers=None: v, "Taichi's uniqueness hint: returns val unchanged.")
block_local = Builtin("block_local", lambda fe, a, k, loc: None, lambda *fields: None,
                      "Taichi's block-local storage hint: no effect (WebGPU caching is the driver's).")
cache_read_only = Builtin("cache_read_only", lambda fe, a, k, loc: None, lambda *fields: None,
                          "Taichi's read-only cache hint: no effect.")
mesh_local = Builtin("mesh_local", lambda fe, a, k, loc: None, lambda *fields: None,
                     "Taichi's mesh-local hint: no effect (gfxrt has no meshes).")
no_activate = Builtin("no_activate", lambda fe, a, k, loc: None, lambda *fields: None,
                      "Taichi's sparse hint: no effect (gfxrt's fields are dense).")
sign = _gm.sign
raw_div = Builtin("raw_div", _raw_lower("raw_div", _trunc_div_int, lambda fe, a, b, loc: sem.binary(Op.DIV, a, b, loc)),
                  _c_div_host, "C division: integers truncate toward zero; floats divide.")
raw_mod = Builtin("raw_mod", _raw_lower("raw_mod", _trunc_mod_int,
                                        lambda fe, a, b, loc: inline_module_func(fe, _fmod, (a, b), {}, loc)),
                  _c_mod_host, "C remainder: the sign of the dividend (fmod on floats).")
bit_cast = Builtin("bit_cast", _bit_cast_lower, _bit_cast_host,
                   "The bits of x reinterpreted as dtype (same size, 32-bit): gr.bit_cast(1.0, gr.u32).")



def _zero_one(value):
    def lower(fe, args, kwargs, loc):
        if len(args) != 1 or kwargs:
            fe.error(f"gr.{'one' if value else 'zero'}(x) takes one value", loc)
        return fe.map_values(lambda x: sem.as_node(value, loc, sem.dtype_of(x)) if not sem.is_const(x)
                             else type(x)(value), (args[0],), loc)
    return lower


def _variadic(b):
    """Taichi's min / max of any number of values (pairwise, left to right)."""
    def lower(fe, args, kwargs, loc):
        if not args or kwargs:
            fe.error(f"gr.{b.name}() takes one or more values", loc)
        out = args[0]
        for x in args[1:]:
            out = b.lower(fe, [out, x], {}, loc)
        return out
    return lower


def _bit_shr_lower(fe, args, kwargs, loc):
    if len(args) != 2 or kwargs:
        fe.error("gr.bit_shr(x, n) takes two arguments", loc)

    def one(x, n):
        t = sem.dtype_of(x)
        if t.is_float or sem.dtype_of(n).is_float:
            fe.error("gr.bit_shr needs integers", loc)
        if t.kind == "uint" or sem.is_const(x) and x >= 0:
            return sem.binary(Op.SHR, x, n, loc)
        if t.size != 4:
            fe.error(f"gr.bit_shr: logical shifts of {t} are not supported (32-bit integers only)", loc)
        x = sem.as_node(x, loc, t)
        u = Node(Op.BITCAST, u32, (x,), loc=loc)
        return Node(Op.BITCAST, t, (sem.binary(Op.SHR, u, n, loc),), loc=loc)
    return fe.map_values(one, args, loc)


def _bit_shr_host(x, n):
    a = np.asarray(x)
    if a.dtype.kind == "i":
        return (a.astype(np.int32).view(np.uint32) >> np.uint32(n)).view(np.int32)[()]
    return (a >> n)[()]


def _get_addr_lower(fe, args, kwargs, loc):
    """`gr.get_addr(f, I)`: the byte offset of element I in the storage of field f (f, or its
    place SNode `f.snode`; an ndarray too), as a u64. gfxrt keeps each field in an array of its
    own, row-major over its index space, an element's components together: differences of the
    addresses of one field's elements are byte distances, which equal Taichi's wherever Taichi's
    layout is the same (one field under one dense level, `gr.field(shape=...)`)."""
    if len(args) != 2 or kwargs:
        fe.error("gr.get_addr(f, I) takes a field (or its SNode, f.snode) and an index", loc)
    target, index = args
    if not isinstance(target, ArrayValue):
        placed = getattr(target, "__gfxrt_placed__", None) if not isinstance(target, (Node, int, float)) else None
        info = getattr(placed, "__gfxrt_field__", None)
        if info is None:
            fe.error(f"gr.get_addr(f, I) takes a field or a field's SNode (f.snode), not {fe.describe(target)}", loc)
        target = ArrayValue(getattr(placed, "name", "") or "field", "", info.elem, info.shape, placed,
                            offset=info.offset)
    if isinstance(index, Compound):
        items = list(index.items)
    elif isinstance(index, (tuple, list)):
        items = [x for v in index for x in (v.items if isinstance(v, Compound) else (v,))]
    else:
        items = [] if index is None else [index]
    if len(items) != target.ndim:
        fe.error(f"gr.get_addr(): {target.name!r} has {target.ndim} ind{'ex' if target.ndim == 1 else 'ices'}, "
                 f"got {len(items)}", loc)
    flat = 0
    for d, v in enumerate(items):
        v = fe.scalar(v, loc)
        if sem.dtype_of(v).is_float:
            fe.error("gr.get_addr(): indices must be integers", loc)
        v = sem.binary(Op.SUB, v, target.offset[d], loc) if target.offset and target.offset[d] else v
        flat = v if d == 0 else sem.binary(Op.ADD, sem.binary(Op.MUL, flat, target.shape[d], loc), v, loc)
    elem = target.elem
    nbytes = target.dtype.size * (1 if isinstance(elem, DType) else elem.size)
    return sem.binary(Op.MUL, sem.as_node(sem.as_node(flat, loc, i32), loc, u64), sem.as_node(nbytes, loc, u64), loc)


def _stop_grad_lower(fe, args, kwargs, loc):
    fe.error("gr.stop_grad(x) is not supported: gfxrt differentiates every needs_grad field a kernel reads; read "
             "the values through a field without needs_grad (or a copy) to keep gradients from flowing", loc)


zero = Builtin("zero", _zero_one(0), lambda x: np.zeros_like(np.asarray(x))[()], "A zero of x's type and shape.")
one = Builtin("one", _zero_one(1), lambda x: np.ones_like(np.asarray(x))[()], "A one of x's type and shape.")
min = Builtin("min", _variadic(_B["min"]), lambda *a: functools.reduce(np.minimum, a),  # noqa: A001
              "The smallest of the values (two or more, component by component).")
max = Builtin("max", _variadic(_B["max"]), lambda *a: functools.reduce(np.maximum, a),  # noqa: A001
              "The largest of the values (two or more, component by component).")
bit_shr = Builtin("bit_shr", _bit_shr_lower, _bit_shr_host, "Logical (unsigned) shift right of a 32-bit integer.")
stop_grad = Builtin("stop_grad", _stop_grad_lower, None, "Not supported: raises a CompileError.")
get_addr = Builtin("get_addr", _get_addr_lower, None, "gr.get_addr(f, I): the byte offset (u64) of f[I] in the "
                   "storage of field f (or of its SNode f.snode); differences within one field are byte distances.")
pyfunc = func  # Taichi's @ti.pyfunc: a @gr.func already runs on the host when called there


BUILTINS = {b.name: b for b in (static_assert, static_print, assume_in_range, loop_unique, block_local,
                                cache_read_only, mesh_local, no_activate, round, floor, ceil, sign, raw_div,
                                raw_mod, bit_cast, zero, one, min, max, bit_shr, stop_grad, get_addr)}
BUILTINS["global_thread_idx"] = _SIMT["global_thread_idx"]

__all__ = [*BUILTINS, "StaticAssertionError", "pyfunc"]
