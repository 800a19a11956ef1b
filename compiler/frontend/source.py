"""A kernel's (or @gr.func's) Python source: its AST, the map from AST positions to file
locations, and the per-function state the frontend lowers it in (`Frame`)."""
from __future__ import annotations

import ast
import inspect
import linecache
import os
import textwrap
import typing
import weakref
from dataclasses import dataclass, field, replace

from ..errors import CompileError
from ..ir import Loc

# Both caches hold their code object weakly and nothing of a function (its closure, its
# globals): an entry goes with its code object (a kernel made by exec, say), and a closure
# kernel does not keep the values it captured alive after it is dropped.
_CACHE: dict = {}   # id(code object) -> (weakref to the code object, FunctionSource with func None)
_LINES: dict = {}   # id(code object) -> (weakref to the code object, ((lines, first line, file), ast.Module | None))


def _lookup(table: dict, code):
    hit = table.get(id(code)) if code is not None else None
    return hit[1] if hit is not None and hit[0]() is code else None


def _remember(table: dict, code, value) -> None:
    if code is not None:
        key = id(code)
        table[key] = (weakref.ref(code, lambda _, key=key: table.pop(key, None)), value)


def clear() -> None:
    """Forget every source read and parsed (as in a fresh process)."""
    _CACHE.clear()
    _LINES.clear()


def source_lines(func) -> tuple[list[str], int, str]:
    """`inspect.getsourcelines(func)` and the file, read once per code object (the offline
    cache's key and the parse both need them). Raises OSError / TypeError as inspect does.

    Cached by the code object's identity, not its value: two functions of equal bytecode
    (the same kernel in two files, or a file edited only in what bytecode does not keep,
    such as a local variable's annotation) are not the same source."""
    return _read(func)[0]


def _read(func) -> tuple:
    """((lines, first line, file), the dedented lines' ast.Module or None), cached."""
    code = getattr(func, "__code__", None)
    hit = _lookup(_LINES, code)
    if hit is not None:
        return hit
    _check_file(func)
    block = _def_block(func)
    lines, first = block[:2] if block else inspect.getsourcelines(func)
    out = ((lines, first, inspect.getsourcefile(func) or "<unknown>"), block[2] if block else None)
    _remember(_LINES, code, out)
    return out


def _check_file(func) -> None:
    """Raise OSError for a function whose code names a file that is neither on disk nor
    registered in linecache (as Jupyter registers its cells): code that exec / compile made
    under a name such as 'gen.py'. inspect would read such a function's lines from its
    module's own file (linecache's lazy loader asks the module), another text."""
    code = getattr(inspect.unwrap(func), "__code__", None)
    name = getattr(code, "co_filename", None)
    if name is None or os.path.exists(name):
        return
    entry = linecache.cache.get(name)
    if entry is None and linecache.getlines(name) or entry is not None and len(entry) != 1:
        return  # text registered under that name, or found by linecache alone (a 1-tuple: a lazy loader)
    raise OSError(f"its code names {name!r}, which is not a file")


def _indent(line: str) -> int | None:
    """The indentation of a line in spaces; None if it starts with another kind of blank."""
    n = len(line) - len(line.lstrip(" "))
    return None if line[n:n + 1] in ("\t", "\f") else n


def _def_block(func) -> tuple[list[str], int, ast.Module] | None:
    """What `inspect.getsourcelines` returns for a `def` (up to comment lines after its last
    statement), found without Python's tokenizer (a third of a millisecond for a 20-line
    kernel, the warm compile's largest cost of its own): the lines from the decorators to
    the last line before the first line indented no deeper than the `def` (blank and comment
    lines aside; comments as deep as the body count, as for inspect). That line begins a
    statement, so the block is exact, when the lines before it compile (a cut inside a
    string, brackets or a backslash continuation does not). None where that fails, for any
    indentation but spaces (a tab counts to 8) and for a lambda: then inspect's answer."""
    func = inspect.unwrap(func)  # as getsourcelines: a functools.wraps wrapper's source is the wrapped's
    if getattr(func, "__name__", None) == "<lambda>":
        return None
    lines, start = inspect.findsource(func)
    base, seen_def, last, body = _indent(lines[start]), False, start, None
    if base is None:
        return None
    for j in range(start, len(lines)):
        text = lines[j].strip()
        if not text:
            continue
        ind = _indent(lines[j])
        if ind is None:
            return None
        if text.startswith("#"):  # inspect keeps comments indented as deep as the body
            if body is not None and ind >= body:
                last = j
            continue
        if ind <= base:
            if seen_def:
                break
            if text.startswith(("def ", "async ")):
                seen_def = True
            elif not text.startswith("@"):
                return None
        elif seen_def and body is None:
            body = ind
        last = j
    block = lines[start:last + 1]
    try:  # the parse proves the cut; the frontend uses its tree
        tree = compile(textwrap.dedent("".join(block)), "<gfxrt source check>", "exec", ast.PyCF_ONLY_AST,
                       dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    return block, start + 1, tree


@dataclass
class FunctionSource:
    """The parsed source of one Python function and where it lives."""

    func: object
    file: str
    first_line: int
    lines: list[str]
    indent: int
    tree: ast.FunctionDef
    text: str
    assigned_names: frozenset = frozenset()

    @classmethod
    def of(cls, func) -> FunctionSource:
        """The parsed source of `func` (cached per code object: parsing costs milliseconds)."""
        code = getattr(func, "__code__", None)
        hit = _lookup(_CACHE, code)
        if hit is not None:
            return replace(hit, func=func)
        fs = cls._parse(func)
        _remember(_CACHE, code, replace(fs, func=None))
        return fs

    @classmethod
    def _parse(cls, func) -> FunctionSource:
        try:
            (lines, first_line, file), parsed = _read(func)
        except (OSError, TypeError) as e:
            raise CompileError(f"cannot read the source of {getattr(func, '__name__', func)!r}: {e}; "
                               "kernels must be defined in a file, not typed at an interactive prompt or "
                               "run by exec()") from None
        text = "".join(lines)
        dedented = textwrap.dedent(text)
        indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
        if getattr(func, "__name__", None) == "<lambda>":
            return cls._parse_lambda(func, file, first_line, lines)
        tree = parsed or ast.parse(dedented)
        fdef = tree.body[0] if tree.body else None
        name = getattr(func, "__name__", None)
        if not isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef)) or \
                (fdef.name != name and getattr(inspect.unwrap(func), "__name__", name) == name):
            raise CompileError(f"cannot read the source of {name or func!r}: {file}:{first_line} is not its "
                               "definition (code made by exec() or compile() from a string?); kernels must be "
                               "defined in a file")
        assigned = frozenset(n.id for n in ast.walk(fdef) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
        return cls(func, file, first_line, lines, indent, fdef, text, assigned)

    @classmethod
    def _parse_lambda(cls, func, file: str, first_line: int, lines: list[str]) -> FunctionSource:
        """A Python lambda: its source lines hold a statement around it; find the lambda
        (by its parameter names, the first on its line) and make it `def <lambda>(...): return body`."""
        code = func.__code__
        params = list(code.co_varnames[:code.co_argcount])
        tree = None
        for text in ("".join(lines), "(" + "".join(lines).strip().rstrip(",") + ")"):
            try:
                tree = ast.parse(textwrap.dedent(text))
                break
            except SyntaxError:
                continue
        lams = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)
                and [a.arg for a in n.args.args] == params] if tree is not None else []
        if not lams:
            raise CompileError(f"cannot find the source of the lambda at {file}:{first_line}; define it on a line "
                               "of its own, or make it a @gr.func")
        lam = min(lams, key=lambda n: (n.lineno, n.col_offset))
        ret = ast.copy_location(ast.Return(value=lam.body), lam.body)
        fdef = ast.copy_location(ast.FunctionDef(name="<lambda>", args=lam.args, body=[ret], decorator_list=[],
                                                 returns=None, type_params=[]), lam)
        ast.fix_missing_locations(fdef)
        indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
        return cls(func, file, first_line, lines, indent, fdef, "".join(lines), frozenset())

    def last_read(self, name: str) -> tuple[int, int]:
        """(line, column) in the parsed source of the last read of `name` in the function
        ((0, -1) if none). The positions are found in one walk, on the first call."""
        reads = self.__dict__.get("_last_reads")
        if reads is None:
            reads = self.__dict__["_last_reads"] = {}
            for n in ast.walk(self.tree):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                    pos = (n.lineno, n.col_offset)
                    if pos > reads.get(n.id, (0, -1)):
                        reads[n.id] = pos
        return reads.get(name, (0, -1))

    def loc(self, node: ast.AST | None) -> Loc:
        """The file location of an AST node of this function."""
        lineno = getattr(node, "lineno", None)
        if lineno is None:
            return Loc(self.file, self.first_line, 0, self.lines[0] if self.lines else "")
        text = self.lines[lineno - 1] if 0 < lineno <= len(self.lines) else ""
        col = getattr(node, "col_offset", 0) + self.indent
        return Loc(self.file, self.first_line + lineno - 1, col, text.rstrip("\n"))


@dataclass
class Frame:
    """Per-function lowering state: the kernel itself or an inlined @gr.func."""

    src: FunctionSource
    func: object                          # the Python function (for its globals)
    path: tuple                           # how the function is reached from the kernel
    scope: dict = field(default_factory=dict)       # Python name -> value or variable
    readonly: set = field(default_factory=set)      # loop variables
    dynamic: frozenset = frozenset()                # names assigned inside control flow
    typed: dict = field(default_factory=dict)       # name -> the type its assigned value took
    statics: set = field(default_factory=set)       # names bound by `name = gr.static(...)`
    loop_depth: int = 0
    static_loops: list = field(default_factory=list)  # loop_depth where each enclosing unrolled loop began
    ret: object = None                              # funcs: where `return` goes
    kernel_level: bool = False                      # statements run at kernel scope


def return_annotation(func):
    """The evaluated return annotation of a function, or None."""
    ann = inspect.signature(func).return_annotation
    if ann is inspect.Signature.empty:
        return None
    if isinstance(ann, str):
        ann = eval(ann, getattr(func, "__globals__", {}))  # noqa: S307 (annotations as strings)
    if typing.get_origin(ann) is tuple:  # `-> typing.Tuple[float, vec2]`, `-> tuple[...]`: Taichi's (a, b)
        ann = typing.get_args(ann)
    return ann


def strip_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body
