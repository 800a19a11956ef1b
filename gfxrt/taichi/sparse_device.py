"""The device side of gr.linalg's sparse matrices: a CSR matrix in three gr.ndarrays, its
product with a vector, and the vector kernels the conjugate-gradient solvers use (a dot
product, `y += a * x`, `y = x + a * y`, the Jacobi preconditioner). Kernels of the language:
they run wherever gfxrt runs; each takes the value dtype as a template.
"""
# no `from __future__ import annotations`: the kernels made in functions annotate with a closure's dtype
import functools
from types import SimpleNamespace

from gfxrt.compiler.builtins import BUILTINS
from gfxrt.compiler.types import i32

from ..data.ndarray import Ndarray, ndarray
from ..engine import context
from ..kernel import kernel
from ..types import ndarray as arr
from ..types import template

cast = BUILTINS["cast"]


@kernel
def csr_matvec(indptr: arr(i32, 1), indices: arr(i32, 1), data: arr(ndim=1), x: arr(ndim=1), y: arr(ndim=1),
               dt: template()):
    """y = A @ x for the CSR matrix (indptr, indices, data): one thread per row."""
    for r in range(y.shape[0]):
        s = cast(0, dt)
        for k in range(indptr[r], indptr[r + 1]):
            s += data[k] * x[indices[k]]
        y[r] = s


@functools.cache
def vector_kernels(dt) -> SimpleNamespace:
    """The vector kernels for values of dtype dt (gr.f32 or gr.f64): scalars in dt too."""

    @kernel
    def dot_f32(a: arr(dt, 1), b: arr(dt, 1)) -> dt:
        """The sum of a[i] * b[i] (a kernel's return: the host waits for it)."""
        s = cast(0, dt)
        for i in range(a.shape[0]):
            s += a[i] * b[i]
        return s

    @kernel
    def dot_into(a: arr(dt, 1), b: arr(dt, 1), out: arr(dt, 1)):
        """out[0] += the sum of a[i] * b[i] (64-bit sums: kernel-scope variables hold 32 bits)."""
        for i in range(a.shape[0]):
            out[0] += a[i] * b[i]

    @kernel
    def axpy(alpha: dt, x: arr(dt, 1), y: arr(dt, 1)):
        """y += alpha * x."""
        for i in range(y.shape[0]):
            y[i] += alpha * x[i]

    @kernel
    def xpay(x: arr(dt, 1), alpha: dt, y: arr(dt, 1)):
        """y = x + alpha * y."""
        for i in range(y.shape[0]):
            y[i] = x[i] + alpha * y[i]

    @kernel
    def residual(b: arr(dt, 1), ax: arr(dt, 1), r: arr(dt, 1)):
        """r = b - ax."""
        for i in range(r.shape[0]):
            r[i] = b[i] - ax[i]

    @kernel
    def scale(d: arr(dt, 1), x: arr(dt, 1), y: arr(dt, 1)):
        """y = d * x, entry by entry (the Jacobi preconditioner: d is the inverse diagonal)."""
        for i in range(y.shape[0]):
            y[i] = d[i] * x[i]

    return SimpleNamespace(dot=dot_f32 if dt.bits == 32 else _dot64(dot_into, dt),
                           axpy=axpy, xpay=xpay, residual=residual, scale=scale)


_KEPT: dict = {}


def kept(key, make):
    """`make()`'s arrays, kept across calls for `key` while gr.init's device lives (a kernel
    specializes per field, and allocating per solver iteration would cost)."""
    v = _KEPT.get(key)
    first = v[0] if isinstance(v, tuple) else v
    if v is None or first._rt is not context.runtime():
        v = _KEPT[key] = make()
    return v


def _dot64(dot_into, dt):
    def dot(a, b) -> float:
        acc = kept(("dot64", dt), lambda: ndarray(dt, shape=1))
        acc.fill(0)
        dot_into(a, b, acc)
        return float(acc.to_numpy()[0])
    return dot


class DeviceCSR:
    """A SparseMatrix's CSR arrays on the device (made once per matrix value)."""

    def __init__(self, sm):
        csr = sm.matrix
        csr.sort_indices()
        self.n, self.m, self.dtype = sm.n, sm.m, sm.dtype
        self.indptr = _upload(csr.indptr.astype("int32"), i32)
        self.indices = _upload(csr.indices.astype("int32"), i32, min_len=1)
        self.data = _upload(csr.data.astype(sm.dtype.numpy), sm.dtype, min_len=1)

    def matvec(self, x: Ndarray, y: Ndarray) -> None:
        csr_matvec(self.indptr, self.indices, self.data, x, y, self.dtype)


def _upload(a, dtype, min_len: int = 0) -> Ndarray:
    out = ndarray(dtype, shape=max(len(a), min_len))
    if len(a):
        out.from_numpy(a)
    else:
        out.fill(0)  # an empty matrix: one unused entry (a buffer is never empty)
    return out


def device_csr(sm) -> DeviceCSR:
    """The matrix's device copy; SparseMatrix drops it whenever its entries change."""
    if sm._device is None or sm._device.indptr._rt is not context.runtime():
        sm._device = DeviceCSR(sm)
    return sm._device


def spmv(sm, x: Ndarray) -> Ndarray:
    """A @ x for a gr.ndarray x, on the device: a new gr.ndarray of x's dtype (Taichi's)."""
    y = ndarray(x.dtype, shape=sm.n)
    device_csr(sm).matvec(x, y)
    return y


__all__ = ["DeviceCSR", "device_csr", "spmv", "csr_matvec", "vector_kernels", "kept"]
