"""The rest of what Taichi programs call: gr.atomic_mul, loop_config's Taichi names,
break / continue in gr.static loops, an ndarray argument's .grad inside a kernel,
gr.real_func, gr.Tape(validation=, grad_check=)."""
import numpy as np
import pytest

import gfxrt as gr

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)


def test_atomic_mul_float_int_uint_and_kernel_scope():
    p = gr.field(gr.f32, shape=())
    q = gr.field(gr.i32, shape=(2,))
    u = gr.field(gr.u32, shape=())

    @gr.kernel
    def k(x: F1) -> gr.f32:
        prod = 1.0
        for i in range(x.shape[0]):
            gr.atomic_mul(p[None], x[i])
            gr.atomic_mul(q[i % 2], 2)
            gr.atomic_mul(u[None], gr.u32(3))
            gr.atomic_mul(prod, x[i])
        return prod

    p[None] = 1.0
    q.fill(1)
    u[None] = 1
    x = np.linspace(0.9, 1.1, 20).astype(np.float32)
    prod = k(x)
    want = np.prod(x.astype(np.float64))
    np.testing.assert_allclose([prod, p[None]], [want, want], rtol=1e-5)
    np.testing.assert_array_equal(q.to_numpy(), [1024, 1024])
    assert u[None] == 3 ** 20 % 2 ** 32


def test_atomic_mul_returns_old_value():
    c = gr.field(gr.i32, shape=())

    @gr.kernel
    def k() -> gr.i32:
        return gr.atomic_mul(c[None], 5)

    c[None] = 3
    assert k() == 3 and c[None] == 15


def test_atomic_mul_is_not_differentiable():
    y = gr.ndarray(gr.f32, shape=4, needs_grad=True)

    @gr.kernel
    def k(x: F1, y: F1):
        for i in range(x.shape[0]):
            gr.atomic_mul(y[0], x[i])

    x = gr.ndarray(gr.f32, shape=4, needs_grad=True)
    with pytest.raises(gr.CompileError, match="atomic_mul is not differentiable"):
        k.grad(x, y)


def test_loop_config_accepts_taichi_names():
    @gr.kernel
    def k(x: F1):
        gr.loop_config(block_dim=128, parallelize=8, block_dim_adaptive=False)
        for i in range(x.shape[0]):
            x[i] = i
        gr.loop_config(serialize=True)
        for i in range(1, x.shape[0]):
            x[i] += x[i - 1]

    x = np.zeros(300, np.float32)
    k(x)
    np.testing.assert_array_equal(x, np.cumsum(np.arange(300)))


def test_break_continue_in_static_loops():
    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            for j in gr.static(range(8)):
                if j == 1:            # compile-time condition: folded
                    continue
                if gr.static(j == 5):
                    break
                x[i] += j             # j = 0, 2, 3, 4

    x = np.zeros(4, np.float32)
    k(x)
    np.testing.assert_array_equal(x, [9, 9, 9, 9])

    @gr.kernel
    def runtime_break(x: F1):
        for i in range(x.shape[0]):
            for j in gr.static(range(3)):
                if x[i] > j:
                    break  # <- a run-time condition

    with pytest.raises(gr.CompileError, match="cannot depend on a run-time condition"):
        runtime_break(x)


def test_reading_an_ndarray_grad_in_a_kernel():
    @gr.kernel
    def loss_fn(x: F1, loss: gr.types.ndarray(dtype=gr.f32, ndim=0)):
        for i in range(x.shape[0]):
            loss[None] += (x[i] - 3.0) ** 2

    @gr.kernel
    def step(x: F1, lr: gr.f32):
        for i in range(x.shape[0]):
            x[i] -= lr * x.grad[i]  # gradient descent, Taichi style

    x = gr.ndarray(gr.f32, shape=8, needs_grad=True)
    loss = gr.ndarray(gr.f32, shape=(), needs_grad=True)
    for _ in range(30):
        with gr.Tape(loss=loss):
            loss_fn(x, loss)
        step(x, 0.2)
    np.testing.assert_allclose(x.to_numpy(), 3.0, rtol=1e-4)

    @gr.kernel
    def bad(x: F1, y: F1):
        for i in range(x.shape[0]):
            y[i] = x.grad[i]

    with pytest.raises(gr.CompileError, match="needs_grad=True"):
        bad(np.zeros(4, np.float32), np.zeros(4, np.float32))


def test_real_func_is_inlined_and_rejects_recursion():
    @gr.real_func
    def twice(v: gr.f32) -> gr.f32:
        return v * 2.0

    @gr.real_func
    def fact(n: gr.i32) -> gr.i32:
        r = 1
        if n > 1:
            r = n * fact(n - 1)
        return r

    @gr.kernel
    def k(x: F1):
        for i in range(x.shape[0]):
            x[i] = twice(x[i])

    x = np.arange(4, dtype=np.float32)
    k(x)
    np.testing.assert_array_equal(x, [0, 2, 4, 6])

    @gr.kernel
    def r() -> gr.i32:
        return fact(5)

    with pytest.raises(gr.CompileError, match="real_func is inlined"):
        r()


def test_tape_grad_check_and_validation():
    x = gr.field(gr.f32, shape=6, needs_grad=True)
    loss = gr.field(gr.f32, shape=(), needs_grad=True)

    @gr.kernel
    def f():
        for i in x:
            loss[None] += gr.sin(x[i]) * x[i]

    x.from_numpy(np.linspace(-1, 1, 6).astype(np.float32))
    with gr.ad.Tape(loss=loss, grad_check=[x]):
        f()
    xs = np.linspace(-1, 1, 6)
    np.testing.assert_allclose(x.grad.to_numpy(), np.cos(xs) * xs + np.sin(xs), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(x.to_numpy(), xs, rtol=1e-6)  # restored after the check

    with pytest.warns(UserWarning, match="debug=True"):
        gr.Tape(loss=loss, validation=True)
