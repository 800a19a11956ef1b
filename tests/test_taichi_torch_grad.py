"""Gradients through torch tensors, as in Taichi 1.7.4 (its tests/python/test_ad_ndarray.py and
test_torch_ad.py, renamed ti -> gr, checked against Taichi's CPU backend): a tensor with
requires_grad is a differentiable kernel argument, `k.grad(...)` on the same tensors writes their
`.grad`, `gr.Tape(loss=tensor)`; and `gr.ad.torch_function`, the torch.autograd wrapper.
torch is optional: skipped without it."""
import numpy as np
import pytest

import gfxrt as gr

torch = pytest.importorskip("torch")

ND = gr.types.ndarray()


def f64():
    if not {"shader-f64", "shader-int64"} <= gr.device().features:
        pytest.skip("no f64 on this adapter")


def taichi_op(kernel, output_shapes):
    """What Taichi's tests wrap kernels in (its tests/test_utils.py torch_op, in our words): a
    torch.autograd.Function whose forward runs the kernel on the inputs and new f64 outputs, and
    whose backward seeds the outputs' .grad, runs kernel.grad on the same tensors and returns the
    inputs' .grad."""
    class Op(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *inputs):
            outs = tuple(torch.zeros(s, dtype=torch.double, requires_grad=True) for s in output_shapes)
            kernel(*inputs, *outs)
            ctx.save_for_backward(*inputs, *outs)
            return outs

        @staticmethod
        def backward(ctx, *grads):
            saved = ctx.saved_tensors
            inputs, outs = saved[:-len(grads)], saved[-len(grads):]
            for t in inputs:
                t.grad.fill_(0)
            for t, g in zip(outs, grads):
                t.grad = g
            kernel.grad(*inputs, *outs)
            return tuple(t.grad for t in inputs)

    return lambda *args: Op.apply(*args)


# -- Taichi's tests ---------------------------------------------------------------------------

def test_kernel_grad_writes_tensor_grad():
    """The bare form: kernel on tensors, kernel.grad on the same tensors, gradients in .grad."""
    @gr.kernel
    def k(x: ND, y: ND):
        for i in x:
            y[i] = x[i] * x[i] * 3.0

    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = torch.zeros(3, requires_grad=True)
    k(x, y)
    assert torch.equal(y.detach(), torch.tensor([3.0, 12.0, 27.0]))
    assert torch.equal(x.grad, torch.zeros(3)) and torch.equal(y.grad, torch.zeros(3))  # allocated, as Taichi
    y.grad.fill_(1.0)
    k.grad(x, y)
    assert torch.equal(x.grad, torch.tensor([6.0, 12.0, 18.0]))
    assert torch.equal(y.grad, torch.zeros(3))  # the store consumed the output's gradient
    x3, y3 = torch.tensor([1.0, 2.0]), torch.zeros(2, requires_grad=True)
    k(x3, y3)
    y3.grad.fill_(1.0)
    k.grad(x3, y3)
    assert x3.grad is None  # no requires_grad: a constant

    @gr.kernel
    def mul(a: ND, b: ND, y: ND):
        for i in a:
            y[i] = a[i] * b[i]

    meta = [torch.zeros(3, device="meta", requires_grad=True), torch.zeros(3, device="meta", requires_grad=True)]
    spec = k.specialize(meta, mode="grad").spec  # a device tensor's type is read without copying its data
    assert [b.grad_of for b in spec.bindings if b.kind == "grad"] == [("arg", 0), ("arg", 1)]
    x4, y4 = torch.tensor([1.0, -2.0, 0.5], requires_grad=True), torch.zeros(3, requires_grad=True)
    mul(x4, x4, y4)
    y4.grad.fill_(1.0)
    mul.grad(x4, x4, y4)  # one tensor as two arguments: both gradients add up in its .grad
    assert torch.equal(x4.grad, 2 * x4.detach())


def test_torch_ad_fields():
    """Taichi's test_torch_ad: fields in a torch.autograd.Function through from_torch / to_torch."""
    n = 32
    x = gr.field(gr.f32, shape=n, needs_grad=True)
    y = gr.field(gr.f32, shape=n, needs_grad=True)

    @gr.kernel
    def torch_kernel():
        for i in range(n):
            y[n - i - 1] = x[i] * x[i]

    class Sqr(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            x.from_torch(inp)
            torch_kernel()
            return y.to_torch()

        @staticmethod
        def backward(ctx, outp_grad):
            gr.ad.clear_all_gradients()
            y.grad.from_torch(outp_grad)
            torch_kernel.grad()
            return x.grad.to_torch()

    for _ in range(3):
        X = torch.tensor(2 * np.ones((n,), dtype=np.float32), requires_grad=True)
        Sqr.apply(X).sum().backward()
        assert torch.equal(X.grad, torch.full((n,), 4.0))


def test_grad_tensor_in_kernel():
    """Taichi's test_grad_tensor_in_kernel on a tensor: `x.grad[i]` in a kernel reads the
    tensor's .grad (uploaded for any launch that binds it, not only gradient launches)."""
    N = 10

    @gr.kernel
    def test(x: ND, b: ND):
        for i in x:
            b[0] += x.grad[i]

    a = torch.zeros(N, requires_grad=True)
    a.grad = torch.full((N,), 2.0)
    b = torch.zeros(1, requires_grad=True)
    test(a, b)
    assert b.item() == N * 2.0


def test_simple_demo():
    f64()
    gr.init(default_fp=gr.f64)

    @gr.kernel
    def test(x: ND, y: ND):
        for i in x:
            a = 2.0
            for _j in range(1):
                a += x[i] / 3
            y[0] += a

    inp = torch.rand(4, dtype=torch.double, requires_grad=True)
    torch.autograd.gradcheck(taichi_op(test, [(1,)]), inp)
    gr.init()


@pytest.mark.parametrize("tifunc", [  # Taichi's list, all of it (torch is absent on CI: no cost there)
    lambda x: x,
    lambda x: gr.abs(-x),
    lambda x: -x,
    lambda x: x * x,
    lambda x: x**2,
    lambda x: x * x * x,
    lambda x: x * x * x * x,
    lambda x: 0.4 * x * x - 3,
    lambda x: (x - 3) * (x - 1),
    lambda x: (x - 3) * (x - 1) + x * x,
    lambda x: gr.tanh(x),
    lambda x: gr.sin(x),
    lambda x: gr.cos(x),
    lambda x: gr.acos(x),
    lambda x: gr.asin(x),
    lambda x: 1 / x,
    lambda x: (x + 1) / (x - 1),
    lambda x: (x + 1) * (x + 2) / ((x - 1) * (x + 3)),
    lambda x: gr.sqrt(x),
    lambda x: gr.rsqrt(x),
    lambda x: gr.exp(x),
    lambda x: gr.log(x),
    lambda x: gr.min(x, 0),
    lambda x: gr.min(x, 1),
    lambda x: gr.min(0, x),
    lambda x: gr.min(1, x),
    lambda x: gr.max(x, 0),
    lambda x: gr.max(x, 1),
    lambda x: gr.max(0, x),
    lambda x: gr.max(1, x),
    lambda x: x % 3,
    lambda x: gr.atan2(0.4, x),
    lambda y: gr.atan2(y, 0.4),
    lambda x: 0.4**x,
    lambda y: y**0.4,
])
def test_poly(tifunc):
    f64()
    gr.init(default_fp=gr.f64)

    @gr.kernel
    def test(x: ND, y: ND):
        for i in x:
            y[i] = tifunc(x[i])

    inp = torch.rand(4, dtype=torch.double, requires_grad=True)
    torch.autograd.gradcheck(taichi_op(test, [(4,)]), inp)
    gr.init()


def test_ad_reduce_and_select():
    f64()
    gr.init(default_fp=gr.f64)

    @gr.kernel
    def reduce(x: ND, y: ND):
        for i in x:
            y[0] += x[i] ** 2

    @gr.kernel
    def select(x: ND, y: ND, z: ND):
        for i in x:
            z[i] = gr.select(i % 2, x[i], y[i])

    x = torch.rand(4, dtype=torch.double, requires_grad=True)
    y = torch.rand(4, dtype=torch.double, requires_grad=True)
    torch.autograd.gradcheck(taichi_op(reduce, [(1,)]), x)
    torch.autograd.gradcheck(taichi_op(select, [(4,)]), [x, y])
    gr.init()


def test_ad_mixed_with_torch():
    @gr.kernel
    def compute_sum(a: ND, p: ND):
        for i in a:
            p[0] += a[i] * 2

    a = torch.ones(4, requires_grad=True)
    b = a * 2  # not a leaf: torch's own graph runs around the kernel
    c = taichi_op(compute_sum, [(1,)])(b)
    c[0].sum().backward()
    assert torch.equal(a.grad, torch.full((4,), 4.0))


def test_tape_with_tensor_loss():
    N = 3

    @gr.kernel
    def test(x: ND, y: ND):
        for i in x:
            a = 2.0
            for _j in range(N):
                a += x[i] / x.shape[0]
            y[0] += a

    a = torch.zeros((N,), requires_grad=True)
    loss = torch.zeros((1,), requires_grad=True)
    assert a.grad is None
    with gr.Tape(loss=loss):
        test(a, loss)
    assert torch.equal(a.grad, torch.ones(N)) and torch.equal(loss.grad, torch.ones(1))
    assert loss.item() == 6.0  # zeroed on entering: 3 * 2.0 + 0
    with gr.Tape(loss=loss):
        test(a, loss)
    assert torch.equal(a.grad, torch.full((N,), 2.0))  # tensors' .grad accumulate, as in Taichi and torch
    assert loss.item() == 6.0


def test_tape_throw():
    @gr.kernel
    def compute_sum(a: ND, p: ND):
        for i in a:
            p[0] += a[i] * 2

    a = torch.ones(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="he loss of `Tape` must be a tensor only contains one element"):
        with gr.Tape(loss=torch.ones(2, requires_grad=True)):
            compute_sum(a, torch.ones(2, requires_grad=True))
    with pytest.raises(RuntimeError, match="Gradients of loss are not allocated, please set requires_grad=True"):
        with gr.Tape(loss=torch.ones(1)):
            compute_sum(a, torch.ones(1))
    b = gr.ndarray(gr.f32, shape=4, needs_grad=True)
    with pytest.raises(RuntimeError, match="The loss of `Tape` must be an ndarray with only one element"):
        with gr.Tape(loss=gr.ndarray(gr.f32, shape=2, needs_grad=True)):
            compute_sum(b, gr.ndarray(gr.f32, shape=2, needs_grad=True))
    with pytest.raises(RuntimeError, match="Gradients of loss are not allocated, please set needs_grad=True"):
        with gr.Tape(loss=gr.ndarray(gr.f32, shape=1)):
            compute_sum(b, gr.ndarray(gr.f32, shape=1))


def test_needs_grad_false_annotation():
    N = 3

    @gr.kernel
    def test(x: gr.types.ndarray(needs_grad=False), y: ND):
        for i in range(N):
            a = 2.0
            for _j in range(N):
                a += x[i] / x.shape[0]
            y[0] += a

    x = torch.rand((N,), dtype=torch.float, requires_grad=True)
    y = torch.rand((1,), dtype=torch.float, requires_grad=True)
    test(x, y)
    y.grad.fill_(1.0)
    test.grad(x, y)
    assert torch.equal(x.grad, torch.zeros(N))


def test_vector_ndarrays_and_tensors():
    """Vector ndarrays with needs_grad (Taichi's test_ad_sum_vector, test_ad_multiple_tapes), and
    tensors whose last axis is a vector element."""
    N = 10

    @gr.kernel
    def double(a: ND, p: ND):
        for i in p:
            p[i] = a[i] * 2

    @gr.kernel
    def compute_sum(a: ND, p: ND):
        for i in a:
            p[None] += a[i][0] * 2 + a[i][1] * 3

    a = gr.ndarray(gr.math.vec2, shape=N, needs_grad=True)
    p = gr.ndarray(gr.math.vec2, shape=N, needs_grad=True)
    a.fill(3)
    double(a, p)
    p.grad.fill(1)
    double.grad(a, p)
    np.testing.assert_array_equal(a.grad.to_numpy(), np.full((N, 2), 2.0))
    s = gr.ndarray(gr.f32, shape=(), needs_grad=True)
    for _ in range(2):
        a.grad.fill(0)
        with gr.Tape(loss=s):
            compute_sum(a, s)
        assert s[None] == N * 5 * 3
        np.testing.assert_array_equal(a.grad.to_numpy(), np.tile([2.0, 3.0], (N, 1)))

    V2 = gr.types.ndarray(dtype=gr.math.vec2, ndim=1)

    @gr.kernel
    def norm2(v: V2, out: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in v:
            out[i] = v[i].dot(v[i])

    v = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    out = torch.zeros(2, requires_grad=True)
    norm2(v, out)
    assert torch.equal(out.detach(), torch.tensor([5.0, 25.0]))
    out.grad.fill_(1.0)
    norm2.grad(v, out)
    assert torch.equal(v.grad, 2 * v.detach())


# -- gr.ad.torch_function ---------------------------------------------------------------------

@gr.kernel
def _scale_sq(x: ND, w: ND, s: gr.f64, y: ND):
    for i in x:
        y[i] = s * w[i] * x[i] * x[i]


@gr.kernel
def _dot2(a: ND, b: ND, dot: ND, prod: ND):
    for i in a:
        dot[0] += a[i] * b[i]
        prod[i] = a[i] * b[i]


def test_torch_function_gradcheck():
    """Gradients of every differentiable input, a number argument passed through, torch's own
    operations before and after; checked by torch.autograd.gradcheck."""
    f64()
    op = gr.ad.torch_function(_scale_sq, outputs=[lambda x, w, s: x.shape])
    x = torch.rand(5, dtype=torch.double, requires_grad=True)
    w = torch.rand(5, dtype=torch.double, requires_grad=True)
    torch.autograd.gradcheck(lambda x, w: op(x, w, 1.5), (x, w))
    torch.autograd.gradcheck(lambda x, w: op(torch.sin(x), w * 2, -0.5).exp(), (x, w))
    ops2 = gr.ad.torch_function(outputs=[1, (5,)])(_dot2)  # the decorator form, two outputs
    torch.autograd.gradcheck(lambda a, b: ops2(a, b), (x, w))


def test_torch_function_leaves_callers_grad_to_torch():
    op = gr.ad.torch_function(_dot2, outputs=[(1,), lambda a, b: a.shape])
    a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = torch.tensor([4.0, 5.0, 6.0])  # a constant: no gradient asked, none computed
    dot, prod = op(a, b)
    assert dot.dtype == torch.float32 and dot.requires_grad and dot.item() == 32.0
    assert torch.equal(prod.detach(), torch.tensor([4.0, 10.0, 18.0]))
    assert a.grad is None and b.grad is None  # the forward allocated no gradient of the caller's
    (dot.sum() + prod.sum()).backward()
    assert torch.equal(a.grad, 2 * b)
    op(a, b)[0].sum().backward()
    assert torch.equal(a.grad, 3 * b)  # torch accumulates into the leaf
    assert b.grad is None
    with torch.no_grad():
        assert not op(a, b)[0].requires_grad
    with pytest.raises(TypeError, match="needs a @gr.kernel"):
        gr.ad.torch_function(lambda x: x, outputs=[1])
    with pytest.raises(TypeError, match="non-empty list"):
        gr.ad.torch_function(_dot2, outputs=[])


def test_run_time_loops_and_graph_capture():
    """A loop whose trip count is read from an array and that reads the tensor at indices it
    changes (the adstack, probed on the device arrays that carry the tensors), against torch's
    own autograd of the same loop; a requires_grad tensor inside gr.graph() is host work, refused."""
    @gr.kernel
    def compute(a: ND, b: ND, p: ND):
        for i in range(a.shape[0]):
            ret = 1.0
            for j in range(b[i]):
                ret = gr.sin(ret) * a[(i + j) % a.shape[0]] + 0.5
            p[i] = ret

    n = 6
    b = torch.tensor([0, 1, 3, 2, 5, 4], dtype=torch.int32)
    a = torch.linspace(-1.0, 2.0, n, requires_grad=True)
    p = torch.zeros(n, requires_grad=True)
    assert compute.specialize([a, b, p], mode="grad").capped
    compute(a, b, p)
    a_ref = a.detach().clone().requires_grad_()
    ref = []
    for i in range(n):
        ret = torch.tensor(1.0)
        for j in range(int(b[i])):
            ret = torch.sin(ret) * a_ref[(i + j) % n] + 0.5
        ref.append(ret)
    ref = torch.stack(ref)
    assert torch.allclose(p.detach(), ref.detach(), atol=1e-6)
    w = torch.arange(1.0, n + 1)
    p.grad.copy_(w)
    compute.grad(a, b, p)
    (ref * w).sum().backward()
    assert torch.allclose(a.grad, a_ref.grad, atol=1e-5)
    with pytest.raises(gr.GraphCaptureError, match="torch tensor"):
        with gr.graph():
            compute(a, b, p)
    x = np.zeros(n, np.float32)
    compute(np.ones(n, np.float32), b.numpy(), x)  # the runtime is usable after it
    assert x[0] == 1.0


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA")
def test_cuda_tensors_grad():
    """CUDA tensors go through the host both ways; their .grad stays on the GPU."""
    x = torch.tensor([1.0, 2.0, 3.0], device="cuda", requires_grad=True)
    y = torch.zeros(3, device="cuda", requires_grad=True)

    @gr.kernel
    def k(x: ND, y: ND):
        for i in x:
            y[i] = x[i] * x[i]

    k(x, y)
    y.grad.fill_(1.0)
    k.grad(x, y)
    assert x.grad.device.type == "cuda" and torch.equal(x.grad.cpu(), torch.tensor([2.0, 4.0, 6.0]))
    op = gr.ad.torch_function(_dot2, outputs=[1, lambda a, b: a.shape])
    a = torch.rand(4, device="cuda", requires_grad=True)
    b = torch.rand(4, device="cuda")
    dot, prod = op(a, b)
    assert dot.device.type == "cuda"
    (dot.sum() + prod.sum()).backward()
    assert torch.allclose(a.grad, 2 * b)
