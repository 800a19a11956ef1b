"""`gr.Vector` / `gr.Matrix` values in Python scope where numpy is not installed (Pyodide in a
browser tab): the same Taichi API as compiler/hostmatrix.py's numpy-backed class, on a flat list
of Python numbers.

compiler/hostmatrix.py picks the class (`HostMatrix`): this one only where numpy cannot be
imported. A value given a dtype (`vec3(1, 2, 3)`, a container's element, `gr.Vector(v, gr.f32)`)
stores its numbers as the dtype stores them (an f32 rounded to f32, an int wrapped) and computes
in it by compiler/opsem.py's rules (each result rounded to the dtype, as numpy computes); one
built from Python numbers alone (`gr.Vector([1, 2.5])`, dtype None) keeps Python numbers and
Python's arithmetic, as Taichi's Python-scope Matrix does. Arithmetic is element-wise, a number
broadcast over the value; `@` is the matrix product. Between two dtypes the float, then the wider
one wins; a Python float with an integer dtype, `/` of integers and a comparison give Python
numbers. `np.asarray(v)` works once numpy is imported (`__array__`).
"""
from __future__ import annotations

import math
import operator

from . import npcompat, opsem
from .opsem import DType, convert

_PLAIN = frozenset({int, float, bool})
_XYZW = {"x": 0, "y": 1, "z": 2, "w": 3, "r": 0, "g": 1, "b": 2, "a": 3}


def components(v) -> tuple[list, tuple[int, ...]]:
    """The scalars of a host value in row-major order and its shape: a number (shape ()), a (nested)
    list / tuple, a gr.Vector / gr.Matrix value or a numpy array. ValueError for a ragged one."""
    flat, shape, leaves = [], [], set()

    def walk(x, depth):
        if type(x) in _PLAIN:
            leaves.add(depth)
            flat.append(x)
            return
        if hasattr(x, "tolist") and hasattr(x, "shape"):  # numpy arrays and scalars, HostMatrix values
            x = x.tolist()
        if isinstance(x, (list, tuple)):
            if len(shape) <= depth:
                shape.append(len(x))
            elif shape[depth] != len(x):
                raise ValueError(f"a ragged nested sequence (lengths {shape[depth]} and {len(x)})")
            for y in x:
                walk(y, depth + 1)
        else:
            leaves.add(depth)
            flat.append(x)
    walk(v, 0)
    if len(leaves) > 1:
        raise ValueError("a ragged nested sequence (numbers and sequences side by side)")
    return flat, tuple(shape[:next(iter(leaves), len(shape))])


def nest(flat: list, shape: tuple[int, ...]):
    """`flat` as nested lists of `shape` (as numpy's tolist())."""
    for k in reversed(shape[1:]):
        flat = [flat[i:i + k] for i in range(0, len(flat), k)]
    return flat if shape else flat[0]


def is_number(x) -> bool:
    """x is a Python or numpy number (bool, int, float)."""
    return isinstance(x, (bool, int, float)) or npcompat.scalar_kind(x) in ("b", "i", "u", "f")


def promote(a: DType | None, b: DType | None) -> DType | None:
    """The dtype of an operation between values of dtypes a and b (None: Python numbers)."""
    if a is None or b is None:
        return None
    if a == b:
        return None if a.kind == "bool" else a
    if a.is_float != b.is_float:
        return a if a.is_float else b
    if "bool" in (a.kind, b.kind):
        return b if a.kind == "bool" else a
    return a if a.size >= b.size else b


def _float_rule(on_float, on_int, python):
    """An operator by its rule on floats / integers of a dtype (opsem), or Python's (dtype None)."""
    def rule(a, b, t):
        if t is None:
            return python(a, b)
        return on_float(float(a), float(b), t) if t.is_float else on_int(int(a), int(b), t)
    return rule


_ARITH = {
    "+": lambda a, b, t: operator.add(a, b) if t is None else convert(a + b, t),
    "-": lambda a, b, t: operator.sub(a, b) if t is None else convert(a - b, t),
    "*": lambda a, b, t: operator.mul(a, b) if t is None else convert(a * b, t),
    "/": lambda a, b, t: a / b if t is None else convert(opsem.quotient(float(a), float(b)), t),
    "//": _float_rule(opsem.floordiv_float, opsem.floordiv_int, operator.floordiv),
    "%": _float_rule(opsem.mod_float, opsem.mod_int, operator.mod),
    "**": _float_rule(opsem.pow_float, lambda a, b, t: convert(a ** b, t), operator.pow),
}
_COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
            ">=": operator.ge}


class ListMatrix:
    """A vector (1-d) or matrix (2-d) value in Python scope without numpy; see the module doc."""

    __gfxrt_matrix__ = True
    __hash__ = None

    def __init__(self, data, dtype: DType | None = None, owner=None):
        if dtype is None and isinstance(data, ListMatrix):
            dtype = data.dtype  # (a copy keeps the dtype, as numpy's np.array(v) does)
        flat, shape = components(data)
        if len(shape) not in (1, 2):
            raise ValueError(f"a gr.Vector / gr.Matrix has 1 or 2 dimensions, got shape {shape}")
        bad = next((x for x in flat if not is_number(x)), None)
        if bad is not None:
            raise TypeError(f"a gr.Vector / gr.Matrix holds numbers, not {type(bad).__name__}")
        flat = [x.item() if hasattr(x, "item") else x for x in flat]
        if dtype is not None:
            flat = [convert(x, dtype) for x in flat]
        vars(self).update(_flat=flat, shape=shape, dtype=dtype, _owner=owner, _truth=None)

    @classmethod
    def _of(cls, flat: list, shape: tuple, dtype: DType | None, owner=None) -> ListMatrix:
        out = cls.__new__(cls)
        vars(out).update(_flat=flat, shape=shape, dtype=dtype, _owner=owner, _truth=None)
        return out

    # -- shape and components ---------------------------------------------------------------------
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: len(self._flat))
    n = property(lambda self: self.shape[0])
    m = property(lambda self: self.shape[1] if len(self.shape) == 2 else 1)
    value = property(lambda self: self)  # Taichi 0.x/1.0's `x[None].value`

    def __len__(self) -> int:
        return self.shape[0]

    def __iter__(self):
        return iter(self[k] for k in range(self.shape[0]))

    def _pos(self, key) -> int:
        """The flat position of component `key` (an int for a vector, (i, j) for a matrix)."""
        key = key if isinstance(key, tuple) else (key,)
        if len(key) != self.ndim:
            raise IndexError(f"a value of shape {self.shape} is indexed with {len(key)} index(es)")
        pos = 0
        for k, n in zip(key, self.shape):
            k = int(k)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for size {n}")
            pos = pos * n + k % n
        return pos

    def __getitem__(self, key):
        """A component is a Python number; a row of a matrix a vector that writes through."""
        if isinstance(key, slice):
            rows = range(*key.indices(self.shape[0]))
            return ListMatrix._of([x for k in rows for x in self._row(k)], (len(rows), *self.shape[1:]), self.dtype)
        if self.ndim == 2 and not isinstance(key, tuple):
            k = self._pos((key, 0)) // self.shape[1]
            return ListMatrix._of(self._row(k), self.shape[1:], self.dtype, owner=(self, k))
        return self._flat[self._pos(key)]

    def _row(self, k: int) -> list:
        m = self.m if self.ndim == 2 else 1
        return self._flat[k * m:(k + 1) * m]

    def __setitem__(self, key, value):
        if self.ndim == 2 and not isinstance(key, tuple):
            k = self._pos((key, 0)) // self.shape[1]
            vals, shape = components(value)
            if shape not in ((), self.shape[1:]):
                raise ValueError(f"cannot store a value of shape {shape} into a row of shape {self.shape[1:]}")
            self._flat[k * self.m:(k + 1) * self.m] = [self._stored(x) for x in vals * (self.m // len(vals))]
        else:
            self._flat[self._pos(key)] = self._stored(value)
        if self._owner is not None:
            container, idx = self._owner
            container[idx] = self.tolist()

    def _stored(self, x):
        return x if self.dtype is None else convert(x, self.dtype)

    def __getattr__(self, name):
        k = _XYZW.get(name)
        if k is not None and len(vars(self).get("shape", ())) == 1 and k < self.shape[0]:
            return self._flat[k]
        raise AttributeError(f"gr.Vector / gr.Matrix value has no attribute {name!r}")

    def __setattr__(self, name, value):
        if _XYZW.get(name) is not None and self.ndim == 1:
            self[_XYZW[name]] = value
            return
        super().__setattr__(name, value)

    def tolist(self):
        return nest(list(self._flat), self.shape)

    to_list = tolist

    def to_numpy(self):
        np = npcompat.require("to_numpy() (use .to_list() for Python lists)")
        return np.array(self.tolist(), None if self.dtype is None else self.dtype.numpy)

    def __array__(self, dtype=None, copy=None):
        return npcompat.np.array(self.tolist(), dtype or (None if self.dtype is None else self.dtype.numpy))

    def ravel(self) -> ListMatrix:
        return ListMatrix._of(list(self._flat), (self.size,), self.dtype)

    def __repr__(self) -> str:
        return f"gr.{'Vector' if self.ndim == 1 else 'Matrix'}({self.tolist()})"

    __str__ = __repr__

    # -- element-wise arithmetic (the op table's rules) ------------------------------------------
    def _operand(self, other) -> tuple[list, DType | None]:
        """other's components broadcast to this shape, and the result's dtype."""
        t = self.dtype
        if is_number(other):
            other = other.item() if hasattr(other, "item") else other
            keep = t is not None and t.kind != "bool" and (t.is_float or not isinstance(other, float))
            return [other] * self.size, t if keep else None
        b = other if isinstance(other, ListMatrix) else ListMatrix(other)
        if b.shape != self.shape:
            raise ValueError(f"operands could not be broadcast together with shapes {self.shape} {b.shape}")
        return b._flat, promote(t, b.dtype)

    def _map(self, op: str, other, swap: bool = False) -> ListMatrix:
        vals, t = self._operand(other)
        pairs = zip(vals, self._flat) if swap else zip(self._flat, vals)
        if op in _COMPARE:
            return ListMatrix._of([_COMPARE[op](a, b) for a, b in pairs], self.shape, None)
        if op == "/" and t is not None and not t.is_float:
            t = None  # `/` of integers: Python floats
        rule = _ARITH[op]
        return ListMatrix._of([rule(a, b, t) for a, b in pairs], self.shape, t)

    def __add__(self, o): return self._map("+", o)  # noqa: E704
    def __radd__(self, o): return self._map("+", o, True)  # noqa: E704
    def __sub__(self, o): return self._map("-", o)  # noqa: E704
    def __rsub__(self, o): return self._map("-", o, True)  # noqa: E704
    def __mul__(self, o): return self._map("*", o)  # noqa: E704
    def __rmul__(self, o): return self._map("*", o, True)  # noqa: E704
    def __truediv__(self, o): return self._map("/", o)  # noqa: E704
    def __rtruediv__(self, o): return self._map("/", o, True)  # noqa: E704
    def __floordiv__(self, o): return self._map("//", o)  # noqa: E704
    def __rfloordiv__(self, o): return self._map("//", o, True)  # noqa: E704
    def __mod__(self, o): return self._map("%", o)  # noqa: E704
    def __rmod__(self, o): return self._map("%", o, True)  # noqa: E704
    def __pow__(self, o): return self._map("**", o)  # noqa: E704
    def __rpow__(self, o): return self._map("**", o, True)  # noqa: E704
    def __lt__(self, o): return self._map("<", o)  # noqa: E704
    def __le__(self, o): return self._map("<=", o)  # noqa: E704
    def __gt__(self, o): return self._map(">", o)  # noqa: E704
    def __ge__(self, o): return self._map(">=", o)  # noqa: E704

    def __neg__(self):
        return self._map("*", -1)

    def __abs__(self):
        return ListMatrix._of([abs(x) for x in self._flat], self.shape, self.dtype)

    def __pos__(self):
        return ListMatrix._of(list(self._flat), self.shape, self.dtype)

    def __eq__(self, other):
        """Element-wise, as in Taichi and numpy; its truth is "all equal" (as the numpy class's)."""
        return self._compared("==", other, all)

    def __ne__(self, other):
        return self._compared("!=", other, any)

    def _compared(self, op: str, other, truth):
        try:
            r = self._map(op, other)
        except (TypeError, ValueError):
            return NotImplemented
        vars(r)["_truth"] = truth
        return r

    def __bool__(self) -> bool:
        if self._truth is not None:
            return bool(self._truth(self._flat))
        if self.size != 1:
            raise ValueError("the truth value of a gr.Vector / gr.Matrix with more than one component is "
                             "ambiguous (compare with == for all-equal)")
        return bool(self._flat[0])

    def __matmul__(self, other):
        b = other if isinstance(other, ListMatrix) else ListMatrix(other)
        t = promote(self.dtype, b.dtype)
        a_rows = [self._row(i) for i in range(self.n)] if self.ndim == 2 else [self._flat]
        b_cols = [[b._flat[k * b.m + j] for k in range(b.n)] for j in range(b.m)] if b.ndim == 2 else [b._flat]
        if len(a_rows[0]) != len(b_cols[0]):
            raise ValueError(f"matmul: shapes {self.shape} and {b.shape} do not match")
        out = [_dot(r, c, t) for r in a_rows for c in b_cols]
        shape = tuple(s for s, keep in ((self.n, self.ndim == 2), (b.m, b.ndim == 2)) if keep)
        return out[0] if not shape else ListMatrix._of(out, shape, t)

    def __rmatmul__(self, other):
        return ListMatrix(other) @ self

    # -- Taichi's Python-scope Matrix API (as compiler/hostmatrix.py's) ----------------------------
    def norm(self, eps=0):
        return math.sqrt(sum(float(x) ** 2 for x in self._flat) + eps)

    def norm_sqr(self):
        return _dot(self._flat, self._flat, self.dtype)

    def norm_inv(self, eps=0):
        return 1.0 / self.norm(eps)

    def normalized(self, eps=0):  # Taichi's: v / (norm() + eps)
        return self / (math.sqrt(sum(float(x) ** 2 for x in self._flat)) + eps)

    def dot(self, other):
        b = other if isinstance(other, ListMatrix) else ListMatrix(other)
        return _dot(self._flat, b._flat, promote(self.dtype, b.dtype))

    def cross(self, other):
        a, b = self._flat, (other if isinstance(other, ListMatrix) else ListMatrix(other))
        t = promote(self.dtype, b.dtype)
        b = b._flat
        if len(a) == len(b) == 2:
            return _dot([a[0], -a[1]], [b[1], b[0]], t)
        return ListMatrix._of([_dot([a[i], -a[j]], [b[j], b[i]], t) for i, j in ((1, 2), (2, 0), (0, 1))], (3,), t)

    def outer_product(self, other):
        b = other if isinstance(other, ListMatrix) else ListMatrix(other)
        t = promote(self.dtype, b.dtype)
        return ListMatrix._of([_ARITH["*"](x, y, t) for x in self._flat for y in b._flat],
                              (self.size, b.size), t)

    def transpose(self):
        if self.ndim == 1:
            return +self
        return ListMatrix._of([self._flat[i * self.m + j] for j in range(self.m) for i in range(self.n)],
                              (self.m, self.n), self.dtype)

    T = property(transpose)

    def trace(self):
        return _dot([self._flat[i * self.m + i] for i in range(min(self.n, self.m))], [1] * min(self.n, self.m),
                    self.dtype)

    def determinant(self):
        lu, sign = _lu(self)
        return sign * math.prod(lu[i][i] for i in range(self.n))

    def inverse(self):
        n = self.n
        a = [[float(x) for x in self._row(i)] + [float(i == j) for j in range(n)] for i in range(n)]
        for c in range(n):  # Gauss-Jordan with partial pivoting, in f64 (as numpy.linalg.inv)
            p = max(range(c, n), key=lambda r: abs(a[r][c]))
            if a[p][c] == 0:
                raise ValueError("singular matrix")
            a[c], a[p] = a[p], a[c]
            piv = a[c][c]
            a[c] = [x / piv for x in a[c]]
            for r in range(n):
                if r != c and a[r][c]:
                    f = a[r][c]
                    a[r] = [x - f * y for x, y in zip(a[r], a[c])]
        return ListMatrix._of([x for row in a for x in row[n:]], (n, n), None)  # (f64: Python floats)

    def sum(self):
        return _dot(self._flat, [1] * self.size, self.dtype)

    def max(self):
        return max(self._flat)

    def min(self):
        return min(self._flat)

    def any(self):
        return any(self._flat)

    def all(self):
        return all(self._flat)

    def cast(self, dtype):
        return ListMatrix(self.tolist(), dtype)


def _dot(a: list, b: list, t: DType | None):
    """sum(a[k] * b[k]), in dtype t (each product and sum rounded to t, as numpy computes)."""
    add, mul = _ARITH["+"], _ARITH["*"]
    s = 0
    for x, y in zip(a, b):
        s = add(s, mul(x, y, t), t)
    return s


def _lu(m: ListMatrix) -> tuple[list, int]:
    """The LU factors (in f64, partial pivoting) of square m and the permutation's sign."""
    n = m.n
    if m.ndim != 2 or m.m != n:
        raise ValueError(f"a square matrix is needed, got shape {m.shape}")
    a, sign = [[float(x) for x in m._row(i)] for i in range(n)], 1
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(a[r][c]))
        if p != c:
            a[c], a[p], sign = a[p], a[c], -sign
        if a[c][c] == 0:
            continue
        for r in range(c + 1, n):
            f = a[r][c] / a[c][c]
            a[r] = [x - f * y for x, y in zip(a[r], a[c])]
    return a, sign
