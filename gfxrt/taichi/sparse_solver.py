"""`gr.linalg.SparseSolver`: direct solves of a SparseMatrix, as Taichi's (Eigen's simplicial
LLT / LDLT and sparse LU), through scipy's SuperLU on the host.

LLT and LDLT read the lower triangle of the matrix, as Eigen does (the upper one is taken as its
mirror), and factor it without pivoting in a fill-reducing symmetric order; `info()` is False
when a pivot is not positive (LLT: the matrix is not positive definite) or is zero (LDLT), or
when LU finds the matrix singular. The factorization runs in double precision and the
solution comes back in the solver's dtype.
"""
from __future__ import annotations

from gfxrt.compiler import npcompat
from gfxrt.compiler.npcompat import np
from gfxrt.compiler.types import f32

from ..data.field import Field
from ..data.ndarray import Ndarray, ndarray
from ..errors import GfxrtError
from .sparse_matrix import SparseMatrix, _dtype, scipy_sparse

SOLVER_TYPES = ("LLT", "LDLT", "LU")
ORDERINGS = ("AMD", "COLAMD")


class SparseSolver:
    """Solves A x = b for a square SparseMatrix A: `compute(A)` (or `analyze_pattern(A)` then
    `factorize(A)`), then `solve(b)` as often as needed."""

    def __init__(self, dtype=f32, solver_type="LLT", ordering="AMD"):
        if solver_type not in SOLVER_TYPES or ordering not in ORDERINGS:
            raise ValueError(f"The solver type {solver_type} with {ordering} is not supported for now. Only "
                             f"{list(SOLVER_TYPES)} with {list(ORDERINGS)} are supported.")
        scipy_sparse()
        self.dtype = _dtype(dtype)
        self.solver_type, self.ordering = solver_type, ordering
        self.matrix = None
        self._lu = None
        self._ok = False

    def _check(self, sm) -> None:
        if not isinstance(sm, SparseMatrix):
            raise TypeError(f"The parameter type: {type(sm)} is not supported in linear solvers for now.")
        if sm.n != sm.m:
            raise ValueError(f"a sparse solver needs a square matrix, not {sm.shape}")

    def compute(self, sparse_matrix) -> None:
        """analyze_pattern, then factorize."""
        self.analyze_pattern(sparse_matrix)
        self.factorize(sparse_matrix)

    def analyze_pattern(self, sparse_matrix) -> None:
        """Checks the matrix (SuperLU chooses the fill-reducing order as it factorizes)."""
        self._check(sparse_matrix)
        if sparse_matrix.dtype != self.dtype:
            raise TypeError(f"The SparseSolver's dtype {self.dtype} is not consistent with the SparseMatrix's "
                            f"dtype {sparse_matrix.dtype}.")
        self.matrix = sparse_matrix

    def factorize(self, sparse_matrix) -> None:
        """Factors the matrix; `info()` says whether it succeeded."""
        self._check(sparse_matrix)
        self.matrix = sparse_matrix
        sp = scipy_sparse()
        from scipy.sparse.linalg import splu  # noqa: PLC0415  (the optional dependency)
        a = sparse_matrix.matrix.astype(np.float64)
        self._lu, self._ok = None, False
        try:
            if self.solver_type == "LU":
                self._lu = splu(a.tocsc(), permc_spec="COLAMD")
                self._ok = bool(np.all(np.isfinite(self._lu.U.diagonal())) and np.all(self._lu.U.diagonal() != 0))
                return
            lower = sp.tril(a)
            sym = (lower + sp.tril(a, -1).T).tocsc()
            self._lu = splu(sym, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                            options={"SymmetricMode": True})
        except RuntimeError:  # SuperLU: the matrix is exactly singular
            return
        d = self._lu.U.diagonal()
        pivots_on_diagonal = bool(np.array_equal(self._lu.perm_r, self._lu.perm_c))
        good = (d > 0) if self.solver_type == "LLT" else (d != 0)
        self._ok = pivots_on_diagonal and bool(np.all(good & np.isfinite(d)))

    def solve(self, b):
        """x with A x = b: a numpy array for a numpy array or a gr.field, a gr.ndarray for a gr.ndarray."""
        if self.matrix is None:
            raise GfxrtError("Please call compute() before calling solve().")
        if isinstance(b, Field):
            rhs = b.to_numpy()
        elif isinstance(b, Ndarray):
            rhs = b.to_numpy()
        elif npcompat.is_array(b):
            rhs = b
        else:
            raise TypeError(f"The parameter type: {type(b)} is not supported in linear solvers for now.")
        rhs = np.asarray(rhs, np.float64).reshape(-1)
        if rhs.shape[0] != self.matrix.n:
            raise ValueError(f"the right-hand side has {rhs.shape[0]} entries; the matrix is {self.matrix.shape}")
        x = self._lu.solve(rhs) if self._lu is not None else np.full(self.matrix.m, np.nan)
        if isinstance(b, Ndarray) and not isinstance(b, Field):
            out = ndarray(b.dtype, shape=self.matrix.m)
            out.from_numpy(x.astype(b.dtype.numpy))
            return out
        return x.astype(self.dtype.numpy)

    def info(self) -> bool:
        """True when the last factorization succeeded."""
        return self._ok


__all__ = ["SparseSolver"]
