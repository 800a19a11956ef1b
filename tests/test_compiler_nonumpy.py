"""The compiler without numpy (issue 26: Pyodide in a browser has none; docs/design.md "The compiler").

A child Python with numpy blocked (`sys.modules['numpy'] = None` before any import) compiles the
kernels below through the pipeline (compiler/pipeline.py): arithmetic in every dtype, constant
folding, math builtins, vectors and matrices, a run-time loop's gradient (the adstack), a
@gr.func, gr.static, a struct. Their WGSL must be byte-identical to this process's, where numpy is
loaded (numpy is an input format of the compiler, never part of a rule: compiler/npcompat.py).
Kernels use the compiler's own builtins (`gfxrt`'s API, the runtime, keeps numpy).
"""
from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
import sys
from types import SimpleNamespace

from gfxrt.compiler import ArgSpec, Target, compile_kernel, opsem
from gfxrt.compiler import mathlib as gm
from gfxrt.compiler.builtins import BUILTINS
from gfxrt.compiler.func import func
from gfxrt.compiler.ops import Op, evaluate
from gfxrt.compiler.structs import StructType
from gfxrt.compiler.types import SCALARS, VectorType, f32, i32
from hypothesis import given, settings
from hypothesis import strategies as st

gr = SimpleNamespace(**BUILTINS, func=func, f32=f32, i32=i32)
TARGET = Target(frozenset({"immediates", "shader-float32-atomic", "shader-f16", "shader-f64", "shader-int64"}), 128)
HEAP_ONLY = Target(TARGET.features, 128, adstack_private=0, ad_loops="adstack")  # loops through the adstack
HYBRID = Target(TARGET.features, 128, adstack_private=3, ad_loops="adstack")
Pt = StructType((("p", VectorType(2, f32)), ("w", f32)), name="Pt")
K = 3  # a global the kernels read: a compile-time constant


def k_arith(a, x, y):
    for i in range(x.shape[0]):
        v = x[i]
        y[i] = (v + a) * v - v // (a + 1) + v % 3 - (-v) + abs(v) + (v if v > a else a) + 2 ** 3


def k_bits(x, y):
    for i in range(x.shape[0]):
        v = x[i]
        y[i] = ((v << 3) >> 1) ^ (v & 5) | (v % 7) + (v // 3) + gr.min(v, 2) + gr.max(v, 1)


def k_fold(x, y):
    for i in range(x.shape[0]):
        c = 0.1 + 0.2  # folded to the dtype's nearest value
        d = 1.0 / 3.0 * 3.0 - 1e-8
        e = gr.sqrt(2.0) * gr.exp(0.5) + gr.sin(1.0) + gr.atan2(1.0, 3.0) + gr.pow(2.0, 0.5)
        n = (7 // -2) * 3 + (-7 % 3) + (1 << 20) + (255 ^ 15) + int(3.9) + int(-2.5)
        y[i] = x[i] * c + d + e + n + K * 1.5 + math.pi


def k_math(x, y):
    for i in range(x.shape[0]):
        v = x[i]
        y[i] = gr.sin(v) + gr.cos(v) + gr.tan(v) + gr.exp(v) + gr.log(v + 2.0) + gr.sqrt(abs(v)) + gr.tanh(v) \
            + gr.asin(v * 0.1) + gr.acos(v * 0.1) + gr.atan2(v, 2.0) + gr.floor(v) + gr.ceil(v) + gr.pow(v, 2.5) \
            + gr.rsqrt(v * v + 1.0) + gr.clamp(v, 0.0, 1.0) + gr.select(v > 0.0, v, -v) + gm.fract(v) \
            + gm.log2(abs(v) + 1.0) + gm.step(0.5, v) + gm.mix(v, 1.0, 0.25) + gm.sign(v) + gm.smoothstep(0.0, 1.0, v)


def k_vec(x, y):
    for i in range(x.shape[0]):
        v = gr.Vector([x[i], 2.0 * x[i], 1.0])
        m = gr.Matrix([[1.0, 2.0, 0.0], [0.0, 1.0, x[i]], [3.0, 0.0, 1.0]])
        w = m @ v + v.cross(v * 2.0) + gm.normalize(v + 1.0)
        y[i] = w.dot(v) + w.norm() + m.determinant() + m.transpose()[0, 2] + (m @ m).trace() + gm.length(w.xy)


@func
def f_poly(v, k: gr.i32):
    r = 0.0
    for j in gr.static(range(3)):
        r = r * v + (j + k)
    return r


def k_func_static(x, y):
    for i in range(x.shape[0]):
        acc = 0.0
        for j in gr.static(range(K)):
            if gr.static(j % 2 == 0):
                acc += f_poly(x[i], j)
        y[i] = acc


def k_struct(x, y):
    for i in range(x.shape[0]):
        s = Pt(p=gr.Vector([x[i], 1.0]), w=2.0)
        s.p *= s.w
        y[i] = s.p.x + s.p.y * s.w


def k_loop(x, cnt, y):  # a run-time loop: the reverse mode keeps its values on the adstack
    for i in range(x.shape[0]):
        v = x[i]
        for _ in range(cnt[i]):
            v = gr.sin(v) * 1.5 + v * v
        y[i] += v


def k_const_loop(x, y):  # a constant trip count: the adstack's depth is folded at compile time
    for i in range(x.shape[0]):
        v = x[i]
        for _j in range(2 * K + 1):
            v = gr.sin(v) * 0.9 + 0.1 * v
        y[i] = v


def _nd(name, t, grad=False):
    return ArgSpec(name, "ndarray", elem=t, ndim=1, needs_grad=grad)


def kernels():
    """(name, function, args, modes, target): the set both processes compile."""
    out = []
    for t in SCALARS.values():
        if t.kind == "bool":
            continue
        a = ArgSpec("a", "scalar", t)
        out.append((f"arith_{t.name}", k_arith, [a, _nd("x", t), _nd("y", t)], ("primal",)))
        if t.is_int:
            out.append((f"bits_{t.name}", k_bits, [_nd("x", t), _nd("y", t)], ("primal",)))
    for t in (f32, SCALARS["f16"], SCALARS["f64"]):
        out.append((f"fold_{t.name}", k_fold, [_nd("x", t), _nd("y", t)], ("primal",)))
        out.append((f"math_{t.name}", k_math, [_nd("x", t), _nd("y", t)], ("primal",)))
    grads = ("primal", "grad", "fwd")
    out.append(("vec", k_vec, [_nd("x", f32, True), _nd("y", f32, True)], grads))
    out.append(("func_static", k_func_static, [_nd("x", f32, True), _nd("y", f32, True)], grads))
    out.append(("struct", k_struct, [_nd("x", f32), _nd("y", f32)], ("primal",)))
    loop_args = [_nd("x", f32, True), _nd("cnt", i32), _nd("y", f32, True)]
    for tname, target in (("", TARGET), ("_heap", HEAP_ONLY), ("_hybrid", HYBRID)):
        out.append((f"loop{tname}", k_loop, loop_args, ("primal", "grad", "grad_probe"), target))
        out.append((f"const_loop{tname}", k_const_loop, [_nd("x", f32, True), _nd("y", f32, True)],
                    ("grad", "grad_probe"), target))
    import test_compiler_nogpu as nogpu  # the suite's compiler tests that need no numpy themselves
    out.append(("nogpu_saxpy", nogpu.k_saxpy, nogpu.ARGS, ("primal", "grad", "fwd"), nogpu.TARGET))
    return [k if len(k) == 5 else (*k, TARGET) for k in out]


def compile_all() -> dict[str, str]:
    """name/mode -> WGSL of every kernel of `kernels()`."""
    return {f"{name}/{mode}": compile_kernel(fn, args, target, name=name, mode=mode).wgsl
            for name, fn, args, modes, target in kernels() for mode in modes}


_CHILD = """
import json, sys
sys.modules["numpy"] = None  # import numpy now raises ImportError
sys.path.insert(0, sys.argv[1])
import test_compiler_nonumpy as t
out = t.compile_all()
assert "numpy" not in sys.modules or sys.modules["numpy"] is None
print(json.dumps(out))
"""


def _compile_without_numpy() -> dict[str, str]:
    root = pathlib.Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", _CHILD, str(root / "tests")], capture_output=True, text=True,
                       env=env, cwd=root, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(r.stdout)


def test_compiler_compiles_without_numpy_to_the_same_wgsl():
    import numpy  # noqa: F401  this process has numpy: its WGSL is the reference
    without = _compile_without_numpy()
    with_np = compile_all()
    assert set(without) == set(with_np) and len(with_np) > 30
    differ = [k for k in with_np if with_np[k] != without[k]]
    assert not differ, differ
    assert "ad_heap" in with_np["loop_heap/grad"] and "ad_heap" in with_np["const_loop_heap/grad"]  # the adstack


_HOST = """
import math, sys
sys.modules["numpy"] = None
import gfxrt.compiler, gfxrt.compiler.mathlib, gfxrt.compiler.taichi_ops, gfxrt.compiler.interp
from gfxrt.compiler.builtins import BUILTINS as B
assert B["sin"](0.5) == math.sin(0.5) and B["atan2"](1.0, 2.0) == math.atan2(1.0, 2.0)
assert B["max"](1, 2.5) == 2.5 and B["min"](3, -4) == -4 and B["pow"](2, 10) == 1024
assert math.copysign(1.0, B["ceil"](-0.5)) == -1.0 and B["floor"](2.5) == 2.0 and B["abs"](-3) == 3
assert math.isnan(B["sqrt"](-1.0)) and B["exp"](1000.0) == math.inf
try:
    B["sin"]([0.5, 1.0])  # a sequence: numpy's, which is not there
except ImportError as e:
    assert "gr.sin outside kernels needs numpy" in str(e), e
else:
    raise AssertionError("no ImportError")
"""


def test_builtins_on_python_numbers_without_numpy():
    """Without numpy the compiler imports, and a builtin that is an op row computes on Python
    numbers by the row's rule (`gr.sin(0.5)` is math.sin's); numpy's functions are for arrays."""
    r = subprocess.run([sys.executable, "-c", _HOST], capture_output=True, text=True, timeout=120,
                       cwd=pathlib.Path(__file__).resolve().parent.parent)
    assert r.returncode == 0, r.stderr[-3000:]


def test_builtins_on_python_numbers_with_numpy_are_numpys():
    import numpy as np
    assert type(BUILTINS["sin"](0.5)) is np.float64 and BUILTINS["sin"](0.5) == np.sin(0.5)  # as Taichi's ti.sin


# -- the folding rules against numpy (the reference they replace) ----------------------------------
_FLOAT_OPS = {"ADD": "__add__", "SUB": "__sub__", "MUL": "__mul__", "DIV": "__truediv__"}


def _same(a: float, b: float) -> bool:
    return (a != a and b != b) or (a == b and math.copysign(1.0, a) == math.copysign(1.0, b))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["f16", "f32", "f64"]), st.sampled_from(sorted(_FLOAT_OPS)), st.floats(), st.floats())
def test_float_folding_rounds_as_numpy(tname, op, a, b):
    """Constant folding (ops.evaluate, pure Python) of f16 / f32 / f64 arithmetic equals numpy's on
    numpy scalars of the type, bit for bit (round_to by struct 'e' / 'f')."""
    import numpy as np
    t = SCALARS[tname]
    ra, rb = opsem.round_to(a, t), opsem.round_to(b, t)
    with np.errstate(all="ignore"):
        assert _same(ra, float(np.array(a).astype(t.np)))
    if op == "DIV" and rb == 0:
        return  # left for run time by the folder (passes/simplify.py)
    with np.errstate(all="ignore"):
        want = float(getattr(np.array(ra).astype(t.np)[()], _FLOAT_OPS[op])(np.array(rb).astype(t.np)[()]))
    assert _same(evaluate(Op[op], [ra, rb], t, t), want)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([t for t in SCALARS if SCALARS[t].is_int]), st.integers(-(1 << 70), 1 << 70),
       st.integers(-(1 << 70), 1 << 70))
def test_integer_folding_wraps_as_numpy(tname, a, b):
    """Integers wrap by masks as numpy's fixed-width types do (+, -, *, conversion)."""
    import numpy as np
    t = SCALARS[tname]
    wa, wb = opsem.wrap(a, t), opsem.wrap(b, t)
    assert wa == int(np.array(a & ((1 << 64) - 1), np.uint64).astype(t.np))  # numpy's modular conversion
    x, y = np.array(wa, t.np)[()], np.array(wb, t.np)[()]
    with np.errstate(all="ignore"):
        for op, f in (("ADD", x.__add__), ("SUB", x.__sub__), ("MUL", x.__mul__)):
            assert evaluate(Op[op], [wa, wb], t, t) == int(f(y)), op
