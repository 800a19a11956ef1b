"""Arrays larger than one storage binding (compiler/codegen/wgsl_chunks.py): bound as k windows
of one buffer. GFXRT_MAX_BINDING lowers the binding size so that small arrays take several
windows here; every result is compared with numpy."""
import numpy as np
import pytest
from gfxrt.compiler import Target
from gfxrt.compiler.errors import CompileError

import gfxrt as gr

LIMIT = 2048  # bytes per binding: 512 f32, 256 f64, 1024 f16, 2048 i8 elements per window


@pytest.fixture
def small_bindings(monkeypatch):
    monkeypatch.setenv("GFXRT_MAX_BINDING", str(LIMIT))
    gr.init()
    yield
    monkeypatch.delenv("GFXRT_MAX_BINDING")
    gr.init()


@pytest.mark.parametrize("size", [1, 2, 4, 8])
@pytest.mark.parametrize("limit", [2048, 3000, 1 << 27, 2 ** 31 - 1])
def test_window_invariants(size, limit):
    t = Target(max_binding=limit)
    c = t.chunk_elems(size)
    assert c % 256 == 0 and c * size <= limit  # aligned windows within one binding
    assert t.chunks(limit // size, size) == 1
    n = limit // size + 1
    assert t.chunks(n, size) == -(-n // c) >= 2


def test_read_write_ndarray(small_bindings):
    n = 1500
    x, y = gr.ndarray(gr.f32, (n,)), gr.ndarray(gr.f32, (n,))
    assert x.chunks == 3

    xs = np.arange(n, dtype=np.float32)
    ys = np.linspace(-1, 1, n).astype(np.float32)
    x.from_numpy(xs)
    y.from_numpy(ys)

    @gr.kernel
    def saxpy2(a: gr.f32, x: gr.types.ndarray(), y: gr.types.ndarray(), z: gr.types.ndarray()):
        for i in range(x.shape[0]):
            z[i] = a * x[i] + y[(i + 700) % x.shape[0]]

    z = gr.ndarray(gr.f32, (n,))
    saxpy2(2.0, x, y, z)
    np.testing.assert_array_equal(z.to_numpy(), 2 * xs + np.roll(ys, -700))
    assert len(saxpy2.specialize((2.0, x, y, z)).spec.bindings) == 9


def test_small_and_large_arrays_take_their_own_specializations(small_bindings):
    @gr.kernel
    def double(x: gr.types.ndarray()):
        for i in x:
            x[i] *= 2

    for n in (1500, 100, 3000, 100, 1500):  # (the offline cache keeps them apart too)
        x = gr.ndarray(gr.f32, (n,))
        x.from_numpy(np.arange(n, dtype=np.float32))
        double(x)
        np.testing.assert_array_equal(x.to_numpy(), 2 * np.arange(n, dtype=np.float32))
        assert len(double.specialize((x,)).spec.bindings) == x.chunks == -(-n // 512)
    a = np.arange(1500, dtype=np.float32)  # numpy arguments: uploaded once, bound in windows
    double(a)
    b = np.arange(100, dtype=np.float32)
    double(b)
    np.testing.assert_array_equal(a, 2 * np.arange(1500, dtype=np.float32))
    np.testing.assert_array_equal(b, 2 * np.arange(100, dtype=np.float32))


def test_atomics_and_reductions(small_bindings):
    n, bins = 5000, 1300
    v = np.random.default_rng(3).integers(0, bins, n).astype(np.int32)
    h = gr.ndarray(gr.i32, (bins,))
    hf = gr.ndarray(gr.f32, (bins,))
    mx = gr.ndarray(gr.i32, (bins,))
    acc = gr.ndarray(gr.f32, (bins,))
    old = gr.ndarray(gr.i32, (n,))
    assert h.chunks == 3

    @gr.kernel
    def hist(v: gr.types.ndarray(), h: gr.types.ndarray(), hf: gr.types.ndarray(), mx: gr.types.ndarray(),
             acc: gr.types.ndarray(), old: gr.types.ndarray()):
        for i in range(v.shape[0]):
            b = v[i]
            old[i] = gr.atomic_add(h[b], 1)
            hf[b] += 0.5
            gr.atomic_max(mx[b], i)
            acc[1100] += 1.0  # one element (uniform index) in the last window: a block reduction

    hist(v, h, hf, mx, acc, old)
    want = np.bincount(v, minlength=bins)
    np.testing.assert_array_equal(h.to_numpy(), want)
    np.testing.assert_array_equal(hf.to_numpy(), want * 0.5)
    last = np.full(bins, 0, np.int64)
    np.maximum.at(last, v, np.arange(n))
    np.testing.assert_array_equal(mx.to_numpy(), last)
    assert acc.to_numpy()[1100] == n and acc.to_numpy().sum() == n
    o = old.to_numpy()  # the old values of each bin are 0 .. count - 1
    for b in (0, 600, 1299):
        assert sorted(o[v == b]) == list(range(want[b]))


def test_gradients(small_bindings):
    n = 1500
    x = gr.ndarray(gr.f32, (n,), needs_grad=True)
    loss = gr.ndarray(gr.f32, (), needs_grad=True)

    @gr.kernel
    def energy(x: gr.types.ndarray(), loss: gr.types.ndarray()):
        for i in x:
            loss[None] += x[i] * x[(i + 600) % x.shape[0]]

    xs = np.linspace(-1, 1, n).astype(np.float32)
    x.from_numpy(xs)
    with gr.Tape(loss):
        energy(x, loss)
    grad = energy._specialize([x, loss], "grad")[0].spec
    assert sum(b.kind == "grad" and b.chunk is not None for b in grad.bindings) == 3  # x.grad: 3 windows
    want = np.roll(xs, -600) + np.roll(xs, 600)
    np.testing.assert_allclose(x.grad.to_numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(loss.to_numpy(), float(xs @ np.roll(xs, -600)), rtol=1e-4)


def test_fields(small_bindings):
    f = gr.field(gr.f32, shape=(40, 30), needs_grad=True)
    v = gr.Vector.field(3, gr.f32, shape=500)
    s = gr.field(gr.f32, shape=(), needs_grad=True)

    @gr.kernel
    def fill():
        for i, j in f:
            f[i, j] = i * 30 + j
        for k in v:
            v[k] = [k, -k, 2 * k]

    @gr.kernel
    def total():
        for i, j in f:
            s[None] += f[i, j] * f[i, j]

    fill()
    assert sum(b.chunk is not None for b in fill.specialize(()).spec.bindings) == 3 + 3
    ij = np.arange(1200, dtype=np.float32).reshape(40, 30)
    np.testing.assert_array_equal(f.to_numpy(), ij)
    k = np.arange(500, dtype=np.float32)
    np.testing.assert_array_equal(v.to_numpy(), np.stack([k, -k, 2 * k], 1))
    with gr.Tape(s):
        total()
    np.testing.assert_array_equal(f.grad.to_numpy(), 2 * ij)


def test_host_side(small_bindings):
    n = 3000
    x = gr.ndarray(gr.types.vector(3, gr.f32), (n,))  # 9000 scalars, 18 windows
    x.fill(gr.Vector([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(x.to_numpy(), np.tile([1, 2, 3], (n, 1)))
    big = gr.ndarray(gr.types.vector(3, gr.f32), (30000,))  # filled on the device (fill_words) in windows
    big.fill(gr.Vector([4.0, 5.0, 6.0]))
    np.testing.assert_array_equal(big.to_numpy(), np.tile([4, 5, 6], (30000, 1)))
    x[2999] = [7, 8, 9]
    assert list(x[2999]) == [7, 8, 9]
    h = gr.ndarray(gr.f16, (3000,))  # a copy at an odd halfword offset (copy_halfwords) in windows
    hs = (np.arange(3000) % 1000).astype(np.float16)
    h.from_numpy(hs)
    h2 = gr.ndarray(gr.f16, (3000,))
    h2.copy_from(h, src_offset=1, dst_offset=0, count=2999)
    np.testing.assert_array_equal(h2.to_numpy()[:2999], hs[1:])


def test_narrow_and_wide_dtypes(small_bindings):
    b = gr.ndarray(gr.i8, (5000,))  # packed u32 words, 3 windows of 2048
    d = gr.ndarray(gr.f64, (700,))  # 3 windows of 256
    assert b.chunks == 3 and d.chunks == 3

    @gr.kernel
    def k(b: gr.types.ndarray(), d: gr.types.ndarray()):
        for i in b:
            b[i] = i % 200 - 100
        for i in d:
            d[i] = gr.f64(i) / 3.0
        for i in b:
            gr.atomic_add(b[(i * 7) % b.shape[0]], 0)

    k(b, d)
    np.testing.assert_array_equal(b.to_numpy(), (np.arange(5000) % 200 - 100).astype(np.int8))
    np.testing.assert_allclose(d.to_numpy(), np.arange(700) / 3.0, rtol=1e-15)


def test_binding_count_error(small_bindings):
    """Windows count against max-storage-buffers-per-shader-stage: a clear error naming them."""
    limit = gr.device().limits["max-storage-buffers-per-shader-stage"]
    per = gr.device().target.chunk_elems(4)
    x = gr.ndarray(gr.f32, ((limit // 2 + 1) * per,))
    y = gr.ndarray(gr.f32, ((limit // 2 + 1) * per,))

    @gr.kernel
    def copy(x: gr.types.ndarray(), y: gr.types.ndarray()):
        for i in x:
            y[i] = x[i]

    with pytest.raises(CompileError, match=f"binds at most {limit} per kernel.*x \\({limit // 2 + 1} windows\\), "
                                           f"y \\({limit // 2 + 1} windows\\)"):
        copy(x, y)


def test_too_many_scalars_for_32_bit_indices():
    with pytest.raises(ValueError, match="32-bit indices"):
        gr.ndarray(gr.f32, (2 ** 16, 2 ** 15 + 1))


def test_graph_capture_and_replay(small_bindings):
    """A captured launch keeps its windows; a captured fill runs per window."""
    n = 1500
    x = gr.ndarray(gr.f32, (n,))

    @gr.kernel
    def step(x: gr.types.ndarray()):
        for i in x:
            x[i] = x[i] * 2 + x[n - 1 - i] * 0  # reads another window

    with gr.graph() as g:
        x.fill(1.0)
        step(x)
        step(x)
    g.replay(3)
    np.testing.assert_array_equal(x.to_numpy(), np.full(n, 4.0, np.float32))
