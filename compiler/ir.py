"""The typed IR: one node type, an op enum grouped by kind, and the kernel container.

A `Node` is either an expression (pure: its value depends on locals, params and memory
at the point it is evaluated) or a statement (ASSIGN, STORE, ATOMIC, IF, WHILE, FOR, ...).
Statements hold nested statement lists in `blocks`. Everything is scalar: vectors and
matrices are scalarized by the frontend.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from .ops import BINARY, COMPARE, UNARY, Op  # noqa: F401  (the op groups are the IR's too)
from .types import DType


@dataclass(frozen=True, slots=True)
class Loc:
    """A source position: file, 1-based line, column and the text of that line."""

    file: str
    line: int
    col: int = 0
    text: str = ""

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


# Op (compiler/ops.py): the expression ops are rows of the op table; the others hold
#   CONST: attr a Python value; PARAM: attr a param name (a scalar argument or an array extent); VAR: attr a local;
#   LOAD: attr a buffer, args (flat index,); SPECIAL: attr a SPECIALS name, i32; LENGTH: attr a buffer, its i32
#   element count; SUBGROUP: attr a SUBGROUP_OPS name, args (value,) or (value, lane), convergent.
#   ASSIGN: attr a local, args (value,); STORE: attr a buffer, args (flat index, value); ATOMIC: attr AtomicAttr,
#   args (flat index, value), the old value into attr.dest if set; IF: args (cond,), blocks (then, else); WHILE:
#   args (cond,) tested before each iteration, blocks (body,); FOR: attr the loop var, args (begin, end, step),
#   blocks (body,), Python's range; BREAK; CONTINUE; ASSERT: args (cond,) or (cond, index, extent) for a bounds
#   check, attr (error code, message), debug checks reported at sync; BARRIER: attr 'workgroup' | 'storage',
#   convergent. PUSH: args (value,) onto the thread's adstack; POP: attr a local that receives the top (autodiff).
#   TEXEL: one f32 channel of a texture read, attr TexelAttr, args (coordinates..., lod) (sample: f32 coordinates
#   and lod; fetch: i32 coordinates and lod; load: i32 coordinates); TEXSTORE: attr a texture, args (coordinates...,
#   4 channel values) (compiler/textures.py).

LEAVES = frozenset({Op.CONST, Op.PARAM, Op.VAR, Op.SPECIAL, Op.LENGTH})
EXPRS = UNARY | BINARY | LEAVES | {Op.LOAD, Op.SELECT, Op.SUBGROUP, Op.TEXEL}
STMTS = frozenset({Op.ASSIGN, Op.STORE, Op.ATOMIC, Op.IF, Op.WHILE, Op.FOR, Op.BREAK,
                   Op.CONTINUE, Op.ASSERT, Op.BARRIER, Op.PUSH, Op.POP, Op.TEXSTORE})
# expressions whose value is not a function of their operands: memory reads and cross-thread values
# (never folded, hoisted or taken as uniform)
VARYING = frozenset({Op.LOAD, Op.SUBGROUP, Op.TEXEL})
# ops whose result depends on which other threads execute them: a task using them runs
# every thread of each block through its body (see Task.convergent)
CONVERGENT = frozenset({Op.SUBGROUP, Op.BARRIER})

# Op.SPECIAL leaves: thread position inside the launch (all i32)
SPECIALS = ("thread_idx", "global_thread_idx", "block_idx", "block_dim", "subgroup_invocation_id",
            "subgroup_size", "subgroup_id", "num_subgroups")
# Op.SUBGROUP operations: (name -> number of args)
SUBGROUP_OPS = {"add": 1, "mul": 1, "min": 1, "max": 1, "and": 1, "or": 1, "xor": 1,
                "inclusive_add": 1, "inclusive_mul": 1, "exclusive_add": 1, "exclusive_mul": 1,
                "broadcast_first": 1, "all": 1, "any": 1, "elect": 0,
                "shuffle": 2, "shuffle_xor": 2, "shuffle_up": 2, "shuffle_down": 2}
ATOMIC_OPS = ("add", "sub", "min", "max", "and", "or", "xor", "mul", "cas")  # mul: compare-and-swap only
# cas: args (index, value, expected): stores value where the element equals expected; the old
# value goes to dest (the store happened iff old == expected). Integer elements only.


@dataclass(frozen=True, slots=True)
class TexelAttr:
    """What a TEXEL expression reads: channel `channel` (0-3) of texture `tex` by `method`:
    'sample' (filtered, at normalized coordinates), 'fetch' (a texel of a sampled texture) or
    'load' (a texel of a storage texture)."""

    tex: str
    method: str
    channel: int


@dataclass(frozen=True, slots=True)
class AtomicAttr:
    """What an ATOMIC statement does: `op` in ATOMIC_OPS on `buf`."""

    op: str
    buf: str
    dest: str | None = None  # local receiving the old value


@dataclass(frozen=True, eq=False, slots=True)
class Node:
    """One IR node. Identity equality: passes build new nodes instead of mutating."""

    op: Op
    dtype: DType | None = None
    args: tuple[Node, ...] = ()
    attr: Any = None
    blocks: tuple[tuple[Node, ...], ...] = ()
    loc: Loc | None = None

    def with_(self, **kw) -> Node:
        return replace(self, **kw)

    def __repr__(self) -> str:  # short form; the full textual IR lives in compiler.printer
        a = f" {self.attr!r}" if self.attr is not None else ""
        args = ", ".join(map(repr, self.args))
        return f"{self.op.name.lower()}{a}({args})"


Block = tuple[Node, ...]


# -- kernel-level symbols ----------------------------------------------------------------

@dataclass(frozen=True)
class Param:
    """A scalar known at launch: a kernel argument or an array extent.

    `source` is ('arg', i) for the i-th scalar argument or ('shape', i, d) for dimension d
    of the i-th (array) argument.
    """

    name: str
    dtype: DType
    source: tuple


@dataclass
class Buffer:
    """A storage buffer bound to the kernel.

    kind: 'arg' (array argument `source`=arg index), 'field' (source=field object id),
    'grad' (gradient of the buffer named by `of`), or an internal kind the runtime
    provides: 'temps' (cross-task locals, reductions), 'result' (return values),
    'status' (device-side error flags); or 'shared': workgroup memory (not a binding).
    Kind 'private' is no binding either but a per-thread array of `source` elements
    (`var<private>`), e.g. the adstack's first slots; kind 'private_shared' means the same
    per-thread array laid out in workgroup memory, element k of thread t of a block of W
    threads at [k * W + t] (a layout only the code generator sees).

    `size` is the number of elements for 'shared', 'temps', 'result' and 'status'.
    `inner` ('arg' and 'field' arrays of two or more dimensions of scalars): the extent of the
    last dimension, an int or the name of the param holding it. A flat index `u * inner + c`
    then addresses column c of a row, and the language's bounds rule keeps c below `inner`,
    which lets reverse mode prove that items touch different elements (autodiff/columns.py).
    `lanes` (2 or 4, 'shared' only): a SharedArray of vectors of that many 4-byte components.
    The IR still addresses it by scalar (element * lanes + component); the code generator
    declares it as an array of vectors so that a whole element moves in one vector access
    (one 128-bit workgroup load or store on GPUs for a vec4), see codegen/wgsl_vec.py.
    'temps' and 'result' are *word* buffers: u32 words holding values of any 4-byte (or
    smaller) dtype, so LOAD/STORE/ATOMIC on them carry their own value dtype.
    `chunks` ('arg'): the binding windows the array argument needs (ArgSpec.chunks: it is larger
    than one storage binding); `elems` ('field'): its number of elements, from which the code
    generator derives its windows (Target.chunks). A gradient, tangent or shadow buffer (`of`)
    is windowed as its primal (codegen/wgsl_chunks.py).
    """

    name: str
    dtype: DType
    kind: str
    source: Any = None
    of: str | None = None
    read: bool = False
    write: bool = False
    atomic: bool = False
    needs_grad: bool = False
    size: int | None = None
    lanes: int = 1
    inner: int | str | None = None
    chunks: int = 1
    elems: int | None = None

    @property
    def words(self) -> bool:
        """True for the internal word buffers whose slots hold values of any dtype."""
        return self.kind in WORD_KINDS


WORD_KINDS = frozenset({"temps", "result", "print"})
INTERNAL_KINDS = frozenset({"temps", "result", "status", "print"})


@dataclass(frozen=True)
class Reduction:
    """A task-level reduction (made by the codegen pass `reductions`): each thread
    accumulates into the local `acc` starting from the identity of `op`; at the end of the
    task the block combines its threads' values and applies one `op` atomic to
    `buf[index]` (index: uniform, params and constants only)."""

    acc: str
    op: str
    buf: str
    index: Node
    dtype: object


@dataclass
class Task:
    """One compute entry point. A 'range' task runs `body` once for each value
    0 <= index_var < extent in parallel; a 'serial' task runs it once, on one thread.

    loop_vars: the user's parallel loop variables (set from index_var at the top of the
    body), jointly one-to-one with index_var. workgroup_size: threads per block (None: the
    target's default). convergent: the body uses barriers or subgroup ops, so every thread
    of a block runs it (index_var may exceed extent: the user guards memory accesses).

    A range task with `active` set runs on a capped grid (adstack tasks): each physical
    thread first sets `thread_var` to its id and runs `prologue`; then only the first
    min(dispatched threads, active) threads go on (`active_var` holds that count), each
    running a grid-stride loop over the logical range with that stride. `stack_depth` is
    the adstack heap slots per thread when known at compile time (None: sized on the device);
    `stack_level1` its first-level slots (before the heap).

    `items` (range tasks whose extent the host evaluates): (lo, hi), either None for no bound:
    the task runs only when lo <= extent < hi, and another task of the kernel covers the
    other sizes (reverse mode's gather and atomic variants of one task, autodiff/gather.py).
    """

    name: str
    kind: str  # 'range' | 'serial'
    body: Block
    extent: Node | None = None
    index_var: str | None = None
    loc: Loc | None = None
    loop_vars: tuple[str, ...] = ()
    workgroup_size: int | None = None
    convergent: bool = False
    reductions: tuple[Reduction, ...] = ()
    prologue: Block = ()
    active: Node | None = None
    thread_var: str | None = None
    active_var: str | None = None
    stack_depth: int | None = None
    stack_level1: int = 0
    items: tuple | None = None


@dataclass
class KernelIR:
    """A whole kernel: its launch-time scalars, buffers, locals and tasks in order."""

    name: str
    params: list[Param] = field(default_factory=list)
    buffers: list[Buffer] = field(default_factory=list)
    locals: dict[str, DType] = field(default_factory=dict)
    tasks: list[Task] = field(default_factory=list)
    returns: list[DType] = field(default_factory=list)
    loc: Loc | None = None
    # how the flat `returns` regroup into Python values: one shape per returned value
    # (() scalar, (n,) vector, (n, m) matrix); return_tuple: the kernel returns a tuple
    return_shapes: list[tuple[int, ...]] = field(default_factory=list)
    return_tuple: bool = False
    # grad kernels: gradient buffers read into locals at the start of each item
    # (compiler/autodiff/hoist.py), valid only while no other binding is the same buffer
    assumes_distinct: set[str] = field(default_factory=set)
    # texture arguments (compiler/textures.py TextureSlot), bound after the buffers
    textures: list = field(default_factory=list)

    def buffer(self, name: str) -> Buffer:
        for b in self.buffers:
            if b.name == name:
                return b
        raise KeyError(name)


# -- construction helpers ----------------------------------------------------------------

def const(value, dtype: DType, loc: Loc | None = None) -> Node:
    return Node(Op.CONST, dtype, attr=value, loc=loc)


def walk(block: Block):
    """Yield every node of a statement list, statements and their expressions, depth first
    (each node, then its args' subtrees, then its blocks' statements, in order)."""
    stack = list(block)
    stack.reverse()
    yield from _walk(stack)


def walk_node(n: Node):
    """`n` and every node below it, in the order of `walk`."""
    yield from _walk([n])


def _walk(stack: list):
    # An explicit stack instead of nested generators: a nested `yield from` passes each node
    # up through one generator per level (a walk cost depth x size) and recursed once per level.
    pop, push = stack.pop, stack.extend
    while stack:
        n = pop()
        yield n
        if n.blocks:
            for b in reversed(n.blocks):
                push(reversed(b))
        if n.args:
            push(reversed(n.args))


def walk_task(t: Task):
    """Every node of a task: its extent, its capped-grid prologue and thread count, its body
    and its reductions' indices."""
    if t.extent is not None:
        yield from walk_node(t.extent)
    yield from walk(t.prologue)
    if t.active is not None:
        yield from walk_node(t.active)
    yield from walk(t.body)
    for r in t.reductions:
        yield from walk_node(r.index)


def node_key(n: Node) -> tuple:
    """A hashable structural identity of an expression (equal keys: same value)."""
    attr = n.attr
    if isinstance(attr, float) and attr != attr:
        attr = "nan"
    return (n.op, n.dtype, attr, type(attr).__name__, tuple(node_key(a) for a in n.args))


def map_block(block: Block, fn) -> Block:
    """Rebuild a statement list bottom-up: fn(stmt with rebuilt blocks) -> list of stmts."""
    out: list[Node] = []
    for s in block:
        if s.blocks:
            s = s.with_(blocks=tuple(map_block(b, fn) for b in s.blocks))
        out.extend(fn(s))
    return tuple(out)


def map_exprs(n: Node, fn) -> Node:
    """Rebuild an expression bottom-up with fn applied to every node."""
    if n.args:
        args = tuple(map_exprs(a, fn) for a in n.args)
        if any(a is not b for a, b in zip(args, n.args)):
            n = n.with_(args=args)
    return fn(n)


def assigned(block: Block):
    """Locals a statement list may assign (ASSIGN, loop variables, POP, atomic results): a
    set-like view, in order of first appearance."""
    out: dict[str, None] = {}
    for n in walk(block):
        if n.op in (Op.ASSIGN, Op.FOR, Op.POP):
            out[n.attr] = None
        elif n.op is Op.ATOMIC and n.attr.dest:
            out[n.attr.dest] = None
    return out.keys()
