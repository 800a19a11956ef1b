"""WGSL for IR statements: one emitter per statement op, and memory access through each
buffer's *view* (plain, native atomic, or u32 words with bitcasts and compare-and-swap)."""
from __future__ import annotations

from ..errors import CompileError
from ..ir import AtomicAttr, Node, Op
from ..types import DType, f16, f32, i32, u1, u32
from . import wgsl_chunks
from .wgsl_exprs import combine
from .wgsl_loops import _for, _while
from .wgsl_textures import texstore

STATUS_VALUES_CONST = "gr_status_values_"  # the status word where bounds checks' values start

_ATOMIC_FN = {"add": "atomicAdd", "sub": "atomicSub", "min": "atomicMin", "max": "atomicMax",
              "and": "atomicAnd", "or": "atomicOr", "xor": "atomicXor"}


class View:
    """How a buffer is declared and accessed.

    kind: 'plain' (array<T>), 'atomic' (array<atomic<T>>, native ops), 'words'
    (array<u32>, any 4-byte value bitcast), 'atomic_words' (array<atomic<u32>>: bitcasts,
    native ops where the bits allow, compare-and-swap otherwise).
    """

    def __init__(self, kind: str, dtype: DType, word: str = "u32"):
        self.kind, self.dtype, self.word = kind, dtype, word  # word: u64 for f64 atomics

    @property
    def atomic(self) -> bool:
        return self.kind in ("atomic", "atomic_words")

    @property
    def words(self) -> bool:
        return self.kind in ("words", "atomic_words")

    def elem_type(self) -> str:
        t = self.word if self.words else self.dtype.wgsl
        return f"atomic<{t}>" if self.atomic else t

    def decode(self, w: str, t: DType) -> str:
        """A stored element as a value of dtype t."""
        if not self.words:
            return w
        if self.word == "u64":
            return w if t.wgsl == "u64" else f"bitcast<{t.wgsl}>({w})"
        _no_wide_words(t)
        if t == u32:
            return w
        if t == u1:
            return f"({w} != 0u)"
        if t == f16:
            return f"f16(bitcast<f32>({w}))"
        return f"bitcast<{t.wgsl}>({w})"

    def encode(self, v: str, t: DType) -> str:
        if not self.words:
            return v
        if self.word == "u64":
            return v if t.wgsl == "u64" else f"bitcast<u64>({v})"
        _no_wide_words(t)
        if t == u32:
            return v
        if t == u1:
            return f"select(0u, 1u, {v})"
        if t == f16:
            return f"bitcast<u32>(f32({v}))"
        return f"bitcast<u32>({v})"

    def native(self, op: str, t: DType) -> bool:
        """Can `op` on a value of dtype t be one native atomic on this view?"""
        if op in ("mul", "cas"):  # WGSL has no atomicMul: always compare-and-swap
            return False
        if self.kind == "atomic":
            return not t.is_float or op in ("add", "sub")
        return t == u32 or (t == i32 and op in ("add", "sub", "and", "or", "xor"))

    def load(self, ref: str, t: DType) -> str:
        return self.decode(f"atomicLoad(&{ref})" if self.atomic else ref, t)

    def store(self, ref: str, v: str, t: DType) -> str:
        v = self.encode(v, t)
        return f"atomicStore(&{ref}, {v});" if self.atomic else f"{ref} = {v};"


def _no_wide_words(t: DType) -> None:
    if t.wide:
        raise CompileError(f"{t} values do not fit the 4-byte words that hold kernel-scope variables shared "
                           f"by several loops and their reductions (`s += v` in a parallel loop); keep the {t} "
                           f"value in a 0-d field or an array element (`total[None] += v`), or use 32 bits")


def emit_atomic(view: View, ref: str, op: str, value: str, t: DType, dest: str | None, ind: str,
                out: list[str], comment: str = "") -> None:
    """`dest = old; ref = old op value`, atomically (cas: `value` is "v, expected")."""
    assign = f"{dest} = " if dest else ""
    if op == "cas":  # a strong compare-exchange: retry the weak one while it fails spuriously
        v, expected = value
        out.append(f"{ind}{{{comment}")
        out.append(f"{ind}  loop {{")
        out.append(f"{ind}    let r_ = atomicCompareExchangeWeak(&{ref}, {view.encode(expected, t)}, "
                   f"{view.encode(v, t)});")
        out.append(f"{ind}    if (r_.exchanged || r_.old_value != {view.encode(expected, t)}) {{ {dest} = "
                   f"{view.decode('r_.old_value', t)}; break; }}")
        out.append(f"{ind}  }}")
        out.append(f"{ind}}}")
        return
    if view.native(op, t):
        call = f"{_ATOMIC_FN[op]}(&{ref}, {view.encode(value, t)})"
        out.append(f"{ind}{assign}{view.decode(call, t) if dest else call};{comment}")
        return
    # compare-and-swap on the bits
    out.append(f"{ind}{{{comment}")
    out.append(f"{ind}  let v_ = {value};")
    out.append(f"{ind}  var old_ = atomicLoad(&{ref});")
    out.append(f"{ind}  loop {{")
    new = view.encode(combine(op, view.decode("old_", t), "v_", t), t)
    out.append(f"{ind}    let r_ = atomicCompareExchangeWeak(&{ref}, old_, {new});")
    out.append(f"{ind}    if (r_.exchanged) {{ break; }}")
    out.append(f"{ind}    old_ = r_.old_value;")
    out.append(f"{ind}  }}")
    if dest:
        out.append(f"{ind}  {dest} = {view.decode('old_', t)};")
    out.append(f"{ind}}}")


def choose_view(b, ops: set[tuple[str, DType]], target) -> View:
    """The view of a buffer given the atomic (op, value dtype) pairs applied to it."""
    if b.words:
        return View("atomic_words" if ops else "words", b.dtype)
    if b.dtype.narrow and b.kind not in ("shared", "private", "private_shared"):
        from .wgsl_types import PackedView
        return PackedView(b.dtype, b.write)
    if b.dtype.wide and ops:  # 64-bit atomics: wgpu-native's shader-int64-atomic-all-ops (checked in _atomic)
        if not target.has("shader-int64-atomic-all-ops") or b.kind in ("shared", "private", "private_shared"):
            return View("plain", b.dtype)
        return View("atomic", b.dtype) if b.dtype.is_int else View("atomic_words", b.dtype, "u64")
    if not ops:
        return View("plain", b.dtype)
    if b.dtype == f32:
        float_native = target.has("shader-float32-atomic") and b.kind != "shared"
        if float_native and all(op in ("add", "sub") for op, _ in ops):
            return View("atomic", f32)
        return View("atomic_words", f32)
    return View("atomic", b.dtype)


# -- statement emitters ------------------------------------------------------------------------
def _assign(e, n: Node, ind: str, out: list[str]) -> None:
    out.append(f"{ind}{e.local_names[n.attr]} = {e.expr(n.args[0])};{e.comment(n)}")


def _store(e, n: Node, ind: str, out: list[str]) -> None:
    view = e.views[n.attr]
    if view.kind == "packed":
        wgsl_chunks.access(e, n.attr, e.expr(n.args[0]), e.expr(n.args[1]), ind, out, lambda name, idx, v, ind, o:
                           view.store_packed(name, idx, v, ind, o, e.comment(n)))
        return
    if n.attr in e.chunks:
        wgsl_chunks.access(e, n.attr, e.expr(n.args[0]), e.expr(n.args[1]), ind, out, lambda name, idx, v, ind, o:
                           o.append(f"{ind}{view.store(f'{name}[{idx}]', v, n.args[1].dtype)}{e.comment(n)}"))
        return
    ref = e.ref(n.attr, n.args[0])
    out.append(f"{ind}{e.views[n.attr].store(ref, e.expr(n.args[1]), n.args[1].dtype)}{e.comment(n)}")


def _atomic(e, n: Node, ind: str, out: list[str]) -> None:
    a: AtomicAttr = n.attr
    t = n.args[1].dtype
    bt = e.buffers[a.buf].dtype
    if e.views[a.buf].kind == "packed":  # i8 / i16 / u8 / u16: compare-and-swap on the word
        dest = e.local_names[a.dest] if a.dest else None
        wgsl_chunks.access(e, a.buf, e.expr(n.args[0]), e.expr(n.args[1]), ind, out, lambda name, idx, v, ind, o:
                           e.views[a.buf].atomic_packed(name, idx, a.op, v, dest, ind, o, e.comment(n)))
        return
    if bt.narrow and not e.buffers[a.buf].words:
        raise CompileError(f"atomic updates (`+=` on an element other threads may also update, gr.atomic_*) of "
                           f"{bt} shared arrays are not supported; use an i32 / u32 array", n.loc, e.ir.name)
    if bt.wide and not e.views[a.buf].atomic:
        raise CompileError(f"atomic updates (`+=` on an element other threads may also update, gr.atomic_*) of "
                           f"{bt} arrays need the adapter feature 'shader-int64-atomic-all-ops' (WebGPU itself has "
                           "32-bit atomics only)" + (", which this device lacks" if e.buffers[a.buf].kind != "shared"
                                                     else "; in a SharedArray they are not supported") +
                           "; use an f32 / i32 array, or write per-thread results and sum them serially",
                           n.loc, e.ir.name)
    if n.args[1].dtype.wide and e.buffers[a.buf].words:
        _no_wide_words(n.args[1].dtype)
    if e.buffers[a.buf].dtype == f16 and not e.buffers[a.buf].words:
        raise CompileError("atomic updates (`+=` on an element other threads may also update, gr.atomic_*) "
                           "of f16 arrays are not supported; use an f32 array", n.loc, e.ir.name)
    dest = e.local_names[a.dest] if a.dest else None
    value = (e.expr(n.args[1]), e.expr(n.args[2])) if a.op == "cas" else e.expr(n.args[1])
    if a.buf in e.chunks:
        wgsl_chunks.access(e, a.buf, e.expr(n.args[0]), value, ind, out, lambda name, idx, v, ind, o:
                           emit_atomic(e.views[a.buf], f"{name}[{idx}]", a.op, v, t, dest, ind, o, e.comment(n)))
        return
    emit_atomic(e.views[a.buf], e.ref(a.buf, n.args[0]), a.op, value, t, dest, ind, out, e.comment(n))


def _if(e, n: Node, ind: str, out: list[str]) -> None:
    out.append(f"{ind}if ({e.expr(n.args[0])}) {{{e.comment(n)}")
    e.block(n.blocks[0], ind + "  ", out)
    if n.blocks[1]:
        out.append(f"{ind}}} else {{")
        e.block(n.blocks[1], ind + "  ", out)
    out.append(f"{ind}}}")



def _jump(word: str):
    def emit(e, n: Node, ind: str, out: list[str]) -> None:
        out.append(f"{ind}{word};{e.comment(n)}")
    return emit


def _assert(e, n: Node, ind: str, out: list[str]) -> None:
    code, _ = n.attr
    site = e.assert_site(n)
    status = e.buf_names[e.status_buffer]
    out.append(f"{ind}if (!({e.expr(n.args[0])})) {{{e.comment(n)}")
    out.append(f"{ind}  atomicOr(&{status}[0], {code}u);")
    if len(n.args) == 3:  # a bounds check: its first failing index and the extent (compiler/spec.py)
        e.status_values = True
        at = f"{STATUS_VALUES_CONST} + {2 * site}u"
        out.append(f"{ind}  if (atomicAdd(&{status}[{site + 1}], 1u) == 0u) {{")
        out.append(f"{ind}    atomicStore(&{status}[{at}], bitcast<u32>({e.expr(n.args[1])}));")
        out.append(f"{ind}    atomicStore(&{status}[{at} + 1u], bitcast<u32>({e.expr(n.args[2])}));")
        out.append(f"{ind}  }}")
    else:
        out.append(f"{ind}  atomicAdd(&{status}[{site + 1}], 1u);")
    out.append(f"{ind}}}")


def _barrier(e, n: Node, ind: str, out: list[str]) -> None:
    fn = {"workgroup": "workgroupBarrier", "storage": "storageBarrier"}[n.attr]
    out.append(f"{ind}{fn}();{e.comment(n)}")


STMT_EMITTERS = {
    Op.ASSIGN: _assign, Op.STORE: _store, Op.ATOMIC: _atomic, Op.IF: _if, Op.WHILE: _while,
    Op.FOR: _for, Op.BREAK: _jump("break"), Op.CONTINUE: _jump("continue"), Op.ASSERT: _assert,
    Op.BARRIER: _barrier, Op.TEXSTORE: texstore,
}
