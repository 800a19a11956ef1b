"""A kernel that is dropped gives back what it held (issue 21, item 8): the values its
closure captured, the device copies of numpy arrays it captured, its parsed source, and,
beyond a small most-recently-used set, its device program."""
import gc
import importlib.util
import tracemalloc
import weakref

import numpy as np
import pytest
from gfxrt.compiler.frontend import source

import gfxrt as gr
from gfxrt.engine import program
from gfxrt.engine.program import Program


def closure_kernel(out, table):
    """A new kernel object over (out, table) each call: the pattern that leaked."""
    @gr.kernel
    def k():
        for i in range(out.shape[0]):
            out[i] = table[i + 100]
    return k


def _collect(trim: bool = False):
    gr.sync()
    gc.collect()
    if trim:  # idle pooled buffers (reused or trimmed by the pool on its own schedule) aside
        gr.runtime().pool.trim()


def test_a_dropped_closure_kernel_releases_what_it_captured():
    refs = []
    for j in range(3):
        out = gr.field(gr.f32, shape=4)
        table = np.arange(200, dtype=np.float32) + j  # over 64 elements: a device copy (a const field)
        k = closure_kernel(out, table)
        k()
        k()  # the fast path too
        assert out.to_numpy().tolist() == [100.0 + j + i for i in range(4)]
        (copy,) = [a.obj for s in k._lowered.values() for a in s.lowered().fields.values() if a.obj is not out]
        assert copy.const_data[0] == j
        (dev,) = [f for c in k._cache.values() for f in c._internals.values() if isinstance(f, gr.Field)]
        assert dev.to_numpy()[0] == j  # uploaded by the launch, held by the specialization
        refs.append([weakref.ref(x) for x in (out, copy, dev, k.func, k)])
        del out, table, k, copy, dev
    _collect()
    # the field, the captured array's data and device copy, the function (and its closure), the kernel
    assert [[r() is not None for r in rs] for rs in refs] == [[False] * 5] * 3


def test_a_live_kernel_keeps_its_captured_array_copy():
    out = gr.field(gr.f32, shape=4)
    k = closure_kernel(out, np.arange(200, dtype=np.float32) * 2)
    k()
    _collect()  # nothing but the compiled kernel holds the device copy now
    out.fill(0)
    k()
    assert out.to_numpy().tolist() == [200.0, 202.0, 204.0, 206.0]


def test_kernels_made_by_exec_leave_no_parsed_source_behind(tmp_path):
    sizes = len(source._CACHE), len(source._LINES)
    x = gr.ndarray(gr.f32, (4,))
    for j in range(4):
        path = tmp_path / f"generated_{j}.py"
        path.write_text("import gfxrt as gr\n\n\n@gr.kernel\ndef k(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):\n"
                        f"    for i in range(x.shape[0]):\n        x[i] = {j}.0\n")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mod.k(x)
        assert x.to_numpy().tolist() == [float(j)] * 4
        del mod, spec
    _collect()
    assert (len(source._CACHE), len(source._LINES)) == sizes


def test_device_programs_of_dropped_kernels_are_bounded(monkeypatch):
    """Programs live kernels use are shared; of the others only the PROGRAM_CACHE_LIMIT most
    recently used stay."""
    monkeypatch.setattr(program, "PROGRAM_CACHE_LIMIT", 3)
    _collect()
    older = {id(o) for o in gc.get_objects() if isinstance(o, Program)}
    out = gr.field(gr.f32, shape=4)
    keep = closure_kernel(out, np.full(200, -1.0, np.float32))
    keep()
    for j in range(8):
        closure_kernel(out, np.full(200, float(j), np.float32))()
    _collect()
    programs = [o for o in gc.get_objects() if isinstance(o, Program) and id(o) not in older]
    assert len(programs) <= 3 + 1  # the recent ones and the live kernel's
    keep()  # the live kernel's program was kept while it lives
    assert out.to_numpy().tolist() == [-1.0] * 4


def test_new_kernels_launched_without_a_sync_are_submitted_in_batches(monkeypatch):
    """A dropped kernel's pipelines are freed by the driver only once the work that used them
    is submitted and done: recorded work is flushed every AUTO_FLUSH_LAUNCHERS new
    specializations, not only every AUTO_FLUSH_DISPATCHES dispatches (800 closure kernels,
    each launched once without a sync, grew lavapipe's process by ~73 KB each; now ~5 KB)."""
    rt = gr.runtime()
    monkeypatch.setattr(rt, "AUTO_FLUSH_LAUNCHERS", 4)
    out = gr.field(gr.f32, shape=4)
    gr.sync()
    before = rt.stats()["submissions"]
    for j in range(8):
        closure_kernel(out, np.full(200, float(j), np.float32))()
    assert rt.stats()["submissions"] - before >= 2
    assert out.to_numpy().tolist() == [7.0] * 4


def test_python_memory_per_dropped_closure_kernel_is_bounded(monkeypatch):
    monkeypatch.setattr(program, "PROGRAM_CACHE_LIMIT", 2)
    out = gr.field(gr.f32, shape=4)

    def make_and_drop(n, start):
        for j in range(start, start + n):
            closure_kernel(out, np.full(4096, float(j), np.float32))()  # 16 KB captured, copied to the device
        _collect(trim=True)

    make_and_drop(12, 0)  # warm: every cache at its bound
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        make_and_drop(16, 100)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert out.to_numpy().tolist() == [115.0] * 4
    # (kept before: ~19 KB each, the captured array's copy among it; now ~1 KB: CPython's own
    # bounded caches and free lists settling, falling to ~50 B per kernel over a few hundred)
    assert grown / 16 < 4096, f"{grown / 16:.0f} bytes of Python memory kept per dropped kernel"


@pytest.fixture(autouse=True)
def _no_leftover_programs_pinned_by_the_patch():
    yield
    gc.collect()
