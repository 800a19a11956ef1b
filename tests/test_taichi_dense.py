"""Taichi's dense layout API (docs: "Fields (advanced)" / "Layout"): fields declared without a
shape and placed by `root.dense(...)`, nested dense blocks, lazy_grad, axes, and the errors
for sparse SNode kinds. Examples from Taichi's docs with ti renamed to gr."""
import numpy as np
import pytest

import gfxrt as gr


def test_place_two_fields_in_one_dense_2d():
    x = gr.field(gr.f32)
    y = gr.field(gr.i32)
    gr.root.dense(gr.ij, (4, 3)).place(x, y)
    assert x.shape == (4, 3) and y.shape == (4, 3)

    @gr.kernel
    def fill():
        for i, j in x:  # struct-for over a placed field
            x[i, j] = i * 10 + j
            y[i, j] = i - j

    fill()
    ii, jj = np.meshgrid(np.arange(4), np.arange(3), indexing="ij")
    np.testing.assert_array_equal(x.to_numpy(), ii * 10 + jj)
    np.testing.assert_array_equal(y.to_numpy(), ii - jj)


def test_nested_dense_multiplies_shapes_per_axis():
    # Taichi docs: ti.root.dense(ti.ij, (3, 2)).dense(ti.ij, (2, 4)) gives a 6 x 8 field
    a = gr.field(gr.f32)
    gr.root.dense(gr.ij, (3, 2)).dense(gr.ij, (2, 4)).place(a)
    assert a.shape == (6, 8) and a.snode.shape == (6, 8) and a.snode.parent(2).shape == (3, 2)
    b = gr.field(gr.f32)
    gr.root.dense(gr.i, 4).dense(gr.j, 5).place(b)  # row-major: i, then j
    assert b.shape == (4, 5)
    c = gr.field(gr.f32)
    gr.root.dense(gr.i, 4).dense(gr.i, 8).place(c)  # blocked 1-D: 32 cells
    assert c.shape == (32,)
    d = gr.field(gr.f32)
    gr.root.dense(gr.axes(0, 1, 2), 2).place(d)
    assert d.shape == (2, 2, 2)
    s = gr.field(gr.f32)
    gr.root.place(s)  # placed at the root: 0-d
    assert s.shape == ()

    @gr.kernel
    def k():
        for i, j in a:
            a[i, j] = i * 8 + j
        for i in c:
            c[i] = 2 * i
        for I in gr.grouped(d):  # noqa: E741
            d[I] = I[0] * 4 + I[1] * 2 + I[2]
        s[None] = 7.0

    k()
    np.testing.assert_array_equal(a.to_numpy(), np.arange(48).reshape(6, 8))
    np.testing.assert_array_equal(c.to_numpy(), 2 * np.arange(32))
    np.testing.assert_array_equal(d.to_numpy(), np.arange(8).reshape(2, 2, 2))
    assert s[None] == 7.0


def test_lazy_grad_and_tape():
    x = gr.field(gr.f32, needs_grad=True)
    loss = gr.field(gr.f32, needs_grad=True)
    gr.root.dense(gr.i, 16).place(x)
    gr.root.place(loss)
    gr.root.lazy_grad()
    gr.root.lazy_dual()
    assert x.grad.shape == (16,)

    @gr.kernel
    def compute():
        for i in x:
            loss[None] += x[i] ** 2

    xs = np.linspace(-1, 1, 16).astype(np.float32)
    x.from_numpy(xs)
    with gr.Tape(loss=loss):
        compute()
    np.testing.assert_allclose(loss[None], np.sum(xs ** 2), rtol=1e-5)
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * xs, rtol=1e-5)


def test_place_grad_explicitly():
    x = gr.field(gr.f32, needs_grad=True)
    gr.root.dense(gr.i, 8).place(x, x.grad)  # Taichi's explicit form
    assert x.grad.shape == (8,)


def test_fields_builder():
    fb = gr.FieldsBuilder()
    x = gr.field(gr.f32)
    fb.dense(gr.ij, 4).place(x)
    tree = fb.finalize()
    assert x.shape == (4, 4)
    x.fill(2.0)
    assert x.to_numpy().sum() == 32.0
    tree.destroy()


def test_unplaced_field_errors():
    w = gr.field(gr.f32)
    with pytest.raises(gr.GfxrtError, match="never placed"):
        w.to_numpy()

    @gr.kernel
    def use():
        w[0] = 1.0

    with pytest.raises(gr.CompileError, match="never placed"):
        use()
    x = gr.field(gr.f32)
    node = gr.root.dense(gr.i, 3)
    node.place(x)
    with pytest.raises(gr.GfxrtError, match="placed once"):
        node.place(x)


def test_hash_snodes_raise_naming_the_kind():
    with pytest.raises(gr.GfxrtError, match="SNode kind 'hash' is not supported"):
        gr.root.hash(gr.i, 8)


def test_sparse_builtins_need_a_sparse_snode_and_a_kernel():
    x = gr.field(gr.f32, shape=8)

    @gr.kernel
    def k():
        for i in x:
            if gr.is_active(x, [i]):
                x[i] = 1.0

    with pytest.raises(gr.CompileError, match="is_active.*sparse SNode"):
        k()
    with pytest.raises(RuntimeError, match="inside a @gr.kernel"):
        gr.append(x, [], 1)


def test_lazy_grad_gives_fields_without_needs_grad_a_gradient():
    # Taichi's tests/python/test_stop_grad.py::test_normal_grad, ti -> gr
    x = gr.field(gr.f32)
    loss = gr.field(gr.f32)
    n = 128
    gr.root.dense(gr.i, n).place(x)
    gr.root.place(loss)
    gr.root.lazy_grad()

    @gr.kernel
    def func():
        for i in range(n):
            loss[None] += x[i] ** 2

    for i in range(n):
        x[i] = i
    with gr.Tape(loss):
        func()
    np.testing.assert_array_equal(x.grad.to_numpy(), 2 * np.arange(n))


def test_lazy_grad_on_root_covers_fields_created_with_a_shape():
    x = gr.field(float, shape=4)
    ints = gr.field(gr.i32, shape=4)
    fb = gr.FieldsBuilder()
    y = gr.field(gr.f32)
    fb.dense(gr.i, 2).place(y)
    fb.lazy_grad()
    assert y.grad is not None and y.grad.shape == (2,)
    gr.root.lazy_grad()
    assert x.grad is not None and x.grad.shape == (4,) and ints.grad is None
    assert x.grad.grad is None  # a gradient gets no gradient of its own


def test_place_field_and_its_grad_without_needs_grad():
    # Taichi's tests/python/grad_test.py layout, ti -> gr
    x = gr.field(gr.f32)
    y = gr.field(gr.f32)
    gr.root.dense(gr.i, 1).place(x, x.grad, y, y.grad)

    @gr.kernel
    def func():
        for i in x:
            y[i] = gr.sin(x[i])

    v = 0.2
    y.grad[0] = 1
    x[0] = v
    func()
    func.grad()
    assert y[0] == pytest.approx(np.sin(v))
    assert x.grad[0] == pytest.approx(np.cos(v))

    z = gr.field(gr.f32)
    gr.root.dense(gr.i, 2).place(z)  # its gradient is declared but not placed

    @gr.kernel
    def use_grad():
        for i in z:
            z[i] = z.grad[i]

    with pytest.raises(gr.CompileError, match="never placed"):
        use_grad()


def test_warm_cache_hit_of_a_grad_kernel_rebinds_field_gradients(tmp_path):
    # found with layouts: a grad kernel loaded from the offline cache named the old process's fields
    from gfxrt.compiler import Target, compile_kernel
    mod_path = tmp_path / "grad_mod.py"
    mod_path.write_text("import gfxrt as gr\nx = gr.field(gr.f32, shape=4, needs_grad=True)\n"
                        "loss = gr.field(gr.f32, shape=(), needs_grad=True)\n\n\n"
                        "def k():\n    for i in x:\n        loss[None] += x[i] * x[i]\n")
    import importlib.util
    spec = importlib.util.spec_from_file_location("grad_mod", mod_path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    target = Target(frozenset({"immediates"}), 64)
    d = str(tmp_path / "cache")
    compile_kernel(mod.k, [], target, directory=d, mode="grad")
    mod.x = gr.field(gr.f32, shape=4, needs_grad=True)  # as in a new process: other field objects
    warm = compile_kernel(mod.k, [], target, directory=d, mode="grad")
    keys = {b.grad_of[1] for b in warm.bindings if b.grad_of and b.grad_of[0] == "field"}
    assert id(mod.x) in keys and id(mod.loss) in keys
    assert all(b.source in (id(mod.x), id(mod.loss)) for b in warm.bindings if b.kind in ("field", "grad"))
