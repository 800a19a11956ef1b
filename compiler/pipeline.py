"""The one way from Python source to WGSL + KernelSpec, for gfxrt and `compile_kernel` alike:
frontend -> LOWER (once per Specialization) -> a copy -> MODES[mode] -> CODEGEN -> emit, each step
verified (and printed with GFXRT_PRINT_IR=1) by `run`; the offline cache wraps a mode's compile.
See docs/design.md, "The compile pipeline"."""
from __future__ import annotations

import copy
import os
from collections.abc import Callable
from contextlib import nullcontext
from typing import NamedTuple

from . import cache
from .autodiff.access import check_access_rule
from .autodiff.adstack import counting_tasks, lower_adstack
from .autodiff.forward import forward
from .autodiff.reverse import reverse
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


class Pass(NamedTuple):  # an IR -> IR step (it may change its argument in place); `when`: for which targets
    run: Callable[[KernelIR, Target], KernelIR]
    when: Callable[[Target], bool] = lambda target: True


def _reverse(hoist: bool) -> Pass:
    return Pass(lambda ir, t: reverse(ir, t.ad_loops, hoist=hoist, gather=t.ad_gather,
                                      gather_items=t.ad_gather_items))


PASSES = {
    "simplify": Pass(lambda ir, t: simplify(ir, fast_math=t is not None and t.fast_math)),
    "access_rule": Pass(lambda ir, t: check_access_rule(ir), lambda t: t.debug),
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
    # the grad kernel's adstack-sizing pre-passes alone (gfxrt/ad/adstack.py runs them once)
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


def frontend(func, args: list[ArgSpec], *, debug: bool = False, name: str | None = None,
             target: Target | None = None) -> Lowering:
    """The frontend (with `target`'s default dtypes) and LOWER: `.ir` is what every mode starts
    from; `.deps`, `.field_paths`, `.cacheable`: what the kernel depends on, for the offline cache."""
    with defaults(target.default_fp, target.default_ip) if target else nullcontext():
        fe = Lowering(func, args, name=name, debug=debug)
        fe.lower()
    fe.ir = run(checked(fe.ir, "frontend"), LOWER, target)
    return fe


def lower(func, args: list[ArgSpec], *, debug: bool = False, name: str | None = None) -> KernelIR:
    """Python function -> the verified, simplified IR every mode starts from."""
    return frontend(func, args, debug=debug, name=name).ir


def transform(ir: KernelIR, mode: str, target: Target) -> KernelIR:
    """The IR of `mode` (before CODEGEN), from a copy of `ir`."""
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
        self.name, self.directory, self._lowered = name or func.__name__, directory, None

    def lowered(self) -> Lowering:
        """The frontend's result, `.ir` after LOWER (a method, not a cached_property: see tracebacks.py)."""
        if self._lowered is None:
            self._lowered = frontend(self.func, self.args, debug=self.target.debug, name=self.name, target=self.target)
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
            code = getattr(self.func, "__code__", None)  # the kernel's `def` line
            raise too_deep(self.name, code and Loc(code.co_filename, code.co_firstlineno)) from None
        except Exception as e:  # a bug in a pass or the code generator: never a bare Python error
            raise InternalCompilerError(f"while compiling {self.name}: {type(e).__name__}: {e}") from e
        if key is not None and fe.cacheable:
            cache.store(self.directory, key, spec, fe.deps, fe.field_paths, cache.location(self.func))
        return spec


def compile_kernel(func, args: list[ArgSpec], target: Target, *, name: str | None = None,
                   mode: str = "primal", directory: str | None = None) -> KernelSpec:
    """Python function + argument specs -> WGSL and launch description of `mode` (cached in `directory`)."""
    return Specialization(func, args, target, name=name, directory=directory).compile(mode)

