"""`@gr.kernel`: argument checking, specialization, compilation and launch."""
from __future__ import annotations

import inspect
import struct
import weakref
from types import MappingProxyType

from gfxrt.compiler import hostmatrix, npcompat
from gfxrt.compiler.cache import default_dir as default_cache_dir
from gfxrt.compiler.errors import CompileError
from gfxrt.compiler.frontend.lower import return_annotation
from gfxrt.compiler.pipeline import Specialization
from gfxrt.compiler.spec import ArgSpec, CapturedArray, KernelSpec
from gfxrt.compiler.structs import StructType, from_leaves
from gfxrt.compiler.textures import RWTextureType, TextureType
from gfxrt.compiler.types import (
    DType,
    ElementPattern,
    MatrixType,
    NdarrayType,
    SparseMatrixBuilderType,
    Template,
    VectorType,
    element_matches,
    element_shape,
    scalar_of,
)
from gfxrt.compiler.types import from_numpy as dtype_from_numpy

from .ad import adstack, autodiff
from .data import torch_args, torch_io
from .data.field import Field, resolve
from .data.ndarray import Ndarray
from .data.oop import bind, member_salt, template_key
from .data.texture import Texture, bind_sampler, bind_texture
from .engine import context, printing
from .engine.context import LOCK as _LOCK
from .engine.launch import MISS, Launcher
from .engine.program import Program, program_for
from .engine.threadstate import AD_BLOCKS, THREAD  # this thread's Tape / FwdMode block
from .engine.tracebacks import user_frames

_acquire, _release = _LOCK.acquire, _LOCK.release


class _Param:
    """One parameter of the Python signature and what its annotation asks for."""

    @classmethod
    def part(cls, name: str, ann) -> _Param:
        """A component of a vector or struct argument, checked like a parameter of its own."""
        out = cls.__new__(cls)
        out.name, out.ann = name, ann
        return out

    def __init__(self, p: inspect.Parameter, annotation, kernel_name: str):
        self.name = p.name
        self.default = p.default
        if isinstance(annotation, DType):
            self.kind = "scalar"
        elif isinstance(annotation, NdarrayType):
            self.kind = "ndarray"
        elif isinstance(annotation, Template):
            self.kind = "template"
        elif isinstance(annotation, (VectorType, MatrixType)):
            self.kind = "vector"  # passed as scalars, one immediate per component
        elif isinstance(annotation, StructType):
            self.kind = "struct"  # passed as scalars too, in declaration order
        elif isinstance(annotation, (TextureType, RWTextureType)):
            self.kind = "texture"  # a gr.Texture, bound as a texture (compiler/textures.py)
        elif isinstance(annotation, ElementPattern):  # Taichi refuses it here too
            raise CompileError(f"argument {p.name!r} of kernel {kernel_name!r}: {annotation!r} without sizes only "
                               f"describes array elements (gr.types.ndarray(dtype={annotation!r})); a vector "
                               f"argument needs its sizes and dtype: gr.types.{annotation.kind}(3, gr.f32)")
        else:
            raise CompileError(f"argument {p.name!r} of kernel {kernel_name!r} needs a type annotation: "
                               f"gr.f32, gr.i32, gr.types.ndarray(dtype=..., ndim=...) or gr.template() "
                               f"(got {annotation!r})")
        self.ann = annotation


class Compiled:
    """A specialization: the spec, its pipelines, the packing of its scalars and the
    internal buffers it owns (temps, result, status: see KernelSpec.internal)."""

    def __init__(self, spec: KernelSpec, program: Program):
        self.spec = spec
        self.program = program
        self.pack = struct.Struct("<" + "".join(p.dtype.pack for p in spec.params))
        self._internals: dict[str, object] = {}
        self.launcher: Launcher | None = None
        self.primal: Compiled | None = None  # for grad / forward-mode specializations
        self.capped = any(t.capped for t in spec.tasks)  # has adstack tasks (gfxrt/ad/adstack.py)
        self.pools = None  # the chunk pools its launches may take chunks from (gfxrt/data/pool.py)

    def chunk_pools(self, rt) -> tuple:
        """The chunk pools whose counter this specialization binds: its launches may take chunks."""
        if self.pools is None:
            self.pools = tuple(p for b in self.spec.bindings if b.kind == "field" and not isinstance(
                b.source, CapturedArray) for p in (getattr(resolve(b.source, rt), "_counts", None),) if p is not None)
        return self.pools

    def internal_buffer(self, rt, kind: str):
        """This specialization's buffer of an internal kind, allocated (zeroed) on first use."""
        buf = self._internals.get(kind)
        if buf is None:
            buf = rt.alloc_zeroed(max(16, self.spec.internal[kind]), what=f"{kind} of kernel {self.spec.name!r}")
            self._internals[kind] = buf
        return buf


def _bind_arg(rt, compiled, b, values):
    v = values[b.source]
    return v._buffer if isinstance(v, Ndarray) else None  # numpy arguments are uploaded by the caller


def _bind_grad(rt, compiled, b, values):
    """The .grad (or .dual) of the primal named by b.grad_of: an argument, a field, or the
    primal launch's cross-task locals (scratch for this launch only)."""
    if b.grad_of[0] == "temps":
        return autodiff.scratch(rt, compiled.primal.spec.internal["temps"])
    v = _primal(rt, b, values)
    if not isinstance(v, Ndarray) or not v.needs_grad:
        raise ValueError(f"{b.name!r} needs a gradient: allocate it with needs_grad=True")
    return (v.grad if b.kind == "grad" else v.dual)._buffer


def _primal(rt, b, values):
    """The array whose gradient, tangent or access shadow b is: b.grad_of is ('arg', index) or
    ('field', key)."""
    kind, ref = b.grad_of
    if kind == "field":
        return resolve(ref, rt)
    if kind == "arg":
        return values[ref]
    raise NotImplementedError(f"the {b.kind} of a {kind}")


def _bind_internal(rt, compiled, b, values):
    if b.kind == "temps":  # grad / forward-mode kernels re-read the primal launch's cross-task locals
        compiled = compiled.primal or compiled
    return compiled.internal_buffer(rt, b.kind)


def _bind_field(rt, compiled, b, values):
    if isinstance(b.source, CapturedArray):  # a captured numpy array: its device copy, held by the specialization
        f = compiled._internals.get(b.source.key)
        if f is None:
            f = compiled._internals[b.source.key] = _captured_copy(rt, b.source)
        return f._buffer
    return resolve(b.source, rt)._buffer


_CAPTURED: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # (id(rt), CapturedArray.key) -> Field


def _captured_copy(rt, captured: CapturedArray) -> Field:
    """The device copy of a numpy array kernels captured (Taichi folds them as constants), uploaded
    by the first launch that binds it and shared by the specializations that hold it."""
    f = _CAPTURED.get((id(rt), captured.key))
    if f is None or f._rt is not rt:
        f = _CAPTURED[id(rt), captured.key] = Field(captured.data.dtype.type, captured.data.shape)
        f.from_numpy(captured.data)
        f.const_data = captured.data  # not a differentiable field (gfxrt/taichi/snode.py gives it no gradient)
    return f


# how each kind of binding finds its buffer: a fixed table, handed to each Launcher (gfxrt/engine/launch.py)
BINDING_RESOLVERS = MappingProxyType({
    "arg": _bind_arg, "grad": _bind_grad, "dual": _bind_grad, "temps": _bind_internal, "result": _bind_internal,
    "status": _bind_internal, "field": _bind_field,
    "adstack_heap": lambda rt, c, b, v: rt.adstack.heap, "adstack_meta": lambda rt, c, b, v: rt.adstack.meta,
    "access_shadow": lambda rt, c, b, v: autodiff.access_shadow(rt, _primal(rt, b, v)),
    "print": lambda rt, c, b, v: printing.buffer(rt, b), "texture": bind_texture, "sampler": bind_sampler})
_KERNELS: weakref.WeakSet = weakref.WeakSet()


def invalidate_all() -> None:
    """Forget every kernel's specializations (gr.init() changed the compile target)."""
    for k in list(_KERNELS):
        k._params = None  # `x: float` parameters follow gr.init(default_fp=...)
        k._qkey = None
        k._cache.clear()
        k._fast.clear()
        k._fast_grad.clear()
        k._grad_fields.clear()


class Kernel:
    """A GPU kernel made by `@gr.kernel` (see help(gr.kernel)): compiled on its first call per
    specialization, then launched.

    `k(*args)` launches it (asynchronously, unless it returns a value); `k.grad(*args)` runs its
    gradient kernel (reverse mode); forward mode is `with gr.ad.FwdMode(...)` around ordinary
    calls; `k.specialize(args)` compiles without launching and returns the specialization
    (`.spec` holds its WGSL and bindings). `k.__wrapped__` is the Python function.
    """

    def __init__(self, func):
        self.func = func
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self.__wrapped__ = func
        self._sig = inspect.signature(func)
        self._params: list[_Param] | None = None
        _KERNELS.add(self)
        self._cache: dict[tuple, Compiled] = {}   # (mode, specialization key) -> Compiled (on self._rt)
        self._lowered: dict[tuple, Specialization] = {}  # specialization key -> its lowering, for every mode
        self._fast: dict[tuple, object] = {}      # quick key -> generated launcher (launch.py)
        self._qkey = None
        self._fast_grad: dict[tuple, object] = {}  # quick key -> generated launcher of the grad kernel
        self._grad_fields: dict[tuple, list] = {}  # quick key -> needs_grad fields the kernel uses
        self._rt = None

    def _signature(self) -> list[_Param]:
        if self._params is None:
            out = []
            for p in self._sig.parameters.values():
                if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                    raise CompileError(f"kernel {self.__name__!r}: *args/**kwargs are not supported")
                ann = p.annotation
                if ann is inspect.Parameter.empty and not out and (p.name in ("self", "cls") or _in_class(self.func)):
                    ann = Template()  # a method of a @gr.data_oriented class (gfxrt/data/oop.py)
                if isinstance(ann, str):
                    ann = eval(ann, self.func.__globals__)  # noqa: S307 (annotations as strings)
                if ann is float or ann is int:  # Taichi: the default float / int dtype (gr.init(default_fp=...))
                    from gfxrt.compiler import types as T
                    opts = context._state["options"]
                    ann = getattr(T, opts.default_fp if ann is float else opts.default_ip)
                out.append(_Param(p, ann, self.__name__))
            self._params = out
        return self._params

    def __get__(self, obj, owner=None):
        """`obj.kernel(...)`: a method of a @gr.data_oriented class, `obj` its template `self`."""
        return bind(self, obj, owner)

    # -- argument checking --------------------------------------------------------------------
    def _bind(self, args, kwargs) -> list:
        params = self._signature()
        if len(args) > len(params):
            raise TypeError(f"{self.__name__}() takes {len(params)} arguments but {len(args)} were given")
        values = list(args)
        for p in params[len(args):]:
            if p.name in kwargs:
                values.append(kwargs.pop(p.name))
            elif p.default is not inspect.Parameter.empty:
                values.append(p.default)
            else:
                raise TypeError(f"{self.__name__}() missing argument {p.name!r}")
        if kwargs:
            raise TypeError(f"{self.__name__}() got unexpected argument(s) {', '.join(map(repr, kwargs))}")
        return values

    def _arg_spec(self, p: _Param, v, i: int) -> ArgSpec:
        if p.kind == "scalar":
            return ArgSpec(p.name, "scalar", dtype=p.ann)
        if p.kind in ("vector", "struct"):
            return ArgSpec(p.name, p.kind, elem=p.ann)
        if p.kind == "texture":
            return self._texture_spec(p, v)
        if p.kind == "template":
            if isinstance(p.ann, SparseMatrixBuilderType) and not hasattr(v, "__gfxrt_triplets__"):
                raise TypeError(f"{self.__name__}(): argument {p.name!r} is a sparse_matrix_builder(); pass a "
                                f"gr.linalg.SparseMatrixBuilder, not {type(v).__name__}")
            if npcompat.is_array(v) or (isinstance(v, Ndarray) and not hasattr(v, "__gfxrt_field__")):
                return self._array_spec(p, v, NdarrayType())  # an array template binds like an ndarray
            return ArgSpec(p.name, "template", value=v)
        return self._array_spec(p, v, p.ann)

    def _texture_spec(self, p: _Param, v) -> ArgSpec:
        """A texture argument: its format selects the specialization (a rw_texture's is annotated)."""
        ann = p.ann
        if not isinstance(v, Texture):
            raise TypeError(f"{self.__name__}() argument {p.name!r} is a {ann!r}: pass a gr.Texture, not "
                            f"{type(v).__name__}")
        if v.num_dims != ann.num_dimensions:
            raise ValueError(f"{self.__name__}() argument {p.name!r}: expected a {ann.num_dimensions}-D texture, got "
                             f"{v!r}")
        storage = isinstance(ann, RWTextureType)
        if storage and v.format != ann.fmt:
            raise TypeError(f"{self.__name__}() argument {p.name!r} is annotated fmt={ann.fmt.name}, the texture is "
                            f"{v.format.name}")
        return ArgSpec(p.name, "texture", ndim=v.num_dims, value=(v.format, storage, ann.lod if storage else 0))

    def _array_spec(self, p: _Param, v, want: NdarrayType) -> ArgSpec:
        tensor_grad = torch_io.is_tensor(v) and v.requires_grad  # (k.specialize(...) on tensors)
        if torch_io.is_tensor(v):
            v = torch_io.stand_in(v)
        if isinstance(v, Ndarray):
            elem, ndim, grad, chunks = v.element_type, v.ndim, v.needs_grad, v.chunks
        elif npcompat.is_array(v):
            try:
                scalar = dtype_from_numpy(v.dtype)
            except TypeError as e:
                raise TypeError(f"{self.__name__}() argument {p.name!r}: {e}") from None
            if isinstance(want.dtype, ElementPattern):  # gr.types.vector(): the trailing axes, any size
                tail = len(want.dtype.shape)
                elem = want.dtype.concrete(v.shape[v.ndim - tail:], scalar) if v.ndim >= tail else scalar
            else:
                elem = want.dtype if want.dtype is not None and scalar_of(want.dtype) == scalar else scalar
            ndim, grad = v.ndim - len(element_shape(elem)), tensor_grad
            rt, size = context.runtime(), scalar_of(elem).size
            # (an array the device cannot hold is refused at launch: it binds as one, not as windows)
            chunks = rt.dev.target.chunks(v.size, size) if v.size * size <= rt.pool.max_buffer else 1
            if ndim < 0 or v.shape[v.ndim - len(element_shape(elem)):] != element_shape(elem):
                raise ValueError(f"{self.__name__}() argument {p.name!r}: numpy shape {v.shape} does not end "
                                 f"with the element shape {element_shape(elem)}")
        else:
            raise TypeError(f"{self.__name__}() argument {p.name!r} must be a gr.ndarray or a numpy array "
                            f"(or a torch tensor), not {type(v).__name__}")
        if want.dtype is not None and not element_matches(want.dtype, elem):
            got = f"{elem} (a numpy {v.dtype} array: convert it with .astype(np.{scalar_of(want.dtype).np}))" \
                if npcompat.is_array(v) and scalar_of(want.dtype) is not None else f"{elem}"
            raise TypeError(f"{self.__name__}() argument {p.name!r}: expected dtype {want.dtype}, got {got}")
        if want.ndim is not None and ndim != want.ndim:
            raise ValueError(f"{self.__name__}() argument {p.name!r}: expected ndim {want.ndim}, got {ndim}")
        if want.needs_grad is not None:  # Taichi's ndarray(needs_grad=...) annotation
            if want.needs_grad and not grad:
                raise ValueError(f"{self.__name__}() argument {p.name!r} is annotated needs_grad=True, but the "
                                 "array has no gradient: pass a gr.ndarray allocated with needs_grad=True or a "
                                 "torch tensor with requires_grad=True")
            grad = want.needs_grad
        return ArgSpec(p.name, "ndarray", elem=elem, ndim=ndim, needs_grad=grad, boundary=want.boundary,
                       chunks=chunks)

    def _check_scalar(self, p: _Param, v):
        t: DType = p.ann
        if isinstance(v, bool) or npcompat.scalar_kind(v) == "b":  # a bool is the number 0 or 1 (Taichi's rule)
            v = int(v)
        if t.is_float:
            if not (isinstance(v, (int, float)) or npcompat.scalar_kind(v) in ("i", "u", "f")):
                raise TypeError(f"{self.__name__}() argument {p.name!r}: expected {t}, got {type(v).__name__}")
            return float(v)
        if t.kind == "bool":
            return int(bool(v))
        if not (isinstance(v, int) or npcompat.scalar_kind(v) in ("i", "u")):
            raise TypeError(f"{self.__name__}() argument {p.name!r}: expected {t}, got {type(v).__name__}")
        lo, hi = t.int_range
        if not lo <= int(v) <= hi:
            raise ValueError(f"{self.__name__}() argument {p.name!r}: {v} does not fit in {t}")
        return int(v)

    def _check_vector(self, p: _Param, v) -> tuple:
        """A vector / matrix argument as a flat tuple of checked Python numbers."""
        t = p.ann
        try:
            flat, shape = hostmatrix.components(v)  # (no numpy: a list, a tuple, a gr.Vector value)
        except (TypeError, ValueError):
            flat, shape = None, None
        if flat is None or not all(map(hostmatrix.is_number, flat)) or len(flat) != t.size \
                or shape not in (t.shape, (t.size,)):
            raise TypeError(f"{self.__name__}() argument {p.name!r}: expected a {t!r} (a gr.Vector, list, tuple or "
                            f"numpy array of shape {t.shape}), got {type(v).__name__}"
                            + (f" of shape {shape}" if shape else ""))
        scalar = _Param.part(p.name, t.dtype)
        return tuple(self._check_scalar(scalar, x) for x in flat)

    def _check_struct(self, p: _Param, v):
        """A struct argument (a struct value or a dict) as a tuple of its checked scalars in
        declaration order (the launcher takes them as they are: ints stay ints)."""
        st: StructType = p.ann
        try:
            hv = st(v.to_dict() if hasattr(v, "to_dict") else v)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{self.__name__}() argument {p.name!r}: expected a {st!r}: {e}") from None
        flat = []
        for path, t in st.leaves():
            x = hv
            for part in path.split("."):
                x = x[part]
            if isinstance(t, DType):
                flat.append(self._check_scalar(_Param.part(f"{p.name}.{path}", t), x))
            else:
                flat += list(self._check_vector(_Param.part(f"{p.name}.{path}", t), x))
        return tuple(flat)

    # -- compile -------------------------------------------------------------------------------
    def _compile(self, specs: list[ArgSpec], skey: tuple, mode: str) -> Compiled:
        dev = context.device()
        s = self._lowered.get(skey)
        if s is None or s.target is not dev.target:  # its modes derive from one lowering (it holds the consts)
            cache = default_cache_dir() if dev.options.offline_cache else None
            s = self._lowered[skey] = Specialization(self.func, specs, dev.target, name=self.__name__, directory=cache)
        spec = s.compile(mode)
        if spec.features - dev.features:
            missing = ", ".join(sorted(spec.features - dev.features))
            raise CompileError(f"kernel {self.__name__!r} needs device feature(s) {missing}, which "
                               f"{dev.name} lacks")
        return Compiled(spec, program_for(dev.device, spec, dev.env))

    # -- launch -------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        try:
            # launches from any thread are serialized (gfxrt/engine/context.py); cheaper than `with`. Inside
            # the try: a KeyboardInterrupt raised as the acquire returns must not leave the lock held
            _acquire()
            ad = AD_BLOCKS[0] and THREAD  # 0 while no thread has a Tape or FwdMode block open
            fwd = ad and ad.fwd is not None
            if not kwargs and not fwd:  # the fast path: a call shape seen before
                try:
                    fast = self._fast[self._qkey(*args)]
                except (KeyError, TypeError, AttributeError):
                    pass
                else:
                    r = fast(*args)
                    if r is not MISS:
                        if ad and ad.tape is not None:
                            autodiff.record(self, args, kwargs)
                        return r
            r = self._launch(args, kwargs, "fwd" if fwd else "primal")
            if not fwd:
                autodiff.record(self, args, kwargs)
            return r
        except CompileError as e:
            user_frames(e, context.full_traceback())  # the user's frames only; a bare raise adds none
            raise
        finally:
            try:
                _release()
            except RuntimeError:  # the acquire itself was interrupted while it waited: nothing to release
                pass

    def grad(self, *args, **kwargs):
        """Reverse mode: run the gradient kernel for these arguments (the same ones the kernel
        was called with). Reads the `.grad` of the arrays the kernel writes and accumulates into
        the `.grad` of the arrays it reads (see docs/autodiff.md "Reverse mode"); arrays without
        needs_grad are constants."""
        try:
            with _LOCK:
                self._grad(args, kwargs)
        except CompileError as e:
            user_frames(e, context.full_traceback())
            raise

    def _grad(self, args, kwargs):
        if not kwargs and self._fast_grad and _distinct_plain_arrays(args):  # a call shape seen before
            try:
                fast = self._fast_grad[self._qkey(*args)]
            except (KeyError, TypeError, AttributeError):
                pass
            else:
                if fast(*args) is not MISS:
                    return
        values = self._bind(args, dict(kwargs))
        tensors = self._tensors(values) if torch_io.any_tensor(values) else None
        autodiff.check_grad_call(self, values)
        compiled = self._specialize(values, "grad")[0]
        aliased = compiled.spec.assumes_distinct and autodiff.grads_aliased(compiled.spec, values)
        self._launch(args, kwargs, "grad_alias" if aliased else "grad", (values, tensors))

    def _tensors(self, values: list) -> tuple:
        """Hand the torch tensors in bound `values` to gfxrt/data/torch_args.py (in place):
        returns (host copies to write back, Mirrors of requires_grad tensors or None)."""
        return torch_args.bind(self.__name__, self._signature(), values, lambda p, v: self._array_spec(p, v, p.ann))

    def grad_fields(self, args, kwargs) -> list:
        """The needs_grad fields this call's specialization uses by name (gr.Tape clears their
        gradients); cached per call shape."""
        key = self._quick_key(args) if not kwargs else None
        fields = self._grad_fields.get(key) if key is not None else None
        if fields is None:
            spec = self.specialize(args, kwargs).spec
            fields = [f for f in (resolve(b.source) for b in spec.bindings
                                  if b.kind == "field" and not isinstance(b.source, CapturedArray)) if f.needs_grad]
            if key is not None:
                self._grad_fields[key] = fields
        return fields

    def _quick_key(self, args):
        if self._qkey is None:
            self._qkey = _quick_key_fn(self._signature())
        try:
            key = self._qkey(*args)
            hash(key)
            return key
        except (TypeError, AttributeError):
            return None

    def specialize(self, args, kwargs=None, mode: str = "primal") -> Compiled:
        """The compiled specialization these arguments select (compiling it if needed)."""
        try:
            return self._specialize(self._bind(args, dict(kwargs or {})), mode)[0]
        except CompileError as e:
            user_frames(e, context.full_traceback())
            raise

    def _specialize(self, values, mode: str):
        if context.runtime() is not self._rt:  # first call, or gr.init() opened a new device
            self._cache.clear()
            self._lowered.clear()
            self._fast.clear()
            self._fast_grad.clear()
            self._grad_fields.clear()
            self._rt = context.runtime()
        params = self._signature()
        specs = [self._arg_spec(p, v, i) for i, (p, v) in enumerate(zip(params, values))]
        skey = (*(s.key() for s in specs), *member_salt(values))
        compiled = self._cache.get((mode, *skey))
        if compiled is None:
            compiled = self._cache[(mode, *skey)] = self._compile(specs, skey, mode)
            if mode != "primal":
                compiled.primal = self._specialize(values, "primal")[0]
        return compiled, specs

    def _launch(self, args, kwargs, mode: str = "primal", bound=None):
        """Check every argument, pick (or compile) the specialization for `mode` (primal,
        grad, grad_probe, fwd) and launch it. `bound`: (values, tensors) already bound by
        `_grad`."""
        rt = context.runtime()
        params = self._signature()
        if bound is None:
            values = self._bind(args, dict(kwargs))
            bound = (values, self._tensors(values) if torch_io.any_tensor(values) else None)
        values, tensors = bound
        copies, mirrors = tensors or (None, None)
        probe = (args, kwargs) if mirrors is None else (list(values), {})  # on the tensors' device arrays
        for i, p in enumerate(params):
            if p.kind == "scalar":
                values[i] = self._check_scalar(p, values[i])
            elif p.kind == "vector":
                values[i] = self._check_vector(p, values[i])
            elif p.kind == "struct":
                values[i] = self._check_struct(p, values[i])
        compiled, _ = self._specialize(values, mode)
        if mirrors is not None:
            mirrors.upload(compiled.spec)
        if compiled.capped:
            adstack.heap(rt).prepare(self, compiled, *probe)
        if compiled.launcher is None:
            compiled.launcher = Launcher(rt, compiled, BINDING_RESOLVERS)
        pools = compiled.chunk_pools(rt)  # no fast path for these: each launch checks its pools first
        for p in pools:  # grow them between launches (and report one that ran out), then mark them
            if rt.capture is None:
                p.check()
            else:
                rt.capture.pools.setdefault(p, p.grown)  # the replay checks them (gfxrt/graph.py)
            p.dirty = True
        if not pools and mode == "primal" and not kwargs and len(args) == len(params):
            self._remember_fast(args, compiled.launcher)
        elif not pools and mode == "grad" and not kwargs and len(args) == len(params) and _distinct_plain_arrays(args):
            launcher = compiled.launcher
            fast = adstack.fast_launcher(rt, compiled, launcher.fast) if compiled.capped else launcher.fast
            self._remember_fast_grad(args, launcher, fast)
        r = compiled.launcher.launch(values)
        ret = return_annotation(self.func)
        if isinstance(ret, StructType) and mode in ("primal", "fwd"):
            r = from_leaves(ret, r if isinstance(r, tuple) else (r,))
        if copies:
            torch_args.write_back(copies, compiled.spec)
        if mirrors is not None:
            mirrors.write_back(rt, compiled.spec)
        if compiled.capped:
            rt.adstack.launched(compiled.spec)
        return r

    def _remember_fast_grad(self, args, launcher, fast) -> None:
        key = self._quick_key(args)
        if key is None or launcher.spec.returns:
            return
        if len(self._fast_grad) >= 256:
            self._fast_grad.clear()
        self._fast_grad[key] = fast

    def _remember_fast(self, args, launcher) -> None:
        if self._qkey is None:
            self._qkey = _quick_key_fn(self._signature())
        try:
            qkey = self._qkey(*args)
            hash(qkey)  # a template value such as a gr.Vector (a numpy array) is unhashable
        except (TypeError, AttributeError):
            return  # an unhashable template value, or an array type without a fast path
        if len(self._fast) >= 256:
            self._fast.clear()
        if any(p.kind == "struct" for p in self._signature()) or isinstance(return_annotation(self.func), StructType):
            return  # struct arguments are flattened and struct results rebuilt on the checked path
        if any(p.kind == "scalar" and p.ann.narrow for p in self._signature()):
            return  # the fast path packs 32-bit words: an i8 / u8 / i16 / u16 needs its range check
        numpy = any(npcompat.is_plain_array(a) for a in args)
        # numpy arguments and return values need the blitter: the quick checked path
        quick = numpy or bool(launcher.spec.returns)
        self._fast[qkey] = launcher.launch_quick if quick else launcher.fast


def _in_class(func) -> bool:
    """Whether `func` was defined in a class body (its first parameter is then the instance)."""
    parts = func.__qualname__.split(".")
    return len(parts) > 1 and parts[-2] != "<locals>"


def _distinct_plain_arrays(args) -> bool:
    """Every argument is a device array (no numpy) other than a .grad/.dual array, and no
    array is passed twice: the conditions under which a grad launch may skip its checks."""
    seen = set()
    for a in args:
        if npcompat.is_plain_array(a) or getattr(a, "derived_from", None) is not None:
            return False
        if isinstance(a, Ndarray):
            if id(a) in seen:
                return False
            seen.add(id(a))
    return True


def _numpy_key(a, tail: int):
    """The call-shape key of a numpy array argument (AttributeError for anything else)."""
    if not npcompat.is_plain_array(a):
        raise AttributeError("not a numpy array")
    return (a.dtype, a.ndim, a.shape[a.ndim - tail:]) if tail else (a.dtype, a.ndim)


def _quick_key_fn(params: list[_Param]):
    """A function of the positional arguments whose value identifies the call shape: the
    class of each scalar, the interned (dtype, ndim, needs_grad) of each device array,
    (dtype, ndim[, element shape]) of each numpy array, the type and value of each template
    argument. Raises AttributeError for other argument types."""
    parts = []
    for i, p in enumerate(params):
        if p.kind == "struct":  # flattened on the checked path only: no quick key, so no fast path
            parts.append(f"a{i}.__gfxrt_no_fast_path__")
        elif p.kind == "texture":
            parts.append(f"a{i}._spec()")
        elif p.kind == "ndarray":
            tail = len(element_shape(p.ann.dtype)) if p.ann.dtype is not None else 0
            parts.append(f"a{i}._spec_id if a{i}.__class__ is Ndarray else numpy_key(a{i}, {tail})")
        else:
            # a template's type is part of its key: 3 and 3.0 are equal but compile differently
            # (tkey: a data_oriented object with the identities of its array members)
            parts.append(f"a{i}.__class__" if p.kind in ("scalar", "vector") else f"a{i}.__class__, tkey(a{i})")
    names = ", ".join(f"a{i}" for i in range(len(params)))
    src = f"lambda {names}: ({', '.join(parts)}{',' if len(parts) == 1 else ''})"
    return eval(src, {"Ndarray": Ndarray, "numpy_key": _numpy_key, "tkey": template_key})  # noqa: S307 (generated from the signature)


def kernel(func) -> Kernel:
    """Decorate a Python function (defined in a file) to make it a GPU kernel: a `gr.Kernel`.

        @gr.kernel
        def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1),
                  y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
            for i in range(x.shape[0]):      # a top-level loop: one thread per iteration
                y[i] = a * x[i] + y[i]

        saxpy(2.0, x, y)                     # launch
        saxpy.grad(2.0, x, y)                # reverse mode (needs_grad arrays)

    Body: top-level `for` loops run in parallel; code between them runs serially on one
    thread, each part finished before the next starts (docs/language.md).

    Arguments, by annotation (a missing, extra or wrong argument raises TypeError /
    ValueError before anything is launched):
      gr.f32, gr.i32, gr.u32, gr.f16, gr.f64, ...   a Python or numpy number, checked
      gr.types.vector(n, dt) / matrix(n, m, dt)      a gr.Vector / gr.Matrix, list, tuple or array
      a struct type (gr.types.struct, @gr.dataclass) a struct value or a dict of its members
      gr.types.ndarray(dtype=..., ndim=...)          a gr.ndarray (no copy), a numpy array (copied
                                                     in, and back if written) or a torch tensor
      gr.template()                                  any compile-time value: a number, tuple, field,
                                                     @gr.func, dtype
    Fields (gr.field) and other globals are used by name, not passed.

    Specialization: the kernel is compiled on the first call for each specialization (the
    dtype and ndim of each array argument left open in its annotation, each template value),
    then reused; the WGSL is also cached on disk ($GFXRT_CACHE_DIR or ~/.cache/gfxrt).

    Calling: `k(*args)` with device arrays records the launch and returns at once (launches
    are asynchronous and stay in program order; `gr.sync()` waits; reading an array waits for
    what wrote it). A kernel annotated `-> gr.f32` (a vector, a struct or a tuple of them)
    waits and returns its `return` value as Python numbers / gr.Vector / tuple.

    Autodiff: `k.grad(*args)` runs the gradient kernel on the same arguments: it reads the
    `.grad` of the needs_grad arrays the kernel writes and accumulates into the `.grad` of
    those it reads. Inside `with gr.Tape(loss):` calls are recorded and their gradients run
    on leaving. A torch tensor with requires_grad is a needs_grad array whose gradient is its
    `.grad`; `gr.ad.torch_function(k, outputs=...)` makes the kernel a torch operation.
    There is no `k.fwd`: forward mode is a block, `with gr.ad.FwdMode(loss=y, param=x,
    seed=...):`, inside which ordinary calls also compute tangents into `.dual`.
    `gr.ad.gradcheck(k, args)` checks `k.grad` against finite differences (docs/autodiff.md).

    Methods: in a @gr.data_oriented class a kernel is a method (`self` is a template
    argument); over a @staticmethod / @classmethod it stays one.
    """
    if isinstance(func, (staticmethod, classmethod)):
        return type(func)(Kernel(func.__func__))
    return Kernel(func)


__all__ = ["kernel", "Kernel"]
