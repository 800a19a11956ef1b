"""Generator profiles: which types, statements and operators a program uses and how big it
gets. `all` (the default) takes each program's profile from its seed."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

STMTS = dict(declare=3, assign=3, aug=2, **{"if": 2, "for": 2, "while": 1}, jump=1, ret=1, store=2, row=1,
             atomic=1, reduce=1)
FLOAT_OPS = dict(arith=6, div=1, floormod=1, pow=1, minmax=1, math=3, atan2=0.5, select=1, call=1, neg=0.5, cast=1,
                 identity=0)
INT_OPS = dict(arith=5, divmod=2, pow=0.5, bits=2, shift=1, minmax=1, unary=1, fcast=1, icast=1, select=1, call=1)


@dataclass(frozen=True)
class Profile:
    name: str
    types: tuple = ("i32", "f32", "u32")
    func_types: tuple = ("i32", "f32")
    n: tuple = (65, 190)                 # threads of the parallel loop (never a multiple of 64)
    depth: int = 2                       # statement nesting
    block: tuple = (1, 4)                # statements per block
    expr_depth: int = 3
    stmts: dict = field(default_factory=lambda: dict(STMTS))
    float_ops: dict = field(default_factory=lambda: dict(FLOAT_OPS))
    int_ops: dict = field(default_factory=lambda: dict(INT_OPS))
    funcs: tuple = (0, 2)
    tasks: tuple = (1, 1)                # parallel loops
    trip: int = 10                       # most iterations of one serial loop
    budget: int = 150                    # most iterations of nested loops, per thread
    returns: float = 0.0                 # probability of a return value
    ndrange: float = 0.0                 # probability of a 2-d parallel loop
    serialize: float = 0.0               # probability of a serialized top-level loop
    extreme: bool = False
    grad: bool = False


LOOPS = Profile(
    "loops", types=("i32", "f32", "i32", "u32"), depth=3, block=(1, 4), expr_depth=2,
    stmts=dict(STMTS, **{"for": 5, "while": 2, "jump": 4, "if": 3}, row=3, declare=2, assign=2, aug=3),
    int_ops=dict(INT_OPS, fcast=0.3, pow=0.2), float_ops=dict(FLOAT_OPS, floormod=0.3, pow=0.3, atan2=0.2),
    funcs=(0, 1), trip=9, budget=120, returns=0.3)
ARITH = Profile(
    "arith", types=("i32", "f32", "u32", "i64", "f64", "u64"), func_types=("i32", "f32", "f64", "i64"),
    depth=1, block=(2, 5), expr_depth=4,
    stmts=dict(STMTS, **{"for": 0.5, "while": 0.3, "jump": 0.3}, declare=5, assign=3, store=3, row=0),
    funcs=(0, 2), trip=6, budget=30, returns=0.4)
MIXED = Profile(
    "mixed", types=("i32", "f32", "u32", "i64", "f64"), func_types=("i32", "f32", "f64"), depth=2, block=(1, 4),
    expr_depth=3, funcs=(1, 3), tasks=(1, 2), returns=0.6, ndrange=0.15, serialize=0.15, trip=8, budget=80)
GRAD = Profile(
    "grad", types=("f32", "i32"), func_types=("f32",), depth=2, block=(1, 3), expr_depth=2,
    stmts=dict(declare=3, assign=4, aug=1, **{"if": 2, "for": 2, "while": 1}, jump=2, ret=1, store=0, row=0,
               atomic=0, reduce=0, gather=2, accumulate=1),
    float_ops=dict(arith=6, div=1, floormod=0, pow=1, minmax=1, math=4, atan2=0.5, select=0.5, call=1.5, neg=0.5,
                   cast=0, identity=0),
    int_ops=dict(INT_OPS, fcast=0, call=0), funcs=(0, 2), n=(40, 90), trip=6, budget=40, grad=True)

PROFILES = {p.name: p for p in (LOOPS, ARITH, MIXED, GRAD)}
ALL_ORDER = ("loops", "arith", "mixed", "grad", "loops", "mixed")   # `all`: loops and mixed twice as often


def profile_for(name: str, seed: int, caps: dict, extreme: bool = False) -> Profile:
    """The profile a program of this seed uses, fitted to the adapter's features: without
    shader-f64 / shader-int64 the 64-bit types are left out (f32 stands in for f64)."""
    if name == "all":
        name = ALL_ORDER[seed % len(ALL_ORDER)]
    p = PROFILES[name]

    def fit(types):
        out = []
        for t in types:
            if t == "f64" and not caps.get("f64"):
                t = "f32"
            if t in ("i64", "u64") and not caps.get("i64"):
                t = "i32"
            out.append(t)
        return tuple(out)
    p = replace(p, types=fit(p.types), func_types=fit(p.func_types), extreme=extreme)
    if extreme:
        p = replace(p, float_ops=dict(p.float_ops, identity=1.0))
    if p.grad and caps.get("f64") and caps.get("atomic64"):
        p = replace(p, types=("f64", "i32"), func_types=("f64",))
    return p
