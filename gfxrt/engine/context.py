"""The process-wide gfxrt state: options, device and runtime, created on first use; and
`LOCK`, which makes the public API thread-safe.

Thread safety: every public entry point that touches the runtime (kernel launches and
grads, allocation, from_numpy / to_numpy / fill / copies, sync, init, graph and Tape
enter/exit, profiling) holds the process-wide re-entrant `LOCK`, so recording, submission
and readback are serialized: a kernel may be launched from any thread and sees the work
other threads issued before it. Freeing (garbage collection, in any thread) only appends
to `rt.ctx_buffers`, an atomic list operation, and takes no lock.

Fork: a child of os.fork() (multiprocessing's 'fork' start method too) cannot use a GPU
device once its parent had opened one: the driver's threads are not copied, so a wait on the
parent's device never returns in the child, and a device the child opens itself is no
better (lavapipe: a new instance's device runs, and the child's exit then hangs in the
driver's teardown; the parent's instance gives a device whose first wait never returns).
`_after_fork_in_child` detaches the parent's runtime without touching wgpu-native (its wgpu
objects are forgotten, not released: device.forget_after_fork), and gfxrt's first use in
the child, `gr.init()` included, raises `ForkedProcessError` naming the fix: the 'spawn' or
'forkserver' start method. A fork before anything of wgpu-native exists is unaffected.
"""
from __future__ import annotations

import functools
import numbers
import os

from gfxrt.compiler.errors import CompileError

from ..errors import ForkedProcessError
from . import arch as _arch
from . import messages
from .backend import IN_BROWSER
from .device import Device, Options, _choose, forget_after_fork, open_device
from .init_options import Env, read_env
from .init_options import taichi_options as parse_taichi
from .lock import LOCK, locked  # noqa: F401  (the lock lives below the runtime: gfxrt/engine/lock.py)
from .runtime import GfxRuntime
from .tracebacks import user_frames

# forked_from: in a forked child whose parent had opened wgpu-native, the parent's pid
# random: gr.random's generator state of this gr.init() (a new one restarts the sequence)
_state: dict = {"options": Options(), "device": None, "runtime": None, "random_seed": 0, "forked_from": None}


class RandomState:
    """gr.random's state for one gr.init(): the seed and the counter field gfxrt/taichi/rng.py makes."""

    def __init__(self, seed):
        if not isinstance(seed, numbers.Integral):
            raise TypeError(f"random_seed must be an int, got {seed!r}")
        self.seed, self.counters = int(seed) & 0xFFFFFFFF, None


_state["random"] = RandomState(0)


# the context's part of gr.init (gfxrt/session.py, which takes this docstring and signature):
# returns Taichi's extra options and whether the device was kept
@locked
def init(adapter: str | None = None, debug: bool = False, adstack_size: int | None = None,
         offline_cache: bool | None = None, default_fp=None, default_ip=None, random_seed: int = 0,
         arch=None, enable_fallback: bool = True, **taichi_options):
    """(Re)initialize gfxrt. Optional: the first kernel launch or allocation calls it with
    defaults. Calling it again on the same adapter keeps the device, its arrays and fields,
    and applies the new options (kernels recompile); another adapter, or a lost device,
    opens a new device (arrays from the old one can no longer be used).

    adapter: a substring of the adapter's name (default: env GFXRT_ADAPTER, else the
    high-performance adapter); Vulkan, Metal and D3D12 adapters, OpenGL ones only when the
    name says so ("OpenGL"). debug: bounds-checked indexing, errors raised at the next
    sync or readback. adstack_size: force N adstack slots per thread instead of automatic sizing.
    offline_cache: keep compiled kernels on disk between processes (default: yes, except in a
    browser tab, which has no disk to keep them on: True there raises ValueError). default_fp / default_ip:
    the dtype of Python floats / ints in kernels (Taichi's): gr.f32 / gr.f64, gr.i32 / gr.i64.
    random_seed: seeds gr.random() (and restarts its sequence).

    Taichi's form works too: arch=gr.cpu / gr.gpu / gr.vulkan / gr.cuda / [archs...] (or as
    the first argument) picks the adapter (gfxrt/engine/arch.py; an adapter name wins),
    enable_fallback=False raises RuntimeError when no adapter serves it, and Taichi's other
    options are accepted (gfxrt/taichi/init.py lists them); an unknown one raises KeyError.

    Opening a device prints one line on stderr, e.g. `[gfxrt] Starting on llvmpipe (LLVM
    15.0.6, 256 bits) (CPU) via Vulkan`; log_level="warn" (Taichi's names: "trace", "debug",
    "info", "warn", "error", "critical"; gr.WARN & co.) or env GFXRT_LOG_LEVEL=warn (or
    Taichi's TI_LOG_LEVEL) silences it. A re-init that keeps the device prints nothing.
    """
    if _state["forked_from"] is not None:
        raise ForkedProcessError(_FORKED.format(parent=_state["forked_from"]))
    env = read_env()  # the environment, read once per gr.init (gfxrt/engine/init_options.py)
    if adapter is not None and not isinstance(adapter, str):
        adapter, arch = None, adapter if arch is None else arch  # gr.init(gr.cpu), Taichi's positional arch
    arch_names = _arch.names(env.arch or arch)  # Arch objects or names (saved Options hold names)
    extra = parse_taichi(taichi_options)
    log_level = messages.resolve(extra.get("log_level"), env.log_level)
    debug = debug or extra.get("debug", False)
    adstack_size = adstack_size or extra.get("adstack_size")
    if extra.get("gles") and arch_names and "opengl" in arch_names:
        arch_names = tuple("gles" if n == "opengl" else n for n in arch_names)
    rand = RandomState(random_seed)
    if adstack_size is not None and (not isinstance(adstack_size, int) or adstack_size <= 0):
        raise ValueError(f"adstack_size must be a positive int, got {adstack_size!r}")
    if offline_cache is None:
        offline_cache = not IN_BROWSER
    elif offline_cache and IN_BROWSER:
        raise ValueError("offline_cache=True: a browser tab (Pyodide) has no disk that keeps compiled kernels "
                         "between page loads; leave it out there")
    fp, ip = _default_name(default_fp, "fp", ("f16", "f32", "f64")), _default_name(default_ip, "ip", ("i32", "i64"))
    options = Options(adapter, debug, adstack_size, offline_cache, fp, ip, arch_names, enable_fallback,
                      fast_math=extra.get("fast_math", True))
    _state.update(random_seed=random_seed, random=rand)
    old = _state["runtime"]
    chosen = None
    same = old is not None and old.alive and _adapter_request(options, env) == _adapter_request(_state["options"], env)
    if old is not None and old.alive and not same:
        # another request (an adapter name, an arch, or none after one of them): keep the device if
        # its adapter is the one that serves the new request (`gr.init(adapter=gr.device().name)`)
        chosen = _choose(_adapter_request(options, env)[0], arch_names, enable_fallback)
        same = chosen[0] is _state["device"].adapter or chosen[0].summary == _state["device"].adapter.summary
    if same:
        # same adapter, healthy device: keep it (and every array and field on it), change
        # only what the compiler and runtime assume; kernels recompile for the new target
        old.synchronize()
        if old.adstack is not None:  # sized under the old options
            old.adstack.release()
            old.adstack = None
        _state["options"] = options
        if chosen is not None:
            _state["device"].arch = chosen[1]
        _state["device"].retarget(options, env)
        return extra, True
    _state["runtime"] = None
    if old is not None:
        old.close()  # finishes its work unless its device was lost
    _state["options"] = options
    _state["device"] = open_device(options, env, chosen)
    messages.info(f"Starting on {_state['device'].name}", log_level)  # once per device opened, as Taichi's line
    _state["runtime"] = GfxRuntime(_state["device"])
    return extra, False


def _default_name(t, which: str, allowed: tuple) -> str:
    if t is None:
        return allowed[1] if which == "fp" else allowed[0]
    name = t if isinstance(t, str) else getattr(t, "name", None)
    if name not in allowed:
        raise ValueError(f"default_{which} must be one of {', '.join('gr.' + a for a in allowed)}, not {t!r}")
    return name


def _adapter_request(options: Options, env: Env) -> tuple:
    name = options.adapter or env.adapter
    return name, None if name else options.arch


def device() -> Device:
    """The device gfxrt runs on (initializing gfxrt with defaults if needed, as a launch would).

    Read it to see what you got: `.name` (the adapter, e.g. "llvmpipe (LLVM ...)" for lavapipe,
    the CPU Vulkan driver), `.features` (the WebGPU features in use, e.g. "subgroup",
    "shader-f16"), `.limits` (the WebGPU limits, by their WebGPU names), `.is_cpu`, `.arch`
    (the gr.<arch> it serves) and `.device` / `.adapter` (the wgpu-py objects, for your own
    wgpu work). To pick another adapter, call `gr.init(adapter="...")` first.
    """
    if _state["device"] is None:
        with LOCK:
            if _state["device"] is None:
                init(**vars(_state["options"]))
    return _state["device"]


def runtime():
    """The `GfxRuntime` (initializing gfxrt with defaults if needed)."""
    rt = _state["runtime"]
    if rt is None:
        with LOCK:
            if _state["runtime"] is None:
                init(**vars(_state["options"]))
            rt = _state["runtime"]
    return rt


_FORKED = ("this process was forked (os.fork(), or multiprocessing's default 'fork' start method on Linux) "
           "from process {parent} after gfxrt had opened a GPU device there, and a device cannot be used "
           "across a fork: the parent's waits forever here (its driver threads stayed behind), and drivers do "
           "not support a new one in a forked child either (lavapipe's hangs). Start worker processes with "
           "the 'spawn' or 'forkserver' method, e.g. multiprocessing.get_context('spawn').Pool(...) or "
           "multiprocessing.set_start_method('spawn'), or fork before the first use of gfxrt")


def _after_fork_in_child() -> None:
    """os.fork() returned in the child: detach the parent's runtime (never waiting on its
    device) and forget every inherited wgpu object, so that neither a gfxrt call nor the
    child's exit can hang on the parent's device."""
    old = _state["runtime"]
    if old is not None:
        old.detach_after_fork(_FORKED.format(parent=os.getppid()))
    _state["runtime"] = _state["device"] = None
    if forget_after_fork() and _state["forked_from"] is None:
        _state["forked_from"] = os.getppid()


os.register_at_fork(after_in_child=_after_fork_in_child)


@locked
def sync() -> None:
    """Wait for all launched work; raise device-side errors. Same as `gr.runtime().synchronize()`."""
    if _state["runtime"] is not None:
        _state["runtime"].synchronize()


@locked
def reset() -> None:
    """Taichi's `ti.reset()`: close the runtime and forget every option. Fields and arrays
    made before can no longer be used (create them again); kernels recompile on their next
    call, and the next gr.init() (or first use) opens a fresh device."""
    old = _state["runtime"]
    _state.update(options=Options(), device=None, runtime=None, random_seed=0, random=RandomState(0))
    if old is not None:
        old.close()


def full_traceback() -> bool:
    """GFXRT_FULL_TRACEBACK, as the last gr.init() read it: compile errors keep gfxrt's frames."""
    dev = _state["device"]
    return dev is not None and dev.env.full_traceback


def user_facing(fn):
    """Decorate a public entry point (outermost) whose compile errors show the user's frames only.
    (Kernel calls do this inline: a wrapper's frame would cost every launch.)"""
    @functools.wraps(fn)
    def entry(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except CompileError as e:
            user_frames(e, full_traceback())
            raise
    return entry
