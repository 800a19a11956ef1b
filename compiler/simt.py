"""Workgroup ("block") and subgroup primitives, in the style of Taichi's `ti.simt`.

    gr.simt.block.SharedArray(shape, dtype)   workgroup memory shared by a block's threads
    gr.simt.block.sync()                      barrier: every thread of the block waits here
    gr.simt.block.thread_idx()                index of the thread in its block
    gr.simt.subgroup.reduce_add(v)            sum of v over the subgroup (needs `subgroup`)

A parallel loop that uses `sync()` or a subgroup op is *convergent*: every thread of each
block runs the body, so the loop index can exceed the loop's extent in the last block and
the body must guard its memory accesses (`if i < n:`).
"""
from __future__ import annotations

from . import semantic as sem
from .builtins import Builtin
from .ir import Node, Op
from .types import DType, MatrixType, VectorType, i32, u1


def _special(name: str, doc: str) -> Builtin:
    def lower(fe, args, kwargs, loc):
        if args or kwargs:
            fe.error(f"{name}() takes no arguments", loc)
        return Node(Op.SPECIAL, i32, attr=name, loc=loc)
    return Builtin(name, lower, None, doc)


def _barrier(kind: str, name: str, doc: str) -> Builtin:
    def lower(fe, args, kwargs, loc):
        if args or kwargs:
            fe.error(f"{name}() takes no arguments", loc)
        fe.emit(Node(Op.BARRIER, attr=kind, loc=loc))
    return Builtin(name, lower, None, doc)


def _shared_array(fe, args, kwargs, loc):
    if "dtype" in kwargs:
        args = [*args, kwargs.pop("dtype")]
    if "shape" in kwargs:
        args = [kwargs.pop("shape"), *args]
    if len(args) != 2 or kwargs:
        fe.error("SharedArray(shape, dtype) takes a compile-time shape and a dtype", loc)
    shape, dtype = fe.known(args[0]), args[1]
    shape = (shape,) if isinstance(shape, int) else shape
    if not isinstance(shape, tuple) or not shape or not all(isinstance(s, int) and s > 0 for s in shape):
        fe.error("the shape of a SharedArray must be positive compile-time integers", loc)
    if not isinstance(dtype, (DType, VectorType, MatrixType)):
        fe.error(f"SharedArray dtype must be a gfxrt type such as gr.f32, not {fe.describe(dtype)}", loc)
    return fe.shared_array(shape, dtype, loc)


def _subgroup(op: str, doc: str) -> Builtin:
    nargs = {"broadcast": 2, "shuffle": 2, "shuffle_xor": 2, "shuffle_up": 2, "shuffle_down": 2,
             "elect": 0}.get(op, 1)
    ir_op = {"reduce_add": "add", "reduce_mul": "mul", "reduce_min": "min", "reduce_max": "max",
             "reduce_and": "and", "reduce_or": "or", "reduce_xor": "xor", "all_true": "all",
             "any_true": "any", "broadcast": "shuffle"}.get(op, op)

    def lower(fe, args, kwargs, loc):
        if kwargs or len(args) != nargs:
            fe.error(f"gr.simt.subgroup.{op}() takes {nargs} argument(s)", loc)
        if nargs == 0:
            return Node(Op.SUBGROUP, u1, attr=ir_op, loc=loc)

        def one(v, *lane):
            v = sem.as_node(fe.scalar(v, loc), loc)
            if ir_op in ("all", "any"):
                v = sem.truth(v, loc)
            elif v.dtype == u1:
                v = sem.as_node(v, loc, i32)
            if ir_op in ("and", "or", "xor") and not v.dtype.is_int:
                fe.error(f"gr.simt.subgroup.{op} needs integer values", loc)
            extra = tuple(sem.as_node(fe.scalar(x, loc), loc, i32) for x in lane)
            return Node(Op.SUBGROUP, v.dtype, (v, *extra), attr=ir_op, loc=loc)
        if nargs == 2:
            return fe.map_values(lambda v: one(v, args[1]), (args[0],), loc)
        return fe.map_values(one, (args[0],), loc)
    return Builtin(f"simt.subgroup.{op}", lower, None, doc)


BLOCK: dict[str, Builtin] = {
    "SharedArray": Builtin("simt.block.SharedArray", _shared_array, None,
                           "SharedArray(shape, dtype): workgroup memory shared by the threads of a block "
                           "(zeroed when the block starts)."),
    "sync": _barrier("workgroup", "sync", "Barrier: wait until every thread of the block gets here; makes "
                                          "shared-array writes visible to the block."),
    "mem_fence": _barrier("storage", "mem_fence", "Barrier that also orders the block's writes to arrays in "
                                                  "device memory."),
    "thread_idx": _special("thread_idx", "Index of this thread inside its block (0 .. block_dim - 1)."),
    "global_thread_idx": _special("global_thread_idx", "Index of this thread in the whole launch."),
    "block_idx": _special("block_idx", "Index of this thread's block."),
    "block_dim": _special("block_dim", "Threads per block (gr.loop_config(block_dim=...), default 64)."),
}

SUBGROUP: dict[str, Builtin] = {
    "invocation_id": _special("subgroup_invocation_id", "Index of this thread inside its subgroup."),
    "group_size": _special("subgroup_size", "Threads per subgroup on this device (e.g. 32 on NVIDIA)."),
    "subgroup_id": _special("subgroup_id", "Index of this subgroup in its block (0 .. num_subgroups - 1)."),
    "num_subgroups": _special("num_subgroups", "Subgroups per block."),
    **{op: _subgroup(op, doc) for op, doc in {
        "reduce_add": "Sum of v over the subgroup.", "reduce_mul": "Product of v over the subgroup.",
        "reduce_min": "Minimum of v over the subgroup.", "reduce_max": "Maximum of v over the subgroup.",
        "reduce_and": "Bitwise and of v over the subgroup.", "reduce_or": "Bitwise or of v over the subgroup.",
        "reduce_xor": "Bitwise xor of v over the subgroup.",
        "inclusive_add": "Sum of v over this and lower subgroup lanes.",
        "exclusive_add": "Sum of v over lower subgroup lanes (0 on lane 0).",
        "inclusive_mul": "Product of v over this and lower lanes.",
        "exclusive_mul": "Product of v over lower lanes (1 on lane 0).",
        "broadcast_first": "v of the lowest active lane, on every lane.",
        "broadcast": "broadcast(v, lane): v of the given lane, on every lane.",
        "shuffle": "shuffle(v, lane): v of another lane.",
        "shuffle_xor": "shuffle_xor(v, mask): v of lane (this lane ^ mask).",
        "shuffle_up": "shuffle_up(v, d): v of lane (this lane - d).",
        "shuffle_down": "shuffle_down(v, d): v of lane (this lane + d).",
        "all_true": "True on every lane when the predicate holds on every active lane.",
        "any_true": "True on every lane when the predicate holds on any active lane.",
        "elect": "True on exactly one active lane of the subgroup.",
    }.items()},
}

__all__ = ["BLOCK", "SUBGROUP"]
