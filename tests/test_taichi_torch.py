"""torch tensors as kernel arguments (copied in, and written back like numpy arrays), and
`x.to_torch(device=)` / `x.from_torch(t)` as in Taichi. torch is optional: skipped without it."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gfxrt as gr

torch = pytest.importorskip("torch")

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)


@gr.kernel
def saxpy(a: gr.f32, x: F1, y: F1):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


def test_cpu_tensors_are_read_and_written_back():
    x = torch.arange(8, dtype=torch.float32)
    y = torch.ones(8)
    want = 2 * x + y
    saxpy(2.0, x, y)
    assert torch.equal(y, want)
    saxpy(2.0, x, y)  # the second call shape-hits the cache
    assert torch.equal(y, 2 * x + want)
    assert torch.equal(x, torch.arange(8, dtype=torch.float32))  # read-only argument unchanged


def test_tensor_views_requires_grad_and_dtypes():
    @gr.kernel
    def scale(x: gr.types.ndarray(ndim=2), s: gr.f32):
        for i, j in x:
            x[i, j] = x[i, j] * s

    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    view = base[:, 1:3]  # not contiguous: copied, then written back into the view
    scale(view, 10.0)
    want = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    want[:, 1:3] *= 10
    assert torch.equal(base, want)
    w = torch.ones(2, 2, requires_grad=True)
    out = torch.zeros(2, 2, dtype=torch.int32)

    @gr.kernel
    def cast(src: gr.types.ndarray(dtype=gr.f32, ndim=2), dst: gr.types.ndarray(dtype=gr.i32, ndim=2)):
        for i, j in src:
            dst[i, j] = gr.i32(src[i, j] * 3.0)

    cast(w, out)
    assert torch.equal(out, torch.full((2, 2), 3, dtype=torch.int32))
    with pytest.raises(TypeError, match="expected dtype f32, got i64"):
        saxpy(1.0, torch.arange(3), torch.zeros(3))
    with pytest.raises(TypeError, match="bfloat16"):
        saxpy(1.0, torch.zeros(3, dtype=torch.bfloat16), torch.zeros(3))


def test_f64_tensors():
    if not {"shader-f64", "shader-int64"} <= gr.device().features:
        pytest.skip("no f64 on this adapter")

    @gr.kernel
    def twice(x: gr.types.ndarray(dtype=gr.f64, ndim=1)):
        for i in range(x.shape[0]):
            x[i] = x[i] * 2.0 + 1e-12

    x = torch.rand(100, dtype=torch.float64)
    want = x * 2.0 + 1e-12
    twice(x)
    assert torch.equal(x, want)


def test_to_torch_from_torch():
    a = gr.ndarray(gr.f32, shape=(2, 3))
    t = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    a.from_torch(t)
    np.testing.assert_array_equal(a.to_numpy(), t.numpy())
    back = a.to_torch()
    assert back.dtype == torch.float32 and back.device.type == "cpu" and torch.equal(back, t)
    assert a.to_torch(device="cpu").shape == (2, 3)
    v = gr.ndarray(gr.types.vector(3, gr.f32), shape=(4,))
    v.from_torch(torch.ones(4, 3))
    assert v.to_torch().shape == (4, 3)
    f = gr.field(gr.i32, shape=(5,))
    f.from_torch(torch.arange(5, dtype=torch.int32))
    assert torch.equal(f.to_torch(), torch.arange(5, dtype=torch.int32))
    with pytest.raises(TypeError, match="expects a torch.Tensor"):
        a.from_torch(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="shape mismatch"):
        a.from_torch(torch.zeros(3, 2))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA")
def test_cuda_tensors_copied_in_and_back():
    x = torch.arange(8, dtype=torch.float32, device="cuda")
    y = torch.ones(8, device="cuda")
    saxpy(2.0, x, y)
    assert y.device.type == "cuda"
    assert torch.equal(y.cpu(), 2 * torch.arange(8, dtype=torch.float32) + 1)
    a = gr.ndarray(gr.f32, shape=8)
    a.from_torch(y)
    assert a.to_torch(device="cuda").device.type == "cuda"


def test_gfxrt_does_not_import_torch(tmp_path):
    script = tmp_path / "no_torch.py"
    script.write_text("import numpy as np, sys, gfxrt as gr\n"
                      "@gr.kernel\n"
                      "def k(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):\n"
                      "    for i in range(x.shape[0]):\n"
                      "        x[i] += 1.0\n"
                      "a = gr.ndarray(gr.f32, shape=3); k(a); k(np.zeros(3, np.float32)); a.to_numpy()\n"
                      "assert 'torch' not in sys.modules, 'torch imported'\n")
    root = str(Path(__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    subprocess.run([sys.executable, str(script)], check=True, timeout=120, env=env, cwd=root)
