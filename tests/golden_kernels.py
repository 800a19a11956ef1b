"""Kernels whose IR and WGSL text are checked in under tests/golden (see test_lang_ir.py).
Editing this file changes the `// golden_kernels.py:LINE` comments: regenerate the golden
files with GFXRT_UPDATE_GOLDEN=1."""
import gfxrt as gr


def saxpy(a, x, y):
    for i in range(x.shape[0]):
        y[i] += a * x[i] ** 2


def norm_sum(p):
    total = 0.0
    for i in p:
        total += p[i].norm()
    return total


def floor_ops(x, k):
    for i in range(x.shape[0]):
        x[i] = x[i] // k + x[i] % k
        if x[i] > 100:
            x[i] = gr.max(x[i], -k)
