"""No NaN / infinity constant expressions in the WGSL gfxrt emits (codegen/wgsl_nonfinite.py):
WGSL forbids them and Chrome's compiler (Tint) rejects the shader; naga accepts them, so the
WGSL itself is checked. Every float op of the op table at every float type, forward and grad,
NaN / inf literals, min / max reductions and a captured array holding NaN / inf; the values
stay bit-exact."""
import math
import re

import numpy as np
import pytest
from gfxrt.compiler.ops import DEFS

import gfxrt as gr

# the op table's float ops as Python source (a new float op must be added here)
SPELL = {"NEG": "-a", "ABS": "abs(a)", "SQRT": "gr.sqrt(a)", "RSQRT": "gr.rsqrt(a)", "EXP": "gr.exp(a)",
         "LOG": "gr.log(a)", "SIN": "gr.sin(a)", "COS": "gr.cos(a)", "TAN": "gr.tan(a)", "ASIN": "gr.asin(a)",
         "ACOS": "gr.acos(a)", "ATAN": "gr.atan(a)", "TANH": "gr.tanh(a)", "FLOOR": "gr.floor(a)",
         "CEIL": "gr.ceil(a)", "ADD": "a + b", "SUB": "a - b", "MUL": "a * b", "DIV": "a / b",
         "FLOORDIV": "a // b", "MOD": "a % b", "POW": "a ** b", "MIN": "min(a, b)", "MAX": "max(a, b)",
         "ATAN2": "gr.atan2(a, b)"}
FLOAT_OPS = sorted(op.name for op, d in DEFS.items() if d.typing in ("same", "float", "round", "pow")
                   and d.group != "bitwise")
# a constant expression spelling non-finite bits: bitcast<f32>(0x7f8.. / 0xff8.. / decimal), f64 alike
CONST_NONFINITE = re.compile(r"bitcast<f(32|64)>\(\s*(0x[0-9a-f]+|\d+)l?u\s*\)", re.I)


def _has(feature):
    return feature in gr.device().features


@pytest.fixture(scope="module", autouse=True)
def _init():
    gr.init()


def _nonfinite_consts(wgsl):
    out = []
    for m in CONST_NONFINITE.finditer(wgsl):
        bits = int(m.group(2), 0)
        exp = (bits >> 23) & 0xFF if m.group(1) == "32" else (bits >> 52) & 0x7FF
        if exp == (0xFF if m.group(1) == "32" else 0x7FF):
            out.append(m.group(0))
    return out


def _op_kernel(ops, dt, path):
    V = gr.types.ndarray(dtype=dt, ndim=1)
    lines = [f"        o[{k}] = {SPELL[op]}" for k, op in enumerate(ops)]
    src = "def k(x: V, y: V, o: V):\n    for i in range(1):\n        a = x[i]\n        b = y[i]\n" + "\n".join(lines)
    path.write_text(src)  # kernels are read from their file
    scope = {"gr": gr, "V": V}
    exec(compile(src, str(path), "exec"), scope)
    return gr.kernel(scope["k"])


def test_every_float_op_is_spelled():
    assert set(FLOAT_OPS) <= set(SPELL), set(FLOAT_OPS) - set(SPELL)


@pytest.mark.parametrize("t", ["f32", "f16", "f64"])
def test_float_ops_emit_no_nonfinite_constant(t, tmp_path):
    feature = {"f16": "shader-f16", "f64": "shader-f64"}.get(t)
    if feature and not _has(feature):
        pytest.skip(f"adapter lacks {feature}")
    dt, np_t = getattr(gr, t), np.dtype({"f32": np.float32, "f16": np.float16, "f64": np.float64}[t])
    k = _op_kernel(FLOAT_OPS, dt, tmp_path / f"ops_{t}.py")
    args = tuple(gr.ndarray(dt, len(FLOAT_OPS)) for _ in range(3))
    for mode in ("primal", "grad") if t != "f16" else ("primal",):
        wgsl = k.specialize(args, **({} if mode == "primal" else {"mode": "grad"})).spec.wgsl
        assert not _nonfinite_consts(wgsl), (mode, _nonfinite_consts(wgsl))
        assert wgsl.count("fn gr_f32_bits(") <= 1 and wgsl.count("fn gr_f64_bits(") <= 1
    assert np_t  # the dtype exists on the host too


def test_literals_reductions_and_captured_arrays_keep_exact_bits():
    table = np.array([np.nan, np.inf, -np.inf, 1.5], np.float32)
    V = gr.types.ndarray(dtype=gr.f32, ndim=1)

    @gr.kernel
    def k(x: V, o: V) -> gr.f32:
        lo = math.inf
        for i in range(x.shape[0]):
            gr.atomic_min(lo, x[i])
        o[0] = math.nan
        o[1] = math.inf
        o[2] = -math.inf
        for j in range(4):
            o[3 + j] = table[j]
        o[7] = lo
        m = -math.inf
        for i in range(x.shape[0]):
            gr.atomic_max(m, x[i])
        return m

    x = gr.ndarray(gr.f32, 3)
    x.from_numpy(np.array([2.0, -1.0, 3.0], np.float32))
    o = gr.ndarray(gr.f32, 8)
    wgsl = k.specialize((x, o)).spec.wgsl
    assert not _nonfinite_consts(wgsl), _nonfinite_consts(wgsl)
    k(x, o)
    got = o.to_numpy().view(np.uint32)
    want = np.array([np.nan, np.inf, -np.inf, np.nan, np.inf, -np.inf, 1.5, -1.0], np.float32).view(np.uint32)
    assert (got == want).all(), [hex(v) for v in got]
    assert got[0] == 0x7FC00000 and got[3] == 0x7FC00000


def test_helper_nans_are_the_quiet_nan():
    V = gr.types.ndarray(dtype=gr.f32, ndim=1)

    @gr.kernel
    def k(x: V, o: V):
        for _ in range(1):
            o[0] = gr.log(x[0])          # log(-1)
            o[1] = gr.sin(x[1])          # sin(inf)
            o[2] = gr.asin(x[2])         # asin(2)
            o[3] = x[3] % x[4]           # fmod by zero
            o[4] = gr.log(x[4])          # log(0) = -inf

    x = gr.ndarray(gr.f32, 5)
    x.from_numpy(np.array([-1.0, np.inf, 2.0, 1.0, 0.0], np.float32))
    o = gr.ndarray(gr.f32, 5)
    k(x, o)
    got = o.to_numpy().view(np.uint32)
    assert list(got[:4]) == [0x7FC00000] * 4 and got[4] == 0xFF800000, [hex(v) for v in got]
