"""The IR without a device: textual form round trip, golden IR / WGSL text, passes, verifier."""
import os
from dataclasses import replace

import golden_kernels as gk
import numpy as np
import pytest
from gfxrt.compiler import ArgSpec, Target, compile_kernel, lower
from gfxrt.compiler import types as compiler_types
from gfxrt.compiler.codegen.wgsl import emit
from gfxrt.compiler.frontend.lower import Lowering
from gfxrt.compiler.ir import Op, walk
from gfxrt.compiler.irparse import parse_ir
from gfxrt.compiler.passes.verify import IRVerifyError, verify
from gfxrt.compiler.pipeline import CODEGEN, LOWER, frontend, run
from gfxrt.compiler.printer import print_ir
from gfxrt.compiler.types import VectorType, f16, f32, i32
from hypothesis import given, settings
from hypothesis import strategies as st

import gfxrt as gr

TARGET = Target(frozenset({"immediates", "shader-float32-atomic", "subgroup"}), 128)
GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
F1 = ArgSpec("x", "ndarray", elem=f32, ndim=1)


def codegen(ir):
    return run(ir, CODEGEN, TARGET)


def arr(name, t=f32, ndim=1):
    return ArgSpec(name, "ndarray", elem=t, ndim=ndim)


def sc(name, t=f32):
    return ArgSpec(name, "scalar", dtype=t)


@gr.func
def smooth(v, k: gr.template()):
    if v > k:
        return v - k
    return 0.0


def k_everything(x, y, z, h, n):
    s = 0.0
    m = x[0]
    for i in range(1, x.shape[0], 2):
        v = x[i] * 2 if x[i] > 0 else -x[i]
        w = 0
        while w < n:
            w += 1
            if w == 3:
                continue
            if w > 5:
                break
        s += smooth(v, 0.5) + w
        gr.atomic_max(m, v)
        y[i // 2] = gr.select(v > 1, v ** 3, gr.sqrt(abs(v))) + gr.cast(w, gr.f32)
        z[i % 3] += 1
        h[i] = h[i] * gr.cast(2, gr.f16)
    for a, b in gr.ndrange(2, (1, 3)):
        z[a * 2 + b] -= 1
    q = gr.Vector([s, m, 1.0])
    return q.norm() + s


K_EVERYTHING_ARGS = [arr("x"), arr("y"), arr("z", i32), arr("h", f16), sc("n", i32)]


def k_simt(x):
    for i in range(x.shape[0]):
        pad = gr.simt.block.SharedArray((64,), gr.f32)
        pad[gr.simt.block.thread_idx()] = x[i]
        gr.simt.block.sync()
        x[i] = gr.simt.subgroup.reduce_add(pad[0]) + gr.simt.subgroup.shuffle(x[i], 1)


def k_vectors(p, out):
    for i in p:
        v = p[i]
        v.x += 1.0
        m = gr.Matrix([[v.x, v.y], [v.z, 1.0]])
        out[i] = (m @ m).determinant() + m.inverse()[0, 1]


CORPUS = [
    (gk.saxpy, [sc("a"), arr("x"), arr("y")]),
    (gk.norm_sum, [arr("p", VectorType(3, f32))]),
    (k_everything, K_EVERYTHING_ARGS),
    (k_simt, [F1]),
    (k_vectors, [arr("p", VectorType(3, f32)), arr("out")]),
]


def _round_trip(ir, locs):
    text = print_ir(ir, locs=locs)
    again = parse_ir(text)
    verify(again)
    assert print_ir(again, locs=locs) == text


@pytest.mark.parametrize("fn, args", CORPUS, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("debug", [False, True])
def test_print_parse_round_trip_at_every_stage(fn, args, debug):
    ir = Lowering(fn, args, debug=debug).lower()
    _round_trip(ir, locs=True)
    ir = run(ir, LOWER, None)
    _round_trip(ir, locs=False)
    ir = codegen(ir)
    _round_trip(ir, locs=True)


def _golden(name: str, text: str) -> None:
    path = os.path.join(GOLDEN, name)
    if os.environ.get("GFXRT_UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(text)
    with open(path) as f:
        assert text == f.read(), f"{name} changed; regenerate with GFXRT_UPDATE_GOLDEN=1 if intended"


@pytest.mark.parametrize("fn, args", CORPUS[:2], ids=["saxpy", "norm_sum"])
def test_golden_ir(fn, args):
    _golden(f"{fn.__name__}.ir", print_ir(codegen(lower(fn, args))))


@pytest.mark.parametrize("fn, args", [CORPUS[0], CORPUS[1], (gk.floor_ops, [arr("x", i32), sc("k", i32)])],
                         ids=["saxpy", "norm_sum", "floor_ops"])
def test_golden_wgsl(fn, args):
    _golden(f"{fn.__name__}.wgsl", compile_kernel(fn, args, TARGET).wgsl)


# -- passes ----------------------------------------------------------------------------------

def _ops(ir):
    return [n.op for t in ir.tasks for n in walk(t.body)]


def test_simplify_folds_constants_and_small_powers():
    def k(x):
        for i in range(x.shape[0]):
            x[i] = x[i] ** 2 + (3 * 4 - 2) * x[i] ** -1 + 0 * i + (1 if 2 > 1 else 0)
    ir = lower(k, [F1])
    ops = _ops(ir)
    assert Op.POW not in ops and ops.count(Op.MUL) >= 1 and Op.DIV in ops
    text = print_ir(ir)
    assert "(const:f32=10.0)" in text and "(const:f32=1.0)" in text


def test_fast_math_divides_by_a_constant_as_taichi():
    """gr.init(fast_math=True): x / c for a float constant c is x * (1 / c), the reciprocal
    rounded to x's type (Taichi's default alg_simp rewrite: fractal's i / n); by default the
    division stays (its quotient is the exact one's, one rounding)."""
    def k(x):
        for i in range(x.shape[0]):
            x[i] = i / 320 + x[i] / 3.0 + x[i] / 0.0 + x[i] / 1.0

    fast = replace(TARGET, fast_math=True)
    assert TARGET.key() != fast.key()
    ops = _ops(frontend(k, [F1], target=TARGET).ir)
    assert ops.count(Op.DIV) == 3  # / 320, / 3.0, / 0.0 (x / 1.0 is x)
    ir = frontend(k, [F1], target=fast).ir
    assert _ops(ir).count(Op.DIV) == 1  # x / 0.0 stays a division (its IEEE infinity / NaN)
    text = print_ir(ir)
    for c in (320.0, 3.0):
        r = float(np.float32(1.0) / np.float32(c))
        assert f"(const:f32={r!r})" in text, (r, text)


def test_atomic_demotion_on_the_threads_own_elements():
    def k(x, y, z):
        for i in range(x.shape[0]):
            y[i] += x[i]        # only this thread touches y[i]: a plain read-modify-write
            z[i // 2] += x[i]   # shared between threads: stays atomic
    spec = compile_kernel(k, [arr("x"), arr("y"), arr("z")], TARGET)
    assert "array<f32>" in spec.wgsl.split("b1_y:")[1].split(";")[0]
    assert "atomic<f32>" in spec.wgsl.split("b2_z:")[1].split(";")[0]
    assert [b.atomic for b in spec.bindings] == [False, False, True]


def test_atomic_demotion_in_two_dimensions_and_serial_tasks():
    def k(x):
        for i, j in gr.ndrange(x.shape[0], x.shape[1]):
            x[i, j] += 1.0
        x[0, 0] += 2.0   # serial code: one thread
    ir = lower(k, [arr("x", f32, 2)])
    assert Op.ATOMIC in _ops(ir)  # autodiff sees accumulation; demotion is a codegen rewrite
    assert Op.ATOMIC not in _ops(codegen(ir))


def test_reduction_pass_gives_tasks_accumulators():
    def k(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i]
        return s
    ir = codegen(lower(k, [F1]))
    par = [t for t in ir.tasks if t.kind == "range"][0]
    assert len(par.reductions) == 1 and par.reductions[0].op == "add"
    assert Op.ATOMIC not in [n.op for n in walk(par.body)]
    wgsl = emit(ir, TARGET).wgsl
    assert "subgroupAdd" in wgsl and wgsl.count("atomicCompareExchangeWeak") == 1
    tree = compile_kernel(k, [F1], Target(frozenset({"immediates"}), 128)).wgsl
    assert "subgroupAdd" not in tree and "workgroupBarrier" in tree


def test_float_min_max_atomics_use_compare_and_swap():
    def k(x, m):
        for i in range(x.shape[0]):
            gr.atomic_max(m[i % 2], x[i])
    wgsl = compile_kernel(k, [F1, arr("m")], TARGET).wgsl
    assert "b1_m: array<atomic<u32>>" in wgsl and "atomicCompareExchangeWeak" in wgsl


def test_verifier_rejects_broken_ir():
    ir = lower(gk.saxpy, CORPUS[0][1])
    ir.locals["i"] = f32  # the loop variable is read as i32
    with pytest.raises(IRVerifyError):
        verify(ir)


def test_unused_shapes_are_not_passed():
    spec = compile_kernel(gk.saxpy, CORPUS[0][1], TARGET)
    assert [p.name for p in spec.params] == ["a", "x.shape0"]  # y's extent is never read


# -- random programs round trip ---------------------------------------------------------------

_LEAVES = st.sampled_from(["x[i]", "y[i]", "i", "1.5", "2", "a"])
_BIN = st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "<", ">=", "==", "and", "or", "&", "|", "^"])


def _exprs():
    return st.recursive(_LEAVES, lambda sub: st.one_of(
        st.tuples(sub, _BIN, sub).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(st.sampled_from(["gr.sin", "abs", "gr.floor", "-", "not "]), sub).map(lambda t: f"({t[0]}({t[1]}))"),
        st.tuples(sub, sub, sub).map(lambda t: f"({t[0]} if {t[1]} else {t[2]})"),
    ), max_leaves=8)


@settings(max_examples=int(os.environ.get("GFXRT_HYPOTHESIS_EXAMPLES", 30)), deadline=None)
@given(st.lists(_exprs(), min_size=1, max_size=3))
def test_random_programs_print_and_parse(tmp_path_factory, exprs):
    src = "import gfxrt as gr\n\ndef k(x, y, a):\n    for i in range(x.shape[0]):\n"
    for n, e in enumerate(exprs):
        src += f"        v{n} = {e}\n        y[i] = gr.cast(v{n}, gr.f32)\n"
    path = tmp_path_factory.mktemp("prog") / "prog.py"
    path.write_text(src)
    ns = {}
    exec(compile(src, str(path), "exec"), ns)  # noqa: S102
    try:
        ir = lower(ns["k"], [arr("x", i32), arr("y"), sc("a", i32)])
    except gr.CompileError as e:  # the generator also writes `float & int` and `1 / 0`, which kernels reject
        assert "bitwise operator needs integer operands" in e.message or "constant expression fails" in e.message, e
        return
    _round_trip(ir, locs=True)


def test_python_numbers_adopt_the_other_operands_dtype():
    def k(h, u, x):
        for i in range(h.shape[0]):
            h[i] = h[i] * 2.0 + 1      # stays f16
            u[i] = u[i] + 1            # stays u32
            x[i] = u[i] + 0.5          # int kind with a float: f32
    ir = lower(k, [arr("h", f16), arr("u", compiler_types.u32), arr("x")])
    stores = {n.attr: n.args[1] for t in ir.tasks for n in walk(t.body) if n.op is Op.STORE}
    assert stores["h"].op is Op.ADD and stores["h"].dtype == f16
    assert stores["u"].op is Op.ADD and stores["u"].dtype == compiler_types.u32
    assert stores["x"].dtype == f32 and stores["x"].op is Op.ADD


def _casts(x, i, u):
    for k in range(x.shape[0]):
        i[k] = int(x[k] * 2.0)
        u[k] = gr.cast(abs(x[k]) * 3.0, gr.u32)


def test_interpreter_casts_f32_to_integers():
    """The IR interpreter computes f32 as numpy float32, which numpy 2 gives no __trunc__: every
    float-to-int cast raised TypeError (found by tools/progfuzz's diagnosis of a mismatch)."""
    import numpy as np
    from gfxrt.compiler.interp import execute
    x = np.array([-2.75, -0.4, 0.0, 1.3, 2.5e9, -3e9], np.float32)
    i, u = np.zeros(6, np.int32), np.zeros(6, np.uint32)
    execute(lower(_casts, [arr("x"), arr("i", i32), arr("u", compiler_types.u32)]), [x, i, u])
    np.testing.assert_array_equal(i, [-5, 0, 0, 2, 2**31 - 1, -2**31])          # truncated, saturated
    np.testing.assert_array_equal(u, [8, 1, 0, 3, 2**32 - 1, 2**32 - 1])
