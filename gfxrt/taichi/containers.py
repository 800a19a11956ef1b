"""`gr.Vector` and `gr.Matrix`: values in kernels and in Python scope, and Taichi's
container constructors `gr.Vector.field / ndarray`, `gr.Matrix.field / ndarray`.

Inside kernels they lower as the builtins of the same name (compiler/builtins.py); in
Python scope they make `HostMatrix` values (compiler/hostmatrix.py).
"""
from __future__ import annotations

from dataclasses import dataclass

from gfxrt.compiler import hostmatrix
from gfxrt.compiler.builtins import BUILTINS, Builtin
from gfxrt.compiler.hostmatrix import host_matrix, host_vector
from gfxrt.compiler.types import DType, f32

from .. import types
from ..data.ndarray import as_element_type
from ..data.ndarray import ndarray as _ndarray
from ..types import container_field as _make_field


def _scalar(dtype) -> DType:
    if dtype is None:
        return f32
    dt = as_element_type(dtype)
    if not isinstance(dt, DType):
        raise TypeError(f"the dtype of a vector / matrix container is a scalar dtype such as gr.f32, not {dt!r}")
    return dt


@dataclass(frozen=True, eq=False)
class VectorBuiltin(Builtin):
    """`gr.Vector`: `gr.Vector([x, y, z])`, `gr.Vector.field(n, dtype, shape)`,
    `gr.Vector.ndarray(n, dtype, shape)`."""

    def __call__(self, *args, **kwargs):
        if args and type(args[0]) is int:  # Taichi's pre-1.0 `ti.Vector(n, dt, shape=...)`: a field
            dt = args[1] if len(args) > 1 else kwargs.pop("dt", kwargs.pop("dtype", f32))
            return self.field(args[0], dt, **kwargs)
        return super().__call__(*args, **kwargs)

    def field(self, n: int, dtype=f32, shape=None, offset=None, needs_grad: bool = False, **kwargs):
        """A field of `shape` vectors of `n` `dtype`s (Taichi's ti.Vector.field)."""
        return _make_field(types.vector(n, _scalar(dtype)), shape, needs_grad, offset, kwargs)

    def ndarray(self, n: int, dtype=f32, shape=(), needs_grad: bool = False, **kwargs):
        """An ndarray of `shape` vectors of `n` `dtype`s (Taichi's ti.Vector.ndarray)."""
        kwargs.pop("layout", None)
        if kwargs:
            raise TypeError(f"unexpected argument(s) {', '.join(map(repr, kwargs))}")
        return _ndarray(types.vector(n, _scalar(dtype)), shape, needs_grad=needs_grad)

    def zero(self, dt, n: int):
        return hostmatrix.value([0] * n, _scalar(dt))

    def one(self, dt, n: int):
        return hostmatrix.value([1] * n, _scalar(dt))

    def unit(self, n: int, i: int, dt=None):
        """The i-th unit vector of n components; `dt` defaults to the default int, as Taichi's."""
        return hostmatrix.value([int(k == i) for k in range(n)], _scalar(int if dt is None else dt))


@dataclass(frozen=True, eq=False)
class MatrixBuiltin(Builtin):
    """`gr.Matrix`: `gr.Matrix([[a, b], [c, d]])`, `gr.Matrix.field(n, m, dtype, shape)`,
    `gr.Matrix.ndarray(n, m, dtype, shape)`."""

    def __call__(self, *args, **kwargs):
        if len(args) >= 2 and type(args[0]) is int and type(args[1]) is int:  # pre-1.0 `ti.Matrix(n, m, dt, shape=)`
            dt = args[2] if len(args) > 2 else kwargs.pop("dt", kwargs.pop("dtype", f32))
            return self.field(args[0], args[1], dt, **kwargs)
        return super().__call__(*args, **kwargs)

    def field(self, n: int, m: int, dtype=f32, shape=None, offset=None, needs_grad: bool = False, **kwargs):
        """A field of `shape` n-by-m matrices of `dtype` (Taichi's ti.Matrix.field)."""
        return _make_field(types.matrix(n, m, _scalar(dtype)), shape, needs_grad, offset, kwargs)

    def ndarray(self, n: int, m: int, dtype=f32, shape=(), needs_grad: bool = False, **kwargs):
        """An ndarray of `shape` n-by-m matrices of `dtype` (Taichi's ti.Matrix.ndarray)."""
        kwargs.pop("layout", None)
        if kwargs:
            raise TypeError(f"unexpected argument(s) {', '.join(map(repr, kwargs))}")
        return _ndarray(types.matrix(n, m, _scalar(dtype)), shape, needs_grad=needs_grad)

    def zero(self, dt, n: int, m: int | None = None):
        return hostmatrix.value([[0] * (n if m is None else m)] * n, _scalar(dt))

    def one(self, dt, n: int, m: int | None = None):
        return hostmatrix.value([[1] * (n if m is None else m)] * n, _scalar(dt))

    def identity(self, dt, n: int):
        return hostmatrix.value([[int(r == c) for c in range(n)] for r in range(n)], _scalar(dt))

    def diag(self, dim: int, val):
        """`gr.Matrix.diag(dim, val)`: val on the diagonal (also in kernels, val at run time)."""
        return hostmatrix.value([[val if r == c else 0 * val for c in range(dim)] for r in range(dim)],
                                getattr(val, "dtype", None))

    def rows(self, rows):
        """`gr.Matrix.rows([v0, v1])`: a matrix with these rows (also in kernels)."""
        return hostmatrix.value([hostmatrix.components(r)[0] for r in rows], _common_dtype(rows))

    def cols(self, cols):
        """`gr.Matrix.cols([v0, v1])`: a matrix with these columns (also in kernels)."""
        cs = [hostmatrix.components(c)[0] for c in cols]
        return hostmatrix.value([list(r) for r in zip(*cs)], _common_dtype(cols))


def _common_dtype(values):
    """The dtype all of `values` share (gr.Vector values of one dtype), else None (numpy's default)."""
    dts = {getattr(v, "dtype", None) for v in values}
    return dts.pop() if len(dts) == 1 else None


Vector = VectorBuiltin("Vector", BUILTINS["Vector"].lower, host_vector, BUILTINS["Vector"].doc)
Matrix = MatrixBuiltin("Matrix", BUILTINS["Matrix"].lower, host_matrix, BUILTINS["Matrix"].doc)

__all__ = ["Vector", "Matrix"]
