"""gfxrt's runtime without numpy (issue 26: Pyodide in a browser tab has none).

tests/nonumpy_program.py runs in two child processes, one with numpy blocked
(`sys.modules['numpy'] = None` before gfxrt is imported): saxpy, a run-time loop's gradient, a Tape,
a graph replay, a return value, f16 data; both must print the same results. The host data path
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
