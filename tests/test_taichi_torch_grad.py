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


@pytest.mark.parametrize("tifunc", [
    lambda x: x * x * x,
    lambda x: (x + 1) / (x - 1),
    lambda x: gr.sqrt(x),
    lambda x: gr.exp(x),
    lambda x: gr.max(x, 1),
    lambda x: x % 3,
    lambda x: gr.atan2(0.4, x),
    lambda y: y ** 0.4,
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
    xs, ys = gr.ndarray(gr.f32, N, needs_grad=True), gr.ndarray(gr.f32, 1, needs_grad=True)
    test(xs, ys)
    ys.grad.fill(1.0)
    test.grad(xs, ys)
    np.testing.assert_array_equal(xs.grad.to_numpy(), np.zeros(N))


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
