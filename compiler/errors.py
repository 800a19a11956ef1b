"""Exceptions raised by the compiler. `GfxrtError` is the root of all gfxrt exceptions."""
from __future__ import annotations

from .ir import Loc


class GfxrtError(Exception):
    """Base class of every exception gfxrt raises on its own behalf."""


class CompileError(GfxrtError):
    """A kernel the compiler rejects: names the file, line and the offending source line."""

    def __init__(self, message: str, loc: Loc | None = None, kernel: str | None = None):
        self.message = message
        self.loc = loc
        self.kernel = kernel
        super().__init__(self._format())

    def _format(self) -> str:
        if self.loc is None:
            where = f"in kernel {self.kernel!r}: " if self.kernel else ""
            return f"{where}{self.message}"
        head = f'File "{self.loc.file}", line {self.loc.line}'
        if self.kernel:
            head += f", in {self.kernel}"
        text = self.loc.text.rstrip()
        if not text:
            return f"{head}\n{self.message}"
        stripped = text.lstrip()
        caret = " " * max(0, self.loc.col - (len(text) - len(stripped))) + "^"
        return f"{head}\n    {stripped}\n    {caret}\n{self.message}"


def did_you_mean(name: str, names) -> str:
    """'; did you mean 'factor'?' when `name` is a likely misspelling of one of `names` (the
    names in scope, or an object's attributes); '' when none is close. Private (_x) names are
    offered only for a private `name`."""
    import difflib
    public = name.startswith("_") or None
    pool = {n for n in names if isinstance(n, str) and n != name and (public or not n.startswith("_"))}
    close = difflib.get_close_matches(name, sorted(pool), n=1, cutoff=0.75)
    return f"; did you mean {close[0]!r}?" if close else ""


def too_deep(kernel: str | None, loc: Loc | None = None) -> CompileError:
    """The error for a kernel whose nesting exhausted Python's recursion limit (the passes
    recurse once per level of nested blocks and expressions; a long straight-line kernel
    does not recurse)."""
    import sys
    return CompileError(f"the kernel nests too deeply to compile (Python's recursion limit, "
                        f"{sys.getrecursionlimit()}, was reached): split deep nesting, such as a very long "
                        "elif chain, expression or chain of @gr.func calls, into smaller pieces", loc, kernel)


class UnpackCountError(CompileError, ValueError):
    """`a, b = 1, 2, 3` in a kernel: a CompileError that is also Python's ValueError for it."""


class RangeStepError(CompileError, ValueError):
    """`range(0, 10, 0)` in a kernel: a CompileError that is also the ValueError Python raises."""


class UnpackTypeError(CompileError, TypeError):
    """`a, b = 1` in a kernel: a CompileError that is also Python's TypeError for it."""


class GradDtypeError(GfxrtError, TypeError, RuntimeError):
    """needs_grad / needs_dual on a container of integers: a TypeError, and the RuntimeError
    Taichi raises for it."""


class InternalCompilerError(GfxrtError):
    """A bug in gfxrt's compiler (e.g. WGSL the driver rejects); carries the generated code."""

    def __init__(self, message: str, wgsl: str | None = None):
        self.wgsl = wgsl
        text = f"internal compiler error (please report): {message}"
        if wgsl:
            numbered = "\n".join(f"{i + 1:4d}  {ln}" for i, ln in enumerate(wgsl.splitlines()))
            text += f"\n--- generated WGSL ---\n{numbered}"
        super().__init__(text)
