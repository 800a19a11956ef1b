"""`gr.math` (gfxrt/math.py names it): Taichi's `ti.math` (GLSL-style types and functions) for kernels.

The types are `gr.types.vector` / `gr.types.matrix` aliases (`vec3(1.0, 2.0, 3.0)` in a kernel);
the functions are `@gr.func`s, inlined like any other, so they work on scalars and on the
vectors and matrices of the kernel language; the plain math (`sin`, `clamp`, ...) is the same
builtin as `gr.sin`. Semantics follow taichi/math/mathimpl.py: `sign` is a float (0.0 at 0),
`step(edge, x) == float(x >= edge)`, `mod(x, y) == x - y * floor(x / y)`, `round` rounds
halves away from zero (Taichi's LLVM backends). `floor`, `ceil` and `round` take Taichi's optional
dtype (`floor(x, int)`): this module owns them, and `gr.floor` / `gr.ceil` / `gr.round` are the same
builtins (compiler/taichi_ops.py re-exports them).
"""
from __future__ import annotations

import math as _m

from . import semantic as _sem
from .builtins import BUILTINS as _B
from .builtins import Builtin, inline_module_func
from .frontend.values import Compound as _Compound
from .func import func
from .ir import Node as _Node
from .ir import Op as _Op
from .npcompat import fn, np
from .types import DType, MatrixType, VectorType, f32, f64, i32, u32, u64

pi, e, inf, nan = _m.pi, _m.e, _m.inf, _m.nan

vec2, vec3, vec4 = VectorType(2, f32), VectorType(3, f32), VectorType(4, f32)
ivec2, ivec3, ivec4 = VectorType(2, i32), VectorType(3, i32), VectorType(4, i32)
uvec2, uvec3, uvec4 = VectorType(2, u32), VectorType(3, u32), VectorType(4, u32)
mat2, mat3, mat4 = MatrixType(2, 2, f32), MatrixType(3, 3, f32), MatrixType(4, 4, f32)
TYPE_NAMES = tuple(f"{k}{n}" for k in ("vec", "ivec", "uvec", "mat") for n in (2, 3, 4))


def use_default_types(fp: DType, ip: DType) -> None:
    """Rebind vec2 ... mat4 to gr.init's default types: Taichi's ti.math types are built from
    default_fp / default_ip (uvec from the unsigned type of default_ip), so under
    `gr.init(default_fp=gr.f64)` `gr.math.vec3` is a vector of f64, as Taichi's is."""
    up = u64 if ip.size == 8 else u32
    for n in (2, 3, 4):
        globals().update({f"vec{n}": VectorType(n, fp), f"ivec{n}": VectorType(n, ip), f"uvec{n}": VectorType(n, up),
                          f"mat{n}": MatrixType(n, n, fp)})

sin, cos, tan, asin, acos, atan2, tanh = _B["sin"], _B["cos"], _B["tan"], _B["asin"], _B["acos"], _B["atan2"], \
    _B["tanh"]
exp, log, sqrt, pow, clamp = _B["exp"], _B["log"], _B["sqrt"], _B["pow"], _B["clamp"]
_floor, _ceil = _B["floor"], _B["ceil"]  # the plain ops; `floor` / `ceil` below add Taichi's dtype
min, max, select, abs = _B["min"], _B["max"], _B["select"], _B["abs"]  # noqa: A001
cast = _B["cast"]
popcnt, clz = _B["popcnt"], _B["clz"]

_LN2 = _m.log(2.0)


def _scalar_row(name: str, fn, host, doc: str) -> Builtin:
    """A builtin applied component by component: `fn` is a @gr.func on scalars, inlined per
    component (so `step(0.5, v)` works on a vector v and on a scalar)."""
    def lower(fe, args, kwargs, loc):
        if kwargs:
            fe.error(f"gr.math.{name} takes no keyword arguments", loc)
        return fe.map_values(lambda *xs: inline_module_func(fe, fn, xs, {}, loc), args, loc)
    return Builtin(name, lower, host, doc)


@func
def _fract(x):
    return x - _floor(x)


@func
def _mix(x, y, a):
    return x * (1.0 - a) + y * a


@func
def _step(edge, x):
    return select(x < edge, 0.0, 1.0)


@func
def _smoothstep(edge0, edge1, x):
    t = clamp((x - edge0) / (edge1 - edge0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


@func
def _sign(x):
    return select(x > 0, 1.0, 0.0) - select(x < 0, 1.0, 0.0)


@func
def _mod(x, y):
    return x - y * _floor(x / y)


@func
def _round(x):
    return select(x < 0, -_floor(0.5 - x), _floor(x + 0.5))


@func
def _log2(x):
    return log(x) * (1.0 / _LN2)


@func
def _exp2(x):
    return exp(x * _LN2)


@func
def _degrees(x):
    return x * (180.0 / pi)


@func
def _radians(x):
    return x * (pi / 180.0)


def _np_smoothstep(e0, e1, x):
    t = np.clip((np.asarray(x) - e0) / (e1 - e0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


fract = _scalar_row("fract", _fract, lambda x: x - np.floor(x), "The fractional part: x - floor(x).")
mix = _scalar_row("mix", _mix, lambda x, y, a: x * (1.0 - a) + y * a, "Linear blend: x * (1 - a) + y * a.")
step = _scalar_row("step", _step, lambda edge, x: np.where(np.asarray(x) < edge, 0.0, 1.0)[()],
                   "0.0 where x < edge, else 1.0.")
smoothstep = _scalar_row("smoothstep", _smoothstep, _np_smoothstep,
                         "Hermite interpolation from 0 (x <= edge0) to 1 (x >= edge1).")
sign = _scalar_row("sign", _sign, lambda x: np.sign(x).astype(np.float32)[()], "-1.0, 0.0 or 1.0 (a float, as "
                   "in Taichi).")
mod = _scalar_row("mod", _mod, lambda x, y: x - y * np.floor(np.asarray(x) / y), "GLSL mod: x - y * floor(x / y).")
log2 = _scalar_row("log2", _log2, fn("log2"), "Base-2 logarithm.")
exp2 = _scalar_row("exp2", _exp2, fn("exp2"), "2 to the power x.")
degrees = _scalar_row("degrees", _degrees, fn("degrees"), "Radians to degrees.")
radians = _scalar_row("radians", _radians, fn("radians"), "Degrees to radians.")


def dtype_arg(fe, kwargs, args, n, name, loc, key="dtype"):
    """The optional dtype of `name(x, dtype)`: args[n] or kwargs[key] (Python's int / float allowed)."""
    dt = kwargs.pop(key, kwargs.pop("dt", args[n] if len(args) > n else None))
    if kwargs or len(args) > n + 1:
        fe.error(f"gr.{name}(x, dtype=None) takes a value and an optional dtype", loc)
    if dt is not None and not isinstance(dt, DType):
        dt = _sem.python_dtype(dt)  # `gr.floor(x, int)`: Taichi's default int
        if not isinstance(dt, DType):
            fe.error(f"gr.{name}: dtype must be a scalar type such as gr.i32, not {fe.describe(dt)}", loc)
    return dt


def _with_dtype(name, inner):
    """`name(x, dtype=None)`: inner(fe, scalar, loc) applied per component, then cast to dtype if given."""
    def lower(fe, args, kwargs, loc):
        if not args:
            fe.error(f"gr.{name}(x, dtype=None) takes a value", loc)
        dt = dtype_arg(fe, dict(kwargs), args, 1, name, loc)
        out = fe.map_values(lambda x: inner(fe, x, loc), (args[0],), loc)
        return out if dt is None else fe.map_values(lambda x: _sem.as_node(x, loc, dt), (out,), loc)
    return lower


def _host_with_dtype(fn):
    """The host twin: fn on floats (integers stay as they are), then gr.cast's conversion to dtype."""
    def host(x, dtype=None):
        a = np.asanyarray(x)  # a gr.Vector stays one (Taichi's ti.floor(v) is a vector with .xyz)
        r = fn(a)[()] if a.dtype.kind == "f" else a[()]
        return r if dtype is None else cast.host(r, _sem.python_dtype(dtype))
    return host


def _round_inner(fe, x, loc):
    if not _sem.dtype_of(x).is_float:
        return x  # an integer is its own nearest integer
    return inline_module_func(fe, _round, (x,), {}, loc)


def _op_inner(b):
    return lambda fe, x, loc: b.lower(fe, [x], {}, loc)


round = Builtin("round", _with_dtype("round", _round_inner),  # noqa: A001
                _host_with_dtype(lambda a: np.sign(a) * np.floor(np.abs(a) + 0.5)),
                "Nearest integer value, halves away from zero (Taichi's LLVM backends), as x's type or cast to "
                "dtype: round(x, dtype=None).")
floor = Builtin("floor", _with_dtype("floor", _op_inner(_floor)), _host_with_dtype(fn("floor")),
                "Largest integer value not greater than x (x's type, or cast to dtype): floor(x, dtype=None).")
ceil = Builtin("ceil", _with_dtype("ceil", _op_inner(_ceil)), _host_with_dtype(fn("ceil")),
               "Smallest integer value not less than x (x's type, or cast to dtype): ceil(x, dtype=None).")


def _eye_lower(fe, args, kwargs, loc):
    if len(args) != 1 or not isinstance(args[0], int) or kwargs:
        fe.error("gr.math.eye(n) takes one compile-time int", loc)
    n = args[0]
    return _Compound((n, n), tuple(1.0 if r == c else 0.0 for r in range(n) for c in range(n)))


def _float_class(name: str, test):
    """isnan / isinf on the bits (WGSL may assume finite math, so `x != x` is not reliable)."""
    def scalar(x, loc):
        t = _sem.dtype_of(x)
        if not t.is_float:
            return False
        if t == f64:
            bits = _sem.binary(_Op.BITAND, _Node(_Op.BITCAST, u64, (_sem.as_node(x, loc),), loc=loc), 2**63 - 1, loc)
            return _sem.binary(test, bits, 0x7FF0000000000000, loc)
        x = _sem.as_node(x, loc, f32)  # f16 -> f32 is exact
        bits = _sem.binary(_Op.BITAND, _Node(_Op.BITCAST, u32, (x,), loc=loc), 0x7FFFFFFF, loc)
        return _sem.binary(test, bits, 0x7F800000, loc)

    def lower(fe, args, kwargs, loc):
        if kwargs or len(args) != 1:
            fe.error(f"gr.math.{name}(x) takes one argument", loc)
        return fe.map_values(lambda x: scalar(x, loc), args, loc)
    return lower


isnan = Builtin("isnan", _float_class("isnan", _Op.GT), fn("isnan"), "True where x is NaN.")
isinf = Builtin("isinf", _float_class("isinf", _Op.EQ), fn("isinf"), "True where x is +-infinity.")

eye = Builtin("eye", _eye_lower, lambda n: np.eye(n, dtype=np.float32), "The n x n identity matrix.")


@func
def _dot(x, y):
    return x.dot(y)


@func
def _cross(x, y):
    return x.cross(y)


@func
def _length(x):
    return x.norm()


@func
def _distance(x, y):
    return (x - y).norm()


@func
def _normalize(x):
    return x.normalized()


@func
def _reflect(x, n):
    """x reflected about the normal n: x - 2 dot(n, x) n."""
    return x - 2.0 * n.dot(x) * n


@func
def _refract(x, n, eta):
    """The refraction of x through a surface of normal n, eta the ratio of indices; zero on total
    internal reflection."""
    ndx = n.dot(x)
    k = 1.0 - eta * eta * (1.0 - ndx * ndx)
    return select(k < 0.0, 0.0, eta * x - (eta * ndx + sqrt(max(k, 0.0))) * n)


@func
def _determinant(m):
    return m.determinant()


@func
def _inverse(m):
    return m.inverse()


@func
def _rotation2d(ang):
    """The 2x2 rotation by ang radians (counter-clockwise)."""
    c, s = cos(ang), sin(ang)
    return mat2([[c, -s], [s, c]])


@func
def _rot3(axis, ang):
    ca, sa = cos(ang), sin(ang)
    x, y, z = axis[0], axis[1], axis[2]
    k = mat3([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return mat3([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]) + sa * k + (1.0 - ca) * (k @ k)


@func
def _rotate2d(p, ang):
    ca, sa = cos(ang), sin(ang)
    return vec2(p[0] * ca - p[1] * sa, p[0] * sa + p[1] * ca)


@func
def _rotate3d(p, axis, ang):
    ca, sa = cos(ang), sin(ang)
    return _mix(p.dot(axis) * axis, p, ca) + axis.cross(p) * sa


@func
def _vdir(ang):
    return vec2(cos(ang), sin(ang))


@func
def _rot_yaw_pitch_roll(yaw, pitch, roll):
    ch, sh, cp, sp, cb, sb = cos(yaw), sin(yaw), cos(pitch), sin(pitch), cos(roll), sin(roll)
    return mat4([[ch * cb + sh * sp * sb, sb * cp, -sh * cb + ch * sp * sb, 0.0],
                 [-ch * sb + sh * sp * cb, cb * cp, sb * sh + ch * sp * cb, 0.0],
                 [sh * cp, -sp, ch * cp, 0.0],
                 [0.0, 0.0, 0.0, 1.0]])


@func
def _rotation3d(ang_x, ang_y, ang_z):
    return _rot_yaw_pitch_roll(ang_z, ang_x, ang_y)


@func
def _rot_by_axis(axis, ang):
    c, s = cos(ang), sin(ang)
    a = axis.normalized()
    t = (1.0 - c) * a
    return mat4([[c + t[0] * a[0], t[0] * a[1] + s * a[2], t[0] * a[2] - s * a[1], 0.0],
                 [t[1] * a[0] - s * a[2], c + t[1] * a[1], t[1] * a[2] + s * a[0], 0.0],
                 [t[2] * a[0] + s * a[1], t[2] * a[1] - s * a[0], c + t[2] * a[2], 0.0],
                 [0.0, 0.0, 0.0, 1.0]])


@func
def _translate(dx, dy, dz):
    """The 4x4 homogeneous translation by (dx, dy, dz)."""
    return mat4([[1.0, 0.0, 0.0, dx], [0.0, 1.0, 0.0, dy], [0.0, 0.0, 1.0, dz], [0.0, 0.0, 0.0, 1.0]])


@func
def _scale(sx, sy, sz):
    """The 4x4 homogeneous scaling by (sx, sy, sz)."""
    return mat4([[sx, 0.0, 0.0, 0.0], [0.0, sy, 0.0, 0.0], [0.0, 0.0, sz, 0.0], [0.0, 0.0, 0.0, 1.0]])


@func
def _cmul(a, b):
    """Complex product of two vec2 (re, im)."""
    return vec2(a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0])


@func
def _cconj(a):
    return vec2(a[0], -a[1])


@func
def _cdiv(a, b):
    d = b[0] * b[0] + b[1] * b[1]
    return vec2((a[0] * b[0] + a[1] * b[1]) / d, (a[1] * b[0] - a[0] * b[1]) / d)


@func
def _cexp(a):
    r = exp(a[0])
    return vec2(r * cos(a[1]), r * sin(a[1]))


@func
def _clog(a):
    return vec2(log(a.norm()), atan2(a[1], a[0]))


def _func_row(name: str, fn, host, doc: str) -> Builtin:
    """A @gr.func inlined in kernels, with a numpy version for the host."""
    def lower(fe, args, kwargs, loc):
        return inline_module_func(fe, fn, args, kwargs, loc)
    return Builtin(name, lower, host, doc)


def _np_refract(x, n, eta):
    x, n = np.asarray(x, np.float64), np.asarray(n, np.float64)
    ndx = float(n @ x)
    k = 1.0 - eta * eta * (1.0 - ndx * ndx)
    return np.zeros_like(x) if k < 0 else eta * x - (eta * ndx + np.sqrt(k)) * n


def _np_rot2(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s], [s, c]])


def _np_homogeneous(diag, col):
    m = np.diag([*diag, 1.0])
    m[:3, 3] = col
    return m


def _np_complex(fn):
    def host(*xs):
        out = fn(*[complex(x[0], x[1]) for x in xs])
        return np.array([out.real, out.imag])
    return host


dot = _func_row("dot", _dot, lambda x, y: np.dot(x, y), "Dot product of two vectors.")
cross = _func_row("cross", _cross, fn("cross"), "Cross product of two 3-vectors (a scalar for 2-vectors).")
length = _func_row("length", _length, fn("linalg.norm"), "Euclidean length of a vector.")
distance = _func_row("distance", _distance, lambda x, y: np.linalg.norm(np.subtract(x, y)),
                     "Euclidean distance between two points.")
normalize = _func_row("normalize", _normalize, lambda x: np.asarray(x) / np.linalg.norm(x), "x / length(x).")
reflect = _func_row("reflect", _reflect, lambda x, n: np.asarray(x) - 2.0 * np.dot(n, x) * np.asarray(n),
                    "x reflected about the normal n: x - 2 dot(n, x) n.")
refract = _func_row("refract", _refract, _np_refract, "The refraction of x through a surface of normal n, eta the "
                    "ratio of indices; zero on total internal reflection.")
determinant = _func_row("determinant", _determinant, fn("linalg.det"), "Determinant of a square matrix (up to 4x4).")
inverse = _func_row("inverse", _inverse, fn("linalg.inv"), "Inverse of a square matrix (up to 4x4).")
rotation2d = rot2 = _func_row("rotation2d", _rotation2d, _np_rot2, "The 2x2 rotation by ang radians.")
def _np_rot3(axis, ang):
    x, y, z = axis
    k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    return np.eye(3) + np.sin(ang) * k + (1.0 - np.cos(ang)) * (k @ k)


rot3 = _func_row("rot3", _rot3, _np_rot3, "The 3x3 rotation by ang radians about the unit vector axis (Rodrigues).")
rotate2d = _func_row("rotate2d", _rotate2d, lambda p, a: _np_rot2(a) @ np.asarray(p, np.float64),
                     "The 2d vector p rotated counter-clockwise by ang radians.")
rotate3d = _func_row("rotate3d", _rotate3d, lambda p, axis, a: _np_rot3(axis, a) @ np.asarray(p, np.float64),
                     "The 3d vector p rotated by ang radians about the unit vector axis.")
vdir = _func_row("vdir", _vdir, lambda a: np.array([np.cos(a), np.sin(a)]), "The unit 2d vector at angle ang.")
def _np_ypr(yaw, pitch, roll):
    ch, sh, cp, sp, cb, sb = np.cos(yaw), np.sin(yaw), np.cos(pitch), np.sin(pitch), np.cos(roll), np.sin(roll)
    return np.array([[ch * cb + sh * sp * sb, sb * cp, -sh * cb + ch * sp * sb, 0.0],
                     [-ch * sb + sh * sp * cb, cb * cp, sb * sh + ch * sp * cb, 0.0],
                     [sh * cp, -sp, ch * cp, 0.0], [0.0, 0.0, 0.0, 1.0]])


def _np_rot_by_axis(axis, ang):
    m = np.eye(4)
    a = np.asarray(axis, np.float64) / np.linalg.norm(axis)
    m[:3, :3] = _np_rot3(a, ang).T  # Taichi's rot_by_axis is the transpose of the Rodrigues matrix
    return m


rot_yaw_pitch_roll = _func_row("rot_yaw_pitch_roll", _rot_yaw_pitch_roll, _np_ypr,
                               "The 4x4 homogeneous rotation of Euler angles (Y axis first, X second, Z third).")
rotation3d = _func_row("rotation3d", _rotation3d, lambda x, y, z: _np_ypr(z, x, y),
                       "The 4x4 homogeneous rotation by angles about the X, Y and Z axes (Taichi's order).")
rot_by_axis = _func_row("rot_by_axis", _rot_by_axis, _np_rot_by_axis,
                        "The 4x4 homogeneous rotation by ang radians about axis (normalized here).")
translate = _func_row("translate", _translate, lambda dx, dy, dz: _np_homogeneous((1, 1, 1), (dx, dy, dz)),
                      "The 4x4 homogeneous translation by (dx, dy, dz).")
scale = _func_row("scale", _scale, lambda sx, sy, sz: _np_homogeneous((sx, sy, sz), (0, 0, 0)),
                  "The 4x4 homogeneous scaling by (sx, sy, sz).")
cmul = _func_row("cmul", _cmul, _np_complex(lambda a, b: a * b), "Complex product of two vec2 (re, im).")
cconj = _func_row("cconj", _cconj, _np_complex(lambda a: a.conjugate()), "Complex conjugate of a vec2.")
cdiv = _func_row("cdiv", _cdiv, _np_complex(lambda a, b: a / b), "Complex quotient of two vec2.")
cexp = _func_row("cexp", _cexp, _np_complex(lambda a: __import__("cmath").exp(a)), "Complex exponential of a vec2.")
clog = _func_row("clog", _clog, _np_complex(lambda a: __import__("cmath").log(a)), "Complex logarithm of a vec2.")


__all__ = ["pi", "e", "inf", "nan", "vec2", "vec3", "vec4", "ivec2", "ivec3", "ivec4", "uvec2", "uvec3", "uvec4",
           "mat2", "mat3", "mat4", "popcnt", "clz", "sin", "cos", "tan", "asin", "acos", "atan2", "tanh", "exp", "log",
           "sqrt", "floor", "ceil", "pow", "clamp", "min", "max", "fract", "mix", "step", "smoothstep", "sign", "mod",
           "round", "log2", "exp2", "degrees", "radians", "dot", "cross", "length", "distance", "normalize",
           "reflect", "refract", "determinant", "inverse", "rotation2d", "rot2", "eye", "cmul", "cconj", "cdiv",
           "cexp", "clog", "isnan", "isinf", "translate", "scale", "rot3", "rotate2d", "rotate3d", "vdir",
           "rot_yaw_pitch_roll", "rotation3d", "rot_by_axis"]
