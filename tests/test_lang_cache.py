"""Specialization and the offline compile cache (hits skip lowering; edits invalidate)."""
import importlib.util
import linecache
import os
import sys

import numpy as np
import pytest
from gfxrt.compiler import ArgSpec, Target, compile_kernel
from gfxrt.compiler.cache import kernel_key
from gfxrt.compiler.types import f32

import gfxrt as gr
from gfxrt import compiler

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


def load_module(tmp_path, scale=2.0, factor=2, name="cached_mod", text=None):
    """Module `name` from a file of `text` (default: MODULE with scale and factor)."""
    path = tmp_path / f"{name}.py"
    path.write_text(MODULE.format(scale=scale, factor=factor) if text is None else text)
    linecache.checkcache(str(path))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_warm_hit_skips_lowering_and_rebinds_fields(tmp_path, monkeypatch):
    d = str(tmp_path / "cache")
    mod = load_module(tmp_path)
    cold = compile_kernel(mod.kern, ARGS, TARGET, directory=d)
    assert any(f.endswith(".json") for _, _, fs in os.walk(d) for f in fs)
    old_key = next(b.source for b in cold.bindings if b.kind == "field")
    assert old_key == id(mod.acc)
    mod.acc = gr.field(gr.f32, shape=(4,))  # as in a new process: another field object

    def boom(*a, **k):
        raise AssertionError("lowered")
    monkeypatch.setattr(compiler.pipeline, "frontend", boom)
    warm = compile_kernel(mod.kern, ARGS, TARGET, directory=d)
    assert warm.wgsl == cold.wgsl
    assert next(b.source for b in warm.bindings if b.kind == "field") == id(mod.acc)
    assert warm.tasks[0].extent_fn([5]) == 5


def test_changed_global_constant_recompiles(tmp_path):
    d = str(tmp_path / "cache")
    a = compile_kernel(load_module(tmp_path, scale=2.0).kern, ARGS, TARGET, directory=d)
    b = compile_kernel(load_module(tmp_path, scale=3.0).kern, ARGS, TARGET, directory=d)
    assert "2.0f" in a.wgsl and "3.0f" in b.wgsl


def test_changed_func_source_recompiles(tmp_path):
    d = str(tmp_path / "cache")
    a = compile_kernel(load_module(tmp_path, factor=2).kern, ARGS, TARGET, directory=d)
    b = compile_kernel(load_module(tmp_path, factor=5).kern, ARGS, TARGET, directory=d)
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
    compile_kernel(mod.kern, ARGS, TARGET, directory=d)
    for root, _, files in os.walk(d):
        for f in files:
            with open(os.path.join(root, f), "wb") as fh:
                fh.write(b"not json")
    spec = compile_kernel(mod.kern, ARGS, TARGET, directory=d)
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
    cold = compile_kernel(fill_template, [ArgSpec("f", "template", value=a)], TARGET, directory=d)
    assert [bd.source for bd in cold.bindings if bd.kind == "field"] == [id(a)]

    def boom(*args, **kw):
        raise AssertionError("lowered")
    monkeypatch.setattr(compiler.pipeline, "frontend", boom)
    warm = compile_kernel(fill_template, [ArgSpec("f", "template", value=b)], TARGET, directory=d)
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


# -- across processes; entries on disk are data, checked on load --------------------------------
FIELD_SCRIPT = '''
import json, sys
import numpy as np
import pytest
import gfxrt as gr
import gfxrt.compiler.cache as cc

hits = []
_load = cc.load


def load(*a, **k):
    spec = _load(*a, **k)
    hits.append(spec is not None)
    return spec


cc.load = load
x = gr.field(gr.f32, shape=(8,), needs_grad=True)
p = gr.field(gr.f32, shape=(8,), needs_grad=True)


@gr.kernel
def k(n: gr.i32):
    for i in x:
        v = x[i]
        for _ in range(n):  # a run-time loop: the grad kernel keeps v on the adstack
            v = gr.sin(v) * 1.5 + 0.1
        p[i] = v


x.from_numpy(np.linspace(-1, 1, 8).astype(np.float32))
k(3)
p.grad.fill(1)
k.grad(3)
print(json.dumps({"grad": x.grad.to_numpy().tolist(), "p": p.to_numpy().tolist(), "hits": hits,
                  "ids": [id(x), id(p), id(k)]}))
'''


def _run_child(script, cache_dir):
    import json
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, GFXRT_CACHE_DIR=str(cache_dir), XDG_RUNTIME_DIR=os.environ.get("XDG_RUNTIME_DIR", "/tmp"),
               PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]))  # this checkout's packages
    out = subprocess.run([sys.executable, str(script)], cwd=root, env=env, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_kernel_on_fields_with_its_gradient_warm_in_a_second_process(tmp_path):
    script = tmp_path / "field_grad.py"
    script.write_text(FIELD_SCRIPT)
    cold = _run_child(script, tmp_path / "cache")
    warm = _run_child(script, tmp_path / "cache")
    assert cold["hits"] and not any(cold["hits"])
    assert warm["hits"] and all(warm["hits"])  # every specialization (forward, grad) from disk
    v = np.linspace(-1, 1, 8).astype(np.float64)
    d = np.ones_like(v)
    for _ in range(3):
        v, d = np.sin(v) * 1.5 + 0.1, d * np.cos(v) * 1.5
    for run in (cold, warm):
        np.testing.assert_allclose(run["p"], v, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(run["grad"], d, rtol=1e-4, atol=1e-6)
    entries = [os.path.join(r, f) for r, _, fs in os.walk(tmp_path / "cache") for f in fs]
    assert entries and all(f.endswith(".json") for f in entries)
    text = "".join(open(f).read() for f in entries)
    assert not any(str(i) in text for i in cold["ids"] + warm["ids"])  # nothing process-local


def _compile_counting(monkeypatch, mod, d):
    calls = []
    real = compiler.pipeline.frontend

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(compiler.pipeline, "frontend", counting)
    spec = compile_kernel(mod.kern, ARGS, TARGET, directory=d)
    return spec, len(calls)


def _entry(d):
    return next(os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs if f.endswith(".json"))


def test_entries_are_private_json_with_a_checked_mac(tmp_path, monkeypatch):
    import json
    import stat
    d = str(tmp_path / "cache")
    mod = load_module(tmp_path)
    cold, n = _compile_counting(monkeypatch, mod, d)
    assert n == 1
    path = _entry(d)
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    head, payload = open(path).read().split("\n")
    assert set(json.loads(head)) == {"format", "version", "mac"}
    assert json.loads(payload)["spec"]["wgsl"] == cold.wgsl
    assert _compile_counting(monkeypatch, mod, d)[1] == 0  # a warm hit

    open(path, "w").write(head + "\n" + payload.replace("fn task0", "fn task9"))  # tampered: the MAC no longer matches
    spec, n = _compile_counting(monkeypatch, mod, d)
    assert n == 1 and spec.wgsl == cold.wgsl
    os.chmod(path, 0o666)  # writable by others: not trusted
    assert _compile_counting(monkeypatch, mod, d)[1] == 1


def _rewrite(path, edit):
    """Edit an entry as only its writer could: signed again with this user's key, so that
    the checks after the MAC's are what rejects it."""
    import hashlib
    import hmac
    import json

    from gfxrt.compiler import cache_secret
    head, text = open(path).read().split("\n")
    outer, payload = json.loads(head), json.loads(text)
    edit(outer, payload)
    text = json.dumps(payload)
    outer["mac"] = hmac.new(cache_secret.secret(), text.encode(), hashlib.sha256).hexdigest()
    open(path, "w").write(json.dumps(outer) + "\n" + text)


def test_foreign_old_and_malformed_entries_recompile(tmp_path, monkeypatch):
    import pickle
    d = str(tmp_path / "cache")
    mod = load_module(tmp_path)
    cold, _ = _compile_counting(monkeypatch, mod, d)
    path = _entry(d)
    good = open(path).read()
    marker = tmp_path / "unpickled"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))
    edits = [lambda o, p: o.update(version=1),                          # an older format
             lambda o, p: o.update(format="something else"),            # not ours
             lambda o, p: p.update(key="0" * 32),                       # another key's entry
             lambda o, p: p["spec"]["tasks"][0].update(extent={"extent": ["CONST", "i32", "__import__('os')", []]}),
             lambda o, p: p["spec"]["tasks"][0].update(extent={"extent": ["LOAD", "i32", None, []]}),
             lambda o, p: p["spec"]["bindings"][0].update(dtype={"dtype": "f128"}),
             lambda o, p: p["spec"]["bindings"][0].update({"@": "Popen"}),
             lambda o, p: p["spec"]["tasks"][0].pop("workgroup_size"),
             lambda o, p: p.update(fields=[[["n", "no_such_global"]]]),
             lambda o, p: p["spec"].pop("wgsl")]
    for edit in edits:
        open(path, "w").write(good)
        _rewrite(path, edit)
        spec, n = _compile_counting(monkeypatch, mod, d)
        assert n == 1 and spec.wgsl == cold.wgsl
        assert spec.tasks[0].extent_fn([7]) == 7
    # a pickle where the old format kept it is never read
    os.remove(path)
    with open(path[:-len(".json")] + ".pkl", "wb") as f:
        pickle.dump(Evil(), f)
    spec, n = _compile_counting(monkeypatch, mod, d)
    assert n == 1 and not marker.exists()


def test_spec_round_trips_through_json_with_fields_renamed(tmp_path):
    import dataclasses
    import json

    from gfxrt.compiler.cache import spec_from_json, spec_to_json
    from gfxrt.compiler.pipeline import frontend
    mod = load_module(tmp_path)
    spec = compile_kernel(mod.kern, ARGS, TARGET, directory=None)
    fe = frontend(mod.kern, ARGS)
    index = {k: i for i, k in enumerate(fe.field_paths)}
    text = json.dumps(spec_to_json(spec, index))
    assert str(id(mod.acc)) not in text
    back = spec_from_json(json.loads(text), [12345])  # the field's key in "another process"

    def plain(s, key):
        d = dataclasses.asdict(s)
        for t in d["tasks"]:
            t["extent"] = t["extent_fn"] = None
        for b in d["bindings"]:
            if b["kind"] == "field":
                assert b["source"] == key
                b["source"] = None
        return d
    assert plain(back, 12345) == plain(spec, id(mod.acc))
    assert back.tasks[0].extent is not None


# -- the key leaves the kernel's location out (issue 13) ----------------------------------------
PLAIN_MODULE = '''
import gfxrt as gr
SCALE = 2.0
acc = gr.field(gr.f32, shape=(4,))


def kern(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * SCALE
        acc[i % 4] += 1.0
'''


def test_same_source_in_another_file_hits_with_its_comments_moved(tmp_path, monkeypatch):
    d = str(tmp_path / "cache")
    a = load_module_file(tmp_path / "reloc_a.py", "reloc_a", PLAIN_MODULE)
    cold, n = _compile_counting(monkeypatch, a, d)
    assert n == 1 and "reloc_a.py:9" in cold.wgsl
    # the same kernel three lines further down, in another file
    b = load_module_file(tmp_path / "reloc_b.py", "reloc_b", "\n\n\n" + PLAIN_MODULE)
    warm, n = _compile_counting(monkeypatch, b, d)
    assert n == 0  # an offline-cache hit
    fresh = compile_kernel(b.kern, ARGS, TARGET, directory=None)
    assert warm.wgsl == fresh.wgsl and "reloc_b.py:12" in warm.wgsl and "reloc_a" not in warm.wgsl
    assert next(bd.source for bd in warm.bindings if bd.kind == "field") == id(b.acc)
    assert compile_kernel(a.kern, ARGS, TARGET, directory=d).wgsl == cold.wgsl  # and back
    c = load_module_file(tmp_path / "reloc_c.py", "reloc_c", PLAIN_MODULE)  # same lines, another file
    warm, n = _compile_counting(monkeypatch, c, d)
    assert n == 0 and warm.wgsl == compile_kernel(c.kern, ARGS, TARGET, directory=None).wgsl
    assert "reloc_c.py:9" in warm.wgsl


def test_lines_added_above_a_kernel_keep_its_entry(tmp_path, monkeypatch):
    d = str(tmp_path / "cache")
    path = tmp_path / "shifted.py"
    cold, n = _compile_counting(monkeypatch, load_module_file(path, "shifted", MODULE.format(scale=2, factor=2)), d)
    assert n == 1
    edited = MODULE.format(scale=2, factor=2).replace("\n\ndef kern", "\n\n# a comment\n\n\ndef kern")
    mod = load_module_file(path, "shifted", edited)  # the func stays, the kernel moves 3 lines
    warm, n = _compile_counting(monkeypatch, mod, d)
    assert n == 0
    assert warm.wgsl == compile_kernel(mod.kern, ARGS, TARGET, directory=None).wgsl != cold.wgsl


DEBUG_MODULE = '''
import gfxrt as gr


def kern(x):
    for i in range(x.shape[0]):
        assert x[i] >= 0.0
        x[i] = x[i + 1] * 2.0
'''


def test_entries_naming_their_location_in_messages_do_not_move(tmp_path, monkeypatch):
    import dataclasses
    d = str(tmp_path / "cache")
    target = dataclasses.replace(TARGET, debug=True)  # asserts and bounds checks name file:line
    specs, real, calls = [], compiler.pipeline.frontend, []
    monkeypatch.setattr(compiler.pipeline, "frontend", lambda *a, **k: calls.append(1) or real(*a, **k))
    for name, pad in (("dbg_a", ""), ("dbg_b", "\n\n")):
        mod = load_module_file(tmp_path / f"{name}.py", name, pad + DEBUG_MODULE)
        specs.append(compile_kernel(mod.kern, ARGS, target, directory=d))
    assert len(calls) == 2  # each compiled: the entry of the other file names the other file
    assert any("dbg_a.py:7" in m for _, m in specs[0].asserts)
    assert any("dbg_b.py:9" in m for _, m in specs[1].asserts) and not any("dbg_a" in m for _, m in specs[1].asserts)


FUNC_MODULE = '''
import gfxrt as gr


@gr.func
def twice(v):
    return v * 2.0


def kern(x):
    for i in range(x.shape[0]):
        x[i] = twice(x[i])
'''


def test_a_same_file_func_outside_the_kernel_keeps_the_entry_in_place(tmp_path, monkeypatch):
    d = str(tmp_path / "cache")
    specs = []
    for name in ("fn_a", "fn_b"):
        spec, n = _compile_counting(monkeypatch, load_module_file(tmp_path / f"{name}.py", name, FUNC_MODULE), d)
        assert n == 1  # the func's comment names fn_a.py outside the kernel's lines: not moved
        specs.append(spec)
    assert "fn_b.py:7" in specs[1].wgsl and "fn_a" not in specs[1].wgsl


def load_module_file(path, name, text=None):
    if text is not None:
        path.write_text(text)
    linecache.checkcache(str(path))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


ANNOTATED = '''
import gfxrt as gr


def kern(x):
    for i in range(x.shape[0]):
        v: gr.{t} = 3
        x[i] = v
'''


def test_an_edit_bytecode_does_not_keep_is_seen(tmp_path):
    """A local's annotation is not in the bytecode: the edited function's code object equals
    the old one, but its source (parsed once per code object) is new."""
    out = []
    for t in ("f32", "i32"):
        mod = load_module_file(tmp_path / "annotated.py", "annotated", ANNOTATED.format(t=t))
        out.append(compile_kernel(mod.kern, ARGS, TARGET, directory=None).wgsl)
    assert out[0] != out[1] and "_v: i32;" in out[1]


TRICKY = '''
import functools


def deco(f):
    @functools.wraps(f)
    def inner(*a):
        return f(*a)
    return inner


@deco
def wrapped(x):
    return x  # the wrapped function's lines, as inspect


def one_liner(x): return x
# not part of it


def string_at_column_0(x):
    s = """
not a dedent
"""
    return s


def brackets_at_column_0(x):
    y = (1 +
2)
    return x + y


def backslash(x):
    y = 1 + \\
2
    return y


class Holder:
    @staticmethod
    def method(x):
        if x:
            return 1
        # a comment as deep as the body
    # a shallower comment


def tabs(x):
\tif x:
\t\treturn 1
\treturn 2


async def coroutine(x):
    return x
        # deeper


def last(x):
    return x
    # trailing, at the body's depth
'''


def test_def_blocks_are_what_inspect_finds(tmp_path):
    """The offline cache's key and the frontend read a function's lines without Python's
    tokenizer where that is exact, else through inspect: the same lines either way."""
    import inspect

    from gfxrt.compiler.frontend.source import _def_block
    mod = load_module_file(tmp_path / "tricky.py", "tricky", TRICKY)
    fns = [mod.wrapped, mod.one_liner, mod.string_at_column_0, mod.brackets_at_column_0, mod.backslash,
           mod.Holder.method, mod.tabs, mod.coroutine, mod.last, mod.deco, lambda x: x]
    fast = 0
    for f in fns:
        got = _def_block(f)
        if got is not None:
            fast += 1
            assert (list(got[0]), got[1]) == (list(inspect.getsourcelines(f)[0]), inspect.getsourcelines(f)[1]), f
    assert _def_block(mod.string_at_column_0) is None and _def_block(mod.brackets_at_column_0) is None
    assert _def_block(mod.backslash) is None and _def_block(mod.tabs) is None and fast == 6


def test_a_cache_folder_removed_while_running_is_made_again_private(tmp_path, monkeypatch):
    import shutil
    import stat
    d = str(tmp_path / "cache")
    mod = load_module(tmp_path)
    _compile_counting(monkeypatch, mod, d)
    shutil.rmtree(d)  # nothing about the folders is remembered: the next write makes them again
    assert _compile_counting(monkeypatch, mod, d)[1] == 1
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700 and stat.S_IMODE(os.stat(_entry(d)).st_mode) == 0o600
    assert _compile_counting(monkeypatch, mod, d)[1] == 0


# -- device programs shared across kernel objects (gfxrt/engine/program.py program_for) ------------------
SHARED = '''
import gfxrt as gr


@gr.kernel
def k(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        x[i] = x[i] * {factor} + 1.0
'''


def _kernel_from_file(tmp_path, name, factor):
    return load_module(tmp_path, name=name, text=SHARED.format(factor=factor)).k


def test_same_code_in_another_file_shares_the_device_program(tmp_path, monkeypatch):
    """A fresh kernel object of code compiled before (its WGSL differs only in the comments
    naming the file) reuses the pipelines; other code gets its own, and the cache is bounded."""
    from gfxrt.engine import program
    x = gr.ndarray(gr.f32, 8)
    x.fill(1.0)
    a = _kernel_from_file(tmp_path, "shared_a", 3.0)
    b = _kernel_from_file(tmp_path, "shared_b", 3.0)
    c = _kernel_from_file(tmp_path, "shared_c", 5.0)
    pa, pb, pc = (k.specialize((x,)) for k in (a, b, c))
    assert pa.spec.wgsl != pb.spec.wgsl  # the comments name different files ...
    assert pa.program is pb.program      # ... and the pipelines are the same
    assert pc.program is not pa.program
    a(x)
    b(x)
    c(x)
    np.testing.assert_allclose(x.to_numpy(), ((1.0 * 3 + 1) * 3 + 1) * 5 + 1)
    monkeypatch.setattr(program, "PROGRAM_CACHE_LIMIT", 1)
    _kernel_from_file(tmp_path, "shared_d", 7.0).specialize((x,))
    assert len(gr.runtime().device._gfxrt_programs) <= 1


MULTI = '''
import gfxrt as gr


@gr.kernel
def k(x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
    for i in range(x.shape[0]):
        y[i] = x[i] * {factor}
    for i in range(x.shape[0]):
        y[i] += 1.0
    for i in range(x.shape[0]):
        x[i] = y[i] * 2.0
'''


@pytest.mark.parametrize("threads", [None, "1", "2"])
def test_pipelines_of_several_tasks_created_by_threads(tmp_path, monkeypatch, threads):
    """A kernel of three tasks gets its three pipelines, in task order, whichever number of
    threads creates them (GFXRT_PIPELINE_THREADS, read by gr.init), and runs the tasks in order."""
    if threads is None:
        monkeypatch.delenv("GFXRT_PIPELINE_THREADS", raising=False)
    else:
        monkeypatch.setenv("GFXRT_PIPELINE_THREADS", threads)
    gr.init()
    k = load_module(tmp_path, name=f"multi_{threads}", text=MULTI.format(factor=3.0 + len(threads or ""))).k
    x, y = gr.ndarray(gr.f32, 64), gr.ndarray(gr.f32, 64)
    x.from_numpy(np.arange(64, dtype=np.float32))
    compiled = k.specialize((x, y))
    labels = [p._label for p in compiled.program.pipelines]
    assert labels == [t.entry for t in compiled.spec.tasks] and len(labels) == 3
    assert gr.device().env.pipeline_threads == (int(threads) if threads else min(8, os.cpu_count() or 1))
    k(x, y)
    f = 3.0 + len(threads or "")
    np.testing.assert_allclose(x.to_numpy(), (np.arange(64) * f + 1.0) * 2.0)
    monkeypatch.delenv("GFXRT_PIPELINE_THREADS", raising=False)
    gr.init()


def test_pipeline_threads_setting_is_checked(monkeypatch, tmp_path):
    """A bad GFXRT_PIPELINE_THREADS is the user's ValueError from gr.init (which reads the
    environment), not an internal compiler error; the runtime before it stays."""
    from gfxrt.engine.init_options import read_env
    x = gr.ndarray(gr.f32, 8)
    monkeypatch.setenv("GFXRT_PIPELINE_THREADS", "0")
    with pytest.raises(ValueError, match="GFXRT_PIPELINE_THREADS"):
        read_env()
    with pytest.raises(ValueError, match="GFXRT_PIPELINE_THREADS"):
        gr.init()
    monkeypatch.delenv("GFXRT_PIPELINE_THREADS")
    k = load_module(tmp_path, name="multi_bad_threads", text=MULTI.format(factor=11.0)).k
    k(x, x)  # the array made before the failed gr.init is still usable


def test_a_pipeline_rejected_in_a_worker_thread_is_an_internal_compiler_error(monkeypatch, tmp_path):
    """A driver rejection while threads create the pipelines surfaces as InternalCompilerError
    in the caller, with the WGSL attached, and the next kernel builds normally."""
    import dataclasses

    from gfxrt.compiler.errors import InternalCompilerError

    from gfxrt.engine.program import Program
    k = load_module(tmp_path, name="multi_rejected", text=MULTI.format(factor=13.0)).k
    args = [ArgSpec("x", "ndarray", elem=f32, ndim=1), ArgSpec("y", "ndarray", elem=f32, ndim=1)]
    spec = compile_kernel(k.func, args, gr.device().target, directory=None)
    assert len(spec.tasks) == 3
    bad = dataclasses.replace(spec, tasks=[spec.tasks[0], dataclasses.replace(spec.tasks[1], entry="no_such_entry"),
                                           spec.tasks[2]])
    with pytest.raises(InternalCompilerError) as e:
        Program(gr.device().device, bad, threads=4)
    assert "no_such_entry" in str(e.value) and e.value.wgsl == spec.wgsl
    assert len(Program(gr.device().device, spec).pipelines) == 3
