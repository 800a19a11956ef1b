"""SharedArrays of vectors: declared as WGSL arrays of vec2 / vec4 (codegen/wgsl_vec.py), whole
elements moved in one vector access, results unchanged."""
import numpy as np
import pytest
from gfxrt.compiler import ArgSpec, Target, compile_kernel
from gfxrt.compiler.codegen.wgsl_vec import split
from gfxrt.compiler.ir import Node, Op
from gfxrt.compiler.irparse import parse_ir
from gfxrt.compiler.printer import print_ir
from gfxrt.compiler.types import f32, i32

import gfxrt as gr

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)
vec4 = gr.types.vector(4, gr.f32)
ivec2 = gr.types.vector(2, gr.i32)
vec3 = gr.types.vector(3, gr.f32)
TARGET = Target(frozenset({"immediates"}), 128)


def _mixed(x: F1, y: F1, out: F1):
    gr.loop_config(block_dim=64)
    for i in range(x.shape[0]):
        s = gr.simt.block.SharedArray((2, 64), vec4)
        q = gr.simt.block.SharedArray((64,), ivec2)
        w = gr.simt.block.SharedArray((64,), vec3)
        t = gr.simt.block.thread_idx()
        xi = 0.0
        if i < x.shape[0]:
            xi = x[i]
        s[0, t] = vec4(xi, 1.0, 2.0, 3.0)
        s[1, t] = s[0, t].wzyx                 # a store whose values were loaded from the same array
        s[1, t][t & 3] = s[1, t][t & 3] + 10.0  # one component at a run-time index
        s[0, t][2] = xi * 2.0                  # one component at a constant index
        q[t] = ivec2(t, 2 * t)
        w[t] = vec3(1.0, 2.0, xi)
        gr.simt.block.sync()
        v = s[1, (t + 1) & 63]                 # another thread's element
        u = s[0, 63 - t]
        if i < x.shape[0]:
            out[i] = v.x + 2.0 * v.y + 4.0 * v.z + 8.0 * v.w + u.z + 16.0 * q[t ^ 1].y + w[t].z + y[i]


def _mixed_numpy(x, y):
    n = x.size
    pad = np.zeros(-(-n // 64) * 64, np.float32)
    pad[:n] = x
    out = np.zeros(n)
    for i in range(n):
        b, t = divmod(i, 64)
        blk = pad[b * 64:(b + 1) * 64]
        t1 = (t + 1) % 64
        v = np.array([3.0, 2.0, 1.0, blk[t1]])
        v[t1 & 3] += 10.0
        u_z = blk[63 - t] * 2.0
        out[i] = v[0] + 2 * v[1] + 4 * v[2] + 8 * v[3] + u_z + 16 * 2 * (t ^ 1) + x[i] + y[i]
    return out


def test_vector_shared_arrays_compute_as_scalar_ones(rng):
    k = gr.kernel(_mixed)
    n = 64 * 3 - 5
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    for _ in range(2):  # the second launch starts from zeroed workgroup memory too
        out = np.zeros(n, np.float32)
        k(x, y, out)
        np.testing.assert_allclose(out, _mixed_numpy(x, y), rtol=1e-5, atol=1e-4)


def test_vector_shared_arrays_are_wgsl_vectors():
    args = [ArgSpec(n, "ndarray", elem=f32, ndim=1) for n in ("x", "y", "out")]
    wgsl = compile_kernel(_mixed, args, TARGET).wgsl
    decls = [line for line in wgsl.splitlines() if line.startswith("var<workgroup>")]
    assert decls[0].endswith("array<vec4<f32>, 128>;")   # 2 x 64 vec4
    assert decls[1].endswith("array<vec2<i32>, 64>;")
    assert decls[2].endswith("array<f32, 192>;")          # vec3: scalars (a vec3 array would be padded)
    stores = [line for line in wgsl.splitlines() if "= vec4<f32>(" in line and "// test_" in line]
    assert len(stores) == 2                                # s[0, t] = ... and s[1, t] = ....wzyx
    loads = [line for line in wgsl.splitlines() if "let v_ = b3_shared[" in line]
    assert len(loads) == 3                                 # s[0, t] (for the swizzle), v and u
    assert "b4_shared_1[l" in wgsl and "vec2<i32>(" in wgsl
    assert "][2] = " in wgsl                               # s[0, t][2]: the component, no division
    assert "/ 4u][u32(" in wgsl                            # s[1, t][t & 3]: element and component at run time


def test_atomic_vector_shared_array_keeps_scalars():
    def k(x):
        gr.loop_config(block_dim=64)
        for i in range(x.shape[0]):
            s = gr.simt.block.SharedArray((4,), vec4)
            s[i & 3][i & 3] += 1.0
            gr.simt.block.sync()
            x[i] = s[i & 3].x
    wgsl = compile_kernel(k, [ArgSpec("x", "ndarray", elem=f32, ndim=1)], TARGET).wgsl
    assert "array<atomic<u32>, 16>" in wgsl and "vec4<f32>" not in wgsl


@gr.kernel
def _atomic_lanes(x: F1):
    gr.loop_config(block_dim=64)
    for i in range(x.shape[0]):
        s = gr.simt.block.SharedArray((4,), vec4)
        s[i & 3][(i >> 2) & 3] += 1.0
        gr.simt.block.sync()
        x[i] = s[i & 3][(i >> 2) & 3]


def test_atomic_vector_shared_array_on_device():
    x = np.zeros(128, np.float32)
    _atomic_lanes(x)
    np.testing.assert_array_equal(x, 4.0)  # 64 threads of a block over 16 components


def test_split_recognizes_component_indices():
    c = lambda v: Node(Op.CONST, i32, attr=v)  # noqa: E731
    x = Node(Op.VAR, i32, attr="x")
    assert split(Node(Op.MUL, i32, (x, c(4))), 4) == (x, 0)
    assert split(Node(Op.ADD, i32, (Node(Op.MUL, i32, (c(4), x)), c(3))), 4) == (x, 3)
    assert split(c(13), 4) == (3, 1)
    assert split(Node(Op.ADD, i32, (Node(Op.MUL, i32, (x, c(4))), c(4))), 4) is None  # not a component
    assert split(Node(Op.MUL, i32, (x, c(2))), 4) is None
    assert split(x, 4) is None


def test_lanes_survive_the_textual_ir():
    from gfxrt.compiler import lower
    ir = lower(_mixed, [ArgSpec(n, "ndarray", elem=f32, ndim=1) for n in ("x", "y", "out")])
    text = print_ir(ir)
    assert "lanes=4" in text and "lanes=2" in text
    back = parse_ir(text)
    assert [b.lanes for b in back.buffers] == [b.lanes for b in ir.buffers]


@pytest.mark.parametrize("dtype", [gr.f32, gr.i32, gr.u32])
def test_vec4_shared_array_of_each_4_byte_type(dtype):
    v4 = gr.types.vector(4, dtype)
    arr = gr.types.ndarray(dtype=dtype, ndim=1)

    @gr.kernel
    def rotate(x: arr, out: arr):
        gr.loop_config(block_dim=32)
        for i in range(x.shape[0]):
            s = gr.simt.block.SharedArray((8,), v4)
            t = gr.simt.block.thread_idx()
            if t < 8:
                s[t] = v4(x[4 * t], x[4 * t + 1], x[4 * t + 2], x[4 * t + 3])
            gr.simt.block.sync()
            v = s[((t >> 2) + 1) & 7]
            out[i] = v[t & 3]
    x = (np.arange(32) * 3 + 1).astype(dtype.numpy)
    out = np.zeros_like(x)
    rotate(x, out)
    np.testing.assert_array_equal(out, np.roll(x, -4))
