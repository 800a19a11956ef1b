"""Vectors and matrices, scalarized: construction, components, swizzles, `@` and methods.

A vector or matrix is a `Compound` of scalar values (IR nodes or Python numbers), so every
operation here is plain scalar IR.
"""
from __future__ import annotations

import ast

from .. import semantic as sem
from ..ir import Loc, Node, Op
from ..types import DType, VectorType, i32
from .values import BoundMethod, Compound, TextureValue

_SWIZZLE = ("xyzw", "rgba", "stpq")  # Taichi's (GLSL's) three letter sets
_METHODS = ("norm", "norm_sqr", "norm_inv", "normalized", "dot", "cross", "transpose", "trace", "determinant",
            "inverse", "sum", "max", "min", "outer_product", "cast", "any", "all")


class CompoundMixin:
    # -- construction ---------------------------------------------------------------------------
    def construct_typed(self, t, args, loc: Loc) -> Compound:
        """`vec3(1, 2, 3)`, `vec3(0)`, `vec3(v)`, `mat2([[a, b], [c, d]])`, `mat2(a, b, c, d)`, and
        GLSL's forms `vec3(v2, s)`, `vec4(1, v2, 0)`: as Taichi's types, the arguments' components
        in order (vectors and matrices row-major, lists and tuples item by item) fill the value."""
        dt: DType = t.dtype
        shape = (t.n,) if isinstance(t, VectorType) else (t.n, t.m)
        if len(args) == 1 and isinstance(args[0], Compound):
            if args[0].shape != shape:
                self.error(f"cannot make a {t!r} from a value of shape {args[0].shape}", loc)
            items = list(args[0].items)
        elif len(args) == 1 and not isinstance(args[0], tuple):
            items = [self.scalar(args[0], loc)] * t.size
        else:
            items = self._components(args[0] if len(args) == 1 else tuple(args), loc)
            if len(items) != t.size:
                self.error(f"{t!r} needs {t.size} values (or one value for every component), got {len(items)}", loc)
        return Compound(shape, tuple(self.cast_const(x, dt, loc) for x in items))

    def _components(self, values: tuple, loc: Loc) -> list:
        out = []
        for v in values:
            if isinstance(v, Compound):
                out.extend(v.items)
            elif isinstance(v, tuple):
                out.extend(self._components(v, loc))
            else:
                out.append(self.scalar(v, loc))
        return out

    def flatten_rows(self, rows: tuple, shape, loc: Loc) -> list:
        if len(shape) == 1:
            if len(rows) != shape[0]:
                self.error(f"expected {shape[0]} values, got {len(rows)}", loc)
            return [self.scalar(x, loc) for x in rows]
        if len(rows) == shape[0] * shape[1] and not any(isinstance(r, (tuple, Compound)) for r in rows):
            return [self.scalar(x, loc) for x in rows]
        items = []
        for r in rows:
            r = r.items if isinstance(r, Compound) else r
            if not isinstance(r, tuple) or len(r) != shape[1]:
                self.error(f"a matrix of shape {shape} needs {shape[0]} rows of {shape[1]} values", loc)
            items.extend(self.scalar(x, loc) for x in r)
        return items

    def cast_const(self, x, dt: DType, loc: Loc):
        n = sem.as_node(x, loc, dt)
        return n.attr if n.op is Op.CONST and sem.is_const(x) else n

    def make_vector(self, items, dt, loc: Loc) -> Compound:
        """`gr.Vector([a, b, c], dt=None)`: the dtype follows the items unless given."""
        if isinstance(items, Compound):
            items = items.items
        if not isinstance(items, tuple) or not items:
            self.error("gr.Vector takes a list of values: gr.Vector([x, y, z])", loc)
        if any(isinstance(x, (tuple, Compound)) for x in items):
            self.error("gr.Vector takes scalars; use gr.Matrix for rows", loc)
        items = [self.scalar(x, loc) for x in items]
        if dt is not None:
            items = [self.cast_const(x, dt, loc) for x in items]
        return Compound((len(items),), tuple(items))

    def make_matrix(self, rows, dt, loc: Loc) -> Compound:
        if not isinstance(rows, tuple) or not rows:
            self.error("gr.Matrix takes a list of rows: gr.Matrix([[a, b], [c, d]])", loc)
        if not all(isinstance(r, (tuple, Compound)) for r in rows):
            return self.make_vector(rows, dt, loc)  # Taichi's Matrix([a, b, c]) is a column vector
        m = len(rows[0].items if isinstance(rows[0], Compound) else rows[0])
        items = self.flatten_rows(rows, (len(rows), m), loc)
        if dt is not None:
            items = [self.cast_const(x, dt, loc) for x in items]
        return Compound((len(rows), m), tuple(items))

    def as_compound_or_scalar(self, v, loc: Loc):
        if isinstance(v, (Compound, Node)) or sem.is_const(v):
            return v
        self.error(f"a kernel can return numbers, vectors and matrices, not {self.describe(v)}", loc)

    # -- components -----------------------------------------------------------------------------
    def swizzle_indices(self, attr: str, n: int, loc: Loc):
        for letters in _SWIZZLE:
            if attr and all(c in letters for c in attr):
                idx = [letters.index(c) for c in attr]
                if max(idx) >= n:
                    self.error(f"a vector of {n} components has no .{attr}", loc)
                if len(idx) > 4:
                    self.error(f"swizzle .{attr} is longer than 4", loc)
                return idx
        return None

    def compound_attribute(self, c: Compound, attr: str, loc: Loc):
        if len(c.shape) == 1:
            idx = self.swizzle_indices(attr, c.shape[0], loc)
            if idx is not None:
                return c.items[idx[0]] if len(idx) == 1 else Compound((len(idx),), tuple(c.items[k] for k in idx))
        if attr in _METHODS:
            return BoundMethod(attr, c)
        if attr == "n":
            return c.shape[0]
        if attr == "m":
            return c.shape[1] if len(c.shape) == 2 else 1
        if attr == "T":
            return self.transpose(c, loc)
        self.error(f"vectors and matrices have no attribute {attr!r} (methods: {', '.join(_METHODS)}; "
                   "components: .x .y .z .w)", loc)

    def compound_index(self, c: Compound, sl: ast.expr, loc: Loc):
        items = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if any(isinstance(it, ast.Slice) for it in items):
            return self.compound_slice(c, [self.visit(it) for it in items], loc)
        ks = [self.known(self.scalar(self.visit(it), loc)) for it in items]
        if len(ks) > len(c.shape):
            self.error(f"a value of shape {c.shape} is indexed with {len(ks)} indices", loc)
        for k in ks:
            if not sem.is_const(k) and sem.dtype_of(k).is_float:
                self.error("vector/matrix indices must be integers", loc)
        if len(c.shape) == 2 and len(ks) == 1:  # a row
            k = ks[0]
            if not isinstance(k, int):
                self.error("a matrix row can only be selected by a compile-time index", loc)
            self.check_component(k, c.shape[0], "the matrix", loc)
            m = c.shape[1]
            return Compound((m,), c.items[k * m:(k + 1) * m])
        if all(isinstance(k, int) for k in ks):
            for k, n in zip(ks, c.shape):
                self.check_component(k, n, "the value", loc)
            return c.at(*[k % n for k, n in zip(ks, c.shape)])
        flat = ks[0] if len(ks) == 1 else sem.binary(Op.ADD, sem.binary(Op.MUL, ks[0], c.shape[1], loc), ks[1], loc)
        flat = sem.as_node(flat, loc, i32)
        out = c.items[-1]
        for j in range(len(c.items) - 2, -1, -1):
            out = sem.select(sem.binary(Op.EQ, flat, j, loc), c.items[j], out, loc)
        return out

    def slice_picks(self, shape: tuple, keys: list, loc: Loc):
        """The components `v[1:3]`, `m[:, j]`, `m[i, 1:3]` pick (Taichi's slices): the result's
        shape and, per result component, its coordinates in the source (ints, or a run-time
        index where the key is one). Each slice keeps its dimension, each index drops it."""
        if len(keys) > len(shape):
            self.error(f"a value of shape {shape} is indexed with {len(keys)} indices", loc)
        picks = []
        for k, n in zip([*keys, *[slice(None)] * (len(shape) - len(keys))], shape):
            if isinstance(k, slice):
                picks.append(list(range(n))[k])
                continue
            k = self.known(self.scalar(k, loc))
            if isinstance(k, int):
                self.check_component(k, n, "the value", loc)
                k %= n
            elif sem.dtype_of(k).is_float:
                self.error("vector/matrix indices must be integers", loc)
            picks.append(k)
        out_shape = tuple(len(p) for p in picks if isinstance(p, list))
        if 0 in out_shape:
            self.error("the slice selects no components", loc)
        axes = [p if isinstance(p, list) else [p] for p in picks]
        coords = [(r,) if len(axes) == 1 else (r, k) for r in axes[0] for k in (axes[1] if len(axes) > 1 else [None])]
        return out_shape, coords

    def flat_component(self, shape: tuple, coord: tuple, loc: Loc):
        """The flat position of `coord` in a value of `shape`: an int, or an i32 node when an
        index is known only at run time."""
        if all(isinstance(k, int) for k in coord):
            return coord[0] if len(coord) == 1 else coord[0] * shape[1] + coord[1]
        flat = coord[0] if len(coord) == 1 else sem.binary(Op.ADD, sem.binary(Op.MUL, coord[0], shape[1], loc),
                                                           coord[1], loc)
        return sem.as_node(flat, loc, i32)

    def compound_slice(self, c: Compound, keys: list, loc: Loc) -> Compound:
        """`v[1:3]`, `m[:, j]`, `m[0:2, 0:2]` (Taichi's): the picked components; an index
        known only at run time selects among them."""
        shape, coords = self.slice_picks(c.shape, keys, loc)
        out = []
        for coord in coords:
            flat = self.flat_component(c.shape, coord, loc)
            if isinstance(flat, int):
                out.append(c.items[flat])
                continue
            v = c.items[-1]
            for j in range(len(c.items) - 2, -1, -1):
                v = sem.select(sem.binary(Op.EQ, flat, j, loc), c.items[j], v, loc)
            out.append(v)
        return Compound(shape, tuple(out))

    # -- algebra ---------------------------------------------------------------------------------
    def matmul(self, a, b, loc: Loc):
        if not isinstance(a, Compound) or not isinstance(b, Compound):
            self.error("`@` needs two vectors/matrices", loc)
        if len(a.shape) == 1 and len(b.shape) == 1:
            return self.dot(a, b, loc)
        if len(a.shape) == 2 and len(b.shape) == 1:
            if a.shape[1] != b.shape[0]:
                self.error(f"cannot multiply a {a.shape} matrix by a vector of {b.shape[0]}", loc)
            return Compound((a.shape[0],), tuple(self._dot_items([a.at(r, k) for k in range(a.shape[1])],
                                                                  list(b.items), loc) for r in range(a.shape[0])))
        if len(a.shape) == 1:  # Taichi: a vector on the left is a row vector, v @ M == M.transpose() @ v
            if a.shape[0] != b.shape[0]:
                self.error(f"cannot multiply a vector of {a.shape[0]} by a {b.shape} matrix", loc)
            return Compound((b.shape[1],), tuple(self._dot_items(list(a.items), [b.at(k, c) for k in range(b.shape[0])],
                                                                 loc) for c in range(b.shape[1])))
        if a.shape[1] != b.shape[0]:
            self.error(f"cannot multiply matrices of shapes {a.shape} and {b.shape}", loc)
        n, k, m = a.shape[0], a.shape[1], b.shape[1]
        return Compound((n, m), tuple(self._dot_items([a.at(r, j) for j in range(k)], [b.at(j, c) for j in range(k)],
                                                      loc) for r in range(n) for c in range(m)))

    def _dot_items(self, xs, ys, loc: Loc):
        out = sem.binary(Op.MUL, xs[0], ys[0], loc)
        for x, y in zip(xs[1:], ys[1:]):
            out = sem.binary(Op.ADD, out, sem.binary(Op.MUL, x, y, loc), loc)
        return out

    def dot(self, a: Compound, b, loc: Loc):
        if not isinstance(b, Compound) or a.shape != b.shape or len(a.shape) != 1:
            self.error("dot() needs two vectors of the same length", loc)
        return self._dot_items(list(a.items), list(b.items), loc)

    def transpose(self, c: Compound, loc: Loc) -> Compound:
        if len(c.shape) != 2:
            self.error("transpose() needs a matrix", loc)
        n, m = c.shape
        return Compound((m, n), tuple(c.at(r, k) for k in range(m) for r in range(n)))

    def reduce_items(self, op: Op, c: Compound, loc: Loc):
        out = c.items[0]
        for x in c.items[1:]:
            out = sem.binary(op, out, x, loc)
        return out

    def determinant(self, c: Compound, loc: Loc):
        if len(c.shape) != 2 or c.shape[0] != c.shape[1]:
            self.error("determinant() needs a square matrix", loc)
        n = c.shape[0]
        if n == 1:
            return c.items[0]
        out = None
        for j in range(n):  # expansion along the first row
            minor = Compound((n - 1, n - 1), tuple(c.at(r, k) for r in range(1, n) for k in range(n) if k != j))
            term = sem.binary(Op.MUL, c.at(0, j), self.determinant(minor, loc), loc)
            out = term if out is None else sem.binary(Op.SUB if j % 2 else Op.ADD, out, term, loc)
        return out

    def inverse(self, c: Compound, loc: Loc) -> Compound:
        if len(c.shape) != 2 or c.shape[0] != c.shape[1] or c.shape[0] > 4:
            self.error("inverse() needs a square matrix of size 1 to 4", loc)
        n = c.shape[0]
        det = self.materialize(self.determinant(c, loc), loc)
        inv_det = sem.binary(Op.DIV, 1.0, det, loc)
        if n == 1:
            return Compound((1, 1), (inv_det,))
        items = []
        for r in range(n):
            for k in range(n):  # adjugate: cofactor of (k, r)
                minor = Compound((n - 1, n - 1), tuple(c.at(i, j) for i in range(n) if i != k
                                                       for j in range(n) if j != r))
                cof = self.determinant(minor, loc)
                if (r + k) % 2:
                    cof = sem.unary(Op.NEG, cof, loc)
                items.append(sem.binary(Op.MUL, cof, inv_det, loc))
        return Compound((n, n), tuple(items))

    def call_method(self, bm: BoundMethod, args, kwargs, loc: Loc):
        c, name = bm.self_value, bm.name
        if isinstance(c, TextureValue):
            return self.texture_method(bm, args, kwargs, loc)
        if name in ("norm", "norm_inv", "normalized") and set(kwargs) <= {"eps"}:
            args = [*args, *kwargs.values()]  # `v.norm(eps=1e-6)`
        elif kwargs and name != "cast":
            self.error(f".{name}() takes no keyword arguments", loc)
        vec = len(c.shape) == 1

        def need(n):
            if len(args) != n:
                self.error(f".{name}() takes {n} argument(s)", loc)
        if name in ("norm", "norm_sqr", "norm_inv", "normalized"):
            # Taichi's: norm(eps) = sqrt(|v|^2 + eps), norm_inv(eps) = rsqrt(|v|^2 + eps), and
            # normalized(eps) = v / (norm() + eps); eps defaults to 0
            if len(args) > (name != "norm_sqr"):
                self.error(f".{name}() takes {'no' if name == 'norm_sqr' else 'at most one'} argument", loc)
            eps = self.scalar(args[0], loc) if args else 0
            if name == "normalized" and not vec:
                self.error(".normalized() needs a vector", loc)
            flat = Compound((len(c.items),), c.items)  # a matrix's: the Frobenius norm, as Taichi's
            sq = self.dot(flat, flat, loc)
            if name == "norm_sqr":
                return sq
            if name != "normalized" and not (sem.is_const(eps) and eps == 0):
                sq = sem.binary(Op.ADD, sq, eps, loc)
            if name == "norm_inv":
                return sem.unary(Op.RSQRT, sq, loc)
            norm = sem.unary(Op.SQRT, sq, loc)
            if name == "norm":
                return norm
            if not (sem.is_const(eps) and eps == 0):
                norm = sem.binary(Op.ADD, norm, eps, loc)
            inv = self.materialize(sem.binary(Op.DIV, 1.0, norm, loc), loc)
            return self.map_values(lambda x: sem.binary(Op.MUL, x, inv, loc), (c,), loc)
        if name == "dot":
            need(1)
            return self.dot(c, args[0], loc)
        if name == "cross":
            need(1)
            b = args[0]
            if not (isinstance(b, Compound) and c.shape == b.shape and c.shape[0] in (2, 3) and vec):
                self.error("cross() needs two vectors of length 2 or 3", loc)
            x, y = c.items, b.items

            def cr(i, j):  # x[i] y[j] - x[j] y[i]
                return sem.binary(Op.SUB, sem.binary(Op.MUL, x[i], y[j], loc), sem.binary(Op.MUL, x[j], y[i], loc), loc)
            return cr(0, 1) if c.shape[0] == 2 else Compound((3,), (cr(1, 2), cr(2, 0), cr(0, 1)))
        if name == "transpose":
            need(0)
            return self.transpose(c, loc)
        if name == "trace":
            need(0)
            if vec or c.shape[0] != c.shape[1]:
                self.error("trace() needs a square matrix", loc)
            return self.reduce_items(Op.ADD, Compound((c.shape[0],), tuple(c.at(k, k) for k in range(c.shape[0]))),
                                     loc)
        if name == "determinant":
            need(0)
            return self.determinant(c, loc)
        if name == "inverse":
            need(0)
            return self.inverse(c, loc)
        if name in ("sum", "max", "min"):
            need(0)
            return self.reduce_items({"sum": Op.ADD, "max": Op.MAX, "min": Op.MIN}[name], c, loc)
        if name in ("any", "all"):
            need(0)
            truths = [sem.truth(x, loc) for x in c.items]
            return self.reduce_items(Op.OR if name == "any" else Op.AND, Compound((len(truths),), tuple(truths)), loc)
        if name == "outer_product":
            need(1)
            b = args[0]
            if not (vec and isinstance(b, Compound) and len(b.shape) == 1):
                self.error("outer_product() needs two vectors", loc)
            return Compound((c.shape[0], b.shape[0]), tuple(sem.binary(Op.MUL, x, y, loc)
                                                            for x in c.items for y in b.items))
        if name == "cast":
            dt = sem.as_dtype(args[0] if args else kwargs.get("dtype"))
            if not isinstance(dt, DType):
                self.error(".cast(dtype) needs a scalar dtype such as gr.f32", loc)
            return self.map_values(lambda x: sem.as_node(x, loc, dt), (c,), loc)
        self.error(f"unknown method .{name}()", loc)

