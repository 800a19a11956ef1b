"""Taichi names a program renamed from `ti` to `gr` uses: gr.init(arch=...) and Taichi's init
options, gr.reset, gr.cfg, @gr.data_oriented, compile-time helpers, dtype aliases, integer and
bit helpers, gr.randn, gr.ad.no_grad / grad_replaced / grad_for (issue 12)."""
import gc
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import gfxrt as gr
from gfxrt.engine import arch as archs


@pytest.fixture(autouse=True)
def _free_cycles():
    """Classes and kernels defined in a test form reference cycles: free their arrays now, not
    during a later test that counts live device memory."""
    yield
    gc.collect()
    gr.sync()


# -- gr.init(arch=...) ------------------------------------------------------------------------


class _FakeAdapter:
    def __init__(self, summary, kind, backend, vendor_id=0):
        self.summary = summary
        self.info = {"adapter_type": kind, "backend_type": backend, "vendor_id": vendor_id, "vendor": ""}


NV_VK = _FakeAdapter("NVIDIA H100 via Vulkan", "DiscreteGPU", "Vulkan", 0x10DE)
LAVAPIPE = _FakeAdapter("llvmpipe (CPU) via Vulkan", "CPU", "Vulkan")
LLVMPIPE_GL = _FakeAdapter("llvmpipe (CPU) via OpenGL", "CPU", "OpenGL")
APPLE = _FakeAdapter("Apple M2 via Metal", "IntegratedGPU", "Metal")


def _pick(arch, adapters, fallback=True):
    a, served = archs.choose(archs.names(arch), adapters, fallback)
    return a.summary, served


def test_arch_constants_are_taichis():
    assert gr.cpu in (gr.x64, gr.arm64) and gr.x86_64 == gr.x64
    assert gr.gpu == [gr.cuda, gr.metal, gr.opengl, gr.vulkan, gr.dx11]  # a list, as in Taichi
    assert gr.vulkan == "vulkan" and repr(gr.cuda) == "gr.cuda"


def test_arch_picks_an_adapter():
    machine = [LAVAPIPE, NV_VK, LLVMPIPE_GL]
    assert _pick(gr.cpu, machine) == (LAVAPIPE.summary, gr.cpu)
    assert _pick(gr.gpu, machine) == (NV_VK.summary, gr.cuda)      # the first arch a GPU serves
    assert _pick(gr.cuda, machine) == (NV_VK.summary, gr.cuda)
    assert _pick(gr.amdgpu, machine) == (NV_VK.summary, gr.amdgpu)  # no AMD GPU: any GPU
    assert _pick(gr.vulkan, machine) == (NV_VK.summary, gr.vulkan)  # a GPU before lavapipe
    assert _pick(gr.opengl, machine) == (LLVMPIPE_GL.summary, gr.opengl)
    assert _pick([gr.metal, gr.vulkan], machine) == (NV_VK.summary, gr.vulkan)
    assert _pick(gr.gpu, [APPLE, LAVAPIPE]) == (APPLE.summary, gr.metal)
    assert _pick(gr.vulkan, [LAVAPIPE]) == (LAVAPIPE.summary, gr.vulkan)  # one arch: a CPU driver serves it


def test_arch_support_queries():
    assert gr.lang.misc.get_host_arch_list() == [gr.cpu]
    from gfxrt.engine.device import _adapters
    has_cpu = any(a.info.get("adapter_type", "").lower() == "cpu" for a in _adapters())
    assert gr.lang.misc.is_arch_supported(gr.cpu) == has_cpu
    assert gr.lang.misc.is_arch_supported(gr.vulkan) or gr.lang.misc.is_arch_supported(gr.metal) or \
        gr.lang.misc.is_arch_supported(gr.dx12)


def test_arch_falls_back_to_the_cpu_with_a_warning():
    with pytest.warns(UserWarning, match="falling back"):
        assert _pick(gr.gpu, [LAVAPIPE, LLVMPIPE_GL]) == (LAVAPIPE.summary, gr.cpu)
    with pytest.warns(UserWarning, match="falling back"):
        assert _pick(gr.metal, [LAVAPIPE])[0] == LAVAPIPE.summary
    with pytest.raises(RuntimeError, match="not supported"):
        _pick(gr.dx12, [LAVAPIPE], fallback=False)
    with pytest.raises(ValueError, match="unknown arch"):
        archs.names("tpu")


def test_init_with_arch_keeps_a_device_that_serves_it():
    x = gr.field(gr.f32, shape=3)
    x.fill(2.0)
    dev = gr.device()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # gr.gpu on a CPU-only machine falls back
        gr.init(arch=gr.gpu if not dev.is_cpu else gr.cpu, kernel_profiler=True, device_memory_GB=2.0,
                log_level="error", packed=True, print_ir=False, fast_math=True, cpu_max_num_threads=4)
    try:
        assert gr.device() is dev and gr.cfg.arch == gr.device().arch
        assert gr.lang.impl.current_cfg().arch == gr.cfg.arch
        np.testing.assert_array_equal(x.to_numpy(), [2, 2, 2])  # the device stayed: fields live on
    finally:
        gr.init()


def test_init_options_map_or_are_refused():
    gr.init(check_out_of_bound=True)  # Taichi's bounds checks are gfxrt's debug mode
    try:
        assert gr.cfg.debug and gr.cfg.check_out_of_bound
    finally:
        gr.init()
    assert not gr.cfg.debug and gr.cfg.default_fp == gr.f32
    with pytest.raises(KeyError, match="Unrecognized keyword argument"):
        gr.init(no_such_option=1)
    with pytest.raises(TypeError):  # also what a Python call with a bad keyword raises
        gr.init(no_such_option=1)


def test_init_fast_math_divides_by_a_constant_as_taichi():
    """gr.init()'s default is Taichi's, fast_math=True: x / c is x * (1 / c) with the reciprocal
    rounded to f32, as Taichi computes it on its CPU and Vulkan backends alike (Taichi's fractal
    example, z = (i / n - 1) * 2, then gives Taichi's image bit for bit). With fast_math=False
    the division stays a division."""
    n = 320
    out = np.zeros(2 * n, np.float32)

    @gr.kernel
    def k(o: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(o.shape[0]):
            o[i] = i / n

    i = np.arange(2 * n, dtype=np.float32)
    taichi = i * (np.float32(1.0) / np.float32(n))
    assert np.count_nonzero(taichi != i / np.float32(n)) > 0  # the rewrite is visible in f32
    assert gr.cfg.fast_math
    k(out)
    np.testing.assert_array_equal(out, taichi)
    gr.init(fast_math=False)
    try:
        assert not gr.cfg.fast_math
        k(out)  # recompiled for this target: a division again (within the driver's 2.5 ulp)
        np.testing.assert_allclose(out, i / np.float32(n), rtol=3e-7)
    finally:
        gr.init()
    assert gr.cfg.fast_math


def test_init_arch_and_reset_in_a_fresh_process(tmp_path):
    """Another device (OpenGL) and gr.reset(): a process of its own, so the fields of the other
    test files keep their device."""
    script = textwrap.dedent("""
        import warnings
        import numpy as np
        import gfxrt as gr
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            gr.init(gr.cpu)                              # Taichi's positional arch
        if gr.device().is_cpu:
            assert gr.cfg.arch == gr.cpu
        else:  # no CPU adapter here (a GPU machine without lavapipe): Taichi's warned fallback
            assert any("falling back" in str(w.message) for w in seen), [str(w.message) for w in seen]
        x = gr.field(gr.i32, shape=4)
        @gr.kernel
        def fill(v: gr.i32):
            for i in x:
                x[i] = v + i
        fill(1)
        assert x.to_numpy().tolist() == [1, 2, 3, 4]
        gr.reset()                                      # fields die, kernels recompile
        old = x
        x = gr.field(gr.i32, shape=4)
        fill(3)
        assert x.to_numpy().tolist() == [3, 4, 5, 6]
        try:
            old.to_numpy()
        except gr.GfxrtError:
            pass
        else:
            raise AssertionError("a field from before gr.reset() was read")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gr.init(arch=gr.opengl, use_gles=True)    # a backend of its own: the OpenGL adapter if any
        y = gr.field(gr.f32, shape=2)
        y.fill(1.5)
        assert y.to_numpy().tolist() == [1.5, 1.5]
        print("ok", gr.cfg.arch, gr.device().name)
    """)
    path = tmp_path / "prog.py"
    path.write_text(script)
    root = str(Path(__file__).parents[1])
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=root, env=env)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout + r.stderr


# -- @gr.data_oriented ------------------------------------------------------------------------


@gr.data_oriented
class Grid:
    scale = 2  # a class constant, read through self

    def __init__(self, n, inc):
        self.n, self.inc = n, inc
        self.val = gr.field(gr.i32, shape=n)
        self.half = gr.ndarray(gr.f32, shape=n)  # an ndarray member

    @gr.func
    def step(self, i):
        return self.inc * i

    @gr.kernel
    def run(self, k: gr.i32):
        for i in range(self.n):
            self.val[i] += self.step(i) + k
            self.half[i] = self.val[i] * 0.5

    @gr.kernel
    def total(self) -> gr.i32:
        s = 0
        for i in self.val:
            s += self.val[i] * self.scale
        return s

    @staticmethod
    @gr.kernel
    def add(a: gr.f32, b: gr.f32) -> gr.f32:
        return a + b

    @classmethod
    @gr.kernel
    def times_scale(cls, a: gr.i32) -> gr.i32:
        return a * cls.scale


class DoubledGrid(Grid):  # inherits the mark and the kernels
    scale = 3

    @gr.kernel
    def double(self):
        for i in self.val:
            self.val[i] *= 2


def test_data_oriented_instances_have_their_own_members():
    a, b = Grid(4, 1), DoubledGrid(3, 10)
    a.run(1)
    b.run(0)
    b.double()
    np.testing.assert_array_equal(a.val.to_numpy(), [1, 2, 3, 4])
    np.testing.assert_array_equal(a.half.to_numpy(), [0.5, 1, 1.5, 2])
    np.testing.assert_array_equal(b.val.to_numpy(), [0, 20, 40])
    assert a.total() == 20 and b.total() == 180  # scale 2 and 3: one specialization per instance
    a.run(0)
    np.testing.assert_array_equal(a.val.to_numpy(), [1, 3, 5, 7])


def test_data_oriented_static_and_class_methods():
    g = Grid(2, 1)
    assert Grid.add(1.0, 2.0) == 3.0 and g.add(2.0, 3.0) == 5.0
    assert Grid.times_scale(5) == 10 and DoubledGrid.times_scale(5) == 15 and g.times_scale(1) == 2
    assert g.step(3) == 3  # a func method runs on the host too


def test_data_oriented_member_reassigned_recompiles():
    g = Grid(3, 1)
    g.run(0)
    old = g.half
    g.half = gr.ndarray(gr.f32, shape=3)
    g.run(0)
    np.testing.assert_array_equal(g.half.to_numpy(), [0, 1, 2])
    np.testing.assert_array_equal(old.to_numpy(), [0, 0.5, 1])


def test_kernel_methods_need_data_oriented():
    class Plain:
        @gr.kernel
        def k(self):
            pass
    with pytest.raises(gr.CompileError, match="data_oriented"):
        Plain().k()


def test_data_oriented_with_tape():
    @gr.data_oriented
    class Model:
        def __init__(self, n):
            self.x = gr.field(gr.f32, shape=n, needs_grad=True)
            self.loss = gr.field(gr.f32, shape=(), needs_grad=True)

        @gr.kernel
        def forward(self):
            for i in self.x:
                self.loss[None] += self.x[i] ** 2

    m = Model(4)
    m.x.from_numpy(np.arange(4, dtype=np.float32))
    with gr.Tape(m.loss):
        m.forward()
    assert m.loss[None] == 14.0
    np.testing.assert_allclose(m.x.grad.to_numpy(), [0, 2, 4, 6])


# -- compile-time helpers, dtype aliases, integer and bit helpers, randn ----------------------

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)


@gr.kernel
def _ops(a: gr.i32, b: gr.i32, x: gr.f32, y: gr.f32, out: F1):
    gr.static_assert(out.ndim == 1, "1-d")
    gr.block_local(out)
    gr.static_print("compiling _ops, ndim", out.ndim)
    out[0] = gr.raw_div(a, b)
    out[1] = gr.raw_mod(a, b)
    out[2] = gr.raw_div(x, y)
    out[3] = gr.raw_mod(x, y)
    out[4] = gr.round(x)
    out[5] = gr.round(x, gr.i32) + 0.25  # an i32, then promoted
    out[6] = gr.sign(x)
    out[7] = gr.bit_cast(gr.bit_cast(x, gr.u32), gr.f32)
    out[8] = gr.bit_cast(1.0, gr.i32)
    out[9] = gr.assume_in_range(a, 0, -10, 10)
    out[10] = gr.floor(x, gr.i32)
    out[11] = gr.raw_div(-7, 2)  # constants fold with the same C semantics


def test_taichi_ops_in_kernels(capsys):
    out = np.zeros(12, np.float32)
    _ops(-7, 2, -7.5, 2.0, out)
    assert "compiling _ops, ndim 1" in capsys.readouterr().out
    np.testing.assert_array_equal(out, [-3, -1, -3.75, np.fmod(-7.5, 2.0), -8, -7.75, -1, -7.5,
                                        np.float32(1.0).view(np.int32), -7, -8, -3])
    _ops(7, -2, 2.5, -2.0, out)
    np.testing.assert_array_equal(out[[0, 1, 3, 4, 6]], [-3, 1, 0.5, 3, 1])


def test_taichi_ops_on_the_host():
    assert gr.raw_div(-7, 2) == -3 and gr.raw_mod(-7, 2) == -1 and gr.raw_div(7.0, 2) == 3.5
    assert gr.raw_mod(-7.5, 2.0) == -1.5
    assert gr.round(2.5) == 3.0 and gr.round(-2.5, gr.i32) == -3 and gr.floor(2.7, gr.i32) == 2
    assert gr.bit_cast(1.0, gr.i32) == 0x3F800000 and gr.assume_in_range(5, 0, 0, 8) == 5
    gr.static_assert(True)
    with pytest.raises(AssertionError, match="nope"):
        gr.static_assert(False, "nope")


def test_static_assert_fails_the_compile_at_the_users_line():
    @gr.kernel
    def needs_2d(x: gr.types.ndarray(dtype=gr.f32)):
        gr.static_assert(x.ndim == 2, "needs a 2-d array")

    with pytest.raises(gr.StaticAssertionError, match="needs a 2-d array") as e:
        needs_2d(np.zeros(3, np.float32))
    assert isinstance(e.value, AssertionError) and isinstance(e.value, gr.CompileError)
    assert "gr.static_assert(x.ndim == 2" in str(e.value)
    needs_2d(np.zeros((2, 2), np.float32))  # another specialization passes


def test_dtype_aliases():
    assert (gr.int8, gr.int16, gr.int32, gr.int64) == (gr.i8, gr.i16, gr.i32, gr.i64)
    assert (gr.uint8, gr.uint16, gr.uint32, gr.uint64) == (gr.u8, gr.u16, gr.u32, gr.u64)
    assert (gr.float16, gr.float32, gr.float64) == (gr.f16, gr.f32, gr.f64)
    assert gr.types.int32 == gr.i32 and gr.types.float32 == gr.f32
    assert gr.types.NDArray(dtype=gr.f32, ndim=1) == gr.types.ndarray(dtype=gr.f32, ndim=1)

    @gr.kernel
    def k(a: gr.int32, x: gr.types.ndarray(dtype=gr.float32, ndim=1)):
        x[0] = gr.cast(a, gr.float32) * 0.5

    x = np.zeros(1, np.float32)
    k(3, x)
    assert x[0] == 1.5


def test_randn_is_standard_normal():
    @gr.kernel
    def fill(out: F1):
        for i in range(out.shape[0]):
            out[i] = gr.randn()

    r = np.zeros(1 << 16, np.float32)
    fill(r)
    assert np.isfinite(r).all() and abs(r.mean()) < 0.03 and abs(r.std() - 1) < 0.03
    assert abs(np.mean(np.abs(r) < 1) - 0.6827) < 0.02


# -- gr.ad: user-defined gradients ------------------------------------------------------------


def test_grad_replaced_and_grad_for_run_in_the_tape():
    x = gr.field(gr.f32, shape=4, needs_grad=True)
    y = gr.field(gr.f32, shape=4, needs_grad=True)
    loss = gr.field(gr.f32, shape=(), needs_grad=True)

    @gr.kernel
    def double():
        for i in x:
            y[i] = 2 * x[i]

    @gr.kernel
    def total():
        for i in y:
            loss[None] += y[i]

    @gr.ad.grad_replaced
    def forward():
        double()

    @gr.ad.grad_for(forward)
    def backward():  # a made-up gradient: 100 instead of 2
        g = y.grad.to_numpy()
        x.grad.from_numpy(x.grad.to_numpy() + 100 * g)

    x.from_numpy(np.arange(4, dtype=np.float32))
    with gr.Tape(loss):
        forward()
        total()
    assert loss[None] == 12
    np.testing.assert_array_equal(x.grad.to_numpy(), [100] * 4)

    @gr.ad.no_grad
    def forward_no_grad():
        double()

    with gr.Tape(loss):
        forward_no_grad()
        total()
    np.testing.assert_array_equal(x.grad.to_numpy(), [0] * 4)  # cleared, then nothing flowed back
    np.testing.assert_array_equal(y.grad.to_numpy(), [1] * 4)
    gr.ad.clear_all_gradients()
    np.testing.assert_array_equal(y.grad.to_numpy(), [0] * 4)
    with pytest.raises(RuntimeError, match="already has a gradient"):
        gr.ad.grad_for(forward)(lambda: None)


def test_grad_replaced_methods_of_data_oriented_classes():
    @gr.data_oriented
    class Model:
        def __init__(self):
            self.a = gr.field(gr.f32, shape=2, needs_grad=True)
            self.loss = gr.field(gr.f32, shape=(), needs_grad=True)

        @gr.kernel
        def k(self, s: gr.f32):
            for i in self.a:
                self.loss[None] += s * self.a[i]

        @gr.ad.grad_replaced
        def f(self, s):
            self.k(s)

        @gr.ad.grad_for(f)
        def f_backward(self, s):
            self.k.grad(s * 10)

    m = Model()
    with gr.Tape(m.loss):
        m.f(2.0)
    np.testing.assert_array_equal(m.a.grad.to_numpy(), [20, 20])


# -- more of Taichi's top-level names ---------------------------------------------------------


def test_variadic_min_max_zero_one_bit_shr():
    @gr.kernel
    def k(a: gr.i32, x: gr.f32, out: F1, o2: gr.types.ndarray(dtype=gr.i32, ndim=1)):
        v = gr.Vector([x, 2.0])
        out[0] = gr.min(x, 1.0, -2.0)
        out[1] = gr.max(x, 1.0, 5.0, 3.0)
        out[2] = gr.zero(x) + gr.one(x)
        w = gr.zero(v)
        out[3] = w[1]
        o2[0] = gr.bit_shr(a, 28)  # logical: zeros shift in
        o2[1] = gr.bit_shr(-16, 2)
        o2[2] = a >> 28  # arithmetic, for comparison

    out, o2 = np.zeros(4, np.float32), np.zeros(3, np.int32)
    k(-1, 0.5, out, o2)
    np.testing.assert_array_equal(out, [-2, 5, 1, 0])
    np.testing.assert_array_equal(o2, [15, (2**32 - 16) >> 2, -1])
    assert gr.min(3, 1, 2) == 1 and gr.max(3, 1, 2) == 3 and gr.bit_shr(-1, 28) == 15


def test_extensions_pyfunc_and_no_op_helpers():
    assert gr.is_extension_supported(gr.cpu, gr.extension.adstack)
    assert gr.is_extension_supported(gr.cuda, gr.extension.sparse)  # pointer / bitmasked / dynamic SNodes
    assert not gr.is_extension_supported(gr.cuda, gr.extension.quant)
    gr.deactivate_all_snodes()  # no sparse SNodes here: nothing to deactivate

    @gr.pyfunc
    def twice(v):
        return v * 2

    @gr.kernel
    def k(out: F1):
        for i in range(out.shape[0]):
            out[i] = twice(gr.loop_unique(i))

    out = np.zeros(3, np.float32)
    k(out)
    np.testing.assert_array_equal(out, [0, 2, 4])
    assert twice(4) == 8

    @gr.kernel
    def stops(x: F1):
        gr.stop_grad(x)

    with pytest.raises(gr.CompileError, match="stop_grad"):
        stops(out)


def test_data_oriented_first_parameter_may_have_any_name():
    @gr.data_oriented
    class Box:
        def __init__(self):
            self.v = gr.field(gr.i32, shape=2)

        @gr.kernel
        def fill(this, k: gr.i32):
            for i in this.v:
                this.v[i] = k + i

    b = Box()
    b.fill(5)
    np.testing.assert_array_equal(b.v.to_numpy(), [5, 6])


def test_kernel_profiler_option():
    x = gr.field(gr.f32, shape=64)

    @gr.kernel
    def fill():
        for i in x:
            x[i] = 0.1

    gr.init(kernel_profiler=True)
    try:
        for _ in range(3):
            fill()
        q = gr.profiler.query_kernel_profiler_info(fill.__name__)
        assert q.counter == 3 and q.avg >= 0
        gr.profiler.clear_kernel_profiler_info()
        fill()
        assert gr.profiler.query_kernel_profiler_info("fill").counter == 1
        assert gr.profiler.get_kernel_profiler_total_time() >= 0
    finally:
        gr.init()
    with pytest.raises(RuntimeError, match="kernel_profiler=True"):
        gr.profiler.print_kernel_profiler_info()


def test_taichi_exception_names():
    @gr.kernel
    def bad():
        undefined_name_here[0] = 1  # noqa: F821

    with pytest.raises(gr.TaichiCompilationError):
        bad()
    assert gr.TaichiSyntaxError is gr.CompileError and gr.TaichiRuntimeError is gr.GfxrtError

    @gr.kernel
    def k(a: gr.i32):
        pass

    with pytest.raises(gr.TaichiRuntimeTypeError):
        k("text")


def test_layout_and_experimental_names():
    v = gr.Vector.field(3, gr.f32, shape=4, layout=gr.Layout.SOA)
    assert v.shape == (4,)
    assert gr.experimental.real_func is gr.real_func


def test_field_takes_taichis_keywords():
    f = gr.field(gr.f32, shape=(2, 3), order="ji", needs_dual=True, name="f")
    assert f.shape == (2, 3) and f.needs_grad
    assert gr.field(gr.f32, shape=4, offset=(-2,)).offset == (-2,)  # (tests/test_taichi_forms2.py)
    with pytest.raises(ValueError, match="offset"):
        gr.field(gr.f32, shape=4, offset=(-2, 1))


def test_failed_kernel_assert_is_an_assertion_error():
    @gr.kernel
    def positive(x: F1):
        for i in range(x.shape[0]):
            assert x[i] > 0, "positive"

    gr.init(debug=True)
    try:
        with pytest.raises(AssertionError, match="positive") as e:
            positive(np.zeros(2, np.float32))
            gr.sync()
        assert isinstance(e.value, gr.TaichiAssertionError) and isinstance(e.value, gr.DeviceError)
    finally:
        gr.init()
