"""What the compiler may assume about the device it generates code for."""
from __future__ import annotations

from dataclasses import dataclass, field

AD_LOOPS = ("auto", "adstack", "jacobian")
CHUNK_ALIGN = 256  # bytes: binding windows of a large array start at multiples of this (WebGPU's default
                   # min-storage-buffer-offset-alignment, the largest a device may ask)


@dataclass(frozen=True)
class Target:
    """Device capabilities that change the generated code (part of every cache key).

    Autodiff knobs (docs/autodiff.md): `adstack_private` is the number of first-level adstack
    slots per thread, kept in workgroup memory ([slot * block size + thread]) when
    `adstack_shared` and they fit in `max_workgroup_storage` bytes beside the kernel's own
    shared arrays, else in thread-private memory; `ad_loops` chooses how reverse mode
    handles a loop: "auto" (preaccumulate its Jacobian where the cost rule says it is
    cheaper than the adstack), "adstack" (never preaccumulate) or "jacobian" (preaccumulate
    every loop that qualifies). `ad_gather`: a grad task's neighbour scatters become gathers
    where that is exact (autodiff/gather.py).

    `loop_cap`: the adapter stops loops after this many loop passes per invocation, all loops
    of the entry point together (llvmpipe/lavapipe: 65535, mesa gallivm's loop limiter); 0 =
    no cap. On a capped target the WGSL emitter copies innermost loop bodies (up to
    `loop_copies` times) to spend fewer passes and reports a launch that reached the cap
    (codegen/wgsl_loops.py `loop_copies`).

    `max_binding`: the bytes one storage binding holds (the adapter's
    max-storage-buffer-binding-size, lowered by GFXRT_MAX_BINDING). An array larger than that
    is bound as k windows of `chunk_elems` elements each, one binding per window, and every
    access picks its window (docs/runtime.md "Arrays larger than one binding")."""

    features: frozenset[str] = field(default_factory=frozenset)
    max_immediate_size: int = 0
    workgroup_size: int = 256  # threads per block of parallel tasks (H100 saxpy: 256 > 64 with interleave)
    debug: bool = False
    adstack_size: int | None = None  # gr.init(adstack_size=N): fixed adstack slots per thread
    adstack_private: int = 32        # first-level adstack slots per thread (workgroup or private memory)
    interleave: bool = True          # two parallel iterations per grid-stride step (codegen/interleave.py)
    adstack_shared: bool = True      # first-level adstack slots in workgroup memory where they fit
    max_workgroup_storage: int = 16384  # bytes of workgroup memory per block (WebGPU's default limit)
    ad_loops: str = "auto"           # loop Jacobian preaccumulation: "auto" | "adstack" | "jacobian"
    ad_gather: bool = True           # grad tasks: neighbour scatters as gathers (autodiff/gather.py) ...
    ad_gather_items: int = 1 << 19   # ... from this many items (fewer: atomics, chosen at launch; 0: always)
    default_fp: str = "f32"          # dtype of Python floats in kernels (gr.init(default_fp=gr.f64))
    default_ip: str = "i32"          # dtype of Python ints in kernels (gr.init(default_ip=gr.i64))
    loop_cap: int = 0                # loop passes per invocation the adapter allows (0: no cap)
    loop_copies: int = 32            # where capped: most copies of a run-time loop's body per pass
    fast_math: bool = False          # gr.init(fast_math=True): x / c as x * (1 / c), as Taichi (passes/simplify.py)
    max_binding: int = 1 << 27       # bytes one storage binding may hold: larger arrays are bound in windows
    # WGSL `enable` directives the shader compiler requires for the extensions a kernel uses: a
    # browser's (Tint) needs `enable subgroups;`, which wgpu-native's naga 29 rejects
    wgsl_enables: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self):
        if self.ad_loops not in AD_LOOPS:
            raise ValueError(f"ad_loops must be one of {AD_LOOPS}, not {self.ad_loops!r}")

    @property
    def immediates(self) -> bool:
        return "immediates" in self.features and self.max_immediate_size > 0

    def has(self, feature: str) -> bool:
        return feature in self.features

    def key(self) -> tuple:
        return (tuple(sorted(self.features)), self.max_immediate_size, self.workgroup_size, self.debug,
                self.adstack_size, self.adstack_private, self.interleave, self.adstack_shared,
                self.max_workgroup_storage, self.ad_loops, self.ad_gather, self.ad_gather_items, self.default_fp,
                self.default_ip, self.loop_cap, self.loop_copies, self.fast_math, self.max_binding,
                tuple(sorted(self.wgsl_enables)))

    def chunk_elems(self, size: int) -> int:
        """Elements of `size` bytes in one binding window of an array too large for one binding:
        the most that fit `max_binding`, a multiple of CHUNK_ALIGN elements, so that a window
        of this array and of any array indexed like it (a u32 access shadow, a packed 1- or
        2-byte array's u32 words) starts at a multiple of CHUNK_ALIGN bytes (WebGPU's storage
        offset alignment)."""
        return max(1, self.max_binding // (CHUNK_ALIGN * size)) * CHUNK_ALIGN

    def chunks(self, count: int, size: int) -> int:
        """Binding windows of an array of `count` elements of `size` bytes: 1 when it fits one
        binding, else k windows of `chunk_elems(size)` elements (the last may hold fewer)."""
        if count * size <= self.max_binding:
            return 1
        return -(-count // self.chunk_elems(size))
