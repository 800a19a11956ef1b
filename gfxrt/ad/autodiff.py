"""The Tape, forward mode and gradient checking (docs/autodiff.md), published as `gr.ad`
with Taichi's user-defined gradients (gfxrt/ad/__init__.py).

    with gr.Tape(loss):                 # reverse mode over a sequence of launches
        compute(x, y)
        reduce(y, loss)
    x.grad.to_numpy()

    with gr.ad.FwdMode(loss=y, param=x, seed=[1.0, 0.0]):
        compute(x, y)                   # y.dual = J(x) @ seed
    gr.ad.gradcheck(compute, [x, y])    # analytic vs central finite differences

`kernel.grad(*args)` (gfxrt/kernel.py) runs one kernel's reverse mode directly.
"""
from __future__ import annotations

import math

from gfxrt.compiler.errors import GfxrtError
from gfxrt.compiler.npcompat import np

from ..data import torch_io
from ..data.field import resolve
from ..data.ndarray import Ndarray, _duals, register_dual  # noqa: F401  (the tangents FwdMode zeroes)
from ..engine.context import locked, runtime, user_facing
from ..engine.threadstate import AD_BLOCKS, THREAD  # the Tape and FwdMode blocks belong to the thread that opened them
from . import tape_check
from .tape_check import GradcheckError, GradcheckResult, check_validation

FLUSH_EVERY = 32  # gradient launches a Tape records per submission (from FLUSH_EVERY / 2 launches on)


def launch_mode() -> str:
    """How a kernel call runs now: 'fwd' inside a FwdMode block, else 'primal'."""
    return "fwd" if THREAD.fwd is not None else "primal"


def record(kernel, args, kwargs) -> None:
    """Called after each primal launch: the calling thread's Tape, if it records one, keeps it."""
    tape = THREAD.tape
    if tape is not None:
        tape.launches.append((kernel, tuple(args), dict(kwargs)))


def _grad_containers(kernel, args, kwargs) -> tuple[list[Ndarray], bool]:
    """The needs_grad containers a launch touches: its array arguments and the fields its
    specialization uses by name; and whether it takes a torch tensor with requires_grad (its
    .grad is torch's: not cleared by the Tape). Nothing of either: nothing to differentiate."""
    values = (*args, *kwargs.values())
    out = [a for a in values if isinstance(a, Ndarray) and a.needs_grad]
    tensors = torch_io.any_tensor(values) and any(map(torch_io.requires_grad, values))
    return out + kernel.grad_fields(args, kwargs), tensors


def check_grad_call(kernel, values: list) -> None:
    """The errors `kernel.grad(...)` raises before launching anything."""
    params = kernel._signature()
    for p, v in zip(params, values):
        derived = getattr(v, "derived_from", None)
        if derived is not None:
            raise ValueError(f"{kernel.__name__}.grad(): argument {p.name!r} is a {derived[0]} array "
                             f"(x.{derived[0]}); a kernel that reads gradients or tangents cannot be "
                             "differentiated. Copy the values into an ordinary array first")
    if not any(isinstance(v, Ndarray) and v.needs_grad for v in values) and \
            not any(b.kind == "field" for b in kernel._specialize(values, "primal")[0].spec.bindings):
        raise ValueError(f"{kernel.__name__}.grad(): no argument has needs_grad=True, so there is "
                         "nothing to differentiate (allocate the inputs and outputs with needs_grad=True, "
                         "or pass torch tensors with requires_grad=True)")


def grads_aliased(spec, values) -> bool:
    """True when a gradient binding that the grad kernel `spec` reads into locals per item
    (KernelSpec.assumes_distinct) is the same buffer as another gradient binding of this
    launch (one array passed as two arguments, or as an argument and a field)."""
    seen: dict[int, str] = {}
    for b in spec.bindings:
        if b.kind != "grad" or b.grad_of[0] not in ("arg", "field"):
            continue  # the gradient of cross-task locals is scratch of its own
        kind, ref = b.grad_of
        v = values[ref] if kind == "arg" else resolve(ref)
        buf = getattr(getattr(v, "grad", None), "_buffer", None)
        if buf is None:
            continue
        other = seen.setdefault(id(buf), b.name)
        if other != b.name and (b.name in spec.assumes_distinct or other in spec.assumes_distinct):
            return True
    return False


class TapeLossError(GfxrtError, ValueError, RuntimeError):
    """A loss a Tape cannot take (a ValueError, and the RuntimeError Taichi raises)."""


def _check_tensor_loss(x) -> None:
    """Taichi's checks of a torch tensor as a Tape's loss (its messages, too)."""
    if x.numel() != 1:
        raise TapeLossError(f"The loss of `Tape` must be a tensor only contains one element (it has shape "
                            f"{tuple(x.shape)})")
    if not x.requires_grad:
        raise TapeLossError("Gradients of loss are not allocated, please set requires_grad=True for all tensors "
                            "that are required by autodiff.")


def _check_scalar_container(x, what: str) -> None:
    if torch_io.is_tensor(x):
        _check_tensor_loss(x)
        return
    if not isinstance(x, Ndarray):
        raise TypeError(f"{what} must be a gr.ndarray with needs_grad=True (or a torch tensor with "
                        f"requires_grad=True), not {type(x).__name__}")
    if not x.needs_grad:
        raise TapeLossError(f"{what} needs a gradient: allocate it with needs_grad=True (Taichi: \"Gradients of "
                            "loss are not allocated, please set needs_grad=True for all ndarrays that are required "
                            "by autodiff.\")")
    if math.prod(x.shape) != 1:
        raise TapeLossError(f"{what} must be 0-d or have exactly one element, but has shape {x.shape} (Taichi: "
                            "\"The loss of `Tape` must be an ndarray with only one element\")")


def _check_active(what: str) -> None:
    if THREAD.tape is not None:
        raise GfxrtError(f"{what} cannot start inside a gr.Tape block")
    if THREAD.fwd is not None:
        raise GfxrtError(f"{what} cannot start inside a gr.ad.FwdMode block")


class Tape:
    """Record kernel launches and run their gradients in reverse on exit.

    A Tape belongs to the thread that opened it: it records that thread's launches only
    (other threads' launches run as usual, unrecorded, and their gradients are left alone).
    On enter the loss is zeroed; kernels launched inside run and are recorded. On exit
    (unless the block raised) the gradients of every needs_grad array that the recorded
    launches take are zeroed (if clear_gradients), loss.grad is set to 1, and the recorded
    kernels' gradient kernels run in reverse order. `loss` must be 0-d or have one element;
    with loss=None no seed is set (set the output gradients yourself). The loss may be a torch
    tensor with requires_grad, as in Taichi: then loss.grad is set to 1, and torch tensors'
    .grad are not zeroed (they accumulate, as in torch and Taichi).
    """

    def __init__(self, loss=None, clear_gradients: bool = True, validation: bool = False, grad_check=None):
        if loss is not None:
            _check_scalar_container(loss, "the Tape's loss")
        self.loss = loss
        self.clear_gradients = clear_gradients
        self.launches: list[tuple] = []
        check_validation(validation)  # Taichi's options (gfxrt/ad/tape_check.py)
        self.grad_check = list(grad_check) if grad_check else []

    @locked
    def __enter__(self) -> Tape:
        _check_active("gr.Tape")
        if torch_io.is_tensor(self.loss):
            torch_io.fill(self.loss, 0)
        elif self.loss is not None:
            self.loss.fill(0)
        self.launches = []
        THREAD.tape = self
        AD_BLOCKS[0] += 1
        return self

    @user_facing
    @locked
    def __exit__(self, exc_type, exc, tb) -> bool:
        THREAD.tape = None
        AD_BLOCKS[0] -= 1
        if exc_type is None:
            self.grad()
        return False

    @user_facing
    def grad(self) -> None:
        """Seed the loss and run the recorded launches' gradient kernels in reverse.

        A long tape submits what it recorded before it records the backward pass, and then
        every FLUSH_EVERY gradient launches, so that the device runs those while the host
        records the rest (otherwise all of it would wait for the sync's submit)."""
        rt = runtime()
        submit = len(self.launches) >= FLUSH_EVERY // 2 and rt.capture is None
        if submit:
            rt.flush()
        launches = [(k, a, kw, *_grad_containers(k, a, kw)) for k, a, kw in self.launches]
        # nothing to differentiate: skip (a grad_replaced function runs its own backward: keep)
        launches = [(k, a, kw, c) for k, a, kw, c, t in launches if c or t or getattr(k, "replaced", False)]
        loss_tensor = torch_io.is_tensor(self.loss)
        if self.clear_gradients:
            seen: dict[int, Ndarray] = {id(c): c for *_, cs in launches for c in cs}
            if self.loss is not None and not loss_tensor:
                seen[id(self.loss)] = self.loss
            for a in seen.values():
                a.grad.fill(0)
        if loss_tensor:
            torch_io.fill(self.loss, 1, grad=True)
        elif self.loss is not None:
            self.loss.grad.fill(1)
        for k, (kernel, args, kwargs, _) in enumerate(reversed(launches), 1):
            kernel.grad(*args, **kwargs)
            if submit and k % FLUSH_EVERY == 0:
                rt.flush()
        if self.grad_check:
            tape_check.grad_check(self, self.grad_check)


class FwdMode:
    """Forward mode: kernels launched inside compute tangents along with their results.

    On enter every tangent (`.dual`) array is zeroed (if clear_gradients) and param.dual is
    set to `seed` (one value per scalar of param, vector and matrix components included, in
    to_numpy() order; may be omitted when param has one). Inside,
    each kernel computes dual values of the arrays it writes from those of the arrays it
    reads, so after the block `loss.dual` holds the directional derivative d loss / d param
    along the seed (a Jacobian-vector product). Only needs_grad arrays carry tangents. On
    exit param.dual is zeroed again (Taichi's clear_seed); the other tangents stay.
    """

    def __init__(self, loss, param, seed=None, clear_gradients: bool = True):
        for x, what in ((loss, "FwdMode's loss"), (param, "FwdMode's param")):
            if not isinstance(x, Ndarray):
                raise TypeError(f"{what} must be a gr.ndarray with needs_grad=True, not {type(x).__name__}")
            if not x.needs_grad:
                raise ValueError(f"{what} needs a tangent: allocate it with needs_grad=True")
        size = math.prod(param._np_shape)  # a vector / matrix element counts its components
        what = f"shape {param.shape}" + (f" of {param.element_type} elements" if param.element_shape else "")
        if seed is None:
            if size != 1:
                raise ValueError(f"FwdMode needs a seed of {size} values for a param of {what}")
            seed = [1.0]
        seed = np.asarray(seed, dtype=np.float64)
        if seed.size != size:
            raise ValueError(f"FwdMode seed has {seed.size} values; a param of {what} has {size}")
        self.loss, self.param, self.clear_gradients = loss, param, clear_gradients
        self.seed = seed.reshape(param._np_shape)

    @locked
    def __enter__(self) -> FwdMode:
        _check_active("gr.ad.FwdMode")
        if self.clear_gradients:
            for d in list(_duals):
                d.fill(0)
        self.param.dual.from_numpy(self.seed)
        self.loss.dual  # noqa: B018 (allocate it before the kernels bind it)
        THREAD.fwd = self
        AD_BLOCKS[0] += 1
        return self

    @user_facing
    @locked
    def __exit__(self, exc_type, exc, tb) -> bool:
        THREAD.fwd = None
        AD_BLOCKS[0] -= 1
        self.param.dual.fill(0)  # Taichi's clear_seed: the seed does not outlive the block
        return False


# -- gradient checking ----------------------------------------------------------------------------

@user_facing
def gradcheck(kernel, args, *, eps: float = 1e-2, atol: float = 1e-3, rtol: float = 1e-2,
              max_points: int = 16, seed: int = 0, raise_on_failure: bool = True) -> GradcheckResult:
    """Compare `kernel.grad` with central finite differences of the kernel.

    The kernel is treated as a function from the initial contents of its needs_grad
    arguments to L = sum(w * outputs), w random weights on the arrays it writes. The analytic
    gradient of L comes from one `kernel.grad` launch; the numeric one perturbs up to
    `max_points` random elements of each needs_grad array by +-eps*max(1, |x|) and reruns
    the kernel. An element passes when |analytic - numeric| <= atol + rtol * |numeric|.
    The arrays are restored afterwards; their `.grad` holds the analytic gradient of L.
    Raises GradcheckError listing the worst elements (or returns the failing result when
    raise_on_failure=False).
    """
    args = list(args)
    names = [p.name for p in kernel._signature()]
    arrays = {i: a for i, a in enumerate(args) if isinstance(a, Ndarray) and a.needs_grad}
    if not arrays:
        raise ValueError("gradcheck needs at least one gr.ndarray argument with needs_grad=True")
    spec = kernel.specialize(args).spec
    written = {b.source for b in spec.bindings if b.kind == "arg" and b.written}
    outputs = [i for i in arrays if i in written]
    if not outputs:
        raise ValueError(f"{kernel.__name__} writes none of its needs_grad arguments: nothing to check")
    rng = np.random.default_rng(seed)
    start = {i: a.to_numpy() for i, a in arrays.items()}
    weights = {i: rng.uniform(0.5, 1.5, start[i].shape) * rng.choice([-1.0, 1.0], start[i].shape)
               for i in outputs}

    def reset(i=None, values=None):
        for j, a in arrays.items():
            a.from_numpy(values if j == i else start[j])

    def loss_at(i, values) -> float:
        reset(i, values)
        kernel(*args)
        return float(sum((weights[i] * arrays[i].to_numpy().astype(np.float64)).sum() for i in outputs))

    reset()
    kernel(*args)
    for i, a in arrays.items():
        a.grad.from_numpy(weights[i] if i in weights else np.zeros_like(start[i]))
    kernel.grad(*args)
    analytic = {i: a.grad.to_numpy().astype(np.float64) for i, a in arrays.items()}

    rows = []
    for i in arrays:
        rows += tape_check.compare(names[i], start[i], analytic[i], lambda v, i=i: loss_at(i, v), rng, max_points,
                                   eps, atol, rtol)
    reset()
    for i, a in arrays.items():
        a.grad.from_numpy(analytic[i])
    result = GradcheckResult.of(rows)
    if not result.ok and raise_on_failure:
        raise GradcheckError(str(result))
    return result


def scratch(rt, nbytes: int):
    """A zeroed storage buffer used by one launch only (released through the retirement FIFO)."""
    size = max(16, (nbytes + 15) // 16 * 16)
    buf = rt.alloc_zeroed(size, what="autodiff scratch")
    if rt.capture is not None:  # a graph replays the launch: zero the scratch before each replay of it
        rt.clear(buf, 0, size)
    rt.free_later(buf)
    return buf


def access_shadow(rt, value):
    """A zeroed u32 word per element of `value` for the debug access-rule check (one launch)."""
    n = value.nbytes // value._scalar.size if isinstance(value, Ndarray) else np.asarray(value).size
    return scratch(rt, 4 * n)


__all__ = ["Tape", "FwdMode", "gradcheck", "GradcheckResult", "GradcheckError", "launch_mode"]

