"""Small-matrix decompositions for kernels, as in Taichi: `gr.svd`, `gr.polar_decompose`,
`gr.sym_eig`, `gr.eig`, `gr.solve` (2x2 and 3x3): their lowerings (gfxrt/taichi/linalg.py names them and adds the
host versions).

They are @gr.funcs written in the kernel language, inlined where they are called. `dt`
(gr.f32 / gr.f64) is the type they compute in; by default the default float type
(`gr.init(default_fp=...)`), as in Taichi. Sign conventions follow Taichi's: the 3x3 `svd`
(McAdams et al.) returns rotations U and V (det +1) and singular values sorted by decreasing
magnitude, the last one negative when det(A) < 0; the 2x2 one (Taichi's svd2d) returns
nonnegative singular values, larger first, and a rotation V (U is a reflection when
det(A) < 0). `polar_decompose` returns R and S = R^T A (R a rotation for 3x3; for 2x2 a
rotation when det(A) > 0, as Taichi's polar_decompose2d).

The 3x3 SVD is McAdams et al.'s scheme with exact rotations: cyclic Jacobi on A^T A for V,
columns of A V sorted by norm, then a Givens QR of A V for U and the singular values (robust
for rank-deficient A: U stays a rotation). `sym_eig` of a 3x3 matrix is cyclic Jacobi too
(accurate for repeated eigenvalues, where Cardano's formula loses digits).
"""
from __future__ import annotations

from . import semantic as _sem
from .builtins import BUILTINS as _B
from .builtins import inline_module_func
from .frontend.values import Compound
from .func import func
from .types import DType

_static = _B["static"]
_sqrt = _B["sqrt"]
_Matrix, _Vector = _B["Matrix"], _B["Vector"]


# -- helpers (kernel language) ----------------------------------------------------------

@func
def _rotate(S, V, p, q, r, cut):
    """One Jacobi rotation zeroing S[p, q] (r: the third index); V accumulates it. None where
    |S[p, q]| < cut (McAdams' tiny_number test, as in Taichi's svd: a nearly diagonal S stays)."""
    apq = S[p, q]
    if apq != 0 and not abs(apq) < cut:
        # t = sgn(theta) / (|theta| + sqrt(theta^2 + 1)) with theta = d / h, written without
        # theta: nothing overflows when apq is tiny, in the forward pass or its gradient
        d = S[q, q] - S[p, p]
        h = 2.0 * apq
        if d * d + h * h < 1e-30:  # both below ~1e-15: scale them by the larger, or d^2 + h^2 underflows
            m = max(abs(d), abs(h))  # to 0 where subnormals flush (GPUs, lavapipe), t = h / 0, and the
            d = d / m                # svd is NaN (a near-identity F in implicit_fem)
            h = h / m
        t = h / (abs(d) + _sqrt(d * d + h * h))
        if d < 0:
            t = -t
        c = 1.0 / _sqrt(t * t + 1.0)
        s = t * c
        app = S[p, p] - t * apq
        aqq = S[q, q] + t * apq
        arp = S[r, p]
        arq = S[r, q]
        S[p, p] = app
        S[q, q] = aqq
        S[p, q] = 0.0
        S[q, p] = 0.0
        S[r, p] = c * arp - s * arq
        S[p, r] = c * arp - s * arq
        S[r, q] = s * arp + c * arq
        S[q, r] = s * arp + c * arq
        for k in _static(range(3)):
            vkp = V[k, p]
            vkq = V[k, q]
            V[k, p] = c * vkp - s * vkq
            V[k, q] = s * vkp + c * vkq
    return S, V


@func
def _jacobi_sym3(S, V, sweeps, cut):
    """Diagonalize the symmetric 3x3 S by cyclic Jacobi rotations; V accumulates them
    (S_in = V S_out V^T). Rotations are exact (Numerical Recipes' form); off-diagonal
    entries below `cut` are left (0: every nonzero one is rotated away)."""
    for _ in range(sweeps):
        S, V = _rotate(S, V, 0, 1, 2, cut)
        S, V = _rotate(S, V, 0, 2, 1, cut)
        S, V = _rotate(S, V, 1, 2, 0, cut)
    return S, V


@func
def _swap_cols(M, i, j):
    """Columns i and j exchanged, one of them negated (a rotation stays a rotation)."""
    out = M
    for k in _static(range(3)):
        out[k, i] = M[k, j]
        out[k, j] = -M[k, i]
    return out


@func
def _givens_rows(B, U, p, q, k):
    """Zero B[q, k] against the pivot B[p, k] with a rotation of rows p and q; U = U G^T."""
    a = B[p, k]
    b = B[q, k]
    r2 = a * a + b * b
    c = a * 0.0 + 1.0
    s = a * 0.0
    if r2 > 0:  # sqrt only of a positive number: its gradient stays finite
        r = _sqrt(r2)
        c = a / r
        s = b / r
    for j in _static(range(3)):
        bp = B[p, j]
        bq = B[q, j]
        B[p, j] = c * bp + s * bq
        B[q, j] = c * bq - s * bp
        up = U[j, p]
        uq = U[j, q]
        U[j, p] = c * up + s * uq
        U[j, q] = c * uq - s * up
    B[q, k] = 0.0
    return B, U


@func
def _svd3(A, sweeps, cut):
    z = A[0, 0] * 0.0
    one = z + 1.0
    eye = _Matrix([[one, z, z], [z, one, z], [z, z, one]])
    S, V = _jacobi_sym3(A.transpose() @ A, eye, sweeps, cut)
    B = A @ V
    n0 = B[0, 0] * B[0, 0] + B[1, 0] * B[1, 0] + B[2, 0] * B[2, 0]
    n1 = B[0, 1] * B[0, 1] + B[1, 1] * B[1, 1] + B[2, 1] * B[2, 1]
    n2 = B[0, 2] * B[0, 2] + B[1, 2] * B[1, 2] + B[2, 2] * B[2, 2]
    if n0 < n1:
        B = _swap_cols(B, 0, 1)
        V = _swap_cols(V, 0, 1)
        n0, n1 = n1, n0
    if n0 < n2:
        B = _swap_cols(B, 0, 2)
        V = _swap_cols(V, 0, 2)
        n0, n2 = n2, n0
    if n1 < n2:
        B = _swap_cols(B, 1, 2)
        V = _swap_cols(V, 1, 2)
    U = eye
    B, U = _givens_rows(B, U, 0, 1, 0)
    B, U = _givens_rows(B, U, 0, 2, 0)
    B, U = _givens_rows(B, U, 1, 2, 1)
    sig = _Matrix([[B[0, 0], z, z], [z, B[1, 1], z], [z, z, B[2, 2]]])
    return U, sig, V


@func
def _polar2(A):
    """Taichi's polar_decompose2d: A = U P with U a rotation (or the identity for A = 0)."""
    z = A[0, 0] * 0.0
    one = z + 1.0
    U = _Matrix([[one, z], [z, one]])
    P = A
    if A[0, 0] != 0 or A[0, 1] != 0 or A[1, 0] != 0 or A[1, 1] != 0:
        det_a = A[0, 0] * A[1, 1] - A[1, 0] * A[0, 1]
        B = _Matrix([[A[0, 0] + A[1, 1], A[0, 1] - A[1, 0]], [A[1, 0] - A[0, 1], A[1, 1] + A[0, 0]]])
        if det_a < 0:
            B = _Matrix([[A[0, 0] - A[1, 1], A[0, 1] + A[1, 0]], [A[1, 0] + A[0, 1], A[1, 1] - A[0, 0]]])
        k = 1.0 / _sqrt(abs(B[0, 0] * B[1, 1] - B[1, 0] * B[0, 1]))
        U = B * k
        P = (A.transpose() @ A + abs(det_a) * _Matrix([[one, z], [z, one]])) * k
    return U, P


@func
def _svd2(A, cut):
    """Taichi's svd2d: from the polar decomposition, a Jacobi rotation of its symmetric part,
    skipped (V = I, the singular values S's diagonal, exactly) where |S[0, 1]| < cut."""
    R, S = _polar2(A)
    z = A[0, 0] * 0.0
    c = z + 1.0
    s = z
    s1 = S[0, 0]
    s2 = S[1, 1]
    if not abs(S[0, 1]) < cut:
        tao = 0.5 * (S[0, 0] - S[1, 1])
        w = _sqrt(tao * tao + S[0, 1] * S[0, 1])
        t = z
        if tao > 0:
            t = S[0, 1] / (tao + w)
        else:
            t = S[0, 1] / (tao - w)
        c = 1.0 / _sqrt(t * t + 1.0)
        s = -t * c
        s1 = c * c * S[0, 0] - 2.0 * c * s * S[0, 1] + s * s * S[1, 1]
        s2 = s * s * S[0, 0] + 2.0 * c * s * S[0, 1] + c * c * S[1, 1]
    V = _Matrix([[c, s], [-s, c]])
    if s1 < s2:
        s1, s2 = s2, s1
        V = _Matrix([[-s, c], [-c, -s]])
    return R @ V, _Matrix([[s1, z], [z, s2]]), V


@func
def _sym_eig2(A):
    """Taichi's sym_eig2x2: eigenvalues (larger first) and unit eigenvectors as columns."""
    tr = A[0, 0] + A[1, 1]
    dd = A[0, 0] - A[1, 1]
    g2 = max(dd * dd + 4.0 * A[0, 1] * A[1, 0], 0.0)  # tr^2 - 4 det without its cancellation
    gap = g2 * 0.0
    if g2 > 0:
        gap = _sqrt(g2)
    l1 = (tr + gap) * 0.5
    l2 = (tr - gap) * 0.5
    z = A[0, 0] * 0.0
    v1 = _Vector([z, z + 1.0])
    v2 = _Vector([z + 1.0, z])
    if A[0, 1] != 0 or A[1, 0] != 0:
        # columns of (A - l I): the one with the larger norm is the more accurate direction
        a = _Vector([A[0, 0] - l2, A[1, 0]])
        b = _Vector([A[0, 1], A[1, 1] - l2])
        v1 = a.normalized() if a.norm_sqr() >= b.norm_sqr() else b.normalized()
        v2 = _Vector([-v1[1], v1[0]])
    elif A[0, 0] >= A[1, 1]:
        v1 = _Vector([z + 1.0, z])
        v2 = _Vector([z, z + 1.0])
    return _Vector([l1, l2]), _Matrix([[v1[0], v2[0]], [v1[1], v2[1]]])


@func
def _sym_eig3(A, sweeps):
    z = A[0, 0] * 0.0
    one = z + 1.0
    S, V = _jacobi_sym3(A, _Matrix([[one, z, z], [z, one, z], [z, z, one]]), sweeps, 0.0)
    w0 = S[0, 0]
    w1 = S[1, 1]
    w2 = S[2, 2]
    if w0 < w1:  # decreasing, as Taichi's Cardano formula orders them
        w0, w1 = w1, w0
        V = _swap_cols(V, 0, 1)
    if w0 < w2:
        w0, w2 = w2, w0
        V = _swap_cols(V, 0, 2)
    if w1 < w2:
        w1, w2 = w2, w1
        V = _swap_cols(V, 1, 2)
    return _Vector([w0, w1, w2]), V


@func
def _eig2(A):
    """Taichi's eig2x2: eigenvalues as rows (re, im) of a 2x2 matrix, eigenvectors as the
    columns of a 4x2 matrix (re, im, re, im)."""
    tr = A[0, 0] + A[1, 1]
    dd = A[0, 0] - A[1, 1]
    gap = dd * dd + 4.0 * A[0, 1] * A[1, 0]  # tr^2 - 4 det without its cancellation
    z = A[0, 0] * 0.0
    one = z + 1.0
    vals = _Matrix([[z, z], [z, z]])
    vecs = _Matrix([[z, z], [z, z], [z, z], [z, z]])
    if gap > 0:
        r = _sqrt(gap)
        l1 = (tr + r) * 0.5
        l2 = (tr - r) * 0.5
        vals = _Matrix([[l1, z], [l2, z]])
        if A[0, 1] == 0 and A[1, 0] == 0:
            if A[0, 0] >= A[1, 1]:
                vecs = _Matrix([[one, z], [z, z], [z, one], [z, z]])
            else:
                vecs = _Matrix([[z, one], [z, z], [one, z], [z, z]])
        else:
            v1 = _Vector([A[0, 1], l1 - A[0, 0]])   # (A - l1 I) v1 = 0
            if abs(A[0, 1]) + abs(l1 - A[0, 0]) < abs(l1 - A[1, 1]) + abs(A[1, 0]):
                v1 = _Vector([l1 - A[1, 1], A[1, 0]])
            v2 = _Vector([A[0, 1], l2 - A[0, 0]])
            if abs(A[0, 1]) + abs(l2 - A[0, 0]) < abs(l2 - A[1, 1]) + abs(A[1, 0]):
                v2 = _Vector([l2 - A[1, 1], A[1, 0]])
            v1 = v1.normalized()
            v2 = v2.normalized()
            vecs = _Matrix([[v1[0], v2[0]], [z, z], [v1[1], v2[1]], [z, z]])
    else:
        im = _sqrt(-gap) * 0.5
        re = tr * 0.5
        vals = _Matrix([[re, im], [re, -im]])
        # (A - (re + i im) I) v = 0 with v = (A01, (re - A00) + i im); the second is its conjugate
        if A[0, 1] != 0:
            x = _Vector([A[0, 1], z, re - A[0, 0], im])
        else:
            x = _Vector([re - A[1, 1] + z, im, A[1, 0], z])
        x = x.normalized()
        vecs = _Matrix([[x[0], x[0]], [x[1], -x[1]], [x[2], x[2]], [x[3], -x[3]]])
    return vals, vecs


@func
def _solve(A, b, dt):
    """Taichi's ti.solve: Gauss elimination with partial pivoting (the first row of largest
    magnitude), then back substitution, in the same operation order as Taichi's _funcs.py."""
    n = _static(A.n)
    M = A.cast(dt)
    y = b.cast(dt)
    for i in _static(range(n)):
        max_row = i
        max_v = abs(M[i, i])
        for j in _static(range(i + 1, n)):
            if abs(M[j, i]) > max_v:
                max_row = j
                max_v = abs(M[j, i])
        for j in _static(range(i + 1, n)):
            if max_row == j:
                for c in _static(range(n)):
                    M[i, c], M[j, c] = M[j, c], M[i, c]
                y[i], y[j] = y[j], y[i]
        for j in _static(range(i + 1, n)):
            scale = M[j, i] / M[i, i]
            for k in _static(range(i + 1, n)):
                M[j, k] -= M[i, k] * scale
            y[j] -= y[i] * scale
    x = y
    for i in _static(range(n - 1, -1, -1)):
        for k in _static(range(i + 1, n)):
            x[i] -= M[i, k] * x[k]
        x[i] = x[i] / M[i, i]
    return x


def _solve_lower(fe, args, kwargs, loc):
    names = ("A", "b", "dt")
    if len(args) > 3 or set(kwargs) - set(names):
        fe.error("gr.solve(A, b, dt=None) takes at most these arguments", loc)
    bound = dict(zip(names, args))
    bound.update(kwargs)
    A, b = bound.get("A"), bound.get("b")
    if not isinstance(A, Compound) or len(A.shape) != 2 or A.shape[0] != A.shape[1] or A.shape[0] not in (2, 3):
        fe.error(f"gr.solve takes a 2x2 or 3x3 matrix, got {fe.describe(A)}", loc)
    if not isinstance(b, Compound) or b.shape != (A.shape[0],):
        fe.error(f"gr.solve: b must be a vector of {A.shape[0]}, got {fe.describe(b)}", loc)
    dt = bound.get("dt")
    dt = _sem.DEFAULTS["fp"] if dt is None else dt
    if not isinstance(dt, DType) or not dt.is_float:
        fe.error(f"gr.solve: dt must be a float dtype (gr.f32 or gr.f64), got {dt!r}", loc)
    return inline_module_func(fe, _solve, [A, b, dt], {}, loc)


# -- the lowerings ---------------------------------------------------------------------

def _lowering(impl, name: str, square: tuple, iterative: bool = True):
    """The kernel-side call: check the shape, resolve dt (default: the default float type)
    and the Jacobi sweeps (5 for f32, 8 for f64, as Taichi's svd), inline the @gr.func."""
    def lower(fe, args, kwargs, loc):
        names = ("A", "dt", "iters") if iterative else ("A", "dt")
        if len(args) > len(names) or set(kwargs) - set(names):
            fe.error(f"gr.{name}({', '.join(names)}) takes at most these arguments", loc)
        bound = dict(zip(names, args))
        bound.update(kwargs)
        A = bound.get("A")
        if not isinstance(A, Compound) or len(A.shape) != 2 or A.shape[0] != A.shape[1] or A.shape[0] not in square:
            sizes = " and ".join(f"{n}x{n}" for n in square)
            fe.error(f"gr.{name} takes a {sizes} matrix, got {fe.describe(A)}", loc)
        dt = bound.get("dt")
        if dt is None:
            dt = _sem.DEFAULTS["fp"]
        if not isinstance(dt, DType) or not dt.is_float:
            fe.error(f"gr.{name}: dt must be a float dtype (gr.f32 or gr.f64), got {dt!r}", loc)
        call = [A, dt]
        if iterative:
            iters = bound.get("iters")
            call.append((8 if dt.size == 8 else 5) if iters is None else iters)
        return inline_module_func(fe, impl, call, {}, loc)
    return lower


# Below these off-diagonal magnitudes the svd does not rotate: 2x2, |S[0, 1]| of the polar
# factor (Taichi's svd2d: 1e-5); 3x3, |(A^T A)[p, q]| in the Jacobi sweeps (Taichi's McAdams
# svd: (S[p, q] / 2)^2 < 1e-20). Taichi's values for f32 (and f16): a deformation gradient near
# the identity keeps V = I and its singular values exact, as in Taichi, where a 45-degree
# rotation of the nearly degenerate S would move them by ulps each step (MPM programs drift:
# issue 24). In f64 the same distance from the precision, times 2**-29 (Taichi's values
# everywhere would cost f64 ten digits on nearly diagonal matrices).
_SVD2_CUT = 1e-5
_SVD3_CUT = 2e-10
_F64 = 2.0 ** -29


@func
def _svd(A, dt, iters):
    M = A.cast(dt)
    scale = _static(_F64 if dt.size == 8 else 1.0)
    if _static(A.n == 2):
        return _svd2(M, _SVD2_CUT * scale)
    else:
        return _svd3(M, iters, _SVD3_CUT * scale)


@func
def _polar(A, dt, iters):
    M = A.cast(dt)
    if _static(A.n == 2):
        return _polar2(M)
    else:
        U, sig, V = _svd3(M, iters, _SVD3_CUT * _static(_F64 if dt.size == 8 else 1.0))
        return U @ V.transpose(), V @ sig @ V.transpose()


@func
def _sym(A, dt, iters):
    M = A.cast(dt)
    if _static(A.n == 2):
        return _sym_eig2(M)
    else:
        return _sym_eig3(M, iters)


@func
def _eig(A, dt):
    return _eig2(A.cast(dt))


LOWER = {"svd": _lowering(_svd, "svd", (2, 3)), "polar_decompose": _lowering(_polar, "polar_decompose", (2, 3)),
         "sym_eig": _lowering(_sym, "sym_eig", (2, 3)), "eig": _lowering(_eig, "eig", (2,), iterative=False),
         "solve": _solve_lower}
"""name -> the lowering of gr.<name>"""
