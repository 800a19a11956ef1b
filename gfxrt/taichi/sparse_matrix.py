"""`gr.linalg.SparseMatrixBuilder` and `gr.linalg.SparseMatrix`, as Taichi's.

A builder is filled on the device: a kernel with a `gr.types.sparse_matrix_builder()` argument
appends triplets with `A[i, j] += v` (compiler/frontend/triplets.py: one atomic add on a counter
per update). `build()` reads the triplets back, sums duplicates into a CSR matrix and empties the
builder, as Taichi's does. A SparseMatrix holds a scipy.sparse CSR matrix on the host (scipy is
the optional `gfxrt[sparse]` dependency); `A @ x` with a gr.ndarray runs on the device
(gfxrt/taichi/sparse_cg.py's CSR product).
"""
from __future__ import annotations

from gfxrt.compiler import npcompat
from gfxrt.compiler.npcompat import np
from gfxrt.compiler.types import DType, f32, i32

from ..data.field import Field, field
from ..data.ndarray import Ndarray, as_element_type
from .sparse_device import spmv


def scipy_sparse():
    """scipy.sparse, or an ImportError that says how to install it."""
    try:
        import scipy.sparse as sp
    except ImportError as e:  # scipy is optional: only gr.linalg's sparse matrices need it
        raise ImportError("gr.linalg's sparse matrices and solvers need scipy: pip install 'gfxrt[sparse]' "
                          "(or pip install scipy)") from e
    return sp


def _dtype(dtype) -> DType:
    dt = dtype if isinstance(dtype, DType) else as_element_type(dtype)
    if not isinstance(dt, DType) or not dt.is_float or dt.bits < 32:
        raise TypeError(f"sparse matrices hold gr.f32 or gr.f64 values, not {dtype!r}")
    return dt


def _same_shape(a, b, what: str) -> None:
    if a.shape != b.shape:
        raise ValueError(f"Dimension mismatch between sparse matrices {a.shape} and {b.shape} ({what})")


class SparseMatrix:
    """An n x m sparse matrix: Taichi's `ti.linalg.SparseMatrix(n, m, dtype=)` (all zeros), or the
    result of `SparseMatrixBuilder.build()` and of sparse arithmetic."""

    def __init__(self, n=None, m=None, sm=None, dtype=f32, storage_format="col_major"):
        sp = scipy_sparse()
        self.dtype = _dtype(dtype)
        if sm is None:
            if n is None:
                raise ValueError("SparseMatrix(n, m): give the number of rows")
            m = m if m else n
            sm = sp.csr_matrix((int(n), int(m)), dtype=self.dtype.numpy)
        self.matrix = sp.csr_matrix(sm, dtype=self.dtype.numpy)
        self.n, self.m = self.matrix.shape
        self._device = None  # the CSR arrays on the device, made by the first device product

    def _new(self, sm) -> SparseMatrix:
        return SparseMatrix(sm=sm, dtype=self.dtype)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n, self.m)

    def __add__(self, other):
        if not isinstance(other, SparseMatrix):
            return NotImplemented
        _same_shape(self, other, "+")
        return self._new(self.matrix + other.matrix)

    def __sub__(self, other):
        if not isinstance(other, SparseMatrix):
            return NotImplemented
        _same_shape(self, other, "-")
        return self._new(self.matrix - other.matrix)

    def __iadd__(self, other):
        out = self + other
        self.matrix, self._device = out.matrix, None
        return self

    def __isub__(self, other):
        out = self - other
        self.matrix, self._device = out.matrix, None
        return self

    def __neg__(self):
        return self._new(-self.matrix)

    def __mul__(self, other):
        """A number times every entry, or the entrywise product with a sparse matrix of the same shape."""
        if isinstance(other, SparseMatrix):
            _same_shape(self, other, "*")
            return self._new(self.matrix.multiply(other.matrix))
        if isinstance(other, (int, float)) and not isinstance(other, bool) \
                or npcompat.scalar_kind(other) in ("i", "u", "f"):
            return self._new(self.matrix * np.dtype(self.dtype.numpy).type(other))
        return NotImplemented

    __rmul__ = __mul__

    def transpose(self) -> SparseMatrix:
        return self._new(self.matrix.transpose())

    @property
    def T(self) -> SparseMatrix:  # noqa: N802  (numpy's name)
        return self.transpose()

    def __matmul__(self, other):
        """A sparse matrix (a sparse product), a numpy vector or a gr.field (a numpy vector back), or a
        gr.ndarray (a gr.ndarray back, computed on the device)."""
        if isinstance(other, SparseMatrix):
            if self.m != other.n:
                raise ValueError(f"Dimension mismatch between sparse matrices {self.shape} and {other.shape}")
            return self._new(self.matrix @ other.matrix)
        if isinstance(other, Field):
            other = other.to_numpy()
        if npcompat.is_array(other):
            if other.ndim != 1 or other.shape[0] != self.m:
                raise ValueError(f"Dimension mismatch between sparse matrix {self.shape} and vector {other.shape}")
            return (self.matrix @ other).astype(np.result_type(self.dtype.numpy, other.dtype), copy=False)
        if isinstance(other, Ndarray):
            if other.ndim != 1 or other.shape[0] != self.m:
                raise ValueError(f"Dimension mismatch between sparse matrix {self.shape} and vector {other.shape}")
            return spmv(self, other)
        raise TypeError(f"a sparse matrix multiplies a SparseMatrix, a numpy vector, a gr.field or a gr.ndarray, "
                        f"not {type(other).__name__}")

    def __getitem__(self, ij):
        i, j = ij
        return float(self.matrix[i, j])

    def __setitem__(self, ij, value) -> None:
        i, j = ij
        lil = self.matrix.tolil()
        lil[i, j] = value
        self.matrix, self._device = lil.tocsr(), None

    def to_numpy(self) -> np.ndarray:
        """The dense matrix (gfxrt's addition, for checks)."""
        return self.matrix.toarray()

    def __str__(self) -> str:
        """Rows as Taichi prints them: `[ 2, -1,  0]`, entries right-aligned to one width."""
        cells = [[f"{v:g}" for v in row] for row in self.matrix.toarray()]
        w = max((len(c) for row in cells for c in row), default=1)
        return "\n".join("[" + ", ".join(c.rjust(w) for c in row) + "]" for row in cells)

    __repr__ = __str__

    def build_from_ndarray(self, ndarray) -> None:
        """Sets the matrix from triplets (row, column, value) in a gr.ndarray (scalar, vector or
        matrix elements, read in order); entries at one position add up."""
        if not isinstance(ndarray, Ndarray):
            raise TypeError("SparseMatrix.build_from_ndarray takes a gr.ndarray (gr.Vector.ndarray, ...)")
        t = np.asarray(ndarray.to_numpy()).reshape(-1)
        if t.size % 3:
            raise ValueError("The number of ndarray elements must have a length that is divisible by 3.")
        t = t.reshape(-1, 3)
        self.matrix = _from_triplets(t[:, 0].astype(np.int64), t[:, 1].astype(np.int64), t[:, 2], self.shape,
                                     self.dtype)
        self._device = None

    def mmwrite(self, filename) -> None:
        """Writes the matrix to a Matrix Market file."""
        from scipy.io import mmwrite  # noqa: PLC0415  (the optional dependency)
        mmwrite(filename, self.matrix)


def _from_triplets(rows, cols, vals, shape, dtype: DType):
    sp = scipy_sparse()
    n, m = shape
    bad = (rows < 0) | (rows >= n) | (cols < 0) | (cols >= m)
    if bad.any():
        k = int(np.argmax(bad))
        raise IndexError(f"sparse matrix entry ({int(rows[k])}, {int(cols[k])}) is outside its shape {shape}")
    return sp.coo_matrix((vals.astype(dtype.numpy), (rows, cols)), shape=shape).tocsr()  # sums duplicates


class SparseMatrixBuilder:
    """Triplets for a num_rows x num_cols sparse matrix, appended on the device by kernels
    (`A[i, j] += v` on a `gr.types.sparse_matrix_builder()` argument); at most max_num_triplets
    of them between two build() calls."""

    def __init__(self, num_rows=None, num_cols=None, max_num_triplets=0, dtype=f32, storage_format="col_major"):
        scipy_sparse()
        if num_rows is None:
            raise ValueError("SparseMatrixBuilder(num_rows, num_cols, max_num_triplets): give the number of rows")
        self.num_rows = int(num_rows)
        self.num_cols = int(num_cols) if num_cols else self.num_rows
        self.dtype = _dtype(dtype)
        self.capacity = int(max_num_triplets)
        if self.capacity < 0:
            raise ValueError(f"max_num_triplets must be >= 0, got {max_num_triplets}")
        self._ij = field(i32, shape=2 * self.capacity + 1)  # [count, row0, col0, row1, col1, ...]
        self._v = field(self.dtype, shape=max(self.capacity, 1))
        self._ij.fill(0)

    @property
    def __gfxrt_triplets__(self):
        return (self._ij, self._v, self.capacity)

    def _triplets(self):
        ij = self._ij.to_numpy()
        count = int(ij[0])
        if count > self.capacity:
            raise RuntimeError(f"kernels added {count} triplets to a SparseMatrixBuilder made for "
                               f"max_num_triplets={self.capacity}; the {count - self.capacity} past it were dropped. "
                               f"Make the builder larger")
        return ij[1:1 + 2 * count:2], ij[2:2 + 2 * count:2], self._v.to_numpy()[:count]

    def print_triplets(self) -> None:
        rows, cols, vals = self._triplets()
        print(f"n={self.num_rows}, m={self.num_cols}, num_triplets={len(vals)} (max={self.capacity})")
        for r, c, v in zip(rows, cols, vals):
            print(f"({r}, {c}) val={v:g}")

    def build(self, dtype=None, _format="CSR") -> SparseMatrix:
        """The sparse matrix of the triplets (those at one position add up); empties the builder."""
        rows, cols, vals = self._triplets()
        sm = _from_triplets(rows.astype(np.int64), cols.astype(np.int64), vals, (self.num_rows, self.num_cols),
                            self.dtype)
        self._ij.fill(0)
        return SparseMatrix(sm=sm, dtype=self.dtype)


__all__ = ["SparseMatrix", "SparseMatrixBuilder", "scipy_sparse"]
