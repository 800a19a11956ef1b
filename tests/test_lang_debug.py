"""gr.init(debug=True): bounds-checked indexing and asserts, raised at the next sync."""
import numpy as np
import pytest

import gfxrt as gr

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
F2 = gr.types.ndarray(dtype=gr.f32, ndim=2)


@pytest.fixture(scope="module", autouse=True)
def debug_mode():
    global f
    gr.init(debug=True)
    f = gr.field(gr.f32, shape=(5,))  # fields live on one device: create them after gr.init
    yield
    gr.init()


@gr.kernel
def shifted(x: F1):
    for i in range(x.shape[0]):
        if i > 0 and x[i - 1] >= 0.0:  # guarded: i - 1 is never read out of bounds
            x[i + 1] = 1.0  # writes x[n] on the last thread


@gr.kernel
def in_bounds(x: F1):
    for i in range(x.shape[0] - 1):
        if i > 0 and x[i - 1] >= 0.0:
            x[i + 1] = 1.0


def test_out_of_bounds_raises_at_the_next_sync_naming_kernel_and_array():
    x = gr.ndarray(gr.f32, 8)
    x.fill(0.0)
    shifted(x)  # device arrays: no readback, so the launch itself does not wait
    with pytest.raises(gr.OutOfBoundsError) as e:
        gr.sync()
    msg = str(e.value)
    assert "kernel 'shifted'" in msg and "array 'x'" in msg and "x[i + 1] = 1.0" in msg
    assert "(1 time(s))" in msg
    gr.sync()  # the error was reported once; the runtime stays usable
    in_bounds(x)
    gr.sync()
    np.testing.assert_array_equal(x.to_numpy(), [0, 0, 1, 1, 1, 1, 1, 1])


@gr.kernel
def rows(x: F2, k: gr.i32):
    for i in range(x.shape[0]):
        x[i, k] = 1.0


def test_each_dimension_is_checked():
    x = gr.ndarray(gr.f32, (3, 4))
    rows(x, 4)  # flat index i * 4 + 4 would be in range for i < 2, but column 4 is not
    with pytest.raises(gr.OutOfBoundsError, match="array 'x': index 4 is out of bounds for axis 1 with size 4"):
        gr.sync()
    rows(x, 3)
    gr.sync()


f = None


@gr.kernel
def field_oob(n: gr.i32):
    for i in range(n):
        f[i] = 1.0


def test_fields_are_checked_with_their_shape():
    field_oob(6)
    with pytest.raises(gr.OutOfBoundsError, match=r"array 'f' \(shape \(5,\)\): index 5 is out of bounds for axis 0 "
                                                   r"with size 5, at "):
        gr.sync()


@gr.kernel
def component_oob(v: gr.types.ndarray(dtype=gr.types.vector(3, gr.f32), ndim=1), j: gr.i32):
    for i in range(v.shape[0]):
        v[i][j] = 1.0


def test_the_failing_index_and_extent_are_reported():
    """The device records the first failing index and the extent it was checked against
    (a negative index too), for array axes and vector components."""
    x = gr.ndarray(gr.f32, (3, 4))
    rows(x, -2)
    with pytest.raises(gr.OutOfBoundsError, match="index -2 is out of bounds for axis 1 with size 4"):
        gr.sync()
    v = gr.ndarray(gr.types.vector(3, gr.f32), 2)
    component_oob(v, 3)
    with pytest.raises(gr.OutOfBoundsError, match=r"components of .*: index 3 is out of bounds for axis 0 with size 3"):
        gr.sync()


OLD_FIELD = """
import numpy as np, gfxrt as gr
gr.init(debug=True)
old = gr.field(gr.f32, shape=(2,))
gr.reset()
gr.init(debug=True)  # a new device
@gr.kernel
def k(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        old[i] = x[i]
try:
    k(np.zeros(2, np.float32))
    print("no error")
except gr.GfxrtError as e:
    print(e)
"""


def test_fields_from_before_init_are_refused_with_a_message(tmp_path):
    """A process of its own: a new device in this one would leave the module-level fields of
    every other test file on the old device."""
    import os
    import subprocess
    import sys
    (tmp_path / "prog.py").write_text(OLD_FIELD)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, str(tmp_path / "prog.py")], capture_output=True, text=True, timeout=120,
                       env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "created before the last gr.init" in r.stdout, r.stdout


def test_constant_out_of_bounds_index_is_a_compile_error():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            f[7] = x[i]
    with pytest.raises(gr.CompileError, match="index 7 is out of bounds"):
        k(np.zeros(2, np.float32))


@gr.kernel
def checked(x: F1):
    for i in range(x.shape[0]):
        assert x[i] < 5.0, "values must stay below 5"


def test_assert_in_debug_mode():
    x = gr.ndarray(gr.f32, 8)
    x.from_numpy(np.arange(8, dtype=np.float32))
    checked(x)
    with pytest.raises(gr.GfxrtError, match="values must stay below 5.*3 time"):
        gr.sync()


def test_errors_raise_at_a_readback_once():
    """A readback waits for the device anyway: device-side errors raise there (after the
    data arrived), and the next sync is clean."""
    x = gr.ndarray(gr.f32, 8)
    x.fill(0.0)
    shifted(x)
    with pytest.raises(gr.OutOfBoundsError, match="kernel 'shifted'"):
        x.to_numpy()
    gr.sync()  # reported once
    np.testing.assert_array_equal(x.to_numpy(), [0, 0, 1, 1, 1, 1, 1, 1])
    f.fill(0.0)
    field_oob(6)
    with pytest.raises(gr.OutOfBoundsError, match="array 'f'"):
        f[0]  # a host element read is a readback too
    assert f[0] == 1.0
    xs = np.zeros(8, np.float32)
    with pytest.raises(gr.OutOfBoundsError):
        shifted(xs)  # a numpy argument the kernel writes is read back at the launch
    gr.sync()
    out = np.zeros(8, np.float32)
    shifted(x)
    with pytest.raises(gr.OutOfBoundsError):
        gr.copy_tensors([(out, x)])
    gr.sync()
