"""Which layer is wrong: runs a mismatching program through gfxrt's IR interpreter
(compiler/interp.py, the executable definition of the IR after the frontend and the optimizing
passes) and compares it with the oracle and the device. The interpreter computes 32-bit types
only, so programs with 64-bit values get no diagnosis."""
from __future__ import annotations

import numpy as np
from gfxrt.compiler import ArgSpec, lower
from gfxrt.compiler.interp import execute
from gfxrt.compiler.ir import INTERNAL_KINDS
from gfxrt.compiler.types import SCALARS

from . import runner
from .check import compare
from .dtypes import NUMPY
from .printer import KERNEL_NAME, source

NARROW = ("i32", "u32", "f32", "bool")


def _returns(words: np.ndarray, types) -> tuple:
    out = []
    for k, t in enumerate(types):
        w = np.array([words[k]], np.uint32)
        out.append(w.view(NUMPY[t])[0].item())
    return tuple(out)


def interpret(program, workdir: str):
    """(arrays, returns) as the IR interpreter computes them."""
    mod, cleanup = runner.load(source(program), workdir, f"diag{program.seed}")
    try:
        func = getattr(mod, KERNEL_NAME).func
        k = program.kernel
        specs = [ArgSpec(a.name, "ndarray", elem=SCALARS[a.dtype], ndim=len(a.shape), needs_grad=a.needs_grad)
                 for a in k.arrays]
        specs += [ArgSpec(s.name, "scalar", dtype=SCALARS[s.dtype]) for s in k.scalars]
        ir = lower(func, specs, name=KERNEL_NAME)
    finally:
        cleanup()
    arrays = {a.name: np.array(program.inputs[a.name], dtype=NUMPY[a.dtype], copy=True) for a in k.arrays}
    args = [arrays[a.name] for a in k.arrays] + [s.value for s in k.scalars]
    internal = {b.kind: np.zeros(max(b.size or 1, 1), np.uint32) for b in ir.buffers if b.kind in INTERNAL_KINDS}
    execute(ir, args, internal=internal, threads=8)
    rets = _returns(internal["result"], k.ret) if k.ret and "result" in internal else None
    if rets is not None and len(rets) == 1:
        rets = rets[0]
    return arrays, rets


def diagnose(program, outcome, device, workdir: str) -> str:
    """A sentence saying which layer the IR interpreter points at."""
    k = program.kernel
    types = {a.dtype for a in k.arrays} | {s.dtype for s in k.scalars} | set(k.ret)
    if program.grad is not None or not types <= set(NARROW):
        return "no diagnosis (the IR interpreter computes 32-bit forward programs only)"
    try:
        arrays, rets = interpret(program, workdir)
    except Exception as err:     # the interpreter lacks something the device has
        return f"no diagnosis (the IR interpreter failed: {type(err).__name__}: {err})"
    vs_oracle = compare(program, outcome, arrays, rets)
    same_as_device = all(np.array_equal(np.asarray(arrays[a.name]), np.asarray(device.arrays[a.name]), equal_nan=True)
                         for a in program.kernel.arrays if a.role != "in")
    if vs_oracle.ok:
        return ("the IR interpreter agrees with the oracle: the IR is right, so code generation (WGSL), "
                "naga or the driver computes it wrongly")
    if same_as_device:
        return ("the IR interpreter gives the device's result: the frontend or an optimizing pass "
                "(or the oracle) has it wrong")
    return ("the IR interpreter differs from both the oracle and the device: look at the frontend/passes first "
            f"({vs_oracle.mismatches[0] if vs_oracle.mismatches else ''})")
