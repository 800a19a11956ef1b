"""Device arrays: `gr.ndarray(dtype, shape)`."""
from __future__ import annotations

import math
import operator
import weakref

from gfxrt.compiler import hostmatrix, npcompat
from gfxrt.compiler.npcompat import np
from gfxrt.compiler.spec import FieldInfo
from gfxrt.compiler.types import DType, MatrixType, VectorType, element_shape, scalar_of
from gfxrt.compiler.types import from_numpy as dtype_from_numpy

from ..engine import context
from ..engine.blit_kernels import copy_halfwords, fill_words
from ..engine.context import locked
from ..errors import GfxrtError, GradDtypeError
from . import hostdata
from .hostaccess import read_element, write_element
from .torch_io import from_torch, to_torch


def as_element_type(dtype):
    """gr.f32 / vector / matrix types as they are; Python and numpy types mapped to DTypes."""
    if isinstance(dtype, (DType, VectorType, MatrixType)):
        return dtype
    if type(dtype).__name__ == "StructType":
        raise TypeError(f"{dtype!r}: gfxrt has no ndarray of structs (a WebGPU buffer holds one scalar type); use "
                        "a struct field (S.field(shape=...), one field per member), or one gr.ndarray per member")
    if dtype is float or dtype is int:  # gr.init(default_fp=, default_ip=), as in Taichi
        from gfxrt.compiler.types import SCALARS
        opts = context._state["options"]
        return SCALARS[opts.default_fp if dtype is float else opts.default_ip]
    try:
        return dtype_from_numpy(dtype)
    except TypeError:
        raise TypeError(f"{dtype!r} is not a gfxrt dtype (use gr.f32, gr.i32, gr.u32, gr.f16, "
                        "gr.types.vector or gr.types.matrix)") from None


def as_shape(shape, what: str = "shape") -> tuple[int, ...]:
    """A container's shape, checked: an int, or a tuple / list (or 1-D integer numpy array)
    of them; numpy integers count as ints. Anything else (a string, a float extent such as
    3.7, a bool) is a TypeError naming the bad value, a negative extent a ValueError. Every
    constructor that takes a shape goes through here (`what` names it in the message)."""
    if npcompat.is_array(shape) and shape.ndim == 1 and shape.dtype.kind in "iu":
        shape = shape.tolist()
    items = shape if isinstance(shape, (tuple, list)) else (shape,)
    out = []
    for x in items:
        try:
            if isinstance(x, bool) or (npcompat.is_scalar(x) and x.dtype.kind == "b"):
                raise TypeError
            out.append(operator.index(x))
        except TypeError:
            whole = "" if items is not shape else f" in {shape!r}"
            raise TypeError(f"{what} must be an int or a tuple of ints, got {x!r} (a {type(x).__name__}){whole}"
                            + ("; round it with int(...)" if isinstance(x, float) else "")) from None
    if any(s < 0 for s in out):
        raise ValueError(f"{what} must not be negative, got {tuple(out)}")
    return tuple(out)


def not_picklable(self, protocol=None):
    """`__reduce_ex__` of device containers: they live in one process's device memory, so
    pickling one (as in Taichi) is an error; this one says what to pickle instead."""
    raise TypeError(f"{self!r} lives in device memory and cannot be pickled; pickle its contents instead: "
                    "`data = x.to_numpy()`, and after unpickling copy them into a new container with "
                    "`.from_numpy(data)`")


_SPEC_IDS: dict[tuple, int] = {}
# the containers kernels bind by key (FieldInfo.key -> container): gr.field's (gfxrt/data/field.py)
# and the ndarray members of @gr.data_oriented objects (member() below)
_FIELDS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_duals: weakref.WeakSet = weakref.WeakSet()  # every tangent array, zeroed by gr.ad.FwdMode
I32_MAX = 2 ** 31 - 1  # scalars per array: kernels compute flat indices in i32
DEVICE_FILL_BYTES = 1 << 18  # eager fills of at least this many bytes run a fill kernel, not an upload


def _spec_id(key: tuple) -> int:
    """A small int per (dtype, ndim, needs_grad): cheap to hash on the launch fast path."""
    return _SPEC_IDS.setdefault(key, len(_SPEC_IDS))


class Ndarray:
    """A device array of `shape` elements of `dtype` (a scalar, vector or matrix type)."""

    _what = "gr.ndarray"  # the constructor, as error messages name it
    offset: tuple[int, ...] = ()  # a field's first index per axis (Taichi's offset=): arrays start at 0

    def __init__(self, dtype, shape, needs_grad: bool = False, storage_shape=None):
        """`storage_shape`: what the device buffer holds when it differs from the logical
        `shape` (a field in a dynamic SNode's chunk pool, gfxrt/data/pool.py)."""
        self.element_type = as_element_type(dtype)
        self.shape = as_shape(shape, f"{self._what} shape")
        self.needs_grad = bool(needs_grad)
        self._scalar = scalar_of(self.element_type)
        if self.needs_grad and not self._scalar.is_float:
            raise GradDtypeError(f"{self.element_type} is not supported for field with `needs_grad=True` or "
                                 "`needs_dual=True`: gradients need a float dtype")
        self.element_shape = element_shape(self.element_type)
        self._np_shape = self.shape + self.element_shape
        self._storage_shape = self.shape if storage_shape is None else tuple(storage_shape)  # a pool's chunks
        count = math.prod(self._storage_shape + self.element_shape)
        if count > I32_MAX:
            raise ValueError(f"{self._what}({self.element_type}, shape={self.shape}) has {count} scalars; kernels "
                             f"address an array's scalars with 32-bit indices (at most {I32_MAX} per array): "
                             "split it over several arrays")
        self.nbytes = count * self._scalar.size
        rt = self._rt = context.runtime()
        self.chunks = rt.dev.target.chunks(count, self._scalar.size)  # binding windows (docs/runtime.md)
        self._spec_id = _spec_id((self.element_type, len(self.shape), self.needs_grad, self.chunks))  # fast path
        self._buffer = rt.alloc_zeroed(self.nbytes, what=f"gr.ndarray({self.element_type}, shape={self.shape})")
        self._finalizer = weakref.finalize(self, rt.free_later, self._buffer)
        self._finalizer.atexit = False
        self.grad = Ndarray(self.element_type, self.shape) if self.needs_grad else None
        self.derived_from = None  # ('grad' | 'dual', the array) for gradient and tangent arrays
        if self.grad is not None:
            self.grad.derived_from = ("grad", self)
        self._dual = None

    def __gfxrt_member__(self):
        """How a kernel binds this array when it reaches it as `self.x` of a @gr.data_oriented
        object (gfxrt/data/oop.py)."""
        return member(self)

    @property
    def dual(self):
        """Forward-mode tangents (gr.ad.FwdMode), same shape; allocated zeroed on first use.
        Only arrays with needs_grad=True have one."""
        if self._dual is None:
            if not self.needs_grad:
                raise AttributeError("only arrays allocated with needs_grad=True have a .dual")
            self._dual = Ndarray(self.element_type, self.shape)
            self._dual.fill(0)
            self._dual.derived_from = ("dual", self)
            register_dual(self._dual)
        return self._dual

    @property
    def dtype(self) -> DType:
        """The scalar dtype, as in Taichi (f32 for an array of vec3); the element type,
        vector or matrix included, is `element_type`."""
        return self._scalar

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def n(self) -> int:
        """Rows of a vector / matrix element (Taichi's `.n`); AttributeError for scalars."""
        if not self.element_shape:
            raise AttributeError(f"{self!r} has scalar elements: no .n")
        return self.element_shape[0]

    @property
    def m(self) -> int:
        """Columns of a matrix element (1 for vectors); AttributeError for scalars."""
        if not self.element_shape:
            raise AttributeError(f"{self!r} has scalar elements: no .m")
        return self.element_shape[1] if len(self.element_shape) == 2 else 1

    def __getitem__(self, idx):
        """Host read of one element (`x[i, j]`, `x[None]` for 0-d): a Python number, or a
        gr.Vector / gr.Matrix (a numpy array) for vector and matrix elements. Reads only that
        element, in order with launched kernels (waits for them, as to_numpy does)."""
        return read_element(self, idx)

    def __iter__(self):
        # without this, Python would iterate through __getitem__ (x[0], x[1], ...: one readback
        # each, and silently nothing for a 2-d array, whose x[0] is an IndexError)
        raise TypeError(f"{self!r} is not iterable on the host; use x.to_numpy() (or x[i] for one element)")

    def __setitem__(self, idx, value) -> None:
        """Host write of one element (a number, or a sequence of the element's shape), in
        order with launched kernels."""
        write_element(self, idx, value)

    def _np(self, a) -> np.ndarray:
        a = np.asarray(a)
        if a.shape != self._np_shape:
            raise ValueError(f"shape mismatch: array has shape {a.shape}, expected {self._np_shape}")
        return np.ascontiguousarray(a, dtype=self._scalar.numpy)

    def _runtime(self):
        rt = context.runtime()
        if rt is not self._rt:
            raise GfxrtError(f"{self!r} was allocated before gr.init() opened a new device; allocate it again")
        return rt

    def from_numpy(self, a) -> None:
        """Copy a numpy array of the same shape into this array (converting its dtype); without
        numpy also a (nested) list / tuple, an array.array or a memoryview (gfxrt/data/hostdata.py)."""
        data = self._np(a) if npcompat.is_value(a) else hostdata.pack(a, self._scalar, self._np_shape)
        if self.nbytes:
            self._runtime().blitter.host_to_device(self._buffer, data)

    def to_numpy(self, dtype=None) -> np.ndarray:
        """A numpy copy of the contents, of shape `shape + element_shape` (waits for pending
        work); `dtype` converts it (Taichi's field.to_numpy(dtype=...))."""
        out = npcompat.require(f"{self._what}.to_numpy() (use .to_list())").empty(self._np_shape, self._scalar.numpy)
        if self.nbytes:
            self._runtime().blitter.device_to_host([(self._buffer, 0, self.nbytes, out)])
        return out if dtype is None else out.astype(np.dtype(getattr(dtype, "numpy", dtype)))

    def to_list(self) -> list:
        """The contents as nested Python lists of shape `shape + element_shape` (waits for pending
        work), as `to_numpy().tolist()`; needs no numpy."""
        raw = bytearray(self.nbytes)
        if self.nbytes:
            self._runtime().blitter.device_to_host([(self._buffer, 0, self.nbytes, raw)])
        return hostdata.to_list(raw, self._scalar, self._np_shape)

    def to_torch(self, device=None):
        """A torch tensor copy of the contents, on `device` (default: CPU), as Taichi's."""
        return to_torch(self, device)

    def from_torch(self, t) -> None:
        """Copy a torch tensor of the same shape (any device) into this array."""
        from_torch(self, t)

    @locked
    def fill(self, value) -> None:
        """Set every element to `value` (in order with launched kernels; recorded by a
        graph being captured). `value`: a scalar, or one element of a vector/matrix dtype
        (a whole array of this shape is uploaded instead)."""
        rt = self._runtime()
        if not self.nbytes:
            return
        if type(value) in (int, float) and value == 0 and math.copysign(1.0, value) > 0:
            rt.clear(self._buffer, 0, (self.nbytes + 3) // 4 * 4)  # the common x.grad.fill(0): no numpy at all
            return
        el = self._np_shape[len(self.shape):]
        if type(value) in (int, float, bool):  # a number: every scalar of every element (no numpy)
            element = hostdata.pack([value] * math.prod(el), self._scalar, el)
        elif not npcompat.is_value(value) and hostmatrix.components(value)[1] == el:  # one element (no numpy)
            element = hostdata.pack(value, self._scalar, el)
        else:
            one = np.asarray(value, dtype=self._scalar.numpy)
            try:
                element = np.ascontiguousarray(np.broadcast_to(one, el)).tobytes()
            except ValueError:  # not one element: broadcast over the whole array
                self.from_numpy(np.broadcast_to(one, self._np_shape))
                return
        if not element.strip(b"\0"):  # all-zero bytes (not -0.0)
            rt.clear(self._buffer, 0, (self.nbytes + 3) // 4 * 4)
        elif rt.capture is not None or self.nbytes >= DEVICE_FILL_BYTES:
            fill_words(rt, self._buffer, self.nbytes, element)
        else:
            rt.blitter.host_to_device(self._buffer, element * math.prod(self._storage_shape))

    @locked
    def copy_from(self, src: Ndarray, src_offset: int = 0, dst_offset: int = 0, count: int | None = None) -> None:
        """Copy `count` elements of device array `src` (from element `src_offset`, both
        arrays flattened) into this array at element `dst_offset`; by default as many as
        fit. Runs in order with launched kernels, on the device; the ranges may overlap
        when src is this array (the copy behaves as if through a temporary)."""
        if not isinstance(src, Ndarray):
            raise TypeError(f"copy_from needs a gr.ndarray source, not {type(src).__name__} "
                            "(use from_numpy for numpy data)")
        if src.element_type != self.element_type:  # (gr.field's converting copy: gfxrt/data/field.py)
            raise TypeError(f"copy_from: dtypes differ ({src.element_type} -> {self.element_type}); a converting "
                            "copy takes two whole fields of one shape")
        n_src, n_dst = math.prod(src.shape), math.prod(self.shape)
        src_offset, dst_offset = _index("src_offset", src_offset), _index("dst_offset", dst_offset)
        count = min(n_src - src_offset, n_dst - dst_offset) if count is None else _index("count", count)
        if count < 0 or src_offset + count > n_src or dst_offset + count > n_dst:
            raise ValueError(f"copy_from: {count} elements from {src_offset} of {n_src} into {dst_offset} of "
                             f"{n_dst} is out of range")
        rt = self._runtime()
        src._runtime()
        eb = self._scalar.size * math.prod(self._np_shape[len(self.shape):])
        so, do, nb = src_offset * eb, dst_offset * eb, count * eb
        if not nb:
            return
        if so % 4 == 0 and do % 4 == 0 and (nb % 4 == 0 or do + nb == self.nbytes):
            rt.copy(src._buffer, so, self._buffer, do, (nb + 3) // 4 * 4)
            return
        if eb == 1:
            raise ValueError(f"copy_from of {self.dtype} elements needs offsets and a count that are multiples of 4 "
                             "(copy commands move 4-byte words); copy the rest with a kernel")
        # 2-byte elements at odd offsets: a halfword copy kernel (copy commands need 4-byte alignment)
        if src._buffer is not self._buffer:
            copy_halfwords(rt, src._buffer, so // 2, self._buffer, do // 2, nb // 2)
            return
        lo = so // 4 * 4  # the kernel reads and writes different buffers: stage the source words
        size = (so + nb - lo + 3) // 4 * 4
        sbuf = rt.pool.alloc(size, what="copy staging")
        try:
            rt.copy(src._buffer, lo, sbuf, 0, size)
            copy_halfwords(rt, sbuf, (so - lo) // 2, self._buffer, do // 2, nb // 2)
        finally:  # after both are recorded
            if rt.capture is not None:
                rt.capture.own(sbuf)
            else:
                rt.free_later(sbuf)

    def __deepcopy__(self, memo):
        """`copy.deepcopy(x)`: a new array with a device copy of the contents (and of .grad)."""
        out = type(self)(self.element_type, self.shape, needs_grad=self.needs_grad)
        out.copy_from(self)
        if self.grad is not None:
            out.grad.copy_from(self.grad)
        return out

    def __copy__(self):
        """`copy.copy(x)`: a copy of the contents too, as numpy's (an object sharing the buffer
        would outlive it: the buffer is released with the array that allocated it)."""
        return self.__deepcopy__({})

    __reduce_ex__ = not_picklable

    def __repr__(self) -> str:
        return f"gr.ndarray({self.element_type}, shape={self.shape})"


def ndarray(dtype, shape, needs_grad: bool = False) -> Ndarray:
    """Allocate a device array: `gr.ndarray(gr.f32, shape=(n,))`."""
    return Ndarray(dtype, shape, needs_grad)


@locked
def register_dual(dual: Ndarray) -> None:
    """Remember a tangent array, so FwdMode can zero every tangent on entering."""
    _duals.add(dual)


class _Member:
    """A gr.ndarray reached through a template argument (`self.x` of a data_oriented object),
    bound into the kernel like a field of that array (gfxrt/data/oop.py)."""

    def __init__(self, arr):
        self.arr = arr
        self.__gfxrt_field__ = FieldInfo(id(arr), arr.element_type, tuple(arr.shape), arr.needs_grad)

    @property
    def grad(self):
        return None if self.arr.grad is None else member(self.arr.grad)


_MEMBERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def member(arr) -> _Member:
    """The field view of ndarray `arr` (registered so kernels resolve it like a field)."""
    m = _MEMBERS.get(arr)
    if m is None:
        m = _MEMBERS[arr] = _Member(arr)
        _FIELDS[id(arr)] = arr
    return m


def _index(name: str, v) -> int:
    if isinstance(v, bool) or not isinstance(v, int) and not (npcompat.is_scalar(v) and v.dtype.kind in "iu") or v < 0:
        raise ValueError(f"copy_from: {name} must be a non-negative int, got {v!r}")
    return int(v)
