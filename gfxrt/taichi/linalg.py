"""`gr.svd`, `gr.polar_decompose`, `gr.sym_eig`, `gr.eig` (2x2 and 3x3), as in Taichi: their
lowerings, and the conventions they follow, live on the compiler's side (compiler/linalg.py);
here are their host versions, which run through numpy.linalg with the same conventions
(numpy arrays, gr.Matrix values; `dt` defaults to gr.init's default float type).

This module is also `gr.linalg`, Taichi's `ti.linalg`: the sparse matrices and their solvers
(sparse_matrix, sparse_solver, sparse_cg beside it).
"""
from __future__ import annotations

from gfxrt.compiler import hostmatrix
from gfxrt.compiler.builtins import Builtin
from gfxrt.compiler.linalg import LOWER
from gfxrt.compiler.npcompat import np
from gfxrt.compiler.types import SCALARS

from ..engine.context import _state
from .sparse_cg import LinearOperator, MatrixFreeBICGSTAB, MatrixFreeCG, SparseCG
from .sparse_matrix import SparseMatrix, SparseMatrixBuilder
from .sparse_solver import SparseSolver

# -- host versions (numpy) -------------------------------------------------------------------

def _np_dt(dt, A):
    if dt is None:
        return np.float64 if A.dtype == np.float64 else SCALARS[_state["options"].default_fp].numpy
    return dt.numpy


def _hm(a):
    return hostmatrix.HostMatrix(a)


def _host_svd(A, dt=None):
    A = np.asarray(A)
    A = A.astype(np.float64)
    U, s, Vt = np.linalg.svd(A)
    V = Vt.T
    if len(s) == 2:  # Taichi's svd2d: V a rotation, singular values nonnegative
        if np.linalg.det(V) < 0:
            V[:, -1] *= -1
            U[:, -1] *= -1
    else:  # McAdams: rotations, the sign on the smallest value
        if np.linalg.det(U) < 0:
            U[:, -1] *= -1
            s[-1] *= -1
        if np.linalg.det(V) < 0:
            V[:, -1] *= -1
            s[-1] *= -1
    t = _np_dt(dt, A)
    return _hm(U.astype(t)), _hm(np.diag(s).astype(t)), _hm(V.astype(t))


def _host_polar(A, dt=None):
    A = np.asarray(A)
    U, S, V = _host_svd(A, dt)
    U, S, V = (np.asarray(x, np.float64) for x in (U, S, V))
    t = _np_dt(dt, A)
    return _hm((U @ V.T).astype(t)), _hm((V @ S @ V.T).astype(t))


def _host_sym_eig(A, dt=None):
    A = np.asarray(A)
    w, v = np.linalg.eigh(A.astype(np.float64))
    t = _np_dt(dt, A)
    return _hm(w[::-1].astype(t)), _hm(v[:, ::-1].astype(t))


def _host_eig(A, dt=None):
    A = np.asarray(A)
    w, v = np.linalg.eig(A.astype(np.float64))
    t = _np_dt(dt, A)
    vals = np.stack([w.real, w.imag], 1)
    vecs = np.empty((4, 2))
    vecs[0::2], vecs[1::2] = v.real, v.imag
    return _hm(vals.astype(t)), _hm(vecs.astype(t))


def _host_solve(A, b, dt=None):
    A, b = np.asarray(A), np.asarray(b)
    t = _np_dt(dt, A)
    return _hm(np.linalg.solve(A.astype(t), b.astype(t)).astype(t))


svd = Builtin("svd", LOWER["svd"], _host_svd, """`U, S, V = gr.svd(A, dt=None)`: A = U @ S @
V.T for a 2x2 or 3x3 matrix, S diagonal with decreasing magnitudes, as Taichi's ti.svd (3x3: U, V rotations,
the last value negative when det(A) < 0; 2x2: values nonnegative, V a rotation).""")
polar_decompose = Builtin("polar_decompose", LOWER["polar_decompose"], _host_polar,
                          """`R, S = gr.polar_decompose(A, dt=None)`: A = R @ S with R a rotation and S symmetric
(2x2, 3x3), as Taichi's ti.polar_decompose.""")
sym_eig = Builtin("sym_eig", LOWER["sym_eig"], _host_sym_eig, """`w, V = gr.sym_eig(A,
dt=None)`: eigenvalues w and unit eigenvectors (the columns of V) of a symmetric 2x2 or 3x3 matrix, as
ti.sym_eig.""")
eig = Builtin("eig", LOWER["eig"], _host_eig, """`vals, vecs = gr.eig(A,
dt=None)`: eigenvalues of a real 2x2 matrix as rows (real, imaginary) of a 2x2 matrix and eigenvectors as
the columns of a 4x2 matrix (real, imaginary, real, imaginary), as ti.eig.""")

solve = Builtin("solve", LOWER["solve"], _host_solve, """`x = gr.solve(A, b, dt=None)`: the solution of
A x = b for a 2x2 or 3x3 matrix, by Gauss elimination with partial pivoting, as ti.solve.""")

__all__ = ["svd", "polar_decompose", "sym_eig", "eig", "solve", "SparseMatrix", "SparseMatrixBuilder", "SparseSolver",
           "SparseCG", "LinearOperator", "MatrixFreeCG", "MatrixFreeBICGSTAB"]
