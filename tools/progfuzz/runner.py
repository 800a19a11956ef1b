"""Runs a Program on the current gfxrt adapter: writes its source to a module file (kernels
read their source), imports it, launches the kernel on the program's inputs and reads the
results back; for the grad profile also the gradients (kernel.grad or gr.Tape)."""
from __future__ import annotations

import importlib.util
import itertools
import os
import sys
import traceback
from dataclasses import dataclass, field

import numpy as np

import gfxrt as gr

from .dtypes import NUMPY
from .printer import KERNEL_NAME, source

_counter = itertools.count()


@dataclass
class DeviceRun:
    arrays: dict = field(default_factory=dict)     # name -> numpy array after the forward launch
    returns: object = None
    grads: dict = field(default_factory=dict)      # name -> numpy gradient (grad profile)
    error: str | None = None                      # "CompileError: ..." for a valid program: a finding
    error_kind: str | None = None                 # 'compile' / 'internal' / 'device'
    device_lost: bool = False                     # the error was gr.DeviceLostError


def load(text: str, workdir: str, tag: str):
    """Import module source from a file; returns (module, cleanup)."""
    name = f"progfuzz_{tag}_{os.getpid()}_{next(_counter)}"
    path = os.path.join(workdir, name + ".py")
    with open(path, "w") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod

    def cleanup():
        sys.modules.pop(name, None)
        try:
            os.unlink(path)
        except OSError:
            pass
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        cleanup()
        raise
    return mod, cleanup


def classify(err: BaseException) -> str:
    if isinstance(err, gr.InternalCompilerError):
        return "internal"
    if isinstance(err, gr.CompileError):
        return "compile"
    if isinstance(err, gr.GfxrtError):
        return "device"
    return "internal"


def _describe(err: BaseException) -> str:
    tb = traceback.format_exception(type(err), err, err.__traceback__)
    return "".join(tb[-6:]).strip()


def run(program, workdir: str) -> DeviceRun:
    """Run the program; a device lost on the way is reopened and the program run once more (a
    GPU reset that one process's hang causes loses the devices of every process on it: those
    are not this program's findings; a program that loses the device twice is)."""
    out = _attempt(program, workdir)
    if out.error_kind == "device" and out.device_lost:
        gr.init(offline_cache=False)
        out = _attempt(program, workdir)
    return out


def _attempt(program, workdir: str) -> DeviceRun:
    out = DeviceRun()
    try:
        mod, cleanup = load(source(program), workdir, str(program.seed))
    except Exception as err:     # the printed program does not even import: a printer bug
        raise RuntimeError(f"generated source does not import: {err}") from err
    try:
        kern = getattr(mod, KERNEL_NAME)
        if program.grad is None:
            _forward(program, kern, out)
        else:
            _with_grad(program, kern, out)
    except Exception as err:
        out.error, out.error_kind = _describe(err), classify(err)
        out.device_lost = isinstance(err, gr.DeviceLostError)
        try:
            gr.sync()
        except Exception:
            pass
    finally:
        cleanup()
    return out


def _forward(program, kern, out: DeviceRun):
    arrays = {a.name: np.array(program.inputs[a.name], dtype=NUMPY[a.dtype], copy=True)
              for a in program.kernel.arrays}
    args = [arrays[a.name] for a in program.kernel.arrays] + [s.value for s in program.kernel.scalars]
    out.returns = kern(*args)
    gr.sync()
    out.arrays = arrays


def _device_array(a, values, grad: bool):
    d = gr.ndarray(getattr(gr, a.dtype), a.shape, needs_grad=grad)
    d.from_numpy(np.asarray(values, dtype=NUMPY[a.dtype]))
    return d


def _with_grad(program, kern, out: DeviceRun):
    k = program.kernel
    g = program.grad
    dev = {a.name: _device_array(a, program.inputs[a.name], a.needs_grad) for a in k.arrays}
    args = [dev[a.name] for a in k.arrays] + [s.value for s in k.scalars]
    kern(*args)
    out.arrays = {name: d.to_numpy() for name, d in dev.items()}
    for a in k.arrays:           # back to the initial contents for the differentiated run
        dev[a.name].from_numpy(np.asarray(program.inputs[a.name], dtype=NUMPY[a.dtype]))
    if g.mode == "tape":
        with gr.Tape(dev[g.loss]):
            kern(*args)
    else:
        kern(*args)
        for a in k.arrays:
            if a.needs_grad:
                seed = g.seeds.get(a.name)
                dev[a.name].grad.from_numpy(np.asarray(seed, dtype=NUMPY[a.dtype]) if seed is not None
                                            else np.zeros(a.shape, NUMPY[a.dtype]))
        kern.grad(*args)
    out.grads = {a.name: dev[a.name].grad.to_numpy() for a in k.arrays if a.needs_grad}
