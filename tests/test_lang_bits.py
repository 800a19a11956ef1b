"""gr.math.popcnt and gr.math.clz (Taichi's ti.math.popcnt / clz) on the two's complement bits of
an integer in its own width: i32 / u32, i64 / u64 (computed from two 32-bit halves), negative
values included; the device, the IR interpreter, constant folding and the host agree with Python's
ints. And the invariants of the op table they were added to (compiler/ops.py)."""
import numpy as np
import pytest
from gfxrt.compiler.builtins import BUILTINS
from gfxrt.compiler.codegen import wgsl_exprs
from gfxrt.compiler.interp import execute
from gfxrt.compiler.ops import DEFS, EXPENSIVE, HEAVY, Op
from gfxrt.compiler.spec import ArgSpec
from gfxrt.compiler.types import SCALARS

import gfxrt as gr
from gfxrt import compiler


def _has(feature):
    return feature in gr.device().features


need64 = pytest.mark.skipif("not _has('shader-int64')")


def popcnt(v, bits):
    return bin(int(v) & ((1 << bits) - 1)).count("1")


def clz(v, bits):
    return bits - (int(v) & ((1 << bits) - 1)).bit_length()


def _bits_kernel(x: gr.types.ndarray(ndim=1), p: gr.types.ndarray(ndim=1), c: gr.types.ndarray(ndim=1)):
    for i in range(x.shape[0]):
        p[i] = gr.math.popcnt(x[i])
        c[i] = gr.math.clz(x[i])


def _values(t, rng):
    info = np.iinfo(t)
    edges = [0, 1, 2, 3, info.max, info.min, info.max // 3, 1 << (info.bits - 2), 0x80, 0xFF00]
    if info.min < 0:
        edges += [-1, -2, -3, info.min + 1, -(1 << 31), -(1 << (info.bits - 2))]
    if info.bits == 64:  # one half zero, the other not: the halves' edges
        edges += [1 << 32, (1 << 32) - 1, (1 << 32) + 1, 0xFFFFFFFF << 32]
    rnd = rng.integers(info.min, info.max, 40, dtype=t, endpoint=True)
    return np.concatenate([np.array([e % (1 << info.bits) for e in edges], np.uint64).astype(t), rnd])


def _check(t, rng):
    x = _values(t, rng)
    bits = np.iinfo(t).bits
    want_p = [popcnt(v, bits) for v in x]
    want_c = [clz(v, bits) for v in x]
    p, c = np.zeros_like(x), np.zeros_like(x)
    gr.kernel(_bits_kernel)(x, p, c)
    assert p.tolist() == want_p
    assert c.tolist() == want_c
    # the IR interpreter (compiler/ops.py's evaluation) and the host function agree
    elem = SCALARS[{"int32": "i32", "uint32": "u32", "int64": "i64", "uint64": "u64"}[np.dtype(t).name]]
    ir = compiler.lower(_bits_kernel, [ArgSpec(name, "ndarray", elem=elem, ndim=1) for name in "xpc"])
    p2, c2 = np.zeros_like(x), np.zeros_like(x)
    execute(ir, [x, p2, c2])
    assert p2.tolist() == want_p and c2.tolist() == want_c
    assert gr.math.popcnt(x).tolist() == want_p and gr.math.clz(x).tolist() == want_c


@pytest.mark.parametrize("t", [np.int32, np.uint32])
def test_popcnt_and_clz_of_32_bit_integers(t, rng):
    _check(t, rng)


@need64
@pytest.mark.parametrize("t", [np.int64, np.uint64])
def test_popcnt_and_clz_of_64_bit_integers(t, rng):
    _check(t, rng)


def test_constants_fold_in_the_type_of_the_value():
    @gr.kernel
    def k(o: gr.types.ndarray(dtype=gr.i32, ndim=1)):
        o[0] = gr.math.popcnt(-1)  # an i32: 32 bits set
        o[1] = gr.math.clz(1)
        o[2] = gr.math.clz(0)
        o[3] = gr.math.clz(-5)
        o[4] = gr.math.popcnt(gr.cast(-1, gr.u32) >> 4)
        o[5] = gr.math.popcnt(0x7FFFFFFF) + gr.math.clz(gr.cast(0x00FF0000, gr.u32))

    o = np.zeros(6, np.int32)
    k(o)
    assert o.tolist() == [32, 31, 32, 0, 28, 31 + 8]


def test_vectors_are_componentwise():
    @gr.kernel
    def k(o: gr.types.ndarray(dtype=gr.i32, ndim=1), x: gr.i32):
        v = gr.math.popcnt(gr.math.ivec3(x, x + 1, -x))
        w = gr.math.clz(gr.math.ivec3(x, x + 1, -x))
        for j in gr.static(range(3)):
            o[j] = v[j]
            o[3 + j] = w[j]

    o = np.zeros(6, np.int32)
    k(o, 6)
    assert o.tolist() == [popcnt(6, 32), popcnt(7, 32), popcnt(-6, 32), clz(6, 32), clz(7, 32), clz(-6, 32)]


def test_host_calls_count_in_the_arrays_width():
    assert gr.math.popcnt(np.int32(-1)) == 32 and gr.math.popcnt(np.int64(-1)) == 64
    assert gr.math.clz(np.uint64(1)) == 63 and gr.math.clz(np.int8(1)) == 31  # narrow ints compute in 32 bits
    with pytest.raises(TypeError):
        gr.math.popcnt(np.float32(1.0))


def test_a_float_operand_is_a_compile_error():
    @gr.kernel
    def k(o: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        o[0] = gr.math.popcnt(o[0])

    with pytest.raises(gr.CompileError, match="popcnt needs an integer operand"):
        k(np.zeros(1, np.float32))


# -- the op table ------------------------------------------------------------------------------------
def test_every_row_is_complete_and_names_helpers_that_exist():
    for op, d in DEFS.items():
        assert op.name == d.name and d.arity in (1, 2, 3)
        for key, spelling in d.wgsl.items():
            assert key in ("", "f32", "f64", "float", "int", "uint", "int64", "uint64", "bool"), (op, key)
            if not isinstance(spelling, str):
                assert spelling[1] in wgsl_exprs.HELPERS, (op, spelling)
        if d.doc:  # a builtin: gr.<name> in kernels and on the host
            assert d.host is not None and BUILTINS[d.name.lower()].doc == d.doc
        if d.typing not in ("none", "logic", "compare", "int", "bits", "shift", "round"):
            assert d.py is not None or d.dev is not None, op
    # the cost classes: gfxrt's own functions (cost 2) are spelled by their f32 and f64 helpers
    assert HEAVY <= EXPENSIVE and {Op.SQRT, Op.RSQRT} == EXPENSIVE - HEAVY
    assert all({"f32", "f64"} <= set(DEFS[op].wgsl) for op in HEAVY)
