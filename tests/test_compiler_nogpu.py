"""Compiler tests that need no device: lowering, typing, WGSL text."""
from gfxrt.compiler import ArgSpec, Target, compile_kernel, lower
from gfxrt.compiler.ir import Op, walk
from gfxrt.compiler.types import f32, i32

TARGET = Target(frozenset({"immediates", "shader-float32-atomic"}), 128)


def k_saxpy(a, x, y):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


ARGS = [ArgSpec("a", "scalar", f32), ArgSpec("x", "ndarray", elem=f32, ndim=1),
        ArgSpec("y", "ndarray", elem=f32, ndim=1)]


def test_lowering_is_typed_and_parallel():
    ir = lower(k_saxpy, ARGS)
    assert [t.kind for t in ir.tasks] == ["range"]
    stores = [n for n in walk(ir.tasks[0].body) if n.op is Op.STORE]
    assert len(stores) == 1 and stores[0].args[1].dtype == f32 and stores[0].args[0].dtype == i32


def test_wgsl_has_bindings_immediates_and_line_comments():
    spec = compile_kernel(k_saxpy, ARGS, TARGET)
    assert "var<immediate> P: Params;" in spec.wgsl
    assert "var<storage, read> b0_x" in spec.wgsl and "var<storage, read_write> b1_y" in spec.wgsl
    assert "test_compiler_nogpu.py:" in spec.wgsl
    assert [b.read_only for b in spec.bindings] == [True, False]
    assert spec.tasks[0].extent_fn([1.0, 17, 17]) == 17
