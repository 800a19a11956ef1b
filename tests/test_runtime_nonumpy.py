"""gfxrt's runtime without numpy (issue 26: Pyodide in a browser tab has none).

tests/nonumpy_program.py runs in two child processes, one with numpy blocked
(`sys.modules['numpy'] = None` before gfxrt is imported): saxpy, a run-time loop's gradient, a Tape,
a graph replay, a return value, f16 data, vector / matrix arguments, host values and containers;
both must print the same results. The host data path
(gfxrt/data/hostdata.py: lists, array.array, memoryview in; lists out) must store what numpy's
from_numpy / to_numpy store, for every dtype.
"""
from __future__ import annotations

import array
import json
import math
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from gfxrt.compiler.types import SCALARS

import gfxrt as gr
from gfxrt.data import hostdata

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _run(*flags) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "nonumpy_program.py"), *flags], capture_output=True,
                       text=True, env=env, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-4000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_program_without_numpy_equals_the_numpy_run():
    without, with_np = _run("--block-numpy"), _run()
    assert without.pop("numpy") is False and with_np.pop("numpy") is True
    assert without == with_np
    xs = [np.float32(0.1 * i) for i in range(8)]
    assert without["saxpy"] == [float(np.float32(2) * v + np.float32(1)) for v in xs]
    assert without["loop_grad"][0] == without["loop_grad"][4] == 1.0  # no iteration: dy/dx = 1
    assert math.isclose(without["ret"], sum(without["loop"]), rel_tol=1e-6)
    assert without["m"] == np.array([[0.1, -1.25, 3], [4, 5.5, -6]], np.float16).tolist()
    # vector / matrix arguments (host values, lists), a vector return, vector / matrix containers
    u, s = np.float32([1, 2, 0.5]), np.float32([0.1, 0.2, 0.3])
    np.testing.assert_allclose(without["ret_vec"], np.cross(u, s), rtol=1e-6)
    vf = np.float32([[i, 0.5 * i, -i] for i in range(4)]) * u + s
    np.testing.assert_allclose(without["vfield"], vf * np.float32([1, -1, 2]), rtol=1e-6)
    mn = np.float32([[[1, 2], [3, 4]], [[5, 6], [7, 8]], [[0.25, 0], [0, -1]]]) @ np.float32([[0, 1], [1, 0]])
    np.testing.assert_allclose(without["mnd"], mn @ np.float32([[2, 0], [0, 0.5]]), rtol=1e-6)
    assert without["elements"][2:5] == [[7, 8, 9], [[1, -1], [0.5, 2]], [[3, 3], [3, 3]]]
    assert without["elements"][0][1] == without["vfield2"][1][1] == 9.5  # e.y = 9.5 wrote through
    assert without["mnd2"][2][1][0] == 4.0
    assert without["vn"] == [[1, 2, 3], [4, 5, 6]] and without["vn_fill"] == [[0.5, 1, 2]] * 2
    assert without["struct"] == [1.5 * 3 + 5.25, 0.25 * -2 + 5.25, [1, 2, 0.5], True]  # struct arguments


VALUES = [0, 1, -1, 2.75, -3.5, 100, 127.9, 300]


@pytest.mark.parametrize("name", [n for n in SCALARS if n not in ("f64", "bool")])
def test_lists_store_what_numpy_stores(name):
    """from_numpy(list) stores the bytes of from_numpy(numpy array of the dtype) (numpy's cast of
    in-range values), and to_list() reads back to_numpy().tolist()."""
    t = SCALARS[name]
    vals = [v for v in VALUES if t.is_float or t.int_range[0] <= math.trunc(v) <= t.int_range[1]]
    x = gr.ndarray(t, len(vals))
    x.from_numpy(vals)
    want = np.array(vals).astype(t.numpy)
    assert x.to_list() == want.tolist()
    np.testing.assert_array_equal(x.to_numpy(), want)
    assert hostdata.pack(vals, t, (len(vals),)) == want.tobytes()


def test_shapes_and_buffers():
    x = gr.ndarray(gr.f32, (2, 3))
    x.from_numpy([[1, 2, 3], [4, 5, 6]])  # nested, of the container's shape
    assert x.to_list() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    x.from_numpy(array.array("d", range(6)))  # flat, of its size (a JS typed array arrives as such)
    assert x.to_list() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    x.from_numpy(memoryview(array.array("f", range(6, 12))))
    assert x.to_numpy().ravel().tolist() == list(range(6, 12))
    v = gr.Vector.ndarray(3, gr.i32, 2)
    v.from_numpy([[1, 2, 3], [4, 5, 6]])
    assert v.to_list() == [[1, 2, 3], [4, 5, 6]]
    with pytest.raises(ValueError, match="shape mismatch"):
        x.from_numpy([[1, 2], [3, 4], [5, 6]])
    with pytest.raises(ValueError, match="shape mismatch"):
        x.from_numpy([1, 2, 3])
    with pytest.raises(ValueError, match="ragged"):
        x.from_numpy([[1, 2, 3], [4, 5]])
    with pytest.raises(TypeError, match="bytes carry no element type"):
        x.from_numpy(bytes(24))
    with pytest.raises(TypeError, match="a numpy array, a"):
        x.from_numpy("abc")
    b = gr.ndarray(gr.u1, 3)
    b.from_numpy([True, 0, 2])
    assert b.to_list() == [True, False, True]


PRINTS = '''
import sys
if sys.argv[1:] == ["block"]:
    sys.modules["numpy"] = None
import gfxrt as gr
gr.init(log_level="warn")


@gr.kernel
def p(a: gr.f32, n: gr.i32, h: gr.f16):
    for i in range(2):
        print("v", i, a * i, n - i, 0.1 + a, h, i > 0)


p(0.1, 7, 1.1)
gr.sync()
'''


def test_kernel_prints_without_numpy(tmp_path):
    """print() in a kernel decodes its records by struct (an f32 as its shortest decimal), as with numpy."""
    path = tmp_path / "prints.py"
    path.write_text(PRINTS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    out = [subprocess.run([sys.executable, str(path), *flag], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=120) for flag in (["block"], [])]
    assert all(r.returncode == 0 for r in out), out[0].stderr[-3000:] + out[1].stderr[-3000:]
    assert out[0].stdout == out[1].stdout
    assert out[0].stdout.splitlines()[1] == "v 1 0.1 6 0.2 1.099609375 True"


@pytest.mark.parametrize("name", ["f32", "f16", "i32", "u8", "f64"])
def test_list_matrix_computes_as_the_numpy_class(name):
    """compiler/hostmatrix_list.py (gr.Vector / gr.Matrix without numpy) stores and computes in its
    dtype as numpy does on arrays of it: element-wise operators with a value and a number, @, dot,
    cross, comparisons, element writes."""
    from gfxrt.compiler.hostmatrix import value
    from gfxrt.compiler.hostmatrix_list import ListMatrix
    t = SCALARS[name]
    a_vals, b_vals = [[7, 2.5, 3], [4, 9, 6.25]], [[2, 3, 1.5], [5, 4, 2]]
    if t.is_int:
        a_vals, b_vals = [[int(x) for x in r] for r in a_vals], [[int(x) for x in r] for r in b_vals]
    a, b = ListMatrix(a_vals, t), ListMatrix(b_vals, t)
    na, nb = value(a_vals, t), value(b_vals, t)
    assert type(na) is not ListMatrix and na.dtype == t.numpy
    import operator as o
    for op in (o.add, o.sub, o.mul, o.truediv, o.floordiv, o.mod, o.pow, o.lt, o.eq):
        for left, right in ((a, b), (a, 3), (2, b)):
            got = op(left, right)
            want = np.asarray(op(na if left is a else left, nb if right is b else right))
            if op is o.pow and t.is_float:  # x ** 1.5: numpy's powf may be 1 ulp off the rounded value
                np.testing.assert_allclose(got.tolist(), want, rtol=2.0 ** -(10 if t.size == 2 else 22))
            else:
                assert got.tolist() == want.tolist(), (op, left, right)
    v, w = ListMatrix(a_vals[0], t), ListMatrix(b_vals[0], t)
    nv, nw = value(a_vals[0], t), value(b_vals[0], t)
    assert (a @ ListMatrix([[1, 2], [3, 4], [5, 6]], t)).tolist() == (na @ value([[1, 2], [3, 4], [5, 6]], t)).tolist()
    assert v.dot(w) == nv.dot(nw) and v.cross(w).tolist() == nv.cross(nw).tolist()
    assert v.norm() == nv.norm() and a.T.tolist() == na.T.tolist()
    assert [a.sum(), a.max(), a.min(), a.any(), a.all()] == [na.sum(), na.max(), na.min(), na.any(), na.all()]
    assert bool(v == a_vals[0]) and not bool(v != nv.tolist())
    x = 300 if t.is_int else 300.75  # stored as the dtype stores it (an int wraps, f16 rounds)
    v[1] = x
    nv[1] = np.asarray(x).astype(t.numpy)
    assert v.tolist() == nv.tolist() and v.y == nv.y
    with pytest.raises(ValueError, match="broadcast"):
        v + a
    with pytest.raises(TypeError, match="holds numbers"):
        ListMatrix(["a", "b"])
    assert ListMatrix(v).dtype == t
    assert ListMatrix([1, 2.5]).dtype is None and (ListMatrix([1, 2.5]) * 3).tolist() == [3, 7.5]  # Python numbers
