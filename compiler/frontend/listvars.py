"""Lists whose items are assigned: `verts = [a, b, c]`, then `verts[1] = verts[2]`.

Taichi's assignment copies each item of a list into a local variable (its expr_init), so
items are variables that a later `verts[k] = v` (k known at compile time) assigns, also
inside run-time branches. gfxrt does the same for a list bound to a name that the function
assigns through a subscript; other lists stay compile-time lists of values.
"""
from __future__ import annotations

import ast

from .. import semantic as sem
from ..ir import Loc, Node
from .values import Compound, ListValue, ListVar


def item_assigned(tree: ast.AST, name: str) -> bool:
    """Does the function assign `name[k] = ...` somewhere?"""
    return any(isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and isinstance(n.value, ast.Name)
               and n.value.id == name for n in ast.walk(tree))


def _scalar_like(v) -> bool:
    return isinstance(v, Node | Compound) or sem.is_const(v)


class ListVarMixin:
    def bind_list(self, name: str, value, loc: Loc) -> bool:
        """`name = [...]` for a list whose items the function assigns: store into its item
        variables (declared on the first assignment, kept after: a list of the same length).
        False where this is not such a list."""
        if not isinstance(value, ListValue) or not value or not all(_scalar_like(x) for x in value) \
                or not item_assigned(self.frame.src.tree, name):
            return False
        current = self.frame.scope.get(name)
        if isinstance(current, ListVar) and len(current.vars) == len(value):
            for var, x in zip(current.vars, value):
                self.var_lvalue(var, name).store(self, x, loc)
            return True
        items = []
        for k, x in enumerate(value):
            x = sem.as_node(x, loc) if sem.is_const(x) else x
            var = self.declare(f"{name}[{k}]", x, loc)
            self.var_lvalue(var, name).store(self, x, loc)
            items.append(var)
        self.frame.scope[name] = ListVar(tuple(items))
        return True

    def load_list(self, v: ListVar, loc: Loc) -> ListValue:
        return ListValue(self.load_var(x, loc) for x in v.vars)

    def list_item_lvalue(self, name: str, v: ListVar, sl: ast.expr, loc: Loc):
        """`name[k] = ...`: the item variable's lvalue; k must be known at compile time."""
        k = self.known(self.visit(sl))
        if not isinstance(k, int) or isinstance(k, bool):
            self.error(f"a list's item is assigned by a compile-time index (`{name}[1] = v`), not "
                       f"{self.describe(k)}; use a gr.Vector for run-time indices", loc)
        if not -len(v.vars) <= k < len(v.vars):
            self.error(f"list index {k} is out of range for {name!r}, a list of {len(v.vars)}", loc)
        return self.var_lvalue(v.vars[k], f"{name}[{k}]")
