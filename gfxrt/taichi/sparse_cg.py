"""`gr.linalg.SparseCG`, `gr.linalg.LinearOperator`, `gr.linalg.MatrixFreeCG` and
`gr.linalg.MatrixFreeBICGSTAB`: iterative solvers that run on the device.

SparseCG is Taichi's CPU solver, Eigen's ConjugateGradient: Jacobi-preconditioned CG that stops
when |r| <= atol * |b| (a tolerance relative to b, as Eigen's) or after max_iter iterations, on
the CSR matrix's device copy (gfxrt/taichi/sparse_device.py); it starts from x0 when one is given.
The matrix-free solvers are Taichi's Python ones: A is a LinearOperator around a kernel
`matvec(x, Ax)` on fields, b and x are 1-, 2- or 3-D scalar fields, x is updated in place.
"""
# no `from __future__ import annotations`: the kernels made in functions annotate with a closure's dtype
import functools
import math
from types import SimpleNamespace

from gfxrt.compiler.builtins import BUILTINS
from gfxrt.compiler.npcompat import np
from gfxrt.compiler.types import f32, f64

from ..data.field import Field, field
from ..data.ndarray import Ndarray, ndarray
from ..kernel import kernel
from ..types import template
from .sparse_device import device_csr, kept, vector_kernels
from .sparse_matrix import SparseMatrix

cast, grouped = BUILTINS["cast"], BUILTINS["grouped"]


def _vector(v, dt, n: int, what: str) -> Ndarray:
    if isinstance(v, Ndarray) and not isinstance(v, Field) and v.dtype == dt and v.shape == (n,):
        return v
    a = np.asarray(v.to_numpy() if isinstance(v, Ndarray) else v).reshape(-1)
    if a.shape[0] != n:
        raise ValueError(f"{what} has {a.shape[0]} entries; the matrix needs {n}")
    out = ndarray(dt, shape=n)
    out.from_numpy(a.astype(dt.numpy))
    return out


class SparseCG:
    """Conjugate gradients for A x = b, A a symmetric positive definite SparseMatrix:
    `x, ok = gr.linalg.SparseCG(A, b, x0=None, max_iter=50, atol=1e-6).solve()`."""

    def __init__(self, A, b, x0=None, max_iter=50, atol=1e-6):
        if not isinstance(A, SparseMatrix):
            raise TypeError(f"SparseCG solves a gr.linalg.SparseMatrix, not {type(A).__name__}")
        if A.n != A.m:
            raise ValueError(f"SparseCG needs a square matrix, not {A.shape}")
        self.matrix, self.dtype = A, A.dtype
        self.max_iter, self.atol = int(max_iter), float(atol)
        self.b = _vector(b, A.dtype, A.n, "b")
        self.x0 = None if x0 is None else _vector(x0, A.dtype, A.n, "x0")
        self.iterations, self.error = 0, 0.0

    def solve(self):
        """(x, converged): x a numpy array, converged whether |A x - b| <= atol * |b|."""
        A, dt, n = self.matrix, self.dtype, self.matrix.n
        k, dev, b = vector_kernels(dt), device_csr(A), self.b
        x, r, p, z, q = (ndarray(dt, shape=n) for _ in range(5))
        if self.x0 is None:
            x.fill(0)
        else:
            x.from_numpy(self.x0.to_numpy())
        dev.matvec(x, q)
        k.residual(b, q, r)
        rhs2 = k.dot(b, b)
        self.iterations, self.error = 0, 0.0
        if rhs2 == 0:
            return np.zeros(n, dt.numpy), True
        tiny = float(np.finfo(dt.numpy).tiny)
        threshold = max(self.atol * self.atol * rhs2, tiny)
        res2 = k.dot(r, r)
        if res2 >= threshold:
            diag = A.matrix.diagonal().astype(np.float64)
            inv = ndarray(dt, shape=n)
            inv.from_numpy(np.where(diag != 0, 1.0 / np.where(diag != 0, diag, 1.0), 1.0).astype(dt.numpy))
            k.scale(inv, r, p)
            rz = k.dot(r, p)
            i = 0
            while i < self.max_iter:
                dev.matvec(p, q)
                alpha = rz / k.dot(p, q)
                k.axpy(alpha, p, x)
                k.axpy(-alpha, q, r)
                res2 = k.dot(r, r)
                if res2 < threshold:
                    break
                k.scale(inv, r, z)
                rz_old, rz = rz, k.dot(r, z)
                k.xpay(z, rz / rz_old, p)
                i += 1
            self.iterations = i
        self.error = math.sqrt(res2 / rhs2)
        return x.to_numpy(), self.error <= self.atol


class LinearOperator:
    """A matrix given by its product: `matvec_kernel(x, Ax)` writes A @ x into the field Ax."""

    def __init__(self, matvec_kernel):
        self._matvec = matvec_kernel

    def matvec(self, x, Ax) -> None:
        if x.shape != Ax.shape:
            raise ValueError(f"Dimension mismatch x.shape{x.shape} != Ax.shape{Ax.shape}.")
        self._matvec(x, Ax)


@functools.cache
def _field_kernels(dt) -> SimpleNamespace:
    """The field kernels of the matrix-free solvers, for values of dtype dt."""

    @kernel
    def dot_f32(p: template(), q: template()) -> dt:
        result = cast(0, dt)
        for idx in grouped(p):
            result += p[idx] * q[idx]
        return result

    @kernel
    def dot_into(p: template(), q: template(), out: template()):
        """out[None] += the sum (64-bit sums: kernel-scope variables hold 32 bits)."""
        for idx in grouped(p):
            out[None] += p[idx] * q[idx]

    def dot64(p, q) -> float:
        acc = kept(("dot64 field", dt), lambda: field(dt, shape=()))
        acc.fill(0)
        dot_into(p, q, acc)
        return float(acc.to_numpy())

    @kernel
    def combine(out: template(), a: template(), s: dt, b: template()):
        """out = a + s * b."""
        for idx in grouped(out):
            out[idx] = a[idx] + s * b[idx]

    @kernel
    def copy(src: template(), dst: template()):
        for idx in grouped(dst):
            dst[idx] = src[idx]

    @kernel
    def zero(a: template()):
        for idx in grouped(a):
            a[idx] = cast(0, dt)

    @kernel
    def bicg_p(p: template(), r: template(), ap: template(), beta: dt, omega: dt):
        """p = r + beta * (p - omega * Ap)."""
        for idx in grouped(p):
            p[idx] = r[idx] + beta * (p[idx] - omega * ap[idx])

    @kernel
    def bicg_x(x: template(), p: template(), s: template(), alpha: dt, omega: dt):
        """x += alpha * p_hat + omega * s_hat."""
        for idx in grouped(x):
            x[idx] += alpha * p[idx] + omega * s[idx]

    return SimpleNamespace(dot=dot_f32 if dt.bits == 32 else dot64,
                           combine=combine, copy=copy, zero=zero, bicg_p=bicg_p, bicg_x=bicg_x)


def _work(shape: tuple, dt, count: int) -> tuple:
    """Work fields of one shape and dtype, kept across solves (a kernel specializes per field)."""
    return kept(("work", shape, dt, count), lambda: tuple(field(dt, shape=shape) for _ in range(count)))


def _check(b, x, name: str):
    if not isinstance(b, Field) or not isinstance(x, Field):
        raise TypeError(f"{name} takes gr.field right-hand side and solution (b, x)")
    if b.dtype != x.dtype:
        raise TypeError(f"Dtype mismatch b.dtype({b.dtype}) != x.dtype({x.dtype}).")
    if b.dtype not in (f32, f64):
        raise TypeError(f"Not supported dtype: {b.dtype}")
    if b.shape != x.shape:
        raise ValueError(f"Dimension mismatch b.shape{b.shape} != x.shape{x.shape}.")
    if len(b.shape) not in (1, 2, 3):
        raise ValueError(f"{name} only support 1D, 2D, 3D inputs; your inputs is {len(b.shape)}-D.")
    return b.dtype


def MatrixFreeCG(A, b, x, tol=1e-6, maxiter=5000, quiet=True):  # noqa: N802  (Taichi's name)
    """Conjugate gradients for A x = b with A a LinearOperator; x (a field) holds the initial guess
    and receives the solution. Returns True when the squared residual fell below tol (Taichi's test)."""
    dt = _check(b, x, "MatrixFreeCG")
    k = _field_kernels(dt)
    p, r, Ap, Ax = _work(tuple(b.shape), dt, 4)
    A._matvec(x, Ax)
    k.combine(r, b, -1.0, Ax)
    k.zero(p)
    k.zero(Ap)
    initial = k.dot(r, r)
    if not quiet:
        print(f">>> Initial residual = {initial:e}")
    old = new = initial
    k.copy(r, p)
    if math.sqrt(initial) >= tol:
        for i in range(maxiter):
            A._matvec(p, Ap)
            alpha = old / k.dot(p, Ap)
            k.combine(x, x, alpha, p)
            k.combine(r, r, -alpha, Ap)
            new = k.dot(r, r)
            if math.sqrt(new) < tol:
                if not quiet:
                    print(">>> Conjugate Gradient method converged.")
                    print(f">>> #iterations {i}")
                break
            k.combine(p, r, new / old, p)
            old = new
            if not quiet:
                print(f">>> Iter = {i + 1:4}, Residual = {math.sqrt(new):e}")
    if new >= tol:
        if not quiet:
            print(f">>> Conjugate Gradient method failed to converge in {maxiter} iterations: "
                  f"Residual = {math.sqrt(new):e}")
        return False
    return True


def MatrixFreeBICGSTAB(A, b, x, tol=1e-6, maxiter=5000, quiet=True):  # noqa: N802  (Taichi's name)
    """BiCGSTAB for A x = b with A a LinearOperator (need not be symmetric); as MatrixFreeCG."""
    dt = _check(b, x, "MatrixFreeBICGSTAB")
    k = _field_kernels(dt)
    p, p_hat, r, r_tld, s, s_hat, t, Ap, Ax, Ashat = _work(tuple(b.shape), dt, 10)
    A._matvec(x, Ax)
    k.combine(r, b, -1.0, Ax)
    k.copy(b, r_tld)
    for f in (p, Ap, Ashat):
        k.zero(f)
    rho_1 = alpha = omega = 1.0
    rTr = k.dot(r, r)
    ok = True
    if not quiet:
        print(f">>> Initial residual = {rTr:e}")
    if math.sqrt(rTr) >= tol:
        for i in range(maxiter):
            rho = k.dot(r, r_tld)
            if rho == 0.0:
                if not quiet:
                    print(">>> BICGSTAB failed because r@r_tld = 0.")
                ok = False
                break
            if i == 0:
                k.copy(r, p)
            else:
                k.bicg_p(p, r, Ap, (rho / rho_1) * (alpha / omega), omega)
            k.copy(p, p_hat)
            A._matvec(p, Ap)
            alpha = rho / k.dot(r_tld, Ap)
            k.combine(s, r, -alpha, Ap)
            k.copy(s, s_hat)
            A._matvec(s_hat, Ashat)
            k.copy(Ashat, t)
            upper, lower = k.dot(t, s), k.dot(t, t)
            omega = upper / (lower + 1e-16) if lower == 0.0 else upper / lower
            k.bicg_x(x, p_hat, s_hat, alpha, omega)
            k.combine(r, s, -omega, t)
            rTr = k.dot(r, r)
            if not quiet:
                print(f">>> Iter = {i + 1:4}, Residual = {math.sqrt(rTr):e}")
            if math.sqrt(rTr) < tol:
                if not quiet:
                    print(f">>> BICGSTAB method converged at #iterations {i}")
                break
            rho_1 = rho
    if rTr >= tol:
        if not quiet:
            print(f">>> BICGSTAB failed to converge in {maxiter} iterations: Residual = {math.sqrt(rTr):e}")
        ok = False
    return ok


__all__ = ["SparseCG", "LinearOperator", "MatrixFreeCG", "MatrixFreeBICGSTAB"]
