"""The loop-capped target's WGSL (Target.loop_cap, llvmpipe): loop bodies copied per pass and an
end-of-task check; the default target's WGSL has neither. No device."""
import dataclasses

from gfxrt.compiler import ArgSpec, Target, compile_kernel
from gfxrt.compiler.types import f32, i32

TARGET = Target(frozenset({"immediates", "shader-float32-atomic"}), 128)
CAPPED = dataclasses.replace(TARGET, loop_cap=65535)


def k_loops(n, out):
    for i in range(out.shape[0]):
        c = 0
        for k in range(n):
            if k == 7:
                continue
            c += 1
        while c > 0:
            c -= 3
        out[i] = c


def k_counts(n, out):
    for i in range(out.shape[0]):
        c = 0
        for _ in range(out[i]):  # a per-element count: short in practice, few copies
            c += 1
        for _ in range(3):       # a constant trip count: one pass
            c += 1
        out[i] = c + n


def k_flat(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0


ARGS = [ArgSpec("n", "scalar", i32), ArgSpec("out", "ndarray", elem=i32, ndim=1)]


def test_capped_target_copies_loop_bodies_and_checks_the_cap():
    plain = compile_kernel(k_loops, ARGS, TARGET).wgsl
    capped = compile_kernel(k_loops, ARGS, CAPPED)
    assert "per pass" not in plain and "loop cap" not in plain and "gr_status" not in plain
    assert capped.wgsl.count(f"// {CAPPED.loop_copies} iterations per pass") == 2  # the for and the while
    assert capped.wgsl.count("cn_ = true;") == CAPPED.loop_copies  # `continue`: a flag, per copy
    assert "did the adapter's loop cap stop a loop?" in capped.wgsl
    assert any("loop limit" in msg for _, msg in capped.asserts)
    assert TARGET.key() != CAPPED.key()


def test_copies_follow_what_the_bounds_depend_on():
    from gfxrt.compiler.codegen.wgsl_loops import MEMORY_COPIES
    wgsl = compile_kernel(k_counts, ARGS, CAPPED).wgsl
    assert f"// {MEMORY_COPIES} iterations per pass" in wgsl and "// 3 iterations per pass" in wgsl


def test_capped_target_leaves_kernels_without_loops_alone():
    args = [ArgSpec("x", "ndarray", elem=f32, ndim=1)]
    assert compile_kernel(k_flat, args, CAPPED).wgsl == compile_kernel(k_flat, args, TARGET).wgsl
