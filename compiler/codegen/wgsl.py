"""IR -> WGSL: expressions from the format tables of `wgsl_exprs`, statements from the
emitters of `wgsl_stmts`, and here the module: bindings, immediates, one entry point per
task (grid-stride loop, reductions) and the `KernelSpec` the runtime launches.

Every emitted statement carries a `// file.py:LINE` comment so a naga error leads back to
the user's code.
"""
from __future__ import annotations

from ..errors import CompileError
from ..hosteval import compile_host_expr, host_evaluable
from ..ir import Block, Buffer, KernelIR, Node, Op, Task, walk, walk_task
from ..ir import assigned as ir_assigned
from ..spec import (
    LOOP_CAP_MESSAGE,
    STATUS_HEADER_WORDS,
    STATUS_LOOP_CAP,
    BindingSpec,
    KernelSpec,
    ParamSpec,
    TaskSpec,
    status_words,
)
from ..target import Target
from ..types import DType, f16, f64, i32, u1, u32
from . import interleave, wgsl_chunks, wgsl_opsem, wgsl_textures, wgsl_vec
from . import wgsl_nonfinite as nonfinite
from . import wgsl_types as w64
from .nesting import check_nesting
from .wgsl_exprs import (
    SUBGROUP_FN,
    combine,
    helper_source,
    identity,
    is_nan_bits,
    literal,
    spelling,
    wgsl_type,
    with_deps,
)
from .wgsl_loops import loop_copies
from .wgsl_stmts import STATUS_VALUES_CONST, STMT_EMITTERS, View, _no_wide_words, choose_view, emit_atomic

_SPECIAL = {"thread_idx": "i32(lid_)", "global_thread_idx": "i32(gid_.x)", "block_idx": "i32(wid_.x)",
            "subgroup_invocation_id": "i32(sgl_)", "subgroup_size": "i32(sgs_)", "subgroup_id": "i32(sgid_)",
            "num_subgroups": "i32(nsg_)"}
MAX_DYNAMIC_GROUPS = 1024  # blocks launched when a task's extent is only known on the device
PARAMS_GROUP = 1  # bind group of the params when the device has no immediates
PROBE_PASSES = 8  # passes of the loop-cap probe (loop_cap_check)
UNIFORM_PARAMS_LIMIT = 256  # bytes of params a uniform-ring slot holds (gfxrt runtime)



def one_pass(task: Task) -> bool:
    """A convergent range task (barriers, subgroup ops) without reductions whose extent the
    host knows runs each block once, with no grid-stride loop (TaskSpec.one_pass)."""
    return (task.kind == "range" and task.convergent and not task.reductions and task.active is None
            and host_evaluable(task.extent))


class _Names(dict):
    """Local names of one task's code: its own entries, the kernel's `names` for the rest."""

    def __init__(self, names: dict, own: dict):
        super().__init__(own)
        self.names = names

    def __missing__(self, key):
        return self.names[key]

class _Emitter:
    """Renders one kernel. Holds the name maps, buffer views and the helpers used."""

    def __init__(self, ir: KernelIR, target: Target):
        self.ir = ir
        self.target = target
        self.helpers: set[tuple[str, str]] = set()
        self.local_names = {name: f"l{k}_{_ident(name)}" for k, name in enumerate(ir.locals)}
        self.local_order = {name: k for k, name in enumerate(ir.locals)}
        self.param_names = {p.name: f"p{k}" for k, p in enumerate(ir.params)}
        self.shape_params = {p.name for p in ir.params if p.source[:1] == ("shape",)}
        self.buffers = {b.name: b for b in ir.buffers}
        self.buf_names = {b.name: f"b{k}_{_ident(b.name)}" for k, b in enumerate(ir.buffers)}
        self.textures = {s.name: s for s in ir.textures}
        self.views = _views(ir, target)
        self.chunks = wgsl_chunks.chunking(ir, target)  # arrays bound in windows (codegen/wgsl_chunks.py)
        self.chunk_fns: dict[str, str] = {}             # their load helpers: name -> WGSL
        self.lanes = wgsl_vec.lanes_of(ir, self.views)  # shared arrays declared as arrays of vectors
        self.status_buffer = next((b.name for b in ir.buffers if b.kind == "status"), None)
        self.asserts: list[tuple[int, str]] = []
        self.status_values = False  # a bounds check records its index (STATUS_VALUES_CONST)
        self._assert_sites: dict[tuple, int] = {}
        self.task: Task | None = None
        self.uses_subgroups = False
        self.red_types: set[str] = set()
        self.loop_copies: dict[int, int] = {}  # id(loop) -> body copies per pass (wgsl_stmts.loop_copies)

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
            view = self.views[n.attr]
            if n.attr in self.chunks:
                return wgsl_chunks.load(self, n.attr, self.expr(n.args[0]), n.dtype)
            if view.kind == "packed":
                return view.load_packed(self.buf_names[n.attr], self.expr(n.args[0]))
            return view.load(self.ref(n.attr, n.args[0]), n.dtype)
        if op is Op.SPECIAL:
            return self.special(n)
        if op is Op.LENGTH:
            if n.attr in self.chunks:
                return wgsl_chunks.length(self, n.attr)
            return f"i32(arrayLength(&{self.buf_names[n.attr]}))"
        args = [self.expr(a) for a in n.args]
        if op is Op.SUBGROUP:
            self.need_subgroups(n)
            if len(args) == 2:
                args[1] = f"u32({args[1]})"
            return f"{SUBGROUP_FN[n.attr]}({', '.join(args)})"
        if op is Op.TEXEL:
            return wgsl_textures.texel(self, n, args)
        call = wgsl_opsem.expr(n, args, self.helpers)  # Python's %, //, shifts, NaN, casts
        if call is not None:
            return call
        if op is Op.CAST:
            return w64.cast(n.dtype, args[0], n.args[0].dtype)
        if op is Op.BITCAST:
            return f"bitcast<{wgsl_type(n.dtype)}>({args[0]})"
        if op is Op.NEG and args[0].startswith("-"):   # -(-3i): "--3i" would read as a decrement
            args[0] = f"({args[0]})"
        if op in (Op.FLOORDIV, Op.MOD) and n.dtype == i32 and all(self.nonneg(a) for a in n.args):
            return self.nonneg_divmod(n, args)
        at = n.args[0].dtype
        fmt, helper = spelling(op, at)
        if helper:
            self.helpers.add((helper, at.wgsl))
        return fmt.format(*args)

    def nonneg_divmod(self, n: Node, args: list[str]) -> str:
        """Floor division / modulo of two non-negative i32s: one unsigned division (OpUDiv and
        OpUMod are exact on every driver; a signed one is not, see `gr_floordiv_i32`)."""
        div = n.args[1]
        if div.op is Op.CONST and div.attr > 0:
            return f"i32(u32({args[0]}) {'/' if n.op is Op.FLOORDIV else '%'} {div.attr}u)"
        helper = "div_u32" if n.op is Op.FLOORDIV else "rem_u32"
        self.helpers.add((helper, "u32"))
        return f"i32(gr_{helper}(u32({args[0]}), u32({args[1]})))"

    def nonneg(self, n: Node) -> bool:
        """Provably >= 0, so floor division is unsigned division (`nonneg_divmod`). Sums and
        products of non-negative values count as non-negative: index arithmetic is assumed not
        to wrap past 2**31 (it would address the wrong element anyway)."""
        op = n.op
        if op is Op.CONST:
            return n.attr >= 0
        if op is Op.PARAM:
            return n.attr in self.shape_params
        if op is Op.VAR:
            return self.task is not None and n.attr == self.task.index_var
        if op is Op.SPECIAL:
            return True
        if op is Op.MAX:
            return self.nonneg(n.args[0]) or self.nonneg(n.args[1])
        if op in (Op.ADD, Op.MUL, Op.FLOORDIV, Op.MOD, Op.MIN):
            return all(self.nonneg(a) for a in n.args)
        return False

    def param(self, n: Node) -> str:
        ref = f"P.{self.param_names[n.attr]}"
        if n.dtype.wide:
            return w64.param_expr(ref, n.dtype)
        if n.dtype == u1:
            return f"({ref} != 0u)"
        if n.dtype == f16:
            return f"f16({ref})"
        return ref

    def special(self, n: Node) -> str:
        if n.attr == "block_dim":
            return f"{self.workgroup_size()}i"
        t = self.task
        if n.attr in ("block_idx", "global_thread_idx") and t is not None and t.kind == "range":
            # the logical block / thread of this iteration (grid-stride loops and 2-D grids included)
            idx = self.local_names[t.index_var]  # the iteration's logical index, in every loop form
            return f"i32(u32({idx}) / {self.workgroup_size()}u)" if n.attr == "block_idx" else idx
        if n.attr.startswith("subgroup") or n.attr == "num_subgroups":
            self.need_subgroups(n)
        return _SPECIAL[n.attr]

    def need_subgroups(self, n: Node) -> None:
        if not self.target.has("subgroup"):
            raise CompileError("gr.simt.subgroup operations need the adapter feature 'subgroup', which this "
                               "device lacks; use gr.simt.block.SharedArray and block.sync() instead",
                               n.loc, self.ir.name)
        self.uses_subgroups = True

    def ref(self, buf: str, index: Node) -> str:
        if self.buffers[buf].kind == "private_shared":  # per-thread array in workgroup memory
            return f"{self.buf_names[buf]}[({self.expr(index)}) * {self.workgroup_size()} + i32(lid_)]"
        if buf in self.lanes:
            return wgsl_vec.ref(self, buf, index)
        return f"{self.buf_names[buf]}[{self.expr(index)}]"

    def assert_site(self, n: Node) -> int:
        """The status word of this check: one per distinct (code, message)."""
        return self.site(n.attr)

    def site(self, key: tuple[int, str]) -> int:
        site = self._assert_sites.get(key)
        if site is None:
            site = self._assert_sites[key] = len(self.asserts)
            self.asserts.append(key)
        return site

    # -- statements ------------------------------------------------------------------------
    def block(self, stmts: Block, ind: str, out: list[str]) -> None:
        i = 0
        while i < len(stmts):
            n = wgsl_vec.vector_run(self, stmts, i, ind, out) if self.lanes else 0
            if not n:
                STMT_EMITTERS[stmts[i].op](self, stmts[i], ind, out)
            i += n or 1

    def comment(self, n: Node) -> str:
        return f"  // {_basename(n.loc.file)}:{n.loc.line}" if n.loc else ""

    # -- tasks -----------------------------------------------------------------------------
    def workgroup_size(self) -> int:
        t = self.task
        if t is None or t.kind == "serial":
            return 1
        return t.workgroup_size or self.target.workgroup_size

    def task_source(self, task: Task) -> str:
        self.task = task
        wg = self.workgroup_size()
        stmts = (*task.prologue, *task.body)
        self.loop_copies = loop_copies(self.target, stmts)
        used = {x.attr for x in walk(stmts) if x.op in (Op.VAR, Op.ASSIGN, Op.FOR, Op.POP)}
        used |= {x.attr.dest for x in walk(stmts) if x.op is Op.ATOMIC and x.attr.dest}
        used |= {r.acc for r in task.reductions}
        used |= {v for v in (task.index_var, task.thread_var, task.active_var) if v}
        decl = []
        reds: dict = {}
        for r in task.reductions:
            reds.setdefault(r.acc, r)
        # the task's locals in the kernel's order (not a scan of every local per task)
        for v in sorted((v for v in used if v in self.ir.locals), key=self.local_order.__getitem__):
            red = reds.get(v)
            init = f" = {identity(red.op, red.dtype)}" if red else ""
            decl.append(f"  var {self.local_names[v]}: {wgsl_type(self.ir.locals[v])}{init};")
        body: list[str] = []
        self.zero_shared(task, wg, body)
        if task.kind == "range" and task.active is not None:
            self.capped_loop(task, wg, body)
        elif task.kind == "range":
            idx = self.local_names[task.index_var]
            body.append(f"  let extent_ = {self.expr(task.extent)};")
            if one_pass(task):
                # one block per `wg` iterations, no loop: a loop around barriers costs 2-4x on
                # some drivers (lavapipe). Beyond 65535 blocks the launcher dispatches a 2-D grid.
                body.append(f"  let base_ = i32(wid_.x + wid_.y * nwg_.x) * {wg};")
                body.append("  if (base_ < extent_) {")
                body.append(f"    {idx} = base_ + i32(lid_);")
                self.block(task.body, "    ", body)
                body.append("  }")
                return self.finish_task(task, wg, decl, body)
            body.append(f"  let stride_ = i32(nwg_.x) * {wg};")
            if task.reductions or task.convergent:
                # block-uniform trip count: every thread of a block reaches the barriers after the loop
                body.append(f"  for (var base_ = i32(wid_.x) * {wg}; base_ < extent_; base_ = base_ + stride_) {{")
                body.append(f"    {idx} = base_ + i32(lid_);")
                if task.convergent:
                    self.block(task.body, "    ", body)
                else:
                    body.append(f"    if ({idx} < extent_) {{")
                    self.block(task.body, "      ", body)
                    body.append("    }")
                body.append("  }")
                for r in task.reductions:
                    self.reduction_combine(r, wg, body)
            else:
                # where loop bodies are copied per pass (a loop-capped adapter), interleaving a body
                # with loops would copy them again: 3x the driver's compile time for no gain on a CPU
                copied = self.target.loop_cap and has_loops(task)
                split = interleave.plan(task.body) if self.target.interleave and not copied else None
                if split is not None:
                    decl += self.interleaved_loop(task, split, body)
                else:
                    body.append("  for (var t_ = i32(gid_.x); t_ < extent_; t_ = t_ + stride_) {")
                    body.append(f"    {idx} = t_;")
                    self.block(task.body, "    ", body)
                    body.append("  }")
        else:
            self.block(task.body, "  ", body)
        return self.finish_task(task, wg, decl, body)

    def zero_shared(self, task: Task, wg: int, out: list[str]) -> None:
        """Zero the shared arrays the task uses, then a barrier: SharedArrays start zeroed in
        every block. (WebGPU promises zeroed workgroup memory, but lavapipe 22.3 keeps the last
        dispatch's values.)"""
        used = set()
        for n in walk((*task.prologue, *task.body)):
            if n.op in (Op.LOAD, Op.STORE):
                used.add(n.attr)
            elif n.op is Op.ATOMIC:
                used.add(n.attr.buf)
        shared = [b for b in self.ir.buffers if b.kind == "shared" and b.name in used]
        for b in shared:
            view, name = self.views[b.name], self.buf_names[b.name]
            if b.name in self.lanes:
                out.append(wgsl_vec.zero(name, b, self.lanes[b.name], wg))
                continue
            zero = f"{'u32' if view.words else view.dtype.wgsl}()"
            store = f"atomicStore(&{name}[z_], {zero});" if view.atomic else f"{name}[z_] = {zero};"
            out.append(f"  for (var z_ = lid_; z_ < {b.size}u; z_ = z_ + {wg}u) {{ {store} }}")
        if shared:
            out.append("  workgroupBarrier();")

    def _const_read(self, b: Buffer) -> bool:
        return any(n.op is Op.LOAD and n.attr == b.name for t in self.ir.tasks for n in walk(t.body))

    def _const_value(self, b: Buffer) -> tuple[str, str]:
        arr = f"array<{wgsl_type(b.dtype)}, {len(b.source)}>"
        return arr, f"{arr}({', '.join(literal(v, b.dtype) for v in b.source)})"

    def _const_at_entry(self, b: Buffer) -> bool:
        """A const array holding NaN / inf: no constant initializer can spell it (WGSL forbids one)."""
        return bool(nonfinite.declarations(self._const_value(b)[1]))

    def finish_task(self, task: Task, wg: int, decl: list[str], body: list[str]) -> str:
        decl = [f"  {self.buf_names[b.name]} = {self._const_value(b)[1]};" for b in self.ir.buffers
                if b.kind == "const" and self._const_read(b) and self._const_at_entry(b)] + decl
        if self.target.loop_cap and has_loops(task):
            self.loop_cap_check(body)
        builtins = ["@builtin(global_invocation_id) gid_: vec3<u32>", "@builtin(local_invocation_index) lid_: u32",
                    "@builtin(workgroup_id) wid_: vec3<u32>", "@builtin(num_workgroups) nwg_: vec3<u32>"]
        if self.uses_subgroups:
            builtins += ["@builtin(subgroup_invocation_id) sgl_: u32", "@builtin(subgroup_size) sgs_: u32",
                         "@builtin(subgroup_id) sgid_: u32", "@builtin(num_subgroups) nsg_: u32"]
        head = f"@compute @workgroup_size({wg})\nfn {task.name}({', '.join(builtins)}) {{"
        self.task = None
        return "\n".join([head, *decl, *body, "}"])

    def loop_cap_check(self, out: list[str]) -> None:
        """Report a launch that reached the adapter's loop cap (Target.loop_cap). The cap
        counts all loop passes of the invocation, so once it is spent a probe loop that wants
        PROBE_PASSES passes stops after one. The probe's exit test comes first and depends on
        a value the driver cannot fold (nwg_.x > 0), so it is not unrolled; it also reports an
        invocation that came within PROBE_PASSES passes of the cap without being cut."""
        site = self.site((STATUS_LOOP_CAP, LOOP_CAP_MESSAGE.format(cap=self.target.loop_cap)))
        status = self.buf_names[self.status_buffer]
        out.append("  {  // did the adapter's loop cap stop a loop? (compiler/target.py loop_cap)")
        out.append("    var lc_ = 0u;")
        out.append("    var go_ = nwg_.x > 0u;")
        out.append(f"    loop {{ if (!go_) {{ break; }} lc_ = lc_ + 1u; go_ = lc_ < {PROBE_PASSES}u; }}")
        out.append(f"    if (lc_ < {PROBE_PASSES}u) {{ atomicOr(&{status}[0], {STATUS_LOOP_CAP}u); "
                   f"atomicAdd(&{status}[{site + 1}], 1u); }}")
        out.append("  }")

    def interleaved_loop(self, task: Task, split, body: list[str]) -> list[str]:
        """Two iterations per grid-stride step: both prefixes (their loads) first, then both
        rests; a last odd iteration runs alone. Returns the extra local declarations."""
        prefix, rest, temps = split
        kernel_names = self.local_names
        # the names of each iteration's copies over the kernel's (no copy of every kernel local per task)
        base = _Names(kernel_names, {name: f"{name}a" for name in temps})
        assigned = ir_assigned(task.body) | set(temps) | {task.index_var}  # each iteration's own copies
        other = _Names(kernel_names, {**base, **{v: f"{base[v]}_b" for v in assigned}})
        types = {**self.ir.locals, **temps}
        decl = [f"  var {base[v]}: {wgsl_type(t)};" for v, t in temps.items()]
        decl += [f"  var {other[v]}: {wgsl_type(types[v])};" for v in sorted(assigned)]
        idx = task.index_var
        body.append("  var t_ = i32(gid_.x);")
        body.append("  loop {  // two iterations per step, loads of both first (compiler/codegen/interleave.py)")
        body.append("    if (t_ + stride_ >= extent_) { break; }")
        for names, first, block, ind in ((base, "t_", prefix, "    "), (other, "t_ + stride_", prefix, "    "),
                                         (base, None, rest, "    "), (other, None, rest, "    ")):
            self.local_names = names
            if first is not None:
                body.append(f"{ind}{names[idx]} = {first};")
            self.block(block, ind, body)
        self.local_names = base
        body.append("    t_ = t_ + 2 * stride_;")
        body.append("  }")
        body.append("  if (t_ < extent_) {")
        body.append(f"    {base[idx]} = t_;")
        self.block(task.body, "    ", body)
        body.append("  }")
        self.local_names = kernel_names
        return decl

    def capped_loop(self, task: Task, wg: int, body: list[str]) -> None:
        """An adstack task's capped grid: each thread runs the prologue, then only the first
        `active_` threads go on, striding over the logical range by that count."""
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

    def reduction_combine(self, r, wg: int, out: list[str]) -> None:
        """Combine the block's accumulators, then one atomic per block."""
        t: DType = r.dtype
        rv = self.views[r.buf]
        if t.wide and not (rv.kind == "atomic" or getattr(rv, "word", "") == "u64"):  # kernel-scope: u32 words
            raise CompileError(f"a reduction (`s += v` on a kernel-scope variable in a parallel loop) of {t} is not "
                               "supported (kernel-scope variables live in 4-byte words); reduce into a 0-d field "
                               f"or array element of {t} (`total[None] += v`), or in f32 / i32", r.index.loc,
                               self.ir.name)
        red = f"red_{t.wgsl}_"
        self.red_types.add(t.wgsl)
        acc = self.local_names[r.acc]
        view: View = self.views[r.buf]
        sub_ops = {"add": "subgroupAdd", "min": "subgroupMin", "max": "subgroupMax", "and": "subgroupAnd",
                   "or": "subgroupOr", "xor": "subgroupXor"}
        out.append(f"  {{  // reduce {r.op} into {r.buf}")
        if self.target.has("subgroup") and not t.wide:  # no 64-bit subgroup operations
            self.uses_subgroups = True
            s_ = f"{sub_ops[r.op]}({acc})"
            if r.op in ("min", "max") and is_nan_bits(acc, t):  # subgroupMax skips NaN lanes; np.maximum keeps NaN
                s_ = f"select({s_}, {nonfinite.nan('f32')}, subgroupAny({is_nan_bits(acc, t)}))"
            out.append(f"    let s_ = {s_};")
            out.append(f"    if (sgl_ == 0u) {{ {red}[sgid_] = s_; }}")
            out.append("    workgroupBarrier();")
            out.append("    if (lid_ == 0u) {")
            out.append(f"      var racc_ = {red}[0];")
            step = combine(r.op, "racc_", f"{red}[k_]", t)
            out.append(f"      for (var k_ = 1u; k_ < nsg_; k_ = k_ + 1u) {{ racc_ = {step}; }}")
        else:
            out.append(f"    {red}[lid_] = {acc};")
            out.append("    workgroupBarrier();")
            out.append(f"    for (var s_ = {wg // 2}u; s_ > 0u; s_ = s_ >> 1u) {{")
            step = combine(r.op, f"{red}[lid_]", f"{red}[lid_ + s_]", t)
            out.append(f"      if (lid_ < s_) {{ {red}[lid_] = {step}; }}")
            out.append("      workgroupBarrier();")
            out.append("    }")
            out.append("    if (lid_ == 0u) {")
            out.append(f"      let racc_ = {red}[0];")
        if r.buf in self.chunks:  # an array bound in windows: the atomic in its element's window
            wgsl_chunks.access(self, r.buf, self.expr(r.index), None, "      ", out, lambda name, idx, _, ind, o:
                               emit_atomic(view, f"{name}[{idx}]", r.op, "racc_", t, None, ind, o))
        else:
            emit_atomic(view, self.ref(r.buf, r.index), r.op, "racc_", t, None, "      ", out)
        out.append("    }")
        out.append("    workgroupBarrier();")
        out.append("  }")

    # -- module ----------------------------------------------------------------------------
    def header(self, uses_f16: bool, params: list) -> list[str]:
        out = []
        if uses_f16:
            out.append("enable f16;")
        if self.uses_subgroups and "subgroups" in self.target.wgsl_enables:
            out.append("enable subgroups;")
        if params:
            fields = ", ".join(w64.param_fields(self.param_names[p.name], p.dtype)
                               or f"{self.param_names[p.name]}: {_param_wgsl(p.dtype)}" for p in params)
            out.append(f"struct Params {{ {fields} }}")
            if self.target.immediates:
                out.append("var<immediate> P: Params;")
            else:  # no push constants: a slot of the runtime's uniform ring (group 1, dynamic offset)
                out.append(f"@group({PARAMS_GROUP}) @binding(0) var<uniform> P: Params;")
        k = 0
        for b in self.ir.buffers:
            view = self.views[b.name]
            if b.kind == "shared" and b.name in self.lanes:
                out.append(wgsl_vec.decl(self.buf_names[b.name], b, self.lanes[b.name]))
                continue
            if b.kind == "shared":
                out.append(f"var<workgroup> {self.buf_names[b.name]}: array<{view.elem_type()}, {b.size}>;")
                continue
            if b.kind == "private":
                out.append(f"var<private> {self.buf_names[b.name]}: array<{wgsl_type(b.dtype)}, {int(b.source)}>;")
                continue
            if b.kind == "const":  # a small captured numpy array (frontend/callables.py), if a load reads it
                if self._const_read(b):
                    arr, items = self._const_value(b)
                    # NaN / inf items are run-time values (wgsl_nonfinite): each task's entry assigns those
                    init = "" if self._const_at_entry(b) else f" = {items}"
                    out.append(f"var<private> {self.buf_names[b.name]}: {arr}{init};")
                continue
            if b.kind == "private_shared":  # [slot * block size + thread]: sized for the largest block using it
                wg = max([t.workgroup_size or self.target.workgroup_size for t in self.ir.tasks
                          if any(n.op in (Op.LOAD, Op.STORE) and n.attr == b.name for n in walk(t.body))] or [1])
                size = int(b.source) * wg
                out.append(f"var<workgroup> {self.buf_names[b.name]}: array<{wgsl_type(b.dtype)}, {size}>;")
                continue
            access = "read_write" if (b.write or view.atomic) else "read"
            for j, w in enumerate(wgsl_chunks.binding_windows(b, self.chunks)):
                out.append(f"@group(0) @binding({k}) var<storage, {access}> {self.buf_names[b.name]}"
                           f"{'' if w is None else f'_{j}'}: array<{view.elem_type()}>;")
                k += 1
        out += wgsl_textures.declarations(self.ir, k)
        wg = max([t.workgroup_size or self.target.workgroup_size for t in self.ir.tasks if t.reductions] or [0])
        for t in sorted(self.red_types):
            out.append(f"var<workgroup> red_{t}_: array<{t}, {wg}>;")
        return out


def _views(ir: KernelIR, target: Target) -> dict[str, View]:
    ops: dict[str, set] = {b.name: set() for b in ir.buffers}
    for t in ir.tasks:
        for n in walk_task(t):
            if n.op is Op.ATOMIC:
                ops[n.attr.buf].add((n.attr.op, n.args[1].dtype))
        for r in t.reductions:
            ops[r.buf].add((r.op, r.dtype))
    views = {}
    for b in ir.buffers:
        views[b.name] = View("atomic", u32) if b.kind == "status" else choose_view(b, ops[b.name], target)
    return views


def _type_features(ir: KernelIR, params_ir, target: Target, bits64: bool) -> set[str]:
    """shader-f64 / shader-int64 for the 64-bit types the kernel uses; a CompileError
    naming the feature where the device lacks it."""
    seen: dict[DType, object] = {}
    for p in params_ir:
        seen.setdefault(p.dtype, ir.loc)
        if p.dtype == f64:  # joined from two u32 words through u64
            seen.setdefault(DType("u64", "u64", "uint64", 8, "uint"), ir.loc)
    for b in ir.buffers:
        seen.setdefault(b.dtype, ir.loc)
    for t in ir.locals.values():
        seen.setdefault(t, ir.loc)
    for t in ir.tasks:
        for x in walk_task(t):
            if x.dtype is not None:
                seen.setdefault(x.dtype, x.loc or ir.loc)
    if f64 in seen and bits64:  # f64 helpers (math, NaN tests, %) work on the bits, through u64
        seen.setdefault(DType("u64", "u64", "uint64", 8, "uint"), seen[f64])
    feats = set()
    for t, loc in seen.items():
        for f in w64.features_of(t):
            if not target.has(f):
                raise CompileError(w64.missing_feature(t, f), loc, ir.name)
            feats.add(f)
    return feats


def _check_words(ir: KernelIR) -> None:
    """A 64-bit value in a word buffer (a kernel-scope variable shared by several tasks, its
    reduction): a CompileError at the user's line."""
    words = {b.name for b in ir.buffers if b.words}
    for t in ir.tasks:
        for x in walk_task(t):
            if x.op in (Op.LOAD, Op.STORE, Op.ATOMIC) and (x.attr.buf if x.op is Op.ATOMIC else x.attr) in words:
                value = x if x.op is Op.LOAD else x.args[1]
                if value.dtype.wide:
                    try:
                        _no_wide_words(value.dtype)
                    except CompileError as e:
                        raise CompileError(e.message, x.loc or ir.loc, ir.name) from None


def _param_wgsl(t: DType) -> str:
    return {"float": "f32", "int": "i32", "uint": "u32", "bool": "u32"}[t.kind]


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)


def _basename(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


# -- access analysis and the spec --------------------------------------------------------------
def has_loops(task: Task) -> bool:
    return any(n.op in (Op.FOR, Op.WHILE) for n in walk_task(task))


def analyze_access(ir: KernelIR, status: bool = False) -> None:
    """Mark each buffer read / written / atomic from how the tasks use it; add the status
    buffer when a task has device-side checks (ASSERT, or `status`) and the frontend made none."""
    if (status or any(n.op is Op.ASSERT for t in ir.tasks for n in walk_task(t))) and \
            not any(b.kind == "status" for b in ir.buffers):
        ir.buffers.append(Buffer("gr.status", u32, "status"))
    by_name = {b.name: b for b in ir.buffers}
    for b in ir.buffers:
        b.read = b.write = b.atomic = False
    for t in ir.tasks:
        for n in walk_task(t):
            if n.op is Op.LOAD:
                by_name[n.attr].read = True
            elif n.op is Op.STORE:
                by_name[n.attr].write = True
            elif n.op is Op.ATOMIC:
                b = by_name[n.attr.buf]
                b.atomic = b.read = b.write = True
            elif n.op is Op.ASSERT:
                by_name[_status(ir)].write = True
        for r in t.reductions:
            b = by_name[r.buf]
            b.atomic = b.read = b.write = True
    for b in ir.buffers:
        if b.kind == "status":
            b.read = b.write = b.atomic = True


def _status(ir: KernelIR) -> str:
    return next(b.name for b in ir.buffers if b.kind == "status")


def _used_params(ir: KernelIR) -> set[str]:
    return {n.attr for t in ir.tasks for n in walk_task(t) if n.op is Op.PARAM}


def emit(ir: KernelIR, target: Target) -> KernelSpec:
    """Render the kernel to WGSL and describe how to bind and launch it."""
    analyze_access(ir, status=bool(target.loop_cap) and any(has_loops(t) for t in ir.tasks))
    _check_words(ir)
    e = _Emitter(ir, target)
    used = _used_params(ir)
    params_ir = [p for p in ir.params if p.name in used]
    tasks_src = [e.task_source(t) for t in ir.tasks]
    uses_f16 = any(t == f16 for t in ir.locals.values()) or any(b.dtype == f16 for b in ir.buffers) \
        or any(p.dtype == f16 for p in params_ir) or any(
            x.dtype == f16 for t in ir.tasks for x in walk_task(t))
    # once each: a helper of fixed types (gr_udiv64) is a dependency of several instances
    helpers = list(dict.fromkeys(helper_source(h, t) for h, t in sorted(with_deps(e.helpers))))
    values_at = [f"const {STATUS_VALUES_CONST}: u32 = {STATUS_HEADER_WORDS + len(e.asserts)}u;"] \
        if e.status_values else []  # where the bounds checks' values start: known once every site is
    body = [*helpers, *e.chunk_fns.values(), *tasks_src]
    bits_fns = nonfinite.declarations("\n".join(body))  # NaN / inf as run-time values
    wgsl = "\n".join([*e.header(uses_f16, params_ir), *values_at, *bits_fns, *body]) + "\n"
    check_nesting(wgsl, ir)
    params, size = [], 0
    for p in params_ir:
        params.append(ParamSpec(p.name, p.dtype, p.source, size))
        size += 8 if p.dtype.wide else 4
    limit = target.max_immediate_size if target.immediates else UNIFORM_PARAMS_LIMIT
    if params and size > limit:
        raise CompileError(f"kernel {ir.name} needs {size} bytes of scalar arguments and array shapes; the device "
                           f"allows {limit} (about {limit // 4} scalars "
                           "and array dimensions in all): pass fewer arguments, or pack scalars into an array"
                           + ("; a vector / matrix argument takes one slot per component it uses: pass a long one "
                              "as a 1-element gr.ndarray of its type" if any(p.source[0] == "elem" for p in params_ir)
                              else ""),
                           ir.loc, ir.name)
    pnames = [p.name for p in params_ir]
    tasks = []
    for t in ir.tasks:
        wg = t.workgroup_size or target.workgroup_size
        if t.kind == "range":
            fn = compile_host_expr(t.extent, pnames) if host_evaluable(t.extent) else None
            cap = 65535 if fn is not None and not t.reductions else MAX_DYNAMIC_GROUPS
            if t.items is not None and fn is None:
                raise CompileError(f"internal: task {t.name} runs for some sizes only, but its extent is not "
                                   "known on the host", ir.loc, ir.name)
            tasks.append(TaskSpec(t.name, "range", wg, t.extent, fn, max_groups=cap, one_pass=one_pass(t),
                                  capped=t.active is not None, stack_depth=t.stack_depth,
                                  stack_level1=t.stack_level1, items=t.items))
        else:
            tasks.append(TaskSpec(t.name, "serial", 1))
    bindings, k = [], 0
    by_name = {b.name: b for b in ir.buffers}
    for b in ir.buffers:
        if b.kind in ("shared", "private", "private_shared", "const"):
            continue
        # a gradient / dual / shadow buffer names its primal: ('arg', i) or ('field', key)
        grad_of = (by_name[b.of].kind, by_name[b.of].source) if b.of else None
        source = tuple(b.source or ()) if b.kind == "print" else b.source  # print: the sites' formats
        for w in wgsl_chunks.binding_windows(b, e.chunks):
            bindings.append(BindingSpec(k, b.name, b.dtype, b.kind, source, read_only=not (b.write or b.atomic),
                                        atomic=b.atomic, written=b.write, grad_of=grad_of, chunk=w))
            k += 1
    bindings += wgsl_textures.bindings(ir, k)
    feats = {"immediates"} if params and target.immediates else set()
    if uses_f16:
        feats.add("shader-f16")
    if e.uses_subgroups:
        feats.add("subgroup")
    feats |= _type_features(ir, params_ir, target, "u64" in wgsl)
    feats |= wgsl_textures.features(ir)
    if any(v.atomic and v.dtype.wide for v in e.views.values()):
        feats.add("shader-int64-atomic-all-ops")
    internal = {b.kind: 4 * (b.size or 0) for b in ir.buffers if b.kind in ("temps", "result")}
    if any(b.kind == "status" for b in ir.buffers):
        internal["status"] = 4 * status_words(len(e.asserts))
    return KernelSpec(ir.name, wgsl, tuple(bindings), tuple(params), size, tuple(tasks), tuple(ir.returns),
                      frozenset(feats), internal, tuple(e.asserts), return_shapes=tuple(ir.return_shapes),
                      return_tuple=ir.return_tuple,
                      params_uniform=bool(params) and not target.immediates,
                      assumes_distinct=tuple(sorted(ir.assumes_distinct)))


__all__ = ["emit", "literal", "STMT_EMITTERS"]
