"""IR -> WGSL: a format table per expression op, one emitter per statement op, and one
function for the module header (params block, bindings, helpers).

Every emitted statement carries a `// file.py:LINE` comment so a naga error leads back to
the user's code.
"""
from __future__ import annotations

import math
import struct

from ..errors import InternalCompilerError
from ..hosteval import compile_host_expr, host_evaluable
from ..ir import AtomicAttr, Block, Buffer, KernelIR, Node, Op, Task, walk, walk_node
from ..spec import STATUS_HEADER_WORDS, BindingSpec, KernelSpec, ParamSpec, TaskSpec
from ..target import Target
from ..types import DType, f16, f32, i32, u1, u32

# -- expressions: one format per op ---------------------------------------------------------
EXPR_FMT: dict[Op, str] = {
    Op.ADD: "({0} + {1})", Op.SUB: "({0} - {1})", Op.MUL: "({0} * {1})", Op.DIV: "({0} / {1})",
    Op.MIN: "min({0}, {1})", Op.MAX: "max({0}, {1})", Op.ATAN2: "atan2({0}, {1})",
    Op.BITAND: "({0} & {1})", Op.BITOR: "({0} | {1})", Op.BITXOR: "({0} ^ {1})",
    Op.SHL: "({0} << {1})", Op.SHR: "({0} >> {1})",
    Op.EQ: "({0} == {1})", Op.NE: "({0} != {1})", Op.LT: "({0} < {1})", Op.LE: "({0} <= {1})",
    Op.GT: "({0} > {1})", Op.GE: "({0} >= {1})", Op.AND: "({0} && {1})", Op.OR: "({0} || {1})",
    Op.NEG: "(-{0})", Op.NOT: "(!{0})", Op.BITNOT: "(~{0})", Op.ABS: "abs({0})",
    Op.SQRT: "sqrt({0})", Op.RSQRT: "inverseSqrt({0})", Op.EXP: "exp({0})", Op.LOG: "log({0})",
    Op.SIN: "sin({0})", Op.COS: "cos({0})", Op.TAN: "tan({0})", Op.ASIN: "asin({0})",
    Op.ACOS: "acos({0})", Op.ATAN: "atan({0})", Op.TANH: "tanh({0})", Op.FLOOR: "floor({0})",
    Op.CEIL: "ceil({0})", Op.ROUND: "round({0})", Op.SIGN: "sign({0})",
    Op.SELECT: "select({2}, {1}, {0})",
}

# ops whose WGSL spelling depends on the operand type: (op, kind) -> format, helper needed
TYPED_FMT: dict[tuple[Op, str], tuple[str, str | None]] = {
    (Op.FLOORDIV, "int"): ("gr_floordiv_i32({0}, {1})", "floordiv_i32"),
    (Op.MOD, "int"): ("gr_mod_i32({0}, {1})", "mod_i32"),
    (Op.FLOORDIV, "uint"): ("({0} / {1})", None),
    (Op.MOD, "uint"): ("({0} % {1})", None),
    (Op.FLOORDIV, "float"): ("floor({0} / {1})", None),
    (Op.MOD, "float"): ("gr_mod_{t}({0}, {1})", "mod_float"),
    (Op.POW, "float"): ("gr_pow_{t}({0}, {1})", "pow_float"),
    (Op.POW, "int"): ("gr_ipow_{t}({0}, {1})", "ipow"),
    (Op.POW, "uint"): ("gr_ipow_{t}({0}, {1})", "ipow"),
}

HELPERS: dict[str, str] = {
    "floordiv_i32": """fn gr_floordiv_i32(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  let q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) { return q - 1; }
  return q;
}""",
    "mod_i32": """fn gr_mod_i32(a: i32, b: i32) -> i32 {
  if (b == 0) { return 0; }
  let r = a % b;
  if ((r != 0) && ((r < 0) != (b < 0))) { return r + b; }
  return r;
}""",
    "mod_float": """fn gr_mod_{t}(a: {t}, b: {t}) -> {t} {{ return a - b * floor(a / b); }}""",
    "pow_float": """fn gr_pow_{t}(a: {t}, b: {t}) -> {t} {{
  if (a >= {t}(0) || b != round(b)) {{ return pow(a, b); }}
  let m = pow(-a, b);
  if (abs(b % {t}(2)) == {t}(1)) {{ return -m; }}
  return m;
}}""",
    "ipow": """fn gr_ipow_{t}(a: {t}, b: {t}) -> {t} {{
  var r: {t} = {t}(1); var base = a; var e = b;
  loop {{
    if (e <= {t}(0)) {{ break; }}
    if ((e & {t}(1)) != {t}(0)) {{ r = r * base; }}
    base = base * base; e = e >> {u}(1);
  }}
  return r;
}}""",
}


def wgsl_type(t: DType) -> str:
    return t.wgsl


def literal(value, t: DType) -> str:
    """A WGSL literal of exactly type t."""
    if t == u1:
        return "true" if value else "false"
    if t == u32:
        return f"{int(value) & 0xFFFFFFFF}u"
    if t == i32:
        v = int(value)
        return f"i32({v + 1} - 1)" if v == -(2**31) else f"{v}i"
    v = float(value)
    if t == f16:
        if math.isfinite(v):
            return f"{v!r}h" if "e" in repr(v) or "." in repr(v) else f"{v!r}.0h"
        return f"f16({'-' if v < 0 else ''}65504.0h * 2.0h)" if math.isinf(v) else "f16(0.0h / 0.0h)"
    if not math.isfinite(v):
        bits = struct.unpack("<I", struct.pack("<f", v))[0]
        return f"bitcast<f32>({bits}u)"
    v32 = struct.unpack("<f", struct.pack("<f", v))[0]
    s = repr(v32)
    return (s if ("e" in s or "." in s) else s + ".0") + "f"


class _Emitter:
    """Renders one kernel. Holds the name maps and the set of helpers used."""

    def __init__(self, ir: KernelIR, target: Target):
        self.ir = ir
        self.target = target
        self.helpers: set[tuple[str, str]] = set()
        self.local_names = {name: f"l{k}_{_ident(name)}" for k, name in enumerate(ir.locals)}
        self.param_names = {p.name: f"p{k}" for k, p in enumerate(ir.params)}
        self.buffers = {b.name: b for b in ir.buffers}
        self.buf_names = {b.name: f"b{k}_{_ident(b.name)}" for k, b in enumerate(ir.buffers)}
        self.sites: dict[tuple, int] = {}  # ASSERT attr (code, message) -> status site

    def site(self, attr: tuple) -> int:
        return self.sites.setdefault(attr, len(self.sites))

    @property
    def status(self) -> str:
        return self.buf_names[next(b.name for b in self.ir.buffers if b.kind == "status")]

    # -- expressions -----------------------------------------------------------------------
    def expr(self, n: Node) -> str:
        op = n.op
        if op is Op.CONST:
            return literal(n.attr, n.dtype)
        if op is Op.VAR:
            return self.local_names[n.attr]
        if op is Op.PARAM:
            return self.param(n)
        if op is Op.LOAD:
            return self.load(n)
        if op is Op.LENGTH:
            return f"i32(arrayLength(&{self.buf_names[n.attr]}))"
        args = [self.expr(a) for a in n.args]
        if op is Op.CAST:
            return f"{wgsl_type(n.dtype)}({args[0]})"
        if op is Op.BITCAST:
            return f"bitcast<{wgsl_type(n.dtype)}>({args[0]})"
        fmt = EXPR_FMT.get(op)
        if fmt is None:
            t = n.args[0].dtype
            fmt, helper = TYPED_FMT[(op, t.kind)]
            if helper:
                self.helpers.add((helper, t.wgsl))
            fmt = fmt.replace("{t}", t.wgsl)
        return fmt.format(*args)

    def param(self, n: Node) -> str:
        ref = f"P.{self.param_names[n.attr]}"
        if n.dtype == u1:
            return f"({ref} != 0u)"
        if n.dtype == f16:
            return f"f16({ref})"
        return ref

    def load(self, n: Node) -> str:
        b = self.buffers[n.attr]
        ref = f"{self.buf_names[b.name]}[{self.expr(n.args[0])}]"
        if not b.atomic:
            return ref
        if self._cas_float(b):
            return f"bitcast<f32>(atomicLoad(&{ref}))"
        return f"atomicLoad(&{ref})"

    def _cas_float(self, b: Buffer) -> bool:
        return b.dtype == f32 and not self.target.has("shader-float32-atomic")

    # -- statements ------------------------------------------------------------------------
    def block(self, stmts: Block, ind: str, out: list[str]) -> None:
        for s in stmts:
            STMT_EMITTERS[s.op](self, s, ind, out)

    def comment(self, n: Node) -> str:
        return f"  // {_basename(n.loc.file)}:{n.loc.line}" if n.loc else ""

    # -- module ----------------------------------------------------------------------------
    def task(self, task: Task) -> str:
        stmts = (*task.prologue, *task.body)
        used = {x.attr for x in walk(stmts) if x.op in (Op.VAR, Op.ASSIGN, Op.FOR, Op.POP)}
        used |= {v for v in (task.index_var, task.thread_var, task.active_var) if v}
        used |= {x.attr.dest for x in walk(stmts) if x.op is Op.ATOMIC and x.attr.dest}
        lines = [f"  var {self.local_names[v]}: {wgsl_type(self.ir.locals[v])};" for v in self.ir.locals if v in used]
        body: list[str] = []
        wg = self.target.workgroup_size if task.kind == "range" else 1
        if task.kind == "range" and task.active is not None:
            # capped grid: only the first `active_` threads run, striding by that count
            tid = self.local_names[task.thread_var]
            body.append(f"  let extent_ = {self.expr(task.extent)};")
            body.append(f"  {tid} = i32(gid_.x);")
            self.block(task.prologue, "  ", body)
            body.append(f"  let active_ = min(i32(nwg_.x * {wg}u), {self.expr(task.active)});")
            body.append(f"  {self.local_names[task.active_var]} = active_;")
            body.append(f"  if ({tid} >= active_) {{ return; }}")
            body.append(f"  for (var t_ = {tid}; t_ < extent_; t_ = t_ + active_) {{")
            body.append(f"    {self.local_names[task.index_var]} = t_;")
            self.block(task.body, "    ", body)
            body.append("  }")
        elif task.kind == "range":
            body.append(f"  let extent_ = {self.expr(task.extent)};")
            body.append(f"  let stride_ = i32(nwg_.x * {wg}u);")
            body.append("  for (var t_ = i32(gid_.x); t_ < extent_; t_ = t_ + stride_) {")
            body.append(f"    {self.local_names[task.index_var]} = t_;")
            self.block(task.body, "    ", body)
            body.append("  }")
        else:
            self.block(task.body, "  ", body)
        head = (f"@compute @workgroup_size({wg})\n"
                f"fn {task.name}(@builtin(global_invocation_id) gid_: vec3<u32>, "
                f"@builtin(num_workgroups) nwg_: vec3<u32>) {{")
        return "\n".join([head, *lines, *body, "}"])

    def header(self, uses_f16: bool) -> list[str]:
        out = []
        if uses_f16:
            out.append("enable f16;")
        if self.ir.params:
            fields = ", ".join(f"{self.param_names[p.name]}: {_param_wgsl(p.dtype)}" for p in self.ir.params)
            out.append(f"struct Params {{ {fields} }}")
            out.append("var<immediate> P: Params;")
        for k, b in enumerate(bound_buffers(self.ir)):
            out.append(f"@group(0) @binding({k}) var<storage, {'read_write' if _writable(b) else 'read'}> "
                       f"{self.buf_names[b.name]}: array<{self._elem_type(b)}>;")
        for b in self.ir.buffers:
            if b.kind == "private":
                out.append(f"var<private> {self.buf_names[b.name]}: array<{wgsl_type(b.dtype)}, {int(b.source)}>;")
        return out

    def _elem_type(self, b: Buffer) -> str:
        if not b.atomic:
            return wgsl_type(b.dtype)
        if self._cas_float(b):
            return "atomic<u32>"
        return f"atomic<{wgsl_type(b.dtype)}>"


def bound_buffers(ir: KernelIR) -> list[Buffer]:
    """The buffers that are bindings, in binding order (private arrays are not)."""
    return [b for b in ir.buffers if b.kind != "private"]


def _writable(b: Buffer) -> bool:
    return b.write or b.atomic


def _param_wgsl(t: DType) -> str:
    return {"float": "f32", "int": "i32", "uint": "u32", "bool": "u32"}[t.kind]


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def _basename(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


# -- statement emitters: one per op ---------------------------------------------------------
def _assign(e: _Emitter, n: Node, ind: str, out: list[str]) -> None:
    out.append(f"{ind}{e.local_names[n.attr]} = {e.expr(n.args[0])};{e.comment(n)}")


def _store(e: _Emitter, n: Node, ind: str, out: list[str]) -> None:
    b = e.buffers[n.attr]
    ref = f"{e.buf_names[b.name]}[{e.expr(n.args[0])}]"
    value = e.expr(n.args[1])
    if not b.atomic:
        out.append(f"{ind}{ref} = {value};{e.comment(n)}")
    elif e._cas_float(b):
        out.append(f"{ind}atomicStore(&{ref}, bitcast<u32>({value}));{e.comment(n)}")
    else:
        out.append(f"{ind}atomicStore(&{ref}, {value});{e.comment(n)}")


_ATOMIC_FN = {"add": "atomicAdd", "sub": "atomicSub", "min": "atomicMin", "max": "atomicMax",
              "and": "atomicAnd", "or": "atomicOr", "xor": "atomicXor"}
_CAS_OP = {"add": "{old} + {v}", "sub": "{old} - {v}", "min": "min({old}, {v})", "max": "max({old}, {v})"}


def _atomic(e: _Emitter, n: Node, ind: str, out: list[str]) -> None:
    a: AtomicAttr = n.attr
    b = e.buffers[a.buf]
    ref = f"{e.buf_names[b.name]}[{e.expr(n.args[0])}]"
    value = e.expr(n.args[1])
    dest = f"{e.local_names[a.dest]} = " if a.dest else ""
    native = not b.dtype.is_float or (a.op in ("add", "sub") and not e._cas_float(b))
    if native:
        out.append(f"{ind}{dest}{_ATOMIC_FN[a.op]}(&{ref}, {value});{e.comment(n)}")
        return
    # compare-and-swap loop on the bits of an f32 (min/max, or no native float atomics)
    word = "atomic<u32>" if e._cas_float(b) else None
    new = _CAS_OP[a.op].format(old="bitcast<f32>(old_.old_value)" if word else "old_.old_value", v="v_")
    new_bits = f"bitcast<u32>({new})" if word else new
    out.append(f"{ind}{{{e.comment(n)}")
    out.append(f"{ind}  let v_ = {value};")
    out.append(f"{ind}  var old_ = atomicCompareExchangeWeak(&{ref}, atomicLoad(&{ref}), atomicLoad(&{ref}));")
    out.append(f"{ind}  loop {{")
    out.append(f"{ind}    let r_ = atomicCompareExchangeWeak(&{ref}, old_.old_value, {new_bits});")
    out.append(f"{ind}    if (r_.exchanged) {{ break; }}")
    out.append(f"{ind}    old_ = r_;")
    out.append(f"{ind}  }}")
    if a.dest:
        got = "bitcast<f32>(old_.old_value)" if word else "old_.old_value"
        out.append(f"{ind}  {e.local_names[a.dest]} = {got};")
    out.append(f"{ind}}}")


def _if(e: _Emitter, n: Node, ind: str, out: list[str]) -> None:
    out.append(f"{ind}if ({e.expr(n.args[0])}) {{{e.comment(n)}")
    e.block(n.blocks[0], ind + "  ", out)
    if n.blocks[1]:
        out.append(f"{ind}}} else {{")
        e.block(n.blocks[1], ind + "  ", out)
    out.append(f"{ind}}}")


def _while(e: _Emitter, n: Node, ind: str, out: list[str]) -> None:
    out.append(f"{ind}while ({e.expr(n.args[0])}) {{{e.comment(n)}")
    e.block(n.blocks[0], ind + "  ", out)
    out.append(f"{ind}}}")


def _for(e: _Emitter, n: Node, ind: str, out: list[str]) -> None:
    var = e.local_names[n.attr]
    begin, end, step = n.args
    s = e.expr(step)
    if step.op is Op.CONST:
        cond = f"{var} < end_" if step.attr > 0 else f"{var} > end_"
    else:
        cond = f"select({var} > end_, {var} < end_, step_ > 0)"
    out.append(f"{ind}{{{e.comment(n)}")
    out.append(f"{ind}  let end_ = {e.expr(end)};")
    out.append(f"{ind}  let step_ = {s};")
    out.append(f"{ind}  for ({var} = {e.expr(begin)}; {cond}; {var} = {var} + step_) {{")
    e.block(n.blocks[0], ind + "    ", out)
    out.append(f"{ind}  }}")
    out.append(f"{ind}}}")


def _assert(e: _Emitter, n: Node, ind: str, out: list[str]) -> None:
    code, _message = n.attr
    k = STATUS_HEADER_WORDS + e.site(n.attr)
    out.append(f"{ind}if (!{e.expr(n.args[0])}) {{{e.comment(n)}")
    out.append(f"{ind}  atomicOr(&{e.status}[0], {int(code)}u);")
    out.append(f"{ind}  atomicAdd(&{e.status}[{k}], 1u);")
    out.append(f"{ind}}}")


def _jump(word: str):
    def emit(e: _Emitter, n: Node, ind: str, out: list[str]) -> None:
        out.append(f"{ind}{word};{e.comment(n)}")
    return emit


STMT_EMITTERS = {
    Op.ASSIGN: _assign, Op.STORE: _store, Op.ATOMIC: _atomic, Op.IF: _if, Op.WHILE: _while,
    Op.FOR: _for, Op.BREAK: _jump("break"), Op.CONTINUE: _jump("continue"), Op.ASSERT: _assert,
}


# -- access analysis and the spec --------------------------------------------------------------
def analyze_access(ir: KernelIR) -> None:
    """Mark each buffer read / written / atomic from how the tasks use it; add the status
    buffer when a task has device-side checks (ASSERT)."""
    stmts = [n for t in ir.tasks for n in walk((*t.prologue, *t.body))]
    if any(n.op is Op.ASSERT for n in stmts) and not any(b.kind == "status" for b in ir.buffers):
        ir.buffers.append(Buffer("gr.status", u32, "status", atomic=True, read=True, write=True))
    by_name = {b.name: b for b in ir.buffers}
    for t in ir.tasks:
        for n in walk((*t.prologue, *t.body)):
            if n.op is Op.LOAD:
                by_name[n.attr].read = True
            elif n.op is Op.STORE:
                by_name[n.attr].write = True
            elif n.op is Op.ATOMIC:
                b = by_name[n.attr.buf]
                b.atomic = b.read = b.write = True


def emit(ir: KernelIR, target: Target) -> KernelSpec:
    """Render the kernel to WGSL and describe how to bind and launch it."""
    analyze_access(ir)
    e = _Emitter(ir, target)
    tasks_src = [e.task(t) for t in ir.tasks]
    asserts = tuple(sorted(e.sites, key=e.sites.get))
    uses_f16 = any(t == f16 for t in ir.locals.values()) or any(b.dtype == f16 for b in ir.buffers) \
        or any(p.dtype == f16 for p in ir.params) or any(
            x.dtype == f16 for t in ir.tasks for s in t.body for x in walk_node(s))
    helpers = [HELPERS[h].replace("{t}", t).replace("{u}", "u32").replace("{{", "{").replace("}}", "}")
               if "{t}" in HELPERS[h] else HELPERS[h] for h, t in sorted(e.helpers)]
    wgsl = "\n".join([*e.header(uses_f16), *helpers, *tasks_src]) + "\n"
    params, size = [], 0
    for p in ir.params:
        params.append(ParamSpec(p.name, p.dtype, p.source, size))
        size += 4
    if params and size > target.max_immediate_size:
        raise InternalCompilerError(f"kernel {ir.name} needs {size} bytes of scalar arguments; "
                                    f"the device allows {target.max_immediate_size}")
    pnames = [p.name for p in ir.params]
    tasks = []
    for t in ir.tasks:
        if t.kind == "range":
            fn = compile_host_expr(t.extent, pnames) if host_evaluable(t.extent) else None
            tasks.append(TaskSpec(t.name, "range", target.workgroup_size, t.extent, fn,
                                  capped=t.active is not None, stack_depth=t.stack_depth))
        else:
            tasks.append(TaskSpec(t.name, "serial", 1))
    by_name = {b.name: b for b in ir.buffers}
    bindings = tuple(
        BindingSpec(k, b.name, b.dtype, b.kind, b.source, read_only=not _writable(b), atomic=b.atomic,
                    written=b.write, grad_of=(by_name[b.of].kind, by_name[b.of].source) if b.of else None)
        for k, b in enumerate(bound_buffers(ir)))
    feats = {"immediates"} if params else set()
    if uses_f16:
        feats.add("shader-f16")
    internal = {"status": 4 * (STATUS_HEADER_WORDS + len(asserts))} if asserts else {}
    return KernelSpec(ir.name, wgsl, bindings, tuple(params), size, tuple(tasks), tuple(ir.returns),
                      frozenset(feats), internal, asserts)


__all__ = ["emit", "literal", "EXPR_FMT", "STMT_EMITTERS", "i32", "f32"]
