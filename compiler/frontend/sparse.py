"""Sparse SNodes in kernels (compiler/sparse.py has the data model and the invariant):
the activation a write of a sparse field makes, the guard of a struct-for over one, and
Taichi's `activate`, `deactivate`, `is_active`, `append`, `length` (also as the field
methods `x.append(v)`, `x[i].length()`, `x.deactivate()`)."""
from __future__ import annotations

import ast

from .. import semantic as sem
from ..ir import Loc, Node, Op
from ..sparse import SparseNode, cell_of
from ..types import DType, i32, u32
from .scope import ArrayElemLV, MemLV, _emit_atomic
from .values import ArrayValue, Compound

DYNAMIC_METHODS = ("append", "length", "deactivate")


class SparseMixin:
    # -- helpers -------------------------------------------------------------------------------
    @staticmethod
    def sparse_of(arr):
        obj = getattr(arr, "obj", None)
        return getattr(obj, "__gfxrt_sparse__", None) if obj is not None else None

    def _meta(self, node: SparseNode) -> ArrayValue:
        return self.bind_field(node.meta, f"{node.kind}_meta", None)

    @staticmethod
    def _flat(shape, idx, loc: Loc) -> Node:
        flat = 0
        for d, v in enumerate(idx):
            flat = v if d == 0 else sem.binary(Op.ADD, sem.binary(Op.MUL, flat, shape[d], loc), v, loc)
        return sem.as_node(flat, loc, i32)

    def _cell(self, axes, ext, point: dict, node: SparseNode, loc: Loc) -> dict:
        return cell_of(axes, ext, point, node,
                       lambda v, d: v if d == 1 else sem.binary(Op.FLOORDIV, v, d, loc))

    def _meta_index(self, node: SparseNode, cell: dict, loc: Loc) -> Node:
        return self._flat(node.meta_shape, [cell[a] for a in node.meta_axes], loc)

    def _length(self, node: SparseNode, cell: dict, loc: Loc) -> Node:
        """A dynamic node's list length (at most its capacity)."""
        n = Node(Op.LOAD, i32, (self._meta_index(node, cell, loc),), attr=self._meta(node).buf, loc=loc)
        return sem.binary(Op.MIN, n, node.cap, loc)

    @staticmethod
    def _bit(flat, loc: Loc):
        """(word index, bit mask) of cell `flat` in a bit-per-cell meta."""
        word = sem.binary(Op.SHR, flat, 5, loc)
        mask = sem.binary(Op.SHL, sem.as_node(1, loc, u32), sem.cast(sem.binary(Op.BITAND, flat, 31, loc), u32), loc)
        return sem.as_node(word, loc, i32), mask

    def _active(self, node: SparseNode, cell: dict, loc: Loc) -> Node:
        """Is the cell of a pointer / bitmasked node active (a bool)?"""
        word, mask = self._bit(self._meta_index(node, cell, loc), loc)
        w = Node(Op.LOAD, u32, (word,), attr=self._meta(node).buf, loc=loc)
        return sem.binary(Op.NE, sem.binary(Op.BITAND, w, mask, loc), 0, loc)

    # -- writes, struct-for -----------------------------------------------------------------------
    def sparse_write_hook(self, arr: ArrayValue, idx: list, loc: Loc):
        """What a write of `arr[idx]` runs first when arr is under a sparse node: activate the
        element's cell on every sparse level (None for a dense field)."""
        sf = self.sparse_of(arr)
        if sf is None:
            return None
        point = dict(zip(sf.axes, idx))

        def activate(fe):
            for n in sf.node.chain():
                fe.activate_cell(n, fe._cell(sf.axes, arr.shape, point, n, loc), loc)
        return activate

    def sparse_guard(self, space, idx: list, loc: Loc):
        """The condition under which element `idx` of `space` (a field, or an SNode's cells) is
        active (None for a dense one)."""
        it = getattr(space, "__gfxrt_iter__", None) if not isinstance(space, (ArrayValue, Node)) else None
        if it is not None:
            axes, shape, node = it
        else:
            sf = self.sparse_of(space)
            axes, shape, node = (sf.axes, space.shape, sf.node) if sf is not None else (None, None, None)
        if node is None:
            return None
        point = dict(zip(axes, idx))
        cond = None
        for n in node.chain():
            c = self._cell(axes, shape, point, n, loc)
            t = sem.binary(Op.LT, c[n.dyn_axis], self._length(n, c, loc), loc) if not n.bits else \
                self._active(n, c, loc)
            cond = t if cond is None else sem.binary(Op.AND, cond, t, loc)
        return cond

    # -- cells --------------------------------------------------------------------------------------
    def activate_cell(self, n: SparseNode, cell: dict, loc: Loc) -> None:
        meta = self._meta(n)
        flat = self._meta_index(n, cell, loc)
        if not n.bits:
            end = sem.as_node(sem.binary(Op.ADD, cell[n.dyn_axis], 1, loc), loc, i32)
            _emit_atomic(self, "max", meta.buf, flat, end, loc, False)
            return
        word, mask = self._bit(flat, loc)  # set the bit; the atomic only where it is clear
        word, mask = self.temp(word, loc), self.temp(mask, loc)
        with self.block() as then:
            _emit_atomic(self, "or", meta.buf, word, mask, loc, False)
        clear = sem.binary(Op.EQ, sem.binary(Op.BITAND, Node(Op.LOAD, u32, (word,), attr=meta.buf, loc=loc), mask,
                                             loc), 0, loc)
        self.emit(Node(Op.IF, args=(clear,), blocks=(tuple(then), ()), loc=loc))

    def _clear_bit(self, n: SparseNode, flat, loc: Loc) -> None:
        word, mask = self._bit(flat, loc)
        _emit_atomic(self, "and", self._meta(n).buf, word, sem.unary(Op.BITNOT, mask, loc), loc, False)

    def deactivate_cell(self, n: SparseNode, cell: dict, loc: Loc) -> None:
        """Clear the cell and zero what lies in it (every field under it, the state of every
        sparse node under it): inactive cells hold zeros."""
        meta = self._meta(n)
        flat = self.temp(self._meta_index(n, cell, loc), loc)
        length = None
        if n.bits:
            self._clear_bit(n, flat, loc)
        else:
            length = self.temp(sem.binary(Op.MIN, Node(Op.LOAD, i32, (flat,), attr=meta.buf, loc=loc), n.cap, loc), loc)
            self.emit(Node(Op.STORE, attr=meta.buf, args=(flat, sem.as_node(0, loc, i32)), loc=loc))
        for obj, axes in n.members:
            self._zero_block(obj, axes, n, cell, length, loc)

    def _zero_block(self, obj, axes: tuple, n: SparseNode, cell: dict, length, loc: Loc) -> None:
        """Zero the part of `obj` (a field, or a sparse node's state) inside cell `cell` of n."""
        node = obj if isinstance(obj, SparseNode) else None
        arr = self._meta(node) if node is not None else self.bind_field(obj, "sparse_member", None)
        ext = dict(zip(axes, node.meta_shape if node is not None else arr.shape))
        dims = []  # (axis, start, extent); a dynamic node's list axis first: its extent is the run-time length
        own = dict(zip(n.axes, n.ext))  # the node's extent per axis number (gr.j alone: axis 1, extent ext[0])
        for a in sorted(axes, key=lambda a: a != n.dyn_axis):
            if a in n.axes:
                r = ext[a] // own[a]
                dims.append((a, 0, sem.binary(Op.MUL, length, r, loc)) if a == n.dyn_axis else
                            (a, sem.binary(Op.MUL, cell[a], r, loc), r))
            else:
                dims.append((a, 0, ext[a]))
        count = 1
        for _, _, e in dims:
            count = sem.binary(Op.MUL, count, e, loc)
        t = self.new_local("zero", i32)
        tv = Node(Op.VAR, i32, attr=t, loc=loc)
        point, stride = {}, 1
        for a, start, e in reversed(dims):
            v = tv if stride == 1 else sem.binary(Op.FLOORDIV, tv, stride, loc)
            if a != dims[0][0]:
                v = sem.binary(Op.MOD, v, e, loc)
                stride = stride * e
            point[a] = sem.binary(Op.ADD, start, v, loc)
        esize = 1 if isinstance(arr.elem, DType) else arr.elem.size
        zero = sem.as_node(0, loc, arr.dtype)
        with self.block() as body:
            sf = self.sparse_of(arr) if node is None else None
            flat = self.pool_index(sf, [point[a] for a in axes], loc, False) if sf is not None and \
                sf.node.pool is not None else self._flat([ext[a] for a in axes], [point[a] for a in axes], loc)
            if node is not None and node.bits:
                self._clear_bit(node, flat, loc)
                esize = 0
            for k in range(esize):
                index = flat if esize == 1 else sem.as_node(sem.binary(Op.ADD, sem.binary(Op.MUL, flat, esize, loc), k,
                                                                       loc), loc, i32)
                self.emit(Node(Op.STORE, attr=arr.buf, args=(index, zero), loc=loc))
        args = tuple(sem.as_node(v, loc, i32) for v in (0, count, 1))
        self.emit(Node(Op.FOR, attr=t, args=args, blocks=(tuple(body),), loc=loc))

    # -- Taichi's builtins ------------------------------------------------------------------------------
    def snode_cell(self, what: str, node, index, loc: Loc, list_axis: bool = True):
        """(the SparseNode, axis -> index) of `gr.<what>(node, index)`."""
        sn = getattr(node, "__gfxrt_snode__", None) if not isinstance(node, (Node, int, float)) else None
        if sn is None:
            self.error(f"gr.{what}() takes a sparse SNode (pointer, bitmasked or dynamic), not "
                       f"{self.describe(node)}", loc)
        if isinstance(index, Compound):
            items = list(index.items)
        elif isinstance(index, (tuple, list)):
            items = [x for v in index for x in (v.items if isinstance(v, Compound) else (v,))]
        elif index is None:
            items = []
        else:
            items = [index]
        axes = sn.axes if list_axis else sn.meta_axes
        if len(items) != len(axes):
            self.error(f"gr.{what}(): this SNode has {len(axes)} ind{'ex' if len(axes) == 1 else 'ices'}, got "
                       f"{len(items)}", loc)
        for v in items:
            if sem.dtype_of(self.scalar(v, loc)).is_float:
                self.error(f"gr.{what}(): indices must be integers", loc)
        return sn, dict(zip(axes, items))

    def sparse_builtin(self, what: str, args, kwargs, loc: Loc):
        if kwargs:
            self.error(f"gr.{what}() takes no keyword arguments", loc)
        want = 3 if what == "append" else 2
        if len(args) != want:
            self.error(f"gr.{what}(snode, index{', value' if what == 'append' else ''}) takes {want} arguments", loc)
        dynamic_only = what in ("append", "length")
        kind = getattr(getattr(args[0], "__gfxrt_snode__", None), "kind", None)
        if dynamic_only and kind not in (None, "dynamic"):
            self.error(f"gr.{what}() works on dynamic SNodes, not {kind}", loc)
        if what == "is_active" and kind == "dynamic":
            self.error("gr.is_active() works on pointer and bitmasked SNodes (a dynamic SNode has gr.length())", loc)
        if what == "activate" and kind == "dynamic":
            self.error("gr.activate() works on pointer and bitmasked SNodes (a dynamic SNode grows by gr.append() "
                       "or by writes)", loc)
        sn, cell = self.snode_cell(what, args[0], args[1], loc, list_axis=kind != "dynamic")
        if what == "is_active":
            return sem.cast(self._active(sn, cell, loc), i32)
        if what == "activate":
            for p in sn.chain():
                self.activate_cell(p, self._cell(sn.axes, sn.ext, cell, p, loc), loc)
            return None
        if what == "deactivate":
            self.deactivate_cell(sn, cell, loc)
            return None
        if what == "length":
            return self._length(sn, cell, loc)
        fields = [obj for obj, _ in sn.members if not isinstance(obj, SparseNode)
                  and obj.__gfxrt_sparse__.node is sn]
        if len(fields) != 1:
            self.error(f"gr.append(snode, index, value) needs exactly one field placed under the dynamic SNode "
                       f"(it has {len(fields)}); for a struct field write `x.append(value)`", loc)
        return self.append_values(sn, cell, [(self.bind_field(fields[0], "appended", None), args[2])], loc)

    def append_values(self, sn: SparseNode, cell: dict, pairs: list, loc: Loc):
        """Append one element to the list of `cell` of dynamic node sn: (array, value) per field.
        The values are computed first (`x.append(x.length())` appends the length before it)."""
        pairs = [(arr, self.materialize(value, loc)) for arr, value in pairs]
        meta = self._meta(sn)
        k = _emit_atomic(self, "add", meta.buf, self._meta_index(sn, cell, loc), sem.as_node(1, loc, i32), loc, True)
        with self.block() as then:
            for arr, value in pairs:
                sf = self.sparse_of(arr)
                ext = dict(zip(sf.axes, arr.shape))
                if any(ext[a] != e for a, e in zip(sn.axes, sn.ext)) or set(sf.axes) != set(sn.axes):
                    self.error("append() writes fields placed directly under the dynamic SNode", loc)
                point = {**cell, sn.dyn_axis: k}
                flat = self.pool_index(sf, [point[a] for a in sf.axes], loc, True) if sn.pool is not None else \
                    self._flat(arr.shape, [point[a] for a in sf.axes], loc)
                if isinstance(arr.elem, DType):
                    lv = MemLV(arr, flat, f"{arr.name}[...]")
                else:
                    base = sem.as_node(sem.binary(Op.MUL, flat, arr.elem.size, loc), loc, i32)
                    leaves = [MemLV(arr, sem.as_node(sem.binary(Op.ADD, base, j, loc), loc, i32), arr.name)
                              for j in range(arr.elem.size)]
                    lv = ArrayElemLV(arr.elem.shape, leaves, arr.name, arr, base)
                lv.store(self, value, loc)
        self.emit(Node(Op.IF, args=(sem.binary(Op.LT, k, sn.cap, loc),), blocks=(tuple(then), ()), loc=loc))
        return k

    def dynamic_method(self, node: ast.Call, loc: Loc):
        """`x.append(v)`, `x.length()`, `x.deactivate()`, also on `x[i]` (the list of cell i) and
        on struct fields: NotImplemented when `node` is not such a call."""
        f = node.func
        base_ast, index = f.value, None
        if isinstance(base_ast, ast.Subscript):
            base_ast, index = base_ast.value, base_ast.slice
        if not isinstance(base_ast, (ast.Name, ast.Attribute)):
            return NotImplemented
        base = self.visit(base_ast)
        members = base.members if type(base).__name__ == "StructArrayValue" else None
        first = base.first() if members is not None else base
        sf = self.sparse_of(first) if isinstance(first, ArrayValue) else None
        if sf is None or sf.node.kind != "dynamic" or set(sf.axes) != set(sf.node.axes):
            return NotImplemented
        sn = sf.node
        items = [] if index is None else self.index_items(index, loc)
        if len(items) != len(sn.meta_axes):
            self.error(f"{f.attr}() of a dynamic field takes the index of its list: {len(sn.meta_axes)} ind"
                       f"{'ex' if len(sn.meta_axes) == 1 else 'ices'}, got {len(items)}", loc)
        cell = dict(zip(sn.meta_axes, items))
        nargs = 1 if f.attr == "append" else 0
        if len(node.args) != nargs or node.keywords:
            self.error(f"{f.attr}() takes {nargs} argument{'s' if nargs != 1 else ''}", loc)
        if f.attr == "length":
            return self._length(sn, cell, loc)
        if f.attr == "deactivate":
            self.deactivate_cell(sn, cell, loc)
            return None
        value = self.visit(node.args[0])
        if members is None:
            return self.append_values(sn, cell, [(first, value)], loc)
        if type(value).__name__ != "StructValue" or tuple(value.items) != tuple(members):
            self.error(f"append() of a struct field takes a value of its struct type ({base.type!r})", loc)
        pairs = []

        def flatten(arrs, vals):
            for name, a in arrs.items():
                v = vals.items[name]
                if type(a).__name__ == "StructArrayValue":
                    flatten(a.members, v)
                else:
                    pairs.append((a, v))
        flatten(members, value)
        return self.append_values(sn, cell, pairs, loc)
