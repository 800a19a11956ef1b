"""Clear errors instead of wrong results or internal ones (issue 21, item 8): bad shapes,
a range() step of zero, more storage buffers than the adapter binds, numpy views too large
for the device, pickling a device array."""
import dataclasses
import importlib.util
import pickle

import numpy as np
import pytest
from gfxrt.compiler import ArgSpec, lower
from gfxrt.compiler.errors import RangeStepError
from gfxrt.compiler.interp import execute
from gfxrt.compiler.spec import STATUS_RANGE_STEP, BindingSpec, KernelSpec
from gfxrt.compiler.types import f32, i32

import gfxrt as gr
from gfxrt.engine.program import check_bindings

I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)
F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)

# -- shapes ------------------------------------------------------------------------------------
# every constructor that takes a shape, as f(shape)
MAKERS = {
    "ndarray": lambda s: gr.ndarray(gr.f32, s),
    "ndarray of vec3": lambda s: gr.ndarray(gr.types.vector(3, gr.f32), s),
    "field": lambda s: gr.field(gr.f32, shape=s),
    "Vector.field": lambda s: gr.Vector.field(2, gr.f32, shape=s),
    "Vector.ndarray": lambda s: gr.Vector.ndarray(2, gr.f32, shape=s),
    "Matrix.field": lambda s: gr.Matrix.field(2, 2, gr.f32, shape=s),
    "Matrix.ndarray": lambda s: gr.Matrix.ndarray(2, 2, gr.f32, shape=s),
    "vec type .field": lambda s: gr.types.vector(2, gr.f32).field(shape=s),
    "struct field": lambda s: gr.Struct.field({"a": gr.f32, "b": gr.i32}, shape=s),
    "struct type .field": lambda s: gr.types.struct(a=gr.f32).field(shape=s),
    "root.dense": lambda s: gr.root.dense(gr.i, s),
}


@pytest.mark.parametrize("make", MAKERS.values(), ids=MAKERS.keys())
@pytest.mark.parametrize("bad, names", [("10", "'10' (a str)"), ((3.7,), "3.7 (a float)"), (2.0, "2.0 (a float)"),
                                        ((2, "3"), "'3' (a str)"), ((True,), "True (a bool)")])
def test_a_shape_that_is_not_integers_is_a_type_error(make, bad, names):
    with pytest.raises(TypeError, match="must be an int or a tuple of ints") as e:
        make(bad)
    assert names in str(e.value)


@pytest.mark.parametrize("make", MAKERS.values(), ids=MAKERS.keys())
def test_a_negative_extent_is_a_value_error(make):
    with pytest.raises(ValueError, match="negative|positive"):
        make((-2,))


@pytest.mark.parametrize("shape, want", [(4, (4,)), (np.int64(4), (4,)), ((np.int32(2), 3), (2, 3)), ([2, 3], (2, 3)),
                                         (np.array([2, 3]), (2, 3)), ((), ())])
def test_integer_shapes_of_every_spelling(shape, want):
    assert gr.ndarray(gr.f32, shape).shape == want
    assert gr.field(gr.f32, shape=shape).shape == want


# -- range() step of zero ---------------------------------------------------------------------
def test_a_compile_time_zero_step_is_a_compile_error_and_a_value_error():
    @gr.kernel
    def k() -> gr.i32:
        s = 0
        step = 0
        for _ in range(0, 10, step):
            s += 1
        return s

    with pytest.raises(RangeStepError, match="range\\(\\) arg 3 must not be zero") as e:
        k()
    assert isinstance(e.value, gr.CompileError) and isinstance(e.value, ValueError)
    assert "for _ in range(0, 10, step):" in str(e.value)


def test_a_run_time_zero_step_skips_the_loop_and_raises_at_the_next_sync():
    @gr.kernel
    def down(step: gr.i32, x: I1):
        for _ in range(1):
            for j in range(10, 0, step):  # a step of 0 would never end
                x[j % 4] += 1

    x = gr.ndarray(gr.i32, (4,))
    down(0, x)
    with pytest.raises(gr.KernelValueError, match="range\\(\\) arg 3 must not be zero") as e:
        gr.sync()
    assert isinstance(e.value, ValueError) and "for j in range(10, 0, step)" in str(e.value)
    assert x.to_numpy().tolist() == [0, 0, 0, 0]  # skipped, not run (nor stopped by a loop cap)
    down(-3, x)  # 10, 7, 4, 1: the runtime is usable, the next sync clean
    gr.sync()
    assert x.to_numpy().tolist() == [1, 1, 1, 1]


def test_a_run_time_zero_step_of_a_parallel_loop_raises_at_the_readback():
    @gr.kernel
    def every(step: gr.i32, x: I1):
        for i in range(0, 10, step):
            x[i] += 1

    x = np.zeros(10, np.int32)
    every(3, x)
    assert x.tolist() == [1, 0, 0, 1, 0, 0, 1, 0, 0, 1]
    with pytest.raises(gr.KernelValueError, match=f"kernel 'every' the loop at {__file__}"):
        every(0, x)  # a numpy argument: the readback raises it
    assert x.tolist() == [1, 0, 0, 1, 0, 0, 1, 0, 0, 1]
    every(-4, x)
    assert x.tolist() == [1, 0, 0, 1, 0, 0, 1, 0, 0, 1]  # range(0, 10, -4) is empty


def test_a_zero_step_in_the_interpreter_is_counted_not_looped():
    def k(step, x):
        for _ in range(1):
            for _j in range(5, 0, step):
                x[0] += 1

    ir = lower(k, [ArgSpec("step", "scalar", dtype=i32), ArgSpec("x", "ndarray", elem=i32, ndim=1)])
    x = np.zeros(1, np.int32)
    it = execute(ir, [0, x], internal={"status": np.zeros(8, np.uint32)})
    assert x[0] == 0 and [c for (c, _), n in it.failures.items() if n] == [STATUS_RANGE_STEP]
    it = execute(ir, [-2, x], internal={"status": np.zeros(8, np.uint32)})
    assert x[0] == 3 and not any(it.failures.values())


# -- more arrays than the device binds ---------------------------------------------------------
def _many_arrays_kernel(tmp_path, n: int):
    """A kernel of n f32 array arguments, from a file (kernels need their source)."""
    params = ", ".join(f"a{i}: gr.types.ndarray(dtype=gr.f32, ndim=1)" for i in range(n))
    body = "".join(f"        a{i}[i] = {i}.0\n" for i in range(n))
    path = tmp_path / f"many_arrays_{n}.py"
    path.write_text(f"import gfxrt as gr\n\n\n@gr.kernel\ndef many({params}):\n    for i in range(4):\n{body}")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.many


def test_more_arrays_than_the_device_binds_is_a_compile_error_naming_the_limit(tmp_path):
    limit = int(gr.runtime().limits["max-storage-buffers-per-shader-stage"])
    if limit > 64:
        pytest.skip(f"this adapter binds {limit} storage buffers per kernel (the check itself: the next test)")
    many = _many_arrays_kernel(tmp_path, limit + 1)
    arrays = [gr.ndarray(gr.f32, (4,)) for _ in range(limit + 1)]
    with pytest.raises(gr.CompileError, match=f"needs {limit + 1} storage buffers \\({limit + 1} array argument"
                                              f"\\(s\\)\\), but .* binds at most {limit} per kernel") as e:
        many(*arrays)
    assert not isinstance(e.value, gr.InternalCompilerError)
    fits = _many_arrays_kernel(tmp_path, limit)  # as many as the device binds: runs
    fits(*arrays[:limit])
    assert arrays[limit - 1].to_numpy().tolist() == [limit - 1.0] * 4


def test_the_binding_count_includes_gradients_and_gfxrts_own_buffers():
    class FakeDevice:
        limits = {"max-storage-buffers-per-shader-stage": 4}
        adapter_info = {"device": "Some GPU"}

    def binding(k, kind):
        return BindingSpec(k, f"b{k}", f32, kind, 0, read_only=False)

    kinds = ["arg", "arg", "grad", "grad", "status", "adstack_heap"]
    spec = KernelSpec("k.grad", "", tuple(binding(k, kind) for k, kind in enumerate(kinds)), (), 0, ())
    with pytest.raises(gr.CompileError, match="in kernel 'k.grad': this kernel needs 6 storage buffers \\(2 array "
                                              "argument\\(s\\), 2 gradient array\\(s\\), 2 buffer\\(s\\) of "
                                              "gfxrt's own\\), but Some GPU binds at most 4 per kernel"):
        check_bindings(FakeDevice(), spec)
    check_bindings(FakeDevice(), dataclasses.replace(spec, bindings=spec.bindings[:4]))


# -- numpy arguments larger than the device holds --------------------------------------------
def test_a_numpy_view_too_large_for_the_device_is_a_memory_error_before_any_copy():
    @gr.kernel
    def ones(a: F1):
        for i in range(a.shape[0]):
            a[i] = 1.0

    @gr.kernel
    def first(a: gr.types.ndarray(dtype=gr.f32, ndim=2)) -> gr.f32:
        return a[0, 0]

    rt = gr.runtime()
    huge = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), shape=(2 ** 40,), strides=(0,))
    wide = np.broadcast_to(np.zeros((1, 1), np.float32), (2 ** 31, 2))  # also past 32-bit indexing
    live = rt.pool.live_bytes
    with pytest.raises(MemoryError, match="argument 'a' \\(a numpy array of shape .* elements\\) of \\d+ bytes "
                                          "exceeds this device's largest buffer \\(\\d+ bytes"):
        ones(huge)
    with pytest.raises((MemoryError, ValueError), match="largest buffer|32-bit"):  # whichever limit comes first
        first(wide)
    ones(np.zeros(4, np.float32))  # the call shape's quick path checks too
    with pytest.raises(MemoryError, match=f"of {4 * 2 ** 40} bytes exceeds"):
        ones(huge)
    assert rt.pool.live_bytes - live < 1 << 16  # nothing of that size was allocated
    x = gr.ndarray(gr.f32, (4,))
    with pytest.raises(ValueError, match="shape mismatch"):
        x.from_numpy(huge)


# -- pickling -----------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda: gr.ndarray(gr.f32, (3,)), lambda: gr.field(gr.i32, shape=(2, 2)),
                                  lambda: gr.Vector.field(3, gr.f32, shape=2),
                                  lambda: gr.Struct.field({"a": gr.f32}, shape=2)],
                         ids=["ndarray", "field", "vector field", "struct field"])
def test_pickling_a_device_array_is_a_clear_type_error(make):
    with pytest.raises(TypeError, match="cannot be pickled.*to_numpy\\(\\)"):
        pickle.dumps(make())
