"""The program representation: small immutable dataclasses for expressions, statements,
`@gr.func`s and the kernel, plus the inputs a run uses.

Types are not stored in expressions: `typing.py` derives them (a literal's type depends on
its neighbour, as in the language), so the shrinker can replace any subexpression and the
printer, the oracle and the checker still agree on what the program means.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

import numpy as np


class Node:
    """Base of expressions and statements (children are dataclass fields)."""

    def children(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if isinstance(v, Node):
                yield f.name, None, v
            elif isinstance(v, tuple):
                for k, x in enumerate(v):
                    if isinstance(x, Node):
                        yield f.name, k, x

    def with_child(self, name: str, k: int | None, new: Node) -> Node:
        if k is None:
            return replace(self, **{name: new})
        seq = list(getattr(self, name))
        seq[k] = new
        return replace(self, **{name: tuple(seq)})


# -- expressions ------------------------------------------------------------------------------------
class Expr(Node):
    pass


@dataclass(frozen=True)
class Const(Expr):
    value: int | float | bool


@dataclass(frozen=True)
class Var(Expr):
    name: str


@dataclass(frozen=True)
class Load(Expr):
    """arr[idx...] (arr[None] for a 0-d array: idx == ())."""
    arr: str
    idx: tuple


@dataclass(frozen=True)
class Shape(Expr):
    arr: str
    dim: int


@dataclass(frozen=True)
class Bin(Expr):
    """op: + - * / // % ** & | ^ << >> (infix), min max atan2 (calls: see printer)."""
    op: str
    a: Expr
    b: Expr


@dataclass(frozen=True)
class Unary(Expr):
    """op: neg, invert (~), not."""
    op: str
    a: Expr


@dataclass(frozen=True)
class Compare(Expr):
    """A comparison chain a < b <= c: ops has len(operands) - 1 entries."""
    ops: tuple
    operands: tuple


@dataclass(frozen=True)
class BoolOp(Expr):
    op: str            # 'and' / 'or'
    values: tuple


@dataclass(frozen=True)
class IfExp(Expr):
    cond: Expr
    a: Expr
    b: Expr


@dataclass(frozen=True)
class Select(Expr):
    """gr.select(cond, a, b): both sides evaluated."""
    cond: Expr
    a: Expr
    b: Expr


@dataclass(frozen=True)
class Math(Expr):
    """A float builtin of one argument: sin cos tan tanh exp log sqrt rsqrt asin acos atan
    floor ceil abs (abs also takes ints)."""
    fn: str
    a: Expr


@dataclass(frozen=True)
class Cast(Expr):
    """style: 'cast' gr.cast(a, T), 'ctor' gr.T(a), 'int' int(a), 'float' float(a)."""
    to: str
    a: Expr
    style: str = "cast"


@dataclass(frozen=True)
class Call(Expr):
    """A call of a @gr.func by name."""
    func: str
    args: tuple


# -- statements -------------------------------------------------------------------------------------
class Stmt(Node):
    pass


@dataclass(frozen=True)
class Assign(Stmt):
    """name = value, or `name: T = value` when ann is set (a declaration)."""
    name: str
    value: Expr
    ann: str | None = None


@dataclass(frozen=True)
class AugAssign(Stmt):
    name: str
    op: str
    value: Expr


@dataclass(frozen=True)
class Store(Stmt):
    """arr[idx] = value, or arr[idx] op= value when op is set (atomic on arrays)."""
    arr: str
    idx: tuple
    value: Expr
    op: str | None = None


@dataclass(frozen=True)
class Atomic(Stmt):
    """gr.atomic_<kind>(target, value) as a statement (the old value is not used: it depends
    on the order threads ran in). target: Load or Var (a kernel-scope variable)."""
    kind: str
    target: Expr
    value: Expr


@dataclass(frozen=True)
class If(Stmt):
    cond: Expr
    body: tuple
    orelse: tuple = ()


@dataclass(frozen=True)
class For(Stmt):
    """for var in range(*args): a serial loop, or the kernel's parallel loop at top level."""
    var: str
    args: tuple
    body: tuple


@dataclass(frozen=True)
class NdFor(Stmt):
    """for var0, var1 in gr.ndrange(e0, e1): a 2-d parallel loop (kernel top level only)."""
    vars: tuple
    extents: tuple
    body: tuple


@dataclass(frozen=True)
class While(Stmt):
    cond: Expr
    body: tuple


@dataclass(frozen=True)
class Break(Stmt):
    pass


@dataclass(frozen=True)
class Continue(Stmt):
    pass


@dataclass(frozen=True)
class Return(Stmt):
    """In a func: return value. In a kernel: its last statement, values is a tuple."""
    values: tuple


@dataclass(frozen=True)
class Serialize(Stmt):
    """gr.loop_config(serialize=True) before the next top-level loop."""


# -- functions, kernel, program ---------------------------------------------------------------------
@dataclass(frozen=True)
class Func(Node):
    name: str
    params: tuple          # ((name, type), ...)
    ret: str
    body: tuple


@dataclass(frozen=True)
class Array:
    """A kernel array parameter. role: 'in' (read only), 'out' (per-thread rows written at
    the thread's index), 'acc' (updated atomically), 'loss' (0-d, grad profile)."""
    name: str
    dtype: str
    shape: tuple
    role: str
    needs_grad: bool = False


@dataclass(frozen=True)
class Scalar:
    name: str
    dtype: str
    value: int | float


@dataclass(frozen=True)
class Kernel(Node):
    arrays: tuple          # (Array, ...)
    scalars: tuple         # (Scalar, ...)
    body: tuple
    ret: tuple = ()        # return types, () for none


@dataclass(frozen=True)
class GradSpec:
    """How the grad profile differentiates: 'grad' (kernel.grad with output seeds) or 'tape'
    (gr.Tape(loss)); seeds: name -> weights of the outputs' gradients (kernel.grad)."""
    mode: str
    loss: str | None
    seeds: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Program:
    seed: int
    profile: str
    funcs: tuple           # (Func, ...)
    kernel: Kernel
    inputs: dict           # array name -> numpy array (the initial contents)
    grad: GradSpec | None = None
    extreme: bool = False

    def array(self, name: str) -> Array:
        for a in self.kernel.arrays:
            if a.name == name:
                return a
        raise KeyError(name)

    def func(self, name: str) -> Func:
        for f in self.funcs:
            if f.name == name:
                return f
        raise KeyError(name)

    def fresh_inputs(self) -> dict:
        return {k: np.array(v, copy=True) for k, v in self.inputs.items()}

    @property
    def float_type(self) -> str:
        """The float type of the grad profile's arrays."""
        for a in self.kernel.arrays:
            if a.needs_grad:
                return a.dtype
        return "f32"
