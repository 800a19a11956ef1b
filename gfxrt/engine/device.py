"""Adapter selection and the wgpu device: the only place gfxrt decides what hardware it uses."""
from __future__ import annotations

from dataclasses import dataclass, field

from gfxrt.compiler.target import Target

from ..errors import GfxrtError
from . import arch as archs
from . import xdg_runtime
from .arch import _rank
from .backend import IN_BROWSER, WGSL_ENABLES, calls
from .init_options import Env, read_env

# features gfxrt uses when the adapter has them
WANTED_FEATURES = ("immediates", "shader-f16", "shader-float32-atomic", "timestamp-query",
                   "shader-f64", "shader-int64", "shader-int64-atomic-all-ops",  # 64-bit types (wgpu-native)
                   "timestamp-query-inside-passes", "timestamp-query-inside-encoders", "subgroup",
                   # textures (gr.Texture): filtering 32-bit floats, storage formats beyond WebGPU's core, r16 unorm
                   "float32-filterable", "texture-adapter-specific-format-features", "texture-format16bit-norm")
WANTED_LIMITS = ("max-immediate-size", "max-storage-buffer-binding-size", "max-buffer-size",
                 "max-storage-buffers-per-shader-stage", "max-compute-workgroup-storage-size",
                 "max-compute-invocations-per-workgroup", "max-compute-workgroup-size-x",
                 "max-bind-groups", "max-bindings-per-bind-group",
                 "max-texture-dimension-1d", "max-texture-dimension-2d", "max-texture-dimension-3d",
                 "max-sampled-textures-per-shader-stage", "max-storage-textures-per-shader-stage")
SPIN_WAIT_US = 2000  # GPUs: a readback or gr.sync() polls this long before it blocks (see retarget)

NO_ADAPTER_HELP = ("wgpu found no Vulkan, Metal or D3D12 adapter. On Linux without a GPU install the CPU Vulkan "
                   "driver: `apt-get install -y mesa-vulkan-drivers` (the README's commands do this); an OpenGL "
                   "adapter is used only when asked for by name: gr.init(adapter='OpenGL').")


@dataclass
class Options:
    """What `gr.init()` was asked for."""

    adapter: str | None = None
    debug: bool = False
    adstack_size: int | None = None
    offline_cache: bool | None = None  # None: gr.init's default (on, except in a browser tab)
    default_fp: str = "f32"
    default_ip: str = "i32"
    arch: tuple | None = None  # Taichi's arch= as names (gfxrt/engine/arch.py); an explicit adapter wins
    enable_fallback: bool = True
    fast_math: bool = True  # x / c as x * (1 / c) for a float constant c: Taichi's documented default


@dataclass
class Device:
    """The chosen adapter, the wgpu device and what the compiler may assume about it."""

    adapter: object
    device: object
    features: frozenset[str]
    limits: dict
    options: Options
    arch: object = None  # the gr.<arch> this adapter serves (gfxrt/engine/arch.py)
    env: Env = field(default_factory=Env)  # the environment knobs of the last gr.init()
    target: Target = field(init=False)

    def __post_init__(self):
        self.retarget(self.options, self.env)

    def retarget(self, options: Options, env: Env) -> None:
        """Apply new compile options (debug, adstack_size, ...) and environment knobs (read by
        gr.init: gfxrt/engine/init_options.py; their meaning: docs/runtime.md "Knobs", docs/autodiff.md)
        to this device's target and waits (a readback or gr.sync() polls GFXRT_SPIN_WAIT_US before
        it blocks: 2000 on GPUs, 0 on CPU adapters, where polling takes a core from the driver)."""
        self.options, self.env = options, env
        spin_us = env.spin_wait_us if env.spin_wait_us is not None else 0 if self.is_cpu else SPIN_WAIT_US
        self.device._gfxrt_spin_s = spin_us * 1e-6  # read by ffi.wait and the blitter
        # a CPU driver runs a block's threads as SIMD lanes: private arrays beat workgroup memory
        # there (lavapipe, run-time sin loop through the adstack: backward/forward 1.7 vs 2.1)
        shared = env.adstack_shared if env.adstack_shared is not None else not self.is_cpu
        self.target = Target(self.features, int(self.limits.get("max-immediate-size", 0) or 0),
                             256, options.debug, options.adstack_size, adstack_shared=shared,
                             max_workgroup_storage=int(self.limits.get("max-compute-workgroup-storage-size", 16384)),
                             ad_loops=env.ad_loops, ad_gather=env.ad_gather, ad_gather_items=env.ad_gather_items,
                             default_fp=options.default_fp, default_ip=options.default_ip,
                             loop_cap=self.loop_cap if env.loop_cap is None else env.loop_cap,
                             loop_copies=env.loop_copies, fast_math=options.fast_math,
                             max_binding=self.max_binding(env), wgsl_enables=WGSL_ENABLES)

    def max_binding(self, env: Env) -> int:
        """Bytes one storage binding may hold: the adapter's max-storage-buffer-binding-size
        (capped by max-buffer-size), or GFXRT_MAX_BINDING where smaller (tests bind small arrays
        in windows with it). Larger arrays are bound in windows (compiler/codegen/wgsl_chunks.py)."""
        own = min(int(self.limits.get("max-storage-buffer-binding-size", 1 << 27)),
                  int(self.limits.get("max-buffer-size", 1 << 28)))
        return min(own, env.max_binding) if env.max_binding else own

    @property
    def name(self) -> str:
        return self.adapter.summary

    @property
    def loop_cap(self) -> int:
        """Loop passes one invocation may make, all loops together, before the driver ends them
        silently: mesa's llvmpipe (lavapipe) counts every loop back edge of a shader
        invocation against one counter of LP_MAX_TGSI_LOOP_ITERATIONS = 65535, set once at
        entry (experiments/loop_cap.py). 0 = no cap."""
        return 65535 if self.is_llvmpipe else 0

    @property
    def is_llvmpipe(self) -> bool:
        info = self.adapter.info
        return "llvmpipe" in f"{info.get('vendor', '')} {info.get('device', '')} {self.adapter.summary}".lower()

    @property
    def is_cpu(self) -> bool:
        return str(self.adapter.info.get("adapter_type", "")).lower() == "cpu"


def wants_gl(name: str | None) -> bool:
    """True when an adapter request names the OpenGL backend ("OpenGL", "GLES", "EGL", "gl")."""
    n = (name or "").strip().lower()
    return n == "gl" or any(w in n for w in ("opengl", "gles", "egl"))


_GL_INSTANCE: list = []  # a GL-only wgpu instance, made only when an OpenGL adapter is asked for


def _adapters(gl: bool = False):
    """The adapters of wgpu's process-wide instance, created with the Vulkan / Metal / D3D12
    backends only: the OpenGL backend's EGL context is not thread-safe (concurrent launches
    panicked in wgpu-hal's egl.rs with BadAccess) and is only created when `gl` (the user
    named an OpenGL adapter)."""
    import wgpu
    from wgpu.backends.wgpu_native import _helpers, extras
    xdg_runtime.ensure()  # before the first instance loads the Vulkan driver (its Wayland library)
    if _helpers._the_instance is None:
        try:
            extras.set_instance_extras(backends=["All"] if gl else ["Primary"])
        except RuntimeError:  # created meanwhile (wgpu used directly): it is what it is
            pass
    adapters = list(wgpu.gpu.enumerate_adapters_sync())
    if gl and not any(_backend(a) == "opengl" for a in adapters):
        adapters += _gl_adapters()
    return adapters


def _gl_adapters():
    """OpenGL adapters from a second, GL-only instance (the process's instance was created
    without GL before the user asked for an OpenGL adapter)."""
    import wgpu
    from wgpu.backends.wgpu_native import ffi, lib
    from wgpu.backends.wgpu_native._mappings import native_flags
    if not _GL_INSTANCE:
        ext = ffi.new("WGPUInstanceExtras *")
        ext.chain.sType = lib.WGPUSType_InstanceExtras
        ext.backends = native_flags["InstanceBackend.GL"]
        desc = ffi.new("WGPUInstanceDescriptor *")
        desc.nextInChain = ffi.cast("WGPUChainedStruct *", ext)
        _GL_INSTANCE.append(lib.wgpuCreateInstance(desc))
    inst = _GL_INSTANCE[0]
    count = lib.wgpuInstanceEnumerateAdapters(inst, ffi.NULL, ffi.NULL)
    handles = ffi.new("WGPUAdapter[]", count)
    lib.wgpuInstanceEnumerateAdapters(inst, ffi.NULL, handles)
    return [wgpu.gpu._create_adapter(h) for h in handles]


def forget_after_fork() -> bool:
    """In the child of os.fork(): make every wgpu object inherited from the parent inert, and
    drop wgpu's process-wide instance. Returns True when the parent had created one (then
    the child must not open a device: see gfxrt/engine/context.py).

    Inherited objects belong to the parent's device, whose driver threads did not survive
    the fork (a wait on it never returns), so nothing here may reach wgpu-native: each
    object's handle is forgotten rather than released (wgpu-py releases a handle when its
    object is collected, at the latest when the child exits)."""
    import gc
    import sys
    if "wgpu.backends.wgpu_native" not in sys.modules:
        return False
    from wgpu.backends.wgpu_native import _api, _helpers
    if _helpers._the_instance is None and not _GL_INSTANCE:
        return False  # nothing of wgpu-native was created before the fork
    kinds = (_api.GPUObjectBase, _api.GPUAdapter)
    for obj in gc.get_objects():
        if isinstance(obj, kinds):
            calls.forget(obj)
    _helpers._the_instance = None  # raw handles: dropping the reference releases nothing
    _GL_INSTANCE.clear()
    _skip_c_exit_handlers()
    return True


def _skip_c_exit_handlers() -> None:
    """Make the forked child's exit skip the C library's exit handlers (the driver's teardown).

    The parent's Vulkan driver registered them when it loaded; in a forked child they tear
    down the parent's objects through the file descriptors the two processes share. On an
    NVIDIA H100 (driver 580) a child that only returned from `sys.exit(0)` crashed in them
    (SIGSEGV), and the parent's device was lost or its next wait never returned
    (experiments/fork_device.py); a child that left with `os._exit` did no harm. So the
    child registers glibc's `on_exit(_exit)`: run last-registered-first, it ends the process
    with the interpreter's exit status after Python has finalized (its atexit callbacks,
    flushed files) and before any handler registered before the fork. Multiprocessing's fork
    workers leave with `os._exit` anyway. Without glibc's `on_exit` (musl, macOS) nothing is
    registered."""
    import ctypes
    try:
        libc = ctypes.CDLL(None)
        on_exit, exit_now = libc.on_exit, libc._exit
    except (OSError, AttributeError):
        return
    on_exit.argtypes = (ctypes.c_void_p, ctypes.c_void_p)
    on_exit.restype = ctypes.c_int
    # on_exit calls it as f(status, arg); _exit(status) ignores the extra argument (C calling convention)
    on_exit(ctypes.cast(exit_now, ctypes.c_void_p), None)


def choose_adapter(name: str | None, arch: tuple | None = None, enable_fallback: bool = True):
    """The adapter whose name contains `name` (case-insensitive; None: GFXRT_ADAPTER), else the one that serves
    Taichi's `arch` (names, see gfxrt/engine/arch.py), else the high-performance one. Only
    Vulkan/Metal/D3D12 adapters are considered unless `name` or the first arch names OpenGL."""
    return _choose(name or read_env().adapter, arch, enable_fallback)[0]


def _choose(name, arch, enable_fallback):
    """(adapter, the gr.<arch> it serves)."""
    if IN_BROWSER:  # a browser offers one adapter (webgpu.py); names and archs do not choose among others
        a = calls.request_adapter()
        return a, archs.of_adapter(a)
    import wgpu

    adapters = _adapters(gl=wants_gl(name) or bool(arch and not name and arch[0] in ("opengl", "gles")))
    if not adapters:
        raise GfxrtError(NO_ADAPTER_HELP)
    if arch and not name:
        return archs.choose(arch, adapters, enable_fallback)
    a = _pick(name, adapters, wgpu)
    return a, archs.of_adapter(a)


def _pick(name, adapters, wgpu):
    if name:
        hits = [a for a in adapters if name.lower() in a.summary.lower()]
        if not hits:
            listing = "\n  ".join(a.summary for a in adapters)
            raise GfxrtError(f"no adapter name contains {name!r}; adapters found:\n  {listing}"
                             + ("" if wants_gl(name) else "\n(OpenGL adapters are listed only when the request "
                                                          "names OpenGL, e.g. adapter='OpenGL')"))
        return _rank(hits)[0]
    preferred = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    if preferred is not None and _backend(preferred) != "opengl":
        return preferred
    return _rank(adapters)[0]


def _backend(a) -> str:
    return str(a.info.get("backend_type", "")).lower()


def open_device(options: Options, env: Env, chosen=None) -> Device:
    """A device on the adapter `options` (else `env`) ask for (or on `chosen`: (adapter, arch))."""
    adapter, served = chosen or _choose(options.adapter or env.adapter, options.arch, options.enable_fallback)
    feats = frozenset(f for f in WANTED_FEATURES if f in adapter.features)
    limits = {k: adapter.limits[k] for k in WANTED_LIMITS if k in adapter.limits}
    device = adapter.request_device_sync(required_features=sorted(feats), required_limits=limits)
    return Device(adapter, device, feats, dict(device.limits), options, served, env)
