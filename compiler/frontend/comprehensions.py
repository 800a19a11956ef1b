"""Python's list and dict forms in kernels, with Taichi's meaning: list and dict comprehensions
(`gr.Vector([gr.random() for i in range(dim)])`) are unrolled at compile time; dicts, written in
the kernel or read from Python (`param["shape"][0]`), are indexed by compile-time keys.

A comprehension iterates a sequence known at compile time (a `range` / `gr.ndrange` with
constant bounds, a tuple or list, a vector's components, a matrix's rows, a dict's keys, a
shape); its `if` clauses are compile-time conditions; its names are its own (they do not leak
into the kernel, as in Python 3). The element expressions are lowered once per item, in order,
so `[gr.random() for i in range(3)]` draws three numbers.
"""
from __future__ import annotations

import ast

from ..ir import Loc
from .pyvalues import captured_numpy
from .values import (
    Compound,
    DictValue,
    GroupedValue,
    ListValue,
    NdrangeValue,
    RangeValue,
    ShapeValue,
    StaticValue,
)

_MISSING = object()


class ComprehensionMixin:
    def visit_ListComp(self, node: ast.ListComp, loc: Loc):
        out: list = []
        self._generate(node.generators, lambda: self.append_in_order(out, lambda: self.visit(node.elt), loc), loc)
        return ListValue(out)

    def visit_DictComp(self, node: ast.DictComp, loc: Loc):
        out: dict = {}

        def item():
            values: list = []
            self.append_in_order(values, lambda: self.visit(node.key), loc)
            self.append_in_order(values, lambda: self.visit(node.value), loc)
            out[self.dict_key(values[0], loc)] = values[1]
        self._generate(node.generators, item, loc)
        return out  # a dict of kernel values, as a dict literal is (StructMixin.visit_Dict)

    def dict_key(self, key, loc: Loc):
        key = self.known(key)
        try:
            hash(key)
        except TypeError:
            key = None
        if key is None or isinstance(key, (Compound, DictValue)) or not _is_constant(key):
            self.error(f"a dict key in a kernel must be known at compile time (a number, string or tuple of "
                       f"them), not {self.describe(key)}", loc)
        return key

    def dict_item(self, d, key, loc: Loc):
        """`d[key]` with a compile-time key, `d` a dict written in the kernel or a DictValue (a Python
        dict): an item of a Python dict becomes a kernel value as a global does (numbers are
        constants, fields bind, ...)."""
        if isinstance(d, dict):
            d = DictValue(d, "")
        key = self.dict_key(key, loc)
        if key not in d.items:
            self.error(f"{self.describe(d)} has no key {key!r}", loc)
        v = d.items[key]
        if not d.python:
            return v
        return self.from_python(v, f"{d.name}[{key!r}]", loc, path=None if d.path is None else d.path + (("i", key),))

    def _generate(self, generators: list, body, loc: Loc) -> None:
        """Run `body` once per combination of the generators' items (and their `if`s), with each
        generator's names bound to the item; the names' previous meanings come back after."""
        fr = self.frame
        gen, rest = generators[0], generators[1:]
        if gen.is_async:
            self.error("async comprehensions are not supported in kernels", loc)
        items = self.compile_time_items(self.visit(gen.iter), self.frame.src.loc(gen.iter))
        names = [n.id for n in ast.walk(gen.target) if isinstance(n, ast.Name)]
        saved = {n: fr.scope.get(n, _MISSING) for n in names}
        readonly = fr.readonly & set(names)
        fr.readonly.difference_update(names)
        try:
            for item in items:
                self._bind_target(gen.target, item, loc)
                if all(self._condition(c) for c in gen.ifs):
                    if rest:
                        self._generate(rest, body, loc)
                    else:
                        body()
        finally:
            for n, v in saved.items():
                if v is _MISSING:
                    fr.scope.pop(n, None)
                else:
                    fr.scope[n] = v
            fr.readonly.update(readonly)

    def _bind_target(self, target: ast.expr, item, loc: Loc) -> None:
        if isinstance(target, ast.Name):
            self.frame.scope[target.id] = item
            return
        if not isinstance(target, (ast.Tuple, ast.List)):
            self.error("a comprehension's target must be a name or a tuple of names", loc)
        for t, v in zip(target.elts, self.unpack(item, len(target.elts), loc)):
            self._bind_target(t, v, loc)

    def _condition(self, test: ast.expr) -> bool:
        loc = self.frame.src.loc(test)
        c = self.known(self.visit(test))
        if not _is_constant(c):
            self.error("a comprehension's `if` must be known at compile time (Taichi unrolls comprehensions); "
                       "use a loop with a run-time `if` instead", loc)
        return bool(c)

    def compile_time_items(self, seq, loc: Loc) -> list:
        """The items of a sequence a comprehension iterates at compile time."""
        if isinstance(seq, StaticValue):
            seq = seq.value
        if isinstance(seq, (RangeValue, NdrangeValue, GroupedValue)):
            inner = seq.space if isinstance(seq, GroupedValue) else seq
            bounds = (inner.begin, inner.end, inner.step) if isinstance(inner, RangeValue) else \
                tuple(b for dim in inner.dims for b in dim)
            if all(isinstance(self.known(b), int) for b in bounds):
                return self.static_sequence(seq, loc)
        if isinstance(seq, ShapeValue):
            return list(seq.array.shape)
        if isinstance(seq, Compound):  # a vector's components, a matrix's rows
            if len(seq.shape) == 1:
                return list(seq.items)
            return [Compound((seq.shape[1],), tuple(seq.at(r, c) for c in range(seq.shape[1])))
                    for r in range(seq.shape[0])]
        if isinstance(seq, (DictValue, dict)):  # its keys
            return list(seq.items if isinstance(seq, DictValue) else seq)
        if isinstance(seq, tuple):
            return list(seq)
        data = captured_numpy(seq)
        if data is not None:  # a numpy array captured from Python: its items (rows), as Python iterates it
            return [self.python_result(x, loc) for x in data]
        self.error(f"a comprehension in a kernel iterates a sequence known at compile time (a range with constant "
                   f"bounds, a tuple, a vector), not {self.describe(seq)}", loc)


def _is_constant(v) -> bool:
    """A compile-time Python value: a number, bool, string, None, or a tuple of them."""
    if isinstance(v, tuple) and not isinstance(v, ListValue):
        return all(_is_constant(x) for x in v)
    return v is None or isinstance(v, (bool, int, float, str))
