"""Python AST -> typed IR: a thin visitor with one `visit_<Node>` method per construct.

The visitor is split by topic into mixins (statements, expressions, loops, funcs,
vectors); this file holds the driver: frames, blocks, emission, the visit wrapper that
turns every failure into a `CompileError` at the user's line, and the kernel-level
splitting of the body into tasks (each top-level `for` is a parallel task, serial code
between loops runs as a one-thread task).
"""
from __future__ import annotations

import ast
from contextlib import contextmanager

from .. import semantic as sem
from ..errors import CompileError, too_deep
from ..ir import Buffer, KernelIR, Loc, Node, Op, Param, Task
from ..spec import ArgSpec
from ..structs import StructType
from ..textures import TextureSlot
from ..types import DType, MatrixType, VectorType, i32, scalar_of
from .callables import CallablesMixin
from .calls import CallMixin
from .compound import CompoundMixin
from .comprehensions import ComprehensionMixin
from .exprs import ExprMixin
from .funcs import FuncMixin
from .listvars import ListVarMixin
from .loops import LoopMixin
from .matctors import MatrixCtorMixin
from .pool import PoolMixin
from .prints import PrintMixin, as_words
from .pyvalues import PyValueMixin
from .scope import ScopeMixin, dynamic_names, python_names
from .source import Frame, FunctionSource, return_annotation, strip_docstring
from .sparse import SparseMixin
from .stmts import StmtMixin
from .structs import StructMixin
from .temps import finalize
from .textures import TextureMixin
from .triplets import TripletsMixin
from .values import ArrayValue, Compound, TextureValue

_CONSTRUCT_HINTS = {
    "Try": "try/except is not supported in kernels; check conditions with `if` instead",
    "TryStar": "try/except is not supported in kernels; check conditions with `if` instead",
    "Raise": "`raise` is not supported in kernels; use `assert` (checked with gr.init(debug=True))",
    "Lambda": "lambdas are not supported in kernels; define a @gr.func instead",
    "ClassDef": "class definitions are not supported in kernels; define classes outside the kernel",
    "FunctionDef": "nested function definitions are not supported; define a @gr.func at module level",
    "AsyncFunctionDef": "nested function definitions are not supported; define a @gr.func at module level",
    "With": "`with` is not supported inside kernels",
    "SetComp": "set comprehensions are not supported in kernels",
    "GeneratorExp": "generator expressions are not supported in kernels; use a loop",
    "Set": "sets are not supported in kernels",
    "Global": "`global` is not needed: fields are used by name",
    "Nonlocal": "`nonlocal` is not supported in kernels",
    "Delete": "`del` is not supported in kernels",
    "Import": "imports are not allowed inside kernels; import at module level",
    "ImportFrom": "imports are not allowed inside kernels; import at module level",
    "JoinedStr": "f-strings are not supported in kernels",
    "Await": "`await` is not supported in kernels",
    "Yield": "`yield` is not supported in kernels",
    "YieldFrom": "`yield` is not supported in kernels",
    "Starred": "`*` unpacking is not supported in kernels",
    "Match": "`match` is not supported in kernels; use if/elif",
}


class Lowering(StructMixin, MatrixCtorMixin,  # structs, gr.Matrix.diag / rows / cols (issue 12)
               ScopeMixin, StmtMixin, ExprMixin, CallMixin, LoopMixin, FuncMixin, CompoundMixin, PrintMixin,
               CallablesMixin, TripletsMixin, SparseMixin, PoolMixin, ComprehensionMixin, TextureMixin,
               PyValueMixin, ListVarMixin):
    """Lowers one specialization of one Python kernel function to `KernelIR`."""

    def __init__(self, func, args: list[ArgSpec], *, name: str | None = None, debug: bool = False):
        src = FunctionSource.of(func)
        self.name = name or func.__name__
        self.debug = debug
        self.ir = KernelIR(self.name, loc=src.loc(src.tree))
        self.frame = Frame(src, func, (), kernel_level=True,
                           dynamic=dynamic_names(src.tree.body, kernel=True, resolve=python_names(func)))
        self._blocks: list[list[Node]] = []
        self._ntemp = 0
        self._fresh_from: dict[str, int] = {}  # base name -> k of the last local `fresh` gave it
        self.in_parallel = False          # lowering the body of a parallel loop
        self.task_vars: set[str] = set()  # IR locals declared by the current task
        self.temp_slots: dict[str, int] = {}   # kernel-scope local -> word in 'temps'
        self.kernel_vars: set[str] = set()     # IR locals declared at kernel scope
        self.python_names: dict[str, str] = {}  # IR local -> the Python name it came from
        self.cacheable = True                  # every Python value used was reached by a path
        self._discard = None
        self.fields: dict[int, ArrayValue] = {}
        self.field_paths: dict[int, tuple] = {}
        self.deps: dict[tuple, object] = {}    # dependency path -> fingerprint (offline cache)
        self.paths: dict[int, tuple] = {}      # id(Python object) -> dependency path
        self.call_stack: list = []
        self.loop_config: dict = {}
        self.vanished: dict[str, Loc] = {}     # names local to a finished parallel loop
        self.loop_private: dict = {}           # kernel-scope name -> (loop, variable) a parallel loop privatized
        self._returned = False
        self._returned_statically = False      # the return was in a taken `if gr.static(...)` branch
        self._bind_args(args)

    # -- entry point -------------------------------------------------------------------
    def lower(self) -> KernelIR:
        body = strip_docstring(self.frame.src.tree.body)
        self._serial: list[Node] = []
        self._serial_loc: Loc | None = None
        self._blocks.append(self._serial)
        self.kernel_block(body)
        if not self._returned and return_annotation(self.frame.func) is not None:
            self.error("Kernel has a return type but does not have a return statement: end the kernel "
                       f"with `return ...` (it is annotated `-> {return_annotation(self.frame.func)!r}`)",
                       self.frame.src.loc(body[-1]) if body else None)
        self._blocks.pop()
        self._flush_serial()
        return finalize(self)

    def kernel_block(self, stmts: list[ast.stmt]) -> None:
        """Statements at kernel scope: top-level `for` loops become parallel tasks."""
        for stmt in stmts:
            if self._returned:
                if self._returned_statically:
                    return  # returned in a compile-time branch: the rest is dead in this specialization
                self.error("code after `return` never runs; `return` must be the kernel's last statement",
                           self.frame.src.loc(stmt))
            if self._serial_loc is None:
                self._serial_loc = self.frame.src.loc(stmt)
            if isinstance(stmt, ast.For):
                self.visit(stmt, self.kernel_for)
            elif isinstance(stmt, ast.If):
                self.visit(stmt, self.kernel_if)
            else:
                self.visit(stmt)

    def _flush_serial(self) -> None:
        if self._serial:
            self.ir.tasks.append(Task(f"task{len(self.ir.tasks)}", "serial", tuple(self._serial),
                                      loc=self._serial_loc))
        self._serial.clear()
        self._serial_loc = None

    @contextmanager
    def task_context(self, parallel: bool):
        """Lower one task: serial code before it is flushed as its own task first."""
        self._blocks.pop()
        self._flush_serial()
        saved = self.in_parallel, self.task_vars
        self.in_parallel, self.task_vars = parallel, set()
        try:
            yield
        finally:
            self.in_parallel, self.task_vars = saved
            self._blocks.append(self._serial)

    # -- arguments ---------------------------------------------------------------------
    def _bind_args(self, args: list[ArgSpec]) -> None:
        scope = self.frame.scope
        for i, a in enumerate(args):
            if a.kind == "scalar":
                self.ir.params.append(Param(a.name, a.dtype, ("arg", i)))
                scope[a.name] = Node(Op.PARAM, a.dtype, attr=a.name)
            elif a.kind == "vector":  # a vector / matrix argument: one param per component
                t = a.elem
                dt = t.dtype
                items = []
                for k in range(t.size):
                    pname = f"{a.name}.{k}"
                    self.ir.params.append(Param(pname, dt, ("elem", i, k, t.size)))
                    items.append(Node(Op.PARAM, dt, attr=pname))
                scope[a.name] = Compound(t.shape, tuple(items))
            elif a.kind == "struct":  # one param per scalar component, in declaration order
                scope[a.name] = self.bind_struct_arg(a.name, i, a.elem)
            elif a.kind == "ndarray":
                shape = []
                for d in range(a.ndim):
                    pname = f"{a.name}.shape{d}"
                    self.ir.params.append(Param(pname, i32, ("shape", i, d)))
                    shape.append(Node(Op.PARAM, i32, attr=pname))
                inner = f"{a.name}.shape{a.ndim - 1}" if a.ndim >= 2 and isinstance(a.elem, DType) else None
                self.ir.buffers.append(Buffer(a.name, scalar_of(a.elem), "arg", source=i, needs_grad=a.needs_grad,
                                              inner=inner, chunks=a.chunks))
                scope[a.name] = ArrayValue(a.name, a.name, a.elem, tuple(shape), clamp=a.boundary == "clamp")
            elif a.kind == "texture":  # a.value: (Format, storage, lod) (compiler/textures.py)
                fmt, storage, lod = a.value
                slot = TextureSlot(a.name, i, a.ndim, fmt, storage, lod)
                self.ir.textures.append(slot)
                shape = []
                for d in range(a.ndim):  # the launch reads gr.Texture.shape as an array's
                    pname = f"{a.name}.shape{d}"
                    self.ir.params.append(Param(pname, i32, ("shape", i, d)))
                    shape.append(Node(Op.PARAM, i32, attr=pname))
                scope[a.name] = TextureValue(a.name, slot, tuple(shape))
            elif a.kind == "template":
                self.paths_add(a.value, (("arg", i),))
                scope[a.name] = self.from_python(a.value, a.name, self.ir.loc, path=(("arg", i),))
            else:
                raise CompileError(f"argument {a.name!r} has unknown kind {a.kind!r}")
        for name in self.frame.dynamic:
            v = scope.get(name)
            if isinstance(v, Node) and v.op is Op.PARAM:
                self.frame.readonly.add(name)  # scalar args may only be rebound at top level

    # -- blocks and emission -------------------------------------------------------------
    @contextmanager
    def block(self):
        b: list[Node] = []
        self._blocks.append(b)
        try:
            yield b
        finally:
            self._blocks.pop()

    def emit(self, n: Node) -> None:
        if not self._blocks:
            raise CompileError("statement outside of any block (compiler bug)", n.loc)
        self._blocks[-1].append(n)

    def fresh(self, base: str) -> str:
        """An IR local name not used yet: `base`, else `base_k` for the least k free. Locals
        are only added while lowering, so the search for a base resumes where its last one
        ended (from 0 each time, n loops naming their index `i` cost n^2 / 2 lookups)."""
        k = self._fresh_from.get(base, 0)
        name = f"{base}_{k}" if k else base
        while name in self.ir.locals:
            k += 1
            name = f"{base}_{k}"
        self._fresh_from[base] = k
        return name

    def new_local(self, base: str, dtype: DType) -> str:
        name = self.fresh(base)
        self.ir.locals[name] = dtype
        self.task_vars.add(name)
        return name

    def temp(self, value, loc: Loc) -> Node:
        """Materialize a scalar value into a fresh local and return a read of it."""
        n = sem.as_node(value, loc)
        name = self.new_local(f"tmp{self._ntemp}", n.dtype)
        self._ntemp += 1
        self.emit(Node(Op.ASSIGN, attr=name, args=(n,), loc=loc))
        return Node(Op.VAR, n.dtype, attr=name, loc=loc)

    def error(self, msg: str, loc: Loc | None = None):
        raise CompileError(msg, loc, self.name)

    # -- the visit wrapper ----------------------------------------------------------------
    def visit(self, node: ast.AST, method=None):
        loc = self.frame.src.loc(node)
        fn = method or getattr(self, f"visit_{type(node).__name__}", None)
        if fn is None:
            kind = type(node).__name__
            hint = _CONSTRUCT_HINTS.get(kind, f"the Python construct `{kind}` is not supported in kernels")
            raise CompileError(hint, loc, self.name)
        try:
            return fn(node, loc)
        except CompileError as e:
            if e.loc is None:
                raise CompileError(e.message, loc, self.name) from None
            raise
        except RecursionError:
            raise too_deep(self.name, loc) from None
        except Exception as e:  # a compiler bug: still point at the user's line
            raise CompileError(f"internal compiler error: {type(e).__name__}: {e}", loc,
                               self.name) from e

    # -- kernel return value -------------------------------------------------------------
    def kernel_end(self, loc: Loc) -> None:
        """A bare `return` (or `return None`) at kernel scope: the kernel ends there."""
        if self.in_parallel:
            self.error("`return` inside a parallel loop is not allowed; use `continue` to end an iteration", loc)
        if not self.frame.kernel_level or self._blocks[-1] is not self._serial:
            self.error("a kernel may only `return` as its last statement, at the top level", loc)
        self._returned = True

    def kernel_return(self, value, loc: Loc) -> None:
        """`return v` at kernel scope: store the flattened value into the 'result' buffer."""
        if self.in_parallel:
            self.error("`return` inside a parallel loop is not allowed; reduce into a kernel-scope "
                       "variable (`s += v`) and return it after the loop", loc)
        if not self.frame.kernel_level or self._blocks[-1] is not self._serial:
            self.error("a kernel may only `return` as its last statement, at the top level", loc)
        ann = return_annotation(self.frame.func)
        if isinstance(ann, StructType):  # a struct comes back as its leaves; gfxrt/kernel.py rebuilds it
            value = tuple(self.flatten_struct(self.as_struct(value, ann, loc)))
            ann = tuple(t for _, t in ann.leaves())
        items = list(value) if isinstance(value, tuple) else [value]
        wants = list(ann) if isinstance(ann, tuple) else [ann] * len(items)
        if len(wants) != len(items):
            self.error(f"the kernel is annotated to return {len(wants)} values but returns {len(items)}", loc)
        flat: list[Node] = []
        for item, want in zip(items, wants):
            v = self.as_compound_or_scalar(item, loc)
            if want is not None:
                v = self.convert_to_type(v, want, loc)
            shape = v.shape if isinstance(v, Compound) else ()
            self.ir.return_shapes.append(tuple(shape))
            for x in (v.items if shape else [v]):
                flat.append(sem.as_node(self.scalar(x, loc), loc))
        self.ir.return_tuple = isinstance(value, tuple)
        buf = self.internal_buffer("result")
        k = 0
        for n in flat:
            self.ir.returns.append(n.dtype)
            for word in as_words(n, loc):  # a 64-bit value takes two words, low first
                self.emit(Node(Op.STORE, attr=buf.name, args=(sem.as_node(k, loc, i32), word), loc=loc))
                k += 1
        buf.size = k
        self._returned = True

    def shared_array(self, shape: tuple, elem, loc: Loc) -> ArrayValue:
        """`gr.simt.block.SharedArray(shape, dtype)`: a buffer in workgroup memory."""
        import math
        name = self.fresh_buffer_name("shared")
        size = math.prod(shape) * (1 if isinstance(elem, DType) else elem.size)
        scalar = scalar_of(elem)
        # a vector of 2 or 4 four-byte components is declared as a WGSL vector (Buffer.lanes)
        lanes = elem.n if (isinstance(elem, VectorType) and elem.n in (2, 4) and scalar.size == 4
                           and scalar.kind in ("float", "int", "uint")) else 1
        self.ir.buffers.append(Buffer(name, scalar, "shared", size=size, lanes=lanes))
        return ArrayValue(name, name, elem, tuple(shape))

    def internal_buffer(self, kind: str) -> Buffer:
        for b in self.ir.buffers:
            if b.kind == kind:
                return b
        from ..types import u32
        b = Buffer(kind, u32, kind, size=0)
        self.ir.buffers.append(b)
        return b

    def convert_to_type(self, value, t, loc: Loc):
        """Convert a value to an annotated type (a scalar dtype, vector or matrix type; Python's
        `int` / `float` are the default int / float dtypes, as in Taichi)."""
        t = sem.as_dtype(t)
        if t is bool:
            from ..types import u1
            t = u1
        if isinstance(t, DType):
            return sem.as_node(self.scalar(value, loc), loc, t)
        if isinstance(t, (VectorType, MatrixType)):
            return self.construct_typed(t, [value], loc)
        if isinstance(t, StructType):
            return self.as_struct(value, t, loc)
        self.error(f"{t!r} is not a type a kernel value can have", loc)
