"""`@gr.kernel`: argument checking, specialization, compilation and launch."""
from __future__ import annotations

import inspect
import struct

import numpy as np

from compiler import compile_kernel
from compiler.errors import CompileError
from compiler.spec import ArgSpec, KernelSpec
from compiler.types import DType, NdarrayType, Template, element_shape, f16, scalar_of
from compiler.types import from_numpy as dtype_from_numpy

from . import adstack, autodiff, context
from .ndarray import Ndarray
from .program import Program

_PACK = {"float": "f", "int": "i", "uint": "I", "bool": "I"}
_INT_RANGE = {"int": (-2**31, 2**31 - 1), "uint": (0, 2**32 - 1)}


class _Param:
    """One parameter of the Python signature and what its annotation asks for."""

    def __init__(self, p: inspect.Parameter, annotation, kernel_name: str):
        self.name = p.name
        self.default = p.default
        if isinstance(annotation, DType):
            self.kind = "scalar"
        elif isinstance(annotation, NdarrayType):
            self.kind = "ndarray"
        elif isinstance(annotation, Template):
            self.kind = "template"
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
        self.pack = struct.Struct("<" + "".join(_PACK[p.dtype.kind] for p in spec.params))
        self._internal: dict[str, object] = {}
        self.primal: Compiled | None = None  # for grad / forward-mode specializations
        self.capped = any(t.capped for t in spec.tasks)  # has adstack tasks (gfxrt/adstack.py)

    def internal_buffer(self, rt, kind: str):
        """This specialization's buffer of an internal kind, allocated (zeroed) on first use."""
        buf = self._internal.get(kind)
        if buf is None:
            import wgpu
            size = max(16, (self.spec.internal[kind] + 15) // 16 * 16)
            buf = rt.device.create_buffer(size=size, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
                                          | wgpu.BufferUsage.COPY_DST)
            self._internal[kind] = buf
        return buf


def _bind_arg(rt, compiled, b, values):
    v = values[b.source]
    return v._buffer if isinstance(v, Ndarray) else None  # numpy arguments are uploaded by the caller


def _bind_grad(rt, compiled, b, values):
    kind, ref = b.grad_of
    if kind == "temps":  # gradients of cross-task locals: scratch for this launch only
        return autodiff.scratch(rt, compiled.primal.spec.internal["temps"])
    if kind != "arg":
        raise NotImplementedError(f"the {b.kind} of a {kind} (fields arrive with their own binding)")
    v = values[ref]
    if not isinstance(v, Ndarray) or not v.needs_grad:
        raise ValueError(f"argument {b.name!r} needs a gradient: allocate it with needs_grad=True")
    return (v.grad if b.kind == "grad" else v.dual)._buffer


def _bind_internal(rt, compiled, b, values):
    if b.kind == "temps":  # grad / forward-mode kernels re-read the primal launch's cross-task locals
        compiled = compiled.primal or compiled
    return compiled.internal_buffer(rt, b.kind)


# how each kind of binding finds its buffer; later layers register more kinds here
BINDING_RESOLVERS = {"arg": _bind_arg, "grad": _bind_grad, "dual": _bind_grad, "temps": _bind_internal,
                     "result": _bind_internal, "status": _bind_internal,
                     "adstack_heap": lambda rt, c, b, v: rt.adstack.heap,
                     "adstack_meta": lambda rt, c, b, v: rt.adstack.meta,
                     "access_shadow": lambda rt, c, b, v: autodiff.access_shadow(rt, v[b.grad_of[1]])}


class Kernel:
    """A compiled-on-call GPU kernel. Call it like the Python function it decorates."""

    def __init__(self, func):
        self.func = func
        self.__name__ = func.__name__
        self.__doc__ = func.__doc__
        self.__wrapped__ = func
        self._sig = inspect.signature(func)
        self._params: list[_Param] | None = None
        self._cache: dict[tuple, Compiled] = {}

    def _signature(self) -> list[_Param]:
        if self._params is None:
            out = []
            for p in self._sig.parameters.values():
                if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                    raise CompileError(f"kernel {self.__name__!r}: *args/**kwargs are not supported")
                ann = p.annotation
                if isinstance(ann, str):
                    ann = eval(ann, self.func.__globals__)  # noqa: S307 (annotations as strings)
                out.append(_Param(p, ann, self.__name__))
            self._params = out
        return self._params

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
        if p.kind == "template":
            return ArgSpec(p.name, "template", value=v)
        want: NdarrayType = p.ann
        if isinstance(v, Ndarray):
            elem, ndim, grad = v.dtype, v.ndim, v.needs_grad
        elif isinstance(v, np.ndarray):
            try:
                scalar = dtype_from_numpy(v.dtype)
            except TypeError as e:
                raise TypeError(f"{self.__name__}() argument {p.name!r}: {e}") from None
            elem = want.dtype if want.dtype is not None and scalar_of(want.dtype) == scalar else scalar
            ndim, grad = v.ndim - len(element_shape(elem)), False
            if ndim < 0 or v.shape[v.ndim - len(element_shape(elem)):] != element_shape(elem):
                raise ValueError(f"{self.__name__}() argument {p.name!r}: numpy shape {v.shape} does not end "
                                 f"with the element shape {element_shape(elem)}")
        else:
            raise TypeError(f"{self.__name__}() argument {p.name!r} must be a gr.ndarray or a numpy array, "
                            f"not {type(v).__name__}")
        if want.dtype is not None and elem != want.dtype:
            raise TypeError(f"{self.__name__}() argument {p.name!r}: expected dtype {want.dtype}, got {elem}")
        if want.ndim is not None and ndim != want.ndim:
            raise ValueError(f"{self.__name__}() argument {p.name!r}: expected ndim {want.ndim}, got {ndim}")
        return ArgSpec(p.name, "ndarray", elem=elem, ndim=ndim, needs_grad=grad)

    def _check_scalar(self, p: _Param, v):
        t: DType = p.ann
        if isinstance(v, (bool, np.bool_)) and t.kind != "bool":
            raise TypeError(f"{self.__name__}() argument {p.name!r}: expected {t}, got bool")
        if t.is_float:
            if not isinstance(v, (int, float, np.integer, np.floating)):
                raise TypeError(f"{self.__name__}() argument {p.name!r}: expected {t}, got {type(v).__name__}")
            return float(v)
        if t.kind == "bool":
            return int(bool(v))
        if not isinstance(v, (int, np.integer)):
            raise TypeError(f"{self.__name__}() argument {p.name!r}: expected {t}, got {type(v).__name__}")
        lo, hi = _INT_RANGE[t.kind]
        if not lo <= int(v) <= hi:
            raise ValueError(f"{self.__name__}() argument {p.name!r}: {v} does not fit in {t}")
        return int(v)

    # -- compile -------------------------------------------------------------------------------
    def _compile(self, specs: list[ArgSpec], mode: str = "primal") -> Compiled:
        dev = context.device()
        spec = compile_kernel(self.func, specs, dev.target, name=self.__name__, mode=mode)
        if spec.features - dev.features:
            missing = ", ".join(sorted(spec.features - dev.features))
            raise CompileError(f"kernel {self.__name__!r} needs device feature(s) {missing}, which "
                               f"{dev.name} lacks")
        return Compiled(spec, Program(dev.device, spec))

    # -- launch -------------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        mode = autodiff.launch_mode()
        self._launch(args, kwargs, mode)
        if mode == "primal":
            autodiff.record(self, args, kwargs)

    def grad(self, *args, **kwargs):
        """Reverse mode: run the gradient kernel for these arguments (the same ones the kernel
        was called with). Reads the `.grad` of the arrays the kernel writes and accumulates into
        the `.grad` of the arrays it reads (see DESIGN.md "Autodiff"); arrays without
        needs_grad are constants."""
        autodiff.check_grad_call(self, self._bind(args, dict(kwargs)))
        self._launch(args, kwargs, "grad")

    def specialize(self, args, kwargs=None, mode: str = "primal") -> Compiled:
        """The compiled specialization these arguments select (compiling it if needed)."""
        return self._specialize(self._bind(args, dict(kwargs or {})), mode)[0]

    def _specialize(self, values, mode: str):
        params = self._signature()
        specs = [self._arg_spec(p, v, i) for i, (p, v) in enumerate(zip(params, values))]
        key = (mode, id(context.device()), *(s.key() for s in specs))  # gr.init() makes a new device
        compiled = self._cache.get(key)
        if compiled is None:
            compiled = self._cache[key] = self._compile(specs, mode)
            if mode != "primal":
                compiled.primal = self._specialize(values, "primal")[0]
        return compiled, specs

    def _launch(self, args, kwargs, mode: str):
        rt = context.runtime()
        params = self._signature()
        values = self._bind(args, dict(kwargs))
        scalars = {i: self._check_scalar(p, v) for i, (p, v) in enumerate(zip(params, values)) if p.kind == "scalar"}
        compiled, specs = self._specialize(values, mode)
        spec = compiled.spec
        if compiled.capped:
            adstack.heap(rt).prepare(self, compiled, args, kwargs)

        pvals = []
        for ps in spec.params:
            if ps.source[0] == "arg":
                pvals.append(scalars[ps.source[1]])
            else:
                _, i, d = ps.source
                pvals.append(values[i].shape[d])
        immediates = compiled.pack.pack(*pvals) if spec.params else b""

        buffers, readbacks = [], []
        for b in spec.bindings:
            resolver = BINDING_RESOLVERS.get(b.kind)
            if resolver is None:
                raise NotImplementedError(f"binding kind {b.kind!r}")
            buf = resolver(rt, compiled, b, values)
            if buf is not None:
                buffers.append(buf)
            else:
                v = values[b.source]
                if b.written and not v.flags.writeable:
                    raise ValueError(f"{self.__name__}() writes argument {b.name!r}, but the numpy array is read-only")
                buf = _upload_numpy(rt, v, scalar_of(specs[b.source].elem))
                buffers.append(buf)
                if b.written:
                    readbacks.append((buf, v))
        if spec.asserts:
            rt.watch_status(compiled.internal_buffer(rt, "status"), spec)

        bind_group = rt.device.create_bind_group(
            layout=compiled.program.bind_group_layout,
            entries=[{"binding": k, "resource": {"buffer": buf}} for k, buf in enumerate(buffers)])
        for task, pipeline in zip(spec.tasks, compiled.program.pipelines):
            if task.kind == "serial":
                groups = 1
            else:
                n = task.extent_fn(pvals) if task.extent_fn else 65535 * task.workgroup_size
                if n <= 0:
                    continue
                groups = min(-(-n // task.workgroup_size), 65535)
                if task.capped:
                    groups = min(groups, rt.adstack.max_groups(task.workgroup_size))
            rt.dispatch(pipeline, bind_group, immediates, groups)
        rt._launches += 1
        if compiled.capped:
            rt.adstack.launched(spec)
        for buf, arr in readbacks:
            raw = rt.readback(buf, arr.nbytes)
            np.copyto(arr, np.frombuffer(raw, dtype=arr.dtype).reshape(arr.shape))
        return None


def _upload_numpy(rt, a: np.ndarray, scalar: DType):
    import wgpu
    data = np.ascontiguousarray(a)
    if scalar == f16 and data.dtype != np.float16:
        data = data.astype(np.float16)
    size = max(4, (data.nbytes + 3) // 4 * 4)
    buf = rt.device.create_buffer(size=size, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC
                                  | wgpu.BufferUsage.COPY_DST)
    if data.nbytes:
        rt.upload(buf, data)
    rt.ctx_buffers.append(buf)
    return buf


def kernel(func) -> Kernel:
    """Decorate a Python function to compile it to a GPU kernel.

    Top-level `for` loops run in parallel; annotate arguments with gr.f32 / gr.i32 /
    gr.types.ndarray(...) / gr.template().
    """
    return Kernel(func)


__all__ = ["kernel", "Kernel"]
