"""Typed node constructors for the autodiff passes, with the algebraic shortcuts that keep
generated adjoints small and finite (x * 1 -> x, x + 0 -> x, select(c, g, 0) * d -> select(c, g * d, 0)).
All operands must already have the result's dtype; no Python numbers except through `c()`."""
from __future__ import annotations

from ..ir import AtomicAttr, KernelIR, Loc, Node, Op, const, walk_node
from ..types import DType, f32, i32, u1, u32, u64


def c(value, t: DType, loc: Loc | None = None) -> Node:
    """A constant of dtype t."""
    if t.is_float:
        value = float(value)
    elif t == u1:
        value = bool(value)
    else:
        value = int(value)
    return const(value, t, loc)


def k(value, like: Node) -> Node:
    """A constant of `like`'s dtype."""
    return c(value, like.dtype)


def sq(a: Node) -> Node:
    return mul(a, a)


def is_const(n: Node, value=None) -> bool:
    """True when n is a constant (equal to `value` if given)."""
    return n.op is Op.CONST and (value is None or n.attr == value)


def var(name: str, t: DType, loc: Loc | None = None) -> Node:
    """A read of local `name`."""
    return Node(Op.VAR, t, attr=name, loc=loc)


def un(op: Op, a: Node, t: DType | None = None) -> Node:
    """A unary node (result dtype t, default the operand's)."""
    return Node(op, t or a.dtype, (a,), loc=a.loc)


def bin(op: Op, a: Node, b: Node, t: DType | None = None) -> Node:
    """A binary node (result dtype t, default the first operand's)."""
    return Node(op, t or a.dtype, (a, b), loc=a.loc or b.loc)


def add(a: Node, b: Node) -> Node:
    """a + b, without adding zeros."""
    if is_const(a, 0):
        return b
    if is_const(b, 0):
        return a
    if b.op is Op.NEG:
        return bin(Op.SUB, a, b.args[0])
    return bin(Op.ADD, a, b)


def sub(a: Node, b: Node) -> Node:
    """a - b, without subtracting zeros."""
    if is_const(b, 0):
        return a
    if is_const(a, 0):
        return neg(b)
    return bin(Op.SUB, a, b)


def neg(a: Node) -> Node:
    """-a, folding constants and double negation."""
    if a.op is Op.NEG:
        return a.args[0]
    if a.op is Op.CONST and a.dtype.is_float:
        return c(-a.attr, a.dtype, a.loc)
    return un(Op.NEG, a)


def mul(a: Node, b: Node) -> Node:
    """a * b, folding multiplications by 1, -1 and 0, and moving a factor into a select with a
    zero branch: the adjoint of a branch not taken stays 0 where the other factor is inf or NaN
    (`sqrt(x) if c else 0` at x = -0.0: 0 * (0.5 / sqrt(-0.0)) was NaN; progfuzz seed 700767)."""
    for x, y in ((a, b), (b, a)):
        if is_const(x, 1):
            return y
        if is_const(x, -1):
            return neg(y)
        if is_const(x, 0) and x.dtype.is_float:
            return x
        if x.op is Op.SELECT and is_const(x.args[2], 0):  # select(c, g, 0) * y -> select(c, g * y, 0)
            return select(x.args[0], mul(x.args[1], y), c(0, y.dtype))
        if x.op is Op.SELECT and is_const(x.args[1], 0):
            return select(x.args[0], c(0, y.dtype), mul(x.args[2], y))
    return bin(Op.MUL, a, b)


def div(a: Node, b: Node) -> Node:
    """a / b (b == 1 folded)."""
    if is_const(b, 1):
        return a
    return bin(Op.DIV, a, b)


def select(cond: Node, a: Node, b: Node) -> Node:
    """a where cond else b (constant conditions folded)."""
    if is_const(cond):
        return a if cond.attr else b
    return Node(Op.SELECT, a.dtype, (cond, a, b), loc=cond.loc)


def cmp(op: Op, a: Node, b: Node) -> Node:
    """A comparison (bool result)."""
    return Node(op, u1, (a, b), loc=a.loc)


def not_(a: Node) -> Node:
    """Boolean not."""
    if a.op is Op.NOT:
        return a.args[0]
    if is_const(a):
        return c(not a.attr, u1)
    return Node(Op.NOT, u1, (a,), loc=a.loc)


def and_(a: Node, b: Node) -> Node:
    """Boolean and (short-circuit in WGSL and the interpreter)."""
    return Node(Op.AND, u1, (a, b), loc=a.loc)


def cast(a: Node, t: DType) -> Node:
    """a converted to dtype t."""
    if a.dtype == t:
        return a
    if a.op is Op.CONST:
        from ..semantic import cast as sem_cast
        return sem_cast(a, t)
    return Node(Op.CAST, t, (a,), loc=a.loc)


def assign(name: str, value: Node, loc: Loc | None = None) -> Node:
    """Statement: local `name` = value."""
    return Node(Op.ASSIGN, attr=name, args=(value,), loc=loc or value.loc)


def store(buf: str, index: Node, value: Node, loc: Loc | None = None) -> Node:
    """Statement: buf[index] = value."""
    return Node(Op.STORE, attr=buf, args=(index, value), loc=loc)


def load(buf: str, index: Node, t: DType, loc: Loc | None = None) -> Node:
    """Expression: buf[index]."""
    return Node(Op.LOAD, t, (index,), attr=buf, loc=loc)


def atomic(op: str, buf: str, index: Node, value: Node, loc: Loc | None = None, dest: str | None = None) -> Node:
    """Statement: atomic `op` of value into buf[index] (old value into local `dest`)."""
    return Node(Op.ATOMIC, attr=AtomicAttr(op, buf, dest), args=(index, value), loc=loc)


def if_(cond: Node, then, other=(), loc: Loc | None = None) -> Node:
    """Statement: if cond { then } else { other }."""
    return Node(Op.IF, args=(cond,), blocks=(tuple(then), tuple(other)), loc=loc)


def words(t: DType) -> int:
    """How many 32-bit adstack slots a value of dtype t takes (2 for f64 / i64 / u64)."""
    return 2 if t.size == 8 else 1


def to_words(v: Node) -> list[Node]:
    """The u32 words of a scalar for the adstack, low word first: bool as 0/1, f16 widened to
    f32 (exactly), a 64-bit value as its two halves (an f64 is never rounded to f32 there)."""
    t = v.dtype
    if t.size == 8:
        bits = v if t == u64 else un(Op.BITCAST, v, u64)
        return [cast(bits, u32), cast(bin(Op.SHR, bits, c(32, u64)), u32)]
    if t == u32:
        return [v]
    if t == u1:
        return [select(v, c(1, u32), c(0, u32))]
    if t.is_float and t.size != 4:
        v = cast(v, f32)
    return [un(Op.BITCAST, v, u32)]


def from_words(w: list[Node], t: DType) -> Node:
    """Inverse of `to_words`."""
    if t.size == 8:
        bits = bin(Op.BITOR, bin(Op.SHL, cast(w[1], u64), c(32, u64)), cast(w[0], u64))
        return bits if t == u64 else un(Op.BITCAST, bits, t)
    if t == u32:
        return w[0]
    if t == u1:
        return cmp(Op.NE, w[0], c(0, u32))
    if t.is_float and t.size != 4:
        return cast(un(Op.BITCAST, w[0], f32), t)
    return un(Op.BITCAST, w[0], t)


def vars_of(n: Node) -> set[str]:
    """Names of the locals an expression reads."""
    return {x.attr for x in walk_node(n) if x.op is Op.VAR}


class Names:
    """Fresh locals for a pass: `names.new('ad.t', f32)` -> 'ad.t0', 'ad.t1', ..."""

    def __init__(self, ir: KernelIR):
        self.ir = ir
        self.count: dict[str, int] = {}

    def new(self, hint: str, t: DType) -> str:
        k = self.count.get(hint, 0)
        while f"{hint}{k}" in self.ir.locals:
            k += 1
        self.count[hint] = k + 1
        name = f"{hint}{k}"
        self.ir.locals[name] = t
        return name

    def fixed(self, name: str, t: DType) -> str:
        """A named local, created once (e.g. the adjoint of a local)."""
        self.ir.locals.setdefault(name, t)
        return name


__all__ = ["c", "var", "add", "sub", "mul", "div", "neg", "select", "cmp", "not_", "and_", "cast",
           "assign", "store", "load", "atomic", "if_", "words", "to_words", "from_words", "vars_of", "Names",
           "un", "bin", "is_const", "i32"]
