"""Plain data passed between the compiler and the runtime.

`ArgSpec` describes a kernel argument at specialization time (what the compiler needs);
`KernelSpec` describes a compiled kernel (what the runtime needs to bind and dispatch).
Neither holds device objects, so the compiler is testable without a GPU.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .ir import Node
from .types import DType, ElementType


@dataclass(frozen=True)
class ArgSpec:
    """One kernel argument as the compiler sees it.

    kind: 'scalar' (dtype), 'ndarray' (elem, ndim, needs_grad, boundary), 'template' (value) or
    'texture' (ndim; value (Format, storage, lod), compiler/textures.py).
    boundary: Taichi's ndarray boundary mode, "unsafe" or "clamp" (every index clamped into its extent).
    """

    name: str
    kind: str
    dtype: DType | None = None
    elem: ElementType | None = None
    ndim: int | None = None
    needs_grad: bool = False
    value: Any = None
    boundary: str = "unsafe"
    chunks: int = 1  # 'ndarray': binding windows of an array larger than one binding (Target.chunks)

    def key(self) -> tuple:
        """The part of the argument that selects a specialization."""
        if self.kind == "template":
            v = self.value  # 2, 2.0 and True are equal in Python but compile differently
            return ("template", type(v), v if _hashable(v) else id(v))
        if self.kind == "texture":
            return ("texture", self.ndim, self.value)
        return (self.kind, self.dtype, self.elem, self.ndim, self.needs_grad) + \
            (("clamp",) if self.boundary == "clamp" else ()) + (("chunks", self.chunks) if self.chunks != 1 else ())


def _hashable(v) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


@dataclass(frozen=True)
class FieldInfo:
    """What a global container (a `gr.field`) tells the compiler about itself.

    Runtime objects expose it as `obj.__gfxrt_field__`; `key` identifies the object so
    the runtime can bind it.
    """

    key: int
    elem: ElementType
    shape: tuple[int, ...]
    needs_grad: bool = False
    offset: tuple[int, ...] = ()  # Taichi's `offset=`: the index of the first element, per axis (() is zeros)
    stored: int | None = None  # scalars held where storage is not the shape (a pool's chunks: within one binding)


@dataclass(frozen=True)
class CapturedArray:
    """The source of a 'field' binding for a numpy array a kernel captured (over CONST_ARRAY_MAX
    elements): its data at compile time. The runtime uploads it; the compiler uploads nothing."""

    key: tuple  # (dtype, shape, digest of the bytes): equal contents share one device copy
    data: Any = field(compare=False)  # the (narrowed) numpy array


@dataclass(frozen=True)
class BindingSpec:
    """One storage-buffer binding: which buffer the runtime binds at `binding`.

    kind: 'arg' (source = argument index), 'field' (source = FieldInfo.key), 'grad'
    (gradient of the arg/field described by `grad_of` = ('arg', i) or ('field', key)),
    or internal: 'temps', 'result', 'status'. An array larger than one storage binding has one
    BindingSpec per window (`chunk`), all with its name: the runtime binds that byte range.
    Not buffers: 'texture' (source = argument index) and 'sampler', with `texture` saying how
    they bind (compiler/codegen/wgsl_textures.py).
    """

    binding: int
    name: str
    dtype: DType
    kind: str
    source: Any
    read_only: bool
    atomic: bool = False
    written: bool = False
    grad_of: tuple | None = None
    chunk: tuple[int, int] | None = None  # (j, C): window j of a large array, elements j*C .. (j+1)*C - 1
    texture: tuple | None = None


@dataclass(frozen=True)
class ParamSpec:
    """A 4-byte scalar in the immediates block at byte `offset`.

    source: ('arg', i) scalar argument i, ('shape', i, d) extent d of array argument i.
    """

    name: str
    dtype: DType
    source: tuple
    offset: int


@dataclass(frozen=True)
class TaskSpec:
    """One compute entry point and how to size its dispatch.

    `extent` is the number of logical iterations as an IR expression over params and
    constants (None for serial tasks); `extent_fn(params)` evaluates it on the host, or is
    None when the extent depends on device memory (the task then runs `max_groups` blocks).
    Launch min(ceil(extent / workgroup_size), max_groups) blocks: the task's grid-stride
    loop covers the rest. Tasks with reductions cap it lower (fewer block-level atomics).

    `one_pass` tasks (convergent, extent known on the host) have no grid-stride loop: launch
    exactly ceil(extent / workgroup_size) blocks, as a 2-D grid of (65535, k) blocks beyond
    65535 (see `grid`); the shader numbers blocks wid.x + wid.y * nwg.x and skips those past
    the extent.
    `capped`: an adstack task, whose grid-stride loop may run on fewer threads than the
    extent (the runtime caps its workgroups, gfxrt/ad/adstack.py); `stack_depth`: its adstack
    heap slots per thread when known at compile time (None: sized by a counting pre-pass);
    `stack_level1`: the first-level slots of its stacks (the pre-pass counts them too).
    `items`: (lo, hi), either None for no bound: dispatch the task only when lo <= extent <
    hi (a kernel's variants of one task for different sizes; extent_fn is then set).
    """

    entry: str
    kind: str
    workgroup_size: int
    extent: Node | None = None
    extent_fn: Any = None
    max_groups: int = 65535
    one_pass: bool = False
    capped: bool = False
    stack_depth: int | None = None
    stack_level1: int = 0
    items: tuple | None = None


def grid(groups: int, cap: int = 65535) -> tuple[int, int]:
    """The (x, y) workgroup grid for `groups` blocks of a one-pass task."""
    return (groups, 1) if groups <= cap else (cap, -(-groups // cap))


@dataclass(frozen=True)
class KernelSpec:
    """Everything the runtime needs to launch a compiled kernel."""

    name: str
    wgsl: str
    bindings: tuple[BindingSpec, ...]
    params: tuple[ParamSpec, ...]
    params_size: int
    tasks: tuple[TaskSpec, ...]
    returns: tuple[DType, ...] = ()
    features: frozenset[str] = field(default_factory=frozenset)
    internal: dict = field(default_factory=dict)   # internal binding kind -> size in bytes
    asserts: tuple[tuple[int, str], ...] = ()       # status site k -> (error code, message)
    params_uniform: bool = False  # params in a uniform-ring slot (bind group 1, dynamic offset), not immediates
    # the 'result' buffer holds `returns` (one u32 word each, bitcast); they regroup into
    # one Python value per shape (() scalar, (n,) vector, (n, m) matrix), a tuple if return_tuple
    return_shapes: tuple[tuple[int, ...], ...] = ()
    return_tuple: bool = False
    # grad kernels: gradient bindings read into locals per item (compiler/autodiff/hoist.py);
    # a launch that binds one of them to the same buffer as another gradient binding must
    # use the kernel's 'grad_alias' variant instead
    assumes_distinct: tuple[str, ...] = ()


# -- device status protocol ----------------------------------------------------------------
# A kernel with device-side checks (debug bounds checks, adstack overflow, ...) gets a
# 'status' binding: array<atomic<u32>> of STATUS_WORDS words, owned by that specialization.
#   word 0         bitwise OR of the error codes raised since the last sync
#   word 1 + k     number of failures at assert site k (KernelSpec.asserts[k])
#   word 1 + n + 2k, 2 + n + 2k (n sites): a bounds check's first failing index and the extent
#                  it was checked against (i32 bits; STATUS_VALUE_WORDS per site, 0 for other checks)
# The runtime reads the status buffers of the kernels launched since the last sync inside
# `synchronize()`, zeroes them, and raises the exception for the first failing site.
STATUS_OUT_OF_BOUNDS = 1
STATUS_ADSTACK_OVERFLOW = 2
STATUS_ACCESS_RULE = 4
STATUS_USER_ASSERT = 8   # a failed `assert` in a kernel (debug mode)
STATUS_LOOP_CAP = 16    # the adapter's loop cap (Target.loop_cap) stopped a loop early
STATUS_RANGE_STEP = 32  # a range() loop ran with a run-time step of 0 (skipped; Python raises ValueError)
STATUS_HEADER_WORDS = 1
STATUS_VALUE_WORDS = 2
OOB_PHRASE = "index out of bounds for axis"  # a bounds check's message; the host puts in the index and extent


def status_words(sites: int) -> int:
    """The size in words of a status buffer with this many assert sites."""
    return STATUS_HEADER_WORDS + (1 + STATUS_VALUE_WORDS) * sites
LOOP_CAP_MESSAGE = ("a loop was stopped early by this adapter's loop limit (llvmpipe/lavapipe stops all loops "
                    "of a thread once they have made {cap} passes in one launch, all loops together; gfxrt runs "
                    "up to 32 iterations of a small innermost loop per pass, 4 where its bounds are read from "
                    "memory; GFXRT_LOOP_COPIES); the launch's results are wrong: split "
                    "the loop over several launches, or run on a GPU")
