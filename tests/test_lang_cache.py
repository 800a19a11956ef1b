"""Specialization and the offline compile cache (hits skip lowering; edits invalidate)."""
import importlib.util
import linecache
import os
import sys

import numpy as np

import compiler
import gfxrt as gr
from compiler import ArgSpec, Target
from compiler.cache import compile_cached, kernel_key
from compiler.types import f32

TARGET = Target(frozenset({"immediates", "shader-float32-atomic"}), 128)
ARGS = [ArgSpec("x", "ndarray", elem=f32, ndim=1)]

MODULE = '''
import gfxrt as gr
SCALE = {scale}
acc = gr.field(gr.f32, shape=(4,))


@gr.func
def twice(v):
    return v * {factor}


def kern(x):
    for i in range(x.shape[0]):
        x[i] = twice(x[i]) * SCALE
        acc[i % 4] += 1.0
'''


def load_module(tmp_path, scale=2.0, factor=2, name="cached_mod"):
    path = tmp_path / f"{name}.py"
    path.write_text(MODULE.format(scale=scale, factor=factor))
    linecache.checkcache(str(path))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_warm_hit_skips_lowering_and_rebinds_fields(tmp_path, monkeypatch):
    d = str(tmp_path / "cache")
    mod = load_module(tmp_path)
    cold = compile_cached(mod.kern, ARGS, TARGET, directory=d)
    assert any(f.endswith(".pkl") for _, _, fs in os.walk(d) for f in fs)
    old_key = next(b.source for b in cold.bindings if b.kind == "field")
    assert old_key == id(mod.acc)
    mod.acc = gr.field(gr.f32, shape=(4,))  # as in a new process: another field object

    def boom(*a, **k):
        raise AssertionError("lowered")
    monkeypatch.setattr(compiler, "lower_raw", boom)
    warm = compile_cached(mod.kern, ARGS, TARGET, directory=d)
    assert warm.wgsl == cold.wgsl
    assert next(b.source for b in warm.bindings if b.kind == "field") == id(mod.acc)
    assert warm.tasks[0].extent_fn([5]) == 5


def test_changed_global_constant_recompiles(tmp_path):
    d = str(tmp_path / "cache")
    a = compile_cached(load_module(tmp_path, scale=2.0).kern, ARGS, TARGET, directory=d)
    b = compile_cached(load_module(tmp_path, scale=3.0).kern, ARGS, TARGET, directory=d)
    assert "2.0f" in a.wgsl and "3.0f" in b.wgsl


def test_changed_func_source_recompiles(tmp_path):
    d = str(tmp_path / "cache")
    a = compile_cached(load_module(tmp_path, factor=2).kern, ARGS, TARGET, directory=d)
    b = compile_cached(load_module(tmp_path, factor=5).kern, ARGS, TARGET, directory=d)
    assert "5i" in b.wgsl or "5.0f" in b.wgsl
    assert a.wgsl != b.wgsl


def test_key_depends_on_specialization_and_target(tmp_path):
    mod = load_module(tmp_path)
    k1 = kernel_key(mod.kern, ARGS, TARGET, None)
    assert k1 == kernel_key(mod.kern, ARGS, TARGET, None)
    assert k1 != kernel_key(mod.kern, [ArgSpec("x", "ndarray", elem=f32, ndim=2)], TARGET, None)
    assert k1 != kernel_key(mod.kern, ARGS, Target(frozenset(), 128), None)


def test_corrupt_entry_is_ignored(tmp_path):
    d = str(tmp_path / "cache")
    mod = load_module(tmp_path)
    compile_cached(mod.kern, ARGS, TARGET, directory=d)
    for root, _, files in os.walk(d):
        for f in files:
            with open(os.path.join(root, f), "wb") as fh:
                fh.write(b"not a pickle")
    spec = compile_cached(mod.kern, ARGS, TARGET, directory=d)
    assert "fn task0" in spec.wgsl


@gr.kernel
def any_dtype(x: gr.types.ndarray(), y: gr.types.ndarray()):
    for I in gr.grouped(x):  # noqa: E741
        y[I] = x[I] * 2


def test_specialized_per_dtype_and_ndim():
    any_dtype._cache.clear()
    a = np.arange(6, dtype=np.float32)
    b = np.zeros_like(a)
    any_dtype(a, b)
    np.testing.assert_allclose(b, a * 2)
    c = np.arange(6, dtype=np.int32).reshape(2, 3)
    e = np.zeros_like(c)
    any_dtype(c, e)
    np.testing.assert_array_equal(e, c * 2)
    any_dtype(a + 1, b)  # same specialization again
    assert len(any_dtype._cache) == 2


@gr.kernel
def scaled(x: gr.types.ndarray(dtype=gr.f32, ndim=1), k: gr.template()):
    for i in x:
        x[i] = x[i] * k


def test_template_values_specialize():
    scaled._cache.clear()
    x = np.ones(3, np.float32)
    scaled(x, 2)
    scaled(x, 3.5)
    scaled(x, 2)
    np.testing.assert_allclose(x, [14.0] * 3)
    assert len(scaled._cache) == 2


def fill_template(f):
    for i in f:
        f[i] = 1.0


def test_template_field_rebinds_on_a_warm_hit(tmp_path, monkeypatch):
    d = str(tmp_path / "cache")
    a, b = gr.field(gr.f32, shape=(3,)), gr.field(gr.f32, shape=(3,))
    cold = compile_cached(fill_template, [ArgSpec("f", "template", value=a)], TARGET, directory=d)
    assert [bd.source for bd in cold.bindings if bd.kind == "field"] == [id(a)]

    def boom(*args, **kw):
        raise AssertionError("lowered")
    monkeypatch.setattr(compiler, "lower_raw", boom)
    warm = compile_cached(fill_template, [ArgSpec("f", "template", value=b)], TARGET, directory=d)
    assert [bd.source for bd in warm.bindings if bd.kind == "field"] == [id(b)]


@gr.kernel
def first_type_wins(x: gr.types.ndarray(dtype=gr.f32, ndim=1), k: gr.template()):
    for i in x:
        v = k          # the variable takes the template value's type
        if i >= 0:
            v = 2.5
        x[i] = v


def test_equal_template_values_of_different_types_compile_separately():
    x = np.zeros(2, np.float32)
    first_type_wins(x, 3)
    assert x[0] == 2.0  # an i32 variable
    first_type_wins(x, 3.0)
    assert x[0] == 2.5  # 3 == 3.0 in Python, but this is an f32 variable
    assert len(first_type_wins._cache) == 2
