"""The compile pipeline (compiler/pipeline.py): one lowering per specialization, every mode
derived from it, each step verified and printable, and gfxrt going through the same entry."""
import numpy as np
import pytest
from gfxrt.compiler import ArgSpec, Specialization, Target, compile_kernel
from gfxrt.compiler.passes.verify import IRVerifyError
from gfxrt.compiler.pipeline import CODEGEN, LOWER, MODES, PASSES, Pass
from gfxrt.compiler.printer import print_ir
from gfxrt.compiler.types import f32, i32

import gfxrt as gr
from gfxrt import compiler

TARGET = Target(frozenset({"immediates", "shader-float32-atomic"}), 128)
ARGS = [ArgSpec("x", "ndarray", elem=f32, ndim=1), ArgSpec("cnt", "ndarray", elem=i32, ndim=1),
        ArgSpec("y", "ndarray", elem=f32, ndim=1)]


def looped(x, cnt, y):  # a print, an accumulation and a run-time loop (adstack, grad_probe)
    for i in range(x.shape[0]):
        v = x[i]
        for _ in range(cnt[i]):
            v = gr.sin(v) * 1.5
        print("v =", v)
        y[i] += v


def counting_frontend(monkeypatch) -> list:
    calls, real = [], compiler.pipeline.frontend
    monkeypatch.setattr(compiler.pipeline, "frontend", lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


def test_every_mode_derives_from_one_lowering_unchanged(monkeypatch):
    calls = counting_frontend(monkeypatch)
    s = Specialization(looped, ARGS, TARGET)
    before = print_ir(s.lowered().ir)
    shared = {mode: s.compile(mode).wgsl for mode in reversed(list(MODES))}
    assert len(calls) == 1  # the source is lowered once, whatever the modes and their order
    assert print_ir(s.lowered().ir) == before  # no mode's passes changed the shared IR
    for mode, wgsl in shared.items():  # the same code as a lowering of its own
        assert compile_kernel(looped, ARGS, TARGET, mode=mode).wgsl == wgsl, mode
    assert len(calls) == 1 + len(MODES)
    assert shared["grad_probe"] != shared["grad"]


def test_print_ir_shows_every_step(monkeypatch, capsys):
    monkeypatch.setenv("GFXRT_PRINT_IR", "1")
    compile_kernel(looped, ARGS, TARGET, mode="grad")
    steps = [line[len("--- after "):-len(" ---")] for line in capsys.readouterr().out.splitlines()
             if line.startswith("--- after ")]
    assert steps == ["frontend", *LOWER, *MODES["grad"], *CODEGEN]
    assert "reverse" in steps and "lower_adstack" in steps and "strip_prints" in steps


def test_a_pass_that_breaks_the_ir_is_named(monkeypatch):
    def drop_locals(ir, target):
        ir.locals.clear()
        return ir
    monkeypatch.setitem(PASSES, "reverse", Pass(drop_locals))
    with pytest.raises(IRVerifyError, match="after reverse"):
        compile_kernel(looped, ARGS, TARGET, mode="grad")
    with pytest.raises(ValueError, match="unknown compile mode"):
        compile_kernel(looped, ARGS, TARGET, mode="backward")


@gr.kernel
def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] += a * x[i]


def test_a_first_grad_after_the_forward_lowers_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("GFXRT_CACHE_DIR", str(tmp_path))  # an empty offline cache: every mode compiles
    calls = counting_frontend(monkeypatch)
    x = gr.ndarray(gr.f32, shape=(8,), needs_grad=True)
    y = gr.ndarray(gr.f32, shape=(8,), needs_grad=True)
    x.from_numpy(np.arange(8, dtype=np.float32))
    saxpy._cache.clear()
    saxpy._lowered.clear()
    saxpy(2.0, x, y)
    assert len(calls) == 1
    y.grad.fill(1.0)
    saxpy.grad(2.0, x, y)
    assert len(calls) == 1  # the grad kernel derives from the forward's lowering
    np.testing.assert_allclose(x.grad.to_numpy(), 2.0)
