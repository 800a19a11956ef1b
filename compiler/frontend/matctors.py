"""Taichi's matrix constructors that take run-time values: `gr.Matrix.diag(dim, val)`,
`gr.Matrix.rows([v0, v1])`, `gr.Matrix.cols([v0, v1])` (used by physics codes around
gr.svd / gr.polar_decompose). Compile-time ones (zero, one, identity) are host constants."""
from __future__ import annotations

from .. import semantic as sem
from ..ir import Loc
from .values import Compound


class MatrixCtorMixin:
    def matrix_ctor(self, name: str, args, kwargs, loc: Loc) -> Compound:
        if name == "diag":
            params = dict(zip(("dim", "val"), args))
            params.update(kwargs)
            dim, val = self.known(params.get("dim")), params.get("val")
            if not isinstance(dim, int) or isinstance(dim, bool) or dim < 1 or val is None \
                    or set(params) - {"dim", "val"}:
                self.error("gr.Matrix.diag(dim, val) takes a compile-time size and a number", loc)
            v = self.scalar(val, loc)
            zero = type(v)(0) if sem.is_const(v) else sem.as_node(0, loc, sem.dtype_of(v))
            return Compound((dim, dim), tuple(v if r == c else zero for r in range(dim) for c in range(dim)))
        if kwargs or len(args) != 1 or not isinstance(args[0], tuple) or not args[0]:
            self.error(f"gr.Matrix.{name}([v0, v1, ...]) takes one list of vectors", loc)
        vecs = []
        for v in args[0]:
            items = v.items if isinstance(v, Compound) and len(v.shape) == 1 else v if isinstance(v, tuple) else None
            if items is None:
                self.error(f"gr.Matrix.{name}: every entry must be a vector or a list of numbers, not "
                           f"{self.describe(v)}", loc)
            vecs.append([self.scalar(x, loc) for x in items])
        if len({len(v) for v in vecs}) != 1:
            self.error(f"gr.Matrix.{name}: the vectors differ in length", loc)
        n, m = len(vecs), len(vecs[0])
        if name == "rows":
            return Compound((n, m), tuple(x for v in vecs for x in v))
        return Compound((m, n), tuple(vecs[c][r] for r in range(m) for c in range(n)))
