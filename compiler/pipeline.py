"""The compile pipeline: Python source -> IR -> a mode's passes -> WGSL + KernelSpec.

A `Specialization` (a kernel function, its argument specs, a target) runs the frontend at
most once, then the shared passes (LOWER); every mode (primal, grad, ...) starts from a copy
of that IR and runs its own list of passes (MODES), then CODEGEN and the code generator.
One runner (`run`) applies every list: it verifies the IR after each step and, with
GFXRT_PRINT_IR=1, prints it. The offline cache (compiler/cache.py) is a layer around a
mode's compile: a hit returns the stored spec without lowering anything.

    frontend -> simplify -> [mode passes] -> demote_atomics -> reductions -> WGSL

gfxrt keeps one Specialization per kernel specialization (gfxrt/kernel.py); tests call
`compile_kernel`, the same path for one mode.
"""
from __future__ import annotations

import copy
import os
from collections.abc import Callable
from typing import NamedTuple

from . import cache
from .autodiff import check_access_rule, counting_tasks, forward, lower_adstack, reverse
from .codegen.wgsl import emit
from .errors import GfxrtError, InternalCompilerError, too_deep
from .frontend.lower import Lowering
from .frontend.prints import strip_prints
from .ir import KernelIR, Loc
from .passes.atomics import demote_atomics
from .passes.reductions import reductions
from .passes.simplify import simplify
from .passes.verify import IRVerifyError, verify
from .printer import print_ir
from .semantic import defaults
from .spec import ArgSpec, KernelSpec
from .target import Target


class Pass(NamedTuple):
    """An IR -> IR step (it may change its argument in place); `when`: for which targets."""

    run: Callable[[KernelIR, Target], KernelIR]
    when: Callable[[Target], bool] = lambda target: True


def _reverse(hoist: bool) -> Pass:
    return Pass(lambda ir, t: reverse(ir, t.ad_loops, hoist=hoist, gather=t.ad_gather,
                                      gather_items=t.ad_gather_items))


PASSES = {
    "simplify": Pass(lambda ir, t: simplify(ir)),
    "access_rule": Pass(lambda ir, t: check_access_rule(ir), lambda t: t.debug),
    # gradient and forward-mode kernels do not print again what their primal printed
    "strip_prints": Pass(lambda ir, t: strip_prints(ir)),
    "reverse": _reverse(hoist=True),
    # without adjoint-read hoisting: for launches that bind one gradient buffer twice
    "reverse_unhoisted": _reverse(hoist=False),
    "lower_adstack": Pass(lambda ir, t: lower_adstack(ir, t.adstack_size, t.adstack_private,
                                                      t.max_workgroup_storage if t.adstack_shared else 0)),
    "counting_tasks": Pass(lambda ir, t: counting_tasks(ir)),
    "forward": Pass(lambda ir, t: forward(ir)),
    "demote_atomics": Pass(lambda ir, t: demote_atomics(ir)),
    "reductions": Pass(lambda ir, t: reductions(ir)),
}
LOWER = ("simplify",)  # after the frontend, once per specialization: what every mode starts from
# Each mode's own passes. Autodiff sees the IR before atomic demotion, so `y[i] += v` keeps its
# meaning (accumulate, never overwrite) for the gradient and the debug access rule.
MODES = {
    "primal": ("access_rule",),
    "grad": ("strip_prints", "reverse", "lower_adstack"),
    "grad_alias": ("strip_prints", "reverse_unhoisted", "lower_adstack"),
    # the grad kernel's adstack-sizing pre-passes alone (gfxrt/adstack.py runs them once)
    "grad_probe": ("strip_prints", "reverse", "lower_adstack", "counting_tasks"),
    "fwd": ("strip_prints", "forward"),
}
CODEGEN = ("demote_atomics", "reductions")  # target-level rewrites only the code generator consumes


def run(ir: KernelIR, steps, target: Target | None) -> KernelIR:
    """Apply the named passes in order, verifying (and with GFXRT_PRINT_IR printing) after each."""
    for name in steps:
        p = PASSES[name]
        if target is None or p.when(target):
            ir = checked(p.run(ir, target), name)
    return ir


def checked(ir: KernelIR, step: str) -> KernelIR:
    try:
        verify(ir)
    except IRVerifyError as e:  # name the step that broke the IR
        raise IRVerifyError(f"after {step}: {e}") from None
    if os.environ.get("GFXRT_PRINT_IR"):
        print(f"--- after {step} ---\n{print_ir(ir)}")
    return ir


def frontend(func, args: list[ArgSpec], *, debug: bool = False, name: str | None = None) -> Lowering:
    """The frontend alone: `.ir` (verified) and what the kernel depends on (`.deps`,
    `.field_paths`, `.cacheable`) for the offline cache."""
    fe = Lowering(func, args, name=name, debug=debug)
    fe.lower()
    checked(fe.ir, "frontend")
    return fe


def lower(func, args: list[ArgSpec], *, debug: bool = False, name: str | None = None) -> KernelIR:
    """Python function -> the verified, simplified IR every mode starts from."""
    return run(frontend(func, args, debug=debug, name=name).ir, LOWER, None)


def transform(ir: KernelIR, mode: str, target: Target) -> KernelIR:
    """The IR of `mode` (before CODEGEN), from a copy of `ir`."""
    if mode not in MODES:
        raise ValueError(f"unknown compile mode {mode!r} (one of {', '.join(MODES)})")
    return run(fork(ir), MODES[mode], target)


def fork(ir: KernelIR) -> KernelIR:
    """A copy of `ir` that passes may change in place (nodes are immutable and shared)."""
    out = copy.copy(ir)
    out.params, out.locals, out.returns = list(ir.params), dict(ir.locals), list(ir.returns)
    out.buffers = [copy.copy(b) for b in ir.buffers]
    out.tasks = [copy.copy(t) for t in ir.tasks]
    out.return_shapes, out.assumes_distinct = list(ir.return_shapes), set(ir.assumes_distinct)
    return out


class Specialization:
    """One kernel specialization: lowered at most once, compiled once per mode asked for.
    `directory`: the offline cache's folder (None: no disk cache)."""

    def __init__(self, func, args: list[ArgSpec], target: Target, *, name: str | None = None,
                 directory: str | None = None):
        self.func, self.args, self.target = func, args, target
        self.name, self.directory = name or func.__name__, directory
        self._lowered: Lowering | None = None

    def lowered(self) -> Lowering:
        """The frontend's result, its `.ir` after LOWER (computed on first use)."""
        if self._lowered is None:
            with defaults(self.target.default_fp, self.target.default_ip):
                fe = frontend(self.func, self.args, debug=self.target.debug, name=self.name)
            fe.ir = run(fe.ir, LOWER, self.target)
            self._lowered = fe
        return self._lowered

    def compile(self, mode: str = "primal") -> KernelSpec:
        """The kernel of `mode` (see MODES): from the offline cache, else from the lowering."""
        if mode not in MODES:
            raise ValueError(f"unknown compile mode {mode!r} (one of {', '.join(MODES)})")
        key = cache.kernel_key(self.func, self.args, self.target, self.name, mode) if self.directory else None
        if key is not None:
            spec = cache.load(self.directory, key, self.func, self.args, cache.location(self.func))
            if spec is not None:
                return spec
        try:
            fe = self.lowered()
            spec = emit(run(transform(fe.ir, mode, self.target), CODEGEN, self.target), self.target)
        except GfxrtError:
            raise
        except RecursionError:  # nesting deeper than the passes' recursion allows: the user's to split
            raise too_deep(self.name, kernel_loc(self.func)) from None
        except Exception as e:  # a bug in a pass or the code generator: never a bare Python error
            raise InternalCompilerError(f"while compiling {self.name}: {type(e).__name__}: {e}") from e
        if key is not None and fe.cacheable:
            cache.store(self.directory, key, spec, fe.deps, fe.field_paths, cache.location(self.func))
        return spec


def compile_kernel(func, args: list[ArgSpec], target: Target, *, name: str | None = None,
                   mode: str = "primal", directory: str | None = None) -> KernelSpec:
    """Python function + argument specialization -> WGSL and launch description for `mode`
    (through the offline cache in `directory`, if given)."""
    return Specialization(func, args, target, name=name, directory=directory).compile(mode)


def kernel_loc(func) -> Loc | None:
    """Where a kernel function begins (its `def` line), for errors about the whole kernel."""
    code = getattr(func, "__code__", None)
    return Loc(code.co_filename, code.co_firstlineno) if code is not None else None
