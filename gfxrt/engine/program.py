"""Device objects for one compiled kernel: shader module, layouts and one pipeline per task.

WebGPU rejects a dispatch that binds one buffer both read-only and writable. When a launch
aliases arguments that way (`saxpy(2.0, x, x)`), the launcher uses the `aliasing` variant,
whose bindings are all read_write.
"""
from __future__ import annotations

import collections
import os
import re
import weakref

from gfxrt.compiler.errors import CompileError, InternalCompilerError
from gfxrt.compiler.spec import KernelSpec

from .backend import ShaderStage
from .backend import calls as ffi


def params_layout(device):
    """The bind group layout of the params' uniform-ring slot (one per device): binding 0, a
    uniform buffer with a dynamic offset."""
    bgl = getattr(device, "_gfxrt_params_layout", None)
    if bgl is None:
        bgl = device._gfxrt_params_layout = device.create_bind_group_layout(entries=[
            {"binding": 0, "visibility": ShaderStage.COMPUTE,
             "buffer": {"type": "uniform", "has_dynamic_offset": True}}])
    return bgl


_pool = None  # (threads, ThreadPoolExecutor): made on the first kernel of several tasks


def _forget_pool() -> None:
    global _pool
    _pool = None  # a forked child has none of the parent's threads: work sent to them would wait forever


os.register_at_fork(after_in_child=_forget_pool)


def _create_pipelines(device, layout, module, tasks, threads: int) -> list:
    """One compute pipeline per task, created by up to `threads` threads at once."""
    def make(t):
        return device.create_compute_pipeline(layout=layout, compute={"module": module, "entry_point": t.entry},
                                              label=t.entry)
    threads = min(threads, len(tasks))
    if threads < 2:
        return [make(t) for t in tasks]
    global _pool
    if _pool is None or _pool[0] < threads:
        from concurrent.futures import ThreadPoolExecutor
        if _pool is not None:
            _pool[1].shutdown(wait=False)
        _pool = (threads, ThreadPoolExecutor(threads, thread_name_prefix="gfxrt-pipelines"))
    return list(_pool[1].map(make, tasks))


# what each kind of binding is, in words (compiler/spec.py BindingSpec.kind)
_BINDING_WORDS = {"arg": "array argument(s)", "field": "field(s) and captured array(s)",
                  "grad": "gradient array(s)", "dual": "tangent array(s)"}


def check_bindings(device, spec: KernelSpec) -> None:
    """A kernel needs one storage buffer per array it touches, plus gfxrt's own (status words,
    print buffer, adstack heap, kernel-scope variables...); WebGPU refuses a pipeline with more
    than the device's max-storage-buffers-per-shader-stage (gfxrt asks for the adapter's
    maximum: lavapipe 32, WebGPU's default 8). Say so, in the user's terms, instead of
    letting the driver's rejection read as a compiler bug."""
    limit = int(device.limits.get("max-storage-buffers-per-shader-stage", 8) or 8)
    buffers = [b for b in spec.bindings if b.texture is None]  # (textures and samplers have limits of their own)
    if len(buffers) <= limit:
        return
    counts: dict[str, int] = {}
    for b in buffers:
        kind = _BINDING_WORDS.get(b.kind, "buffer(s) of gfxrt's own")
        counts[kind] = counts.get(kind, 0) + 1
    parts = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    windows: dict[str, int] = {}  # arrays larger than one binding take one binding per window
    for b in spec.bindings:
        if b.chunk is not None:
            windows[b.name] = windows.get(b.name, 0) + 1
    name = getattr(device, "adapter_info", {}).get("device", "") or "this device"
    raise CompileError(f"this kernel needs {len(buffers)} storage buffers ({parts}), but {name} "
                       f"binds at most {limit} per kernel (WebGPU limit max-storage-buffers-per-shader-stage); pass "
                       "fewer arrays: stack arrays of one dtype into one array with an extra dimension, or split "
                       "the work into several kernels"
                       + ("; arrays larger than one storage binding take one per window of it: "
                          + ", ".join(f"{a} ({n} windows)" for a, n in windows.items()) if windows else ""),
                       kernel=spec.name)


# Programs kept per device beyond those live kernels use, most recently used first: a driver's
# pipeline is native memory (lavapipe: ~83 KB each, never returned to the system before the next
# submit), so the programs of dropped kernels are released once this many newer ones came
PROGRAM_CACHE_LIMIT = 64
_COMMENT = re.compile(r"//[^\n]*")  # (WGSL has no string literals: `//` always starts a comment)


class ProgramCache:
    """A device's Programs by shader and layout: every Program a live kernel holds (weakly:
    it goes when the last kernel using it goes) and the PROGRAM_CACHE_LIMIT most recently
    used ones (strongly: a kernel created again, a closure kernel over the same value, finds
    its pipelines). `len()` counts the latter."""

    def __init__(self):
        self.live: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
        self.recent: collections.OrderedDict = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self.recent)

    def get(self, key):
        program = self.recent.get(key)
        if program is not None:
            self.recent.move_to_end(key)
            return program
        program = self.live.get(key)
        if program is not None:
            self.put(key, program)
        return program

    def put(self, key, program) -> None:
        self.live[key] = program
        self.recent[key] = program
        self.recent.move_to_end(key)
        while len(self.recent) > max(PROGRAM_CACHE_LIMIT, 0):
            self.recent.popitem(last=False)


def program_for(device, spec: KernelSpec, env) -> Program:
    """The Program of `spec` on `device`, shared by every spec with the same shader (comments
    aside: they name the source file and lines) and the same bindings and params layout: a
    fresh kernel object whose source was compiled before in this process, or template values
    that generate the same code, reuse the pipelines instead of asking the driver again (its
    pipeline creation is ~1 ms of a warm compile on an H100, ~12 ms on lavapipe). `env`: the
    device's knobs: naga's runtime checks (GFXRT_SHADER_CHECKS: "bounds" drops the forced loop
    bounding, which doubled loop-heavy kernels on an H100 and bounds nothing a user can observe)
    and the threads that create the pipelines (GFXRT_PIPELINE_THREADS; a driver takes 8-20 ms
    per task, with Python's lock released)."""
    cache = getattr(device, "_gfxrt_programs", None)
    if cache is None:
        cache = device._gfxrt_programs = ProgramCache()
    key = (_COMMENT.sub("", spec.wgsl), tuple((b.binding, b.read_only, b.texture) for b in spec.bindings),
           spec.params_uniform, spec.params_size, env.shader_checks)
    program = cache.get(key)
    if program is None:
        program = Program(device, spec, env.shader_checks, env.pipeline_threads)
        cache.put(key, program)
    return program


def _texture_layout(how: tuple) -> dict:
    """The bind group layout entry of a texture or sampler binding (BindingSpec.texture)."""
    if how[0] == "sampler":
        return {"sampler": {"type": "filtering"}}
    dim = f"{how[1]}d"
    if how[0] == "storage":
        return {"storage_texture": {"access": how[3].replace("_", "-") + ("-only" if how[3] != "read_write" else ""),
                                    "format": how[2], "view_dimension": dim}}
    sample = {"f32": "float" if how[3] else "unfilterable-float", "i32": "sint", "u32": "uint"}[how[2]]
    return {"texture": {"sample_type": sample, "view_dimension": dim, "multisampled": False}}


class Program:
    """The pipelines of a `KernelSpec` on one device. Creating it validates the WGSL; a
    rejection is a compiler bug and raises `InternalCompilerError` with the code attached.

    `pipeline_handles` are the raw wgpu-native handles the launch hot path uses."""

    def __init__(self, device, spec: KernelSpec, checks: str = "bounds", threads: int = 1,
                 all_writable: bool = False):
        self.device = device
        self.spec = spec
        self.all_writable = all_writable
        stage = ShaderStage.COMPUTE
        wgsl = spec.wgsl.replace("var<storage, read>", "var<storage, read_write>") if all_writable else spec.wgsl
        entries = [{"binding": b.binding, "visibility": stage, **(_texture_layout(b.texture) if b.texture else {
                    "buffer": {"type": "read-only-storage" if b.read_only and not all_writable else "storage"}})}
                   for b in spec.bindings]
        self.checks, self.threads = checks, threads
        check_bindings(device, spec)  # (too many arrays: the user's CompileError, not a compiler bug)
        try:
            module = ffi.create_shader_module(device, wgsl, spec.name, checks)
            self.bind_group_layout = device.create_bind_group_layout(entries=entries)
            if spec.params_uniform:  # no immediates on this device: params in the runtime's uniform ring
                self.layout = device.create_pipeline_layout(
                    bind_group_layouts=[self.bind_group_layout, params_layout(device)])
            else:
                self.layout = device.create_pipeline_layout(bind_group_layouts=[self.bind_group_layout],
                                                            immediate_size=spec.params_size)
            self.pipelines = _create_pipelines(device, self.layout, module, spec.tasks, threads)
        except Exception as e:  # naga/driver rejected our WGSL: a compiler bug, never an abort
            if ffi.is_device_lost(e):  # (unless the device is gone: nothing to do with the code)
                raise ffi.translate(e, f"compiling kernel {spec.name!r}") from None
            raise InternalCompilerError(f"{type(e).__name__}: {e}", wgsl) from None
        self.pipeline_handles = tuple(ffi.handle(p) for p in self.pipelines)
        self._aliasing: Program | None = None

    def aliasing(self) -> Program:
        """The variant whose bindings are all read_write (built on first use)."""
        if self.all_writable or not any(b.read_only for b in self.spec.bindings):
            return self
        if self._aliasing is None:
            self._aliasing = Program(self.device, self.spec, self.checks, self.threads, all_writable=True)
        return self._aliasing
