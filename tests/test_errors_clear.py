"""Clear errors instead of wrong results or internal ones (issue 21, item 8): bad shapes,
a range() step of zero, more storage buffers than the adapter binds, numpy views too large
for the device, pickling a device array."""
import pickle

import numpy as np
import pytest

import gfxrt as gr
from compiler import ArgSpec, lower
from compiler.errors import RangeStepError
from compiler.interp import execute
from compiler.spec import STATUS_RANGE_STEP
from compiler.types import i32

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


# -- pickling -----------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda: gr.ndarray(gr.f32, (3,)), lambda: gr.field(gr.i32, shape=(2, 2)),
                                  lambda: gr.Vector.field(3, gr.f32, shape=2),
                                  lambda: gr.Struct.field({"a": gr.f32}, shape=2)],
                         ids=["ndarray", "field", "vector field", "struct field"])
def test_pickling_a_device_array_is_a_clear_type_error(make):
    with pytest.raises(TypeError, match="cannot be pickled.*to_numpy\\(\\)"):
        pickle.dumps(make())
