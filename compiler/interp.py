"""A pure-Python interpreter of the IR: the executable definition of what each op means.

It follows the WGSL the code generator emits (each op as compiler/ops.py evaluates it: each float
op rounded to its type, wrapping integers, Python's operators as `compiler/opsem.py` defines them,
`for` loops that evaluate their bounds once, grid-stride range tasks), so compiler tests can run
kernels, and check gradients, without a GPU.

    out = execute(ir, [2.0, x, y])            # numpy arrays are updated in place
    execute(grad_ir, [2.0, x, y], grads={1: gx, 2: gy})
"""
from __future__ import annotations

from collections import defaultdict

from . import opsem
from .ir import AtomicAttr, KernelIR, Node, Op, Task
from .npcompat import np
from .ops import evaluate
from .types import DType, f32, i32, u1, u32


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


def _float(t: DType):
    return t.numpy.type  # np.float16 / np.float32 / np.float64: arithmetic rounds to the type


def zero(t: DType):
    """The zero value of a dtype (what a fresh WGSL `var` holds)."""
    if t.is_float:
        return _float(t)(0)
    return False if t == u1 else 0


def convert(v, t: DType):
    """WGSL's value conversion `T(v)` (CAST), as gfxrt emits it: float -> int saturates (NaN -> 0)."""
    if isinstance(v, (bool, np.bool_)):
        v = int(v)
    elif isinstance(v, np.floating):
        v = float(v)
    elif isinstance(v, np.integer):
        v = int(v)
    r = opsem.convert(v, t)
    return _float(t)(r) if t.is_float else r


def _bits_dtype(t: DType) -> np.dtype:
    if t.is_float:
        return t.numpy
    if t == u1:
        return np.dtype(np.uint32)
    return np.dtype(f"{'i' if t.kind == 'int' else 'u'}{max(t.size, 4)}")


def bitcast(v, src: DType, dst: DType):
    """Reinterpret the bits of v (BITCAST)."""
    a = np.array([v if src.is_float else int(v)], dtype=_bits_dtype(src))
    r = a.view(_bits_dtype(dst))[0]
    return r if dst.is_float else int(r)


class Interpreter:
    """Runs the tasks of one KernelIR over numpy buffers (flat 1-D views, updated in place).

    `threads` is how many physical threads a capped-grid (adstack) task is dispatched with.
    Device-side check failures (ASSERT) are counted in `failures`: (code, message) -> count.
    """

    def __init__(self, ir: KernelIR, params: dict, buffers: dict[str, np.ndarray], threads: int = 8):
        self.ir = ir
        self.params = params
        self.buffers = buffers
        self.threads = threads
        self.failures: dict[tuple, int] = defaultdict(int)
        self.private = {b.name: (b.dtype, int(b.source)) for b in ir.buffers
                        if b.kind in ("private", "private_shared")}  # per-thread arrays, whatever their layout

    # -- tasks -------------------------------------------------------------------------------
    def run(self) -> None:
        with np.errstate(all="ignore"):
            for task in self.ir.tasks:
                self.run_task(task)

    def _env(self) -> dict:
        """A fresh thread: its adstack (PUSH/POP) and its private arrays."""
        private = {name: np.zeros(n, dtype=t.numpy) for name, (t, n) in self.private.items()}
        return {"<stack>": [], "<private>": private}

    def buffer(self, name: str, env) -> np.ndarray:
        return env["<private>"][name] if name in self.private else self.buffers[name]

    def run_task(self, task: Task) -> None:
        if task.kind == "serial":
            self._item(task.body, self._env())
            return
        extent = self.eval(task.extent, self._env())
        if task.active is None:
            for t in range(extent):
                env = self._env()
                env[task.index_var] = t
                self._item(task.body, env)
            return
        dispatched = max(1, min(self.threads, extent))
        for tid in range(dispatched):
            env = self._env()
            env[task.thread_var] = tid
            self.block(task.prologue, env)
            active = min(dispatched, self.eval(task.active, env))
            if tid >= active:
                continue
            env[task.active_var] = active
            for t in range(tid, extent, active):
                env[task.index_var] = t
                self._item(task.body, env)

    def _item(self, body, env) -> None:
        try:
            self.block(body, env)
        except _Continue:
            pass

    # -- statements ----------------------------------------------------------------------------
    def block(self, stmts, env) -> None:
        for s in stmts:
            self.stmt(s, env)

    def stmt(self, s: Node, env) -> None:
        op = s.op
        if op is Op.ASSIGN:
            env[s.attr] = self.eval(s.args[0], env)
        elif op is Op.STORE:
            buf = self.buffer(s.attr, env)
            idx = self.eval(s.args[0], env)
            if not 0 <= idx < len(buf):
                raise IndexError(f"store to {s.attr}[{idx}] out of bounds ({len(buf)}) at {s.loc}")
            buf[idx] = self.eval(s.args[1], env)
        elif op is Op.ATOMIC:
            self._atomic(s, env)
        elif op is Op.IF:
            self.block(s.blocks[0] if self.eval(s.args[0], env) else s.blocks[1], env)
        elif op is Op.WHILE:
            while self.eval(s.args[0], env):
                try:
                    self.block(s.blocks[0], env)
                except _Break:
                    break
                except _Continue:
                    continue
        elif op is Op.FOR:
            self._for(s, env)
        elif op is Op.BREAK:
            raise _Break
        elif op is Op.CONTINUE:
            raise _Continue
        elif op is Op.ASSERT:
            if not self.eval(s.args[0], env):
                self.failures[s.attr] += 1
        elif op is Op.PUSH:
            env["<stack>"].append(self.eval(s.args[0], env))
        elif op is Op.POP:
            env[s.attr] = env["<stack>"].pop()
        else:
            raise NotImplementedError(f"interpreter: statement {op}")

    def _for(self, s: Node, env) -> None:
        begin, end, step = (self.eval(a, env) for a in s.args)
        var = s.attr
        env[var] = begin
        for v in range(begin, end, step) if step else ():  # Python's range (no wrap-around); step 0: nothing
            env[var] = v
            try:
                self.block(s.blocks[0], env)
            except _Break:
                break
            except _Continue:
                pass

    def _atomic(self, s: Node, env) -> None:
        a: AtomicAttr = s.attr
        buf = self.buffers[a.buf]
        idx = self.eval(s.args[0], env)
        if not 0 <= idx < len(buf):
            raise IndexError(f"atomic on {a.buf}[{idx}] out of bounds ({len(buf)}) at {s.loc}")
        v = self.eval(s.args[1], env)
        t = s.args[1].dtype
        old = buf[idx].item()
        old = _float(t)(old) if t.is_float else int(old)
        if a.op == "cas":
            if old == self.eval(s.args[2], env):
                buf[idx] = v
            env[a.dest] = old
            return
        new = {"add": lambda: old + v, "sub": lambda: old - v, "min": lambda: opsem.minimum(old, v),
               "max": lambda: opsem.maximum(old, v), "and": lambda: old & v, "or": lambda: old | v,
               "xor": lambda: old ^ v, "mul": lambda: old * v}[a.op]()
        buf[idx] = new if t.is_float else opsem.wrap(new, t)
        if a.dest:
            env[a.dest] = old

    # -- expressions ---------------------------------------------------------------------------
    def eval(self, n: Node, env):
        op = n.op
        if op is Op.CONST:
            return _float(n.dtype)(n.attr) if n.dtype.is_float else n.attr
        if op is Op.VAR:
            v = env.get(n.attr)
            return zero(self.ir.locals[n.attr]) if v is None else v
        if op is Op.PARAM:
            v = self.params[n.attr]
            return _float(n.dtype)(v) if n.dtype.is_float else v
        if op is Op.LOAD:
            buf = self.buffer(n.attr, env)
            idx = self.eval(n.args[0], env)
            if not 0 <= idx < len(buf):
                raise IndexError(f"load from {n.attr}[{idx}] out of bounds ({len(buf)}) at {n.loc}")
            v = buf[idx]
            return _float(n.dtype)(v) if n.dtype.is_float else int(v)
        if op is Op.LENGTH:
            return len(self.buffers[n.attr])
        if op is Op.TEXEL:
            raise NotImplementedError("interpreter: texture reads (textures live on the device only)")
        if op is Op.SELECT:
            c = self.eval(n.args[0], env)
            return self.eval(n.args[1] if c else n.args[2], env)
        if op is Op.AND:
            return bool(self.eval(n.args[0], env) and self.eval(n.args[1], env))
        if op is Op.OR:
            return bool(self.eval(n.args[0], env) or self.eval(n.args[1], env))
        if op is Op.CAST:
            return convert(self.eval(n.args[0], env), n.dtype)
        if op is Op.BITCAST:
            return bitcast(self.eval(n.args[0], env), n.args[0].dtype, n.dtype)
        r = evaluate(op, [self.eval(a, env) for a in n.args], n.args[0].dtype, n.dtype)
        return _float(n.dtype)(r) if n.dtype.is_float else r


# -- binding a kernel's arguments ---------------------------------------------------------------

def bind(ir: KernelIR, args: list, grads: dict | None = None, duals: dict | None = None,
         internal: dict | None = None) -> tuple[dict, dict]:
    """Params and flat buffers for `ir` from the kernel's argument list (numpy arrays and
    Python scalars), gradient / dual arrays by argument index, and internal buffers by kind
    (the gradient of an internal buffer under '<kind>.grad', e.g. 'temps.grad').
    Arrays are viewed, not copied, so the interpreter updates them in place."""
    params = {}
    for p in ir.params:
        if p.source[0] == "arg":
            params[p.name] = args[p.source[1]]
        elif p.source[0] == "elem":  # component k of a vector / matrix argument
            i, k = p.source[1], p.source[2]
            params[p.name] = np.asarray(args[i]).ravel()[k].item()
        else:
            _, i, d = p.source
            params[p.name] = int(np.shape(args[i])[d])
    buffers = {}
    by_name = {b.name: b for b in ir.buffers}
    for b in ir.buffers:
        if b.kind in ("private", "private_shared"):
            continue
        if b.kind == "const":  # data in the IR (a captured numpy array)
            buffers[b.name] = np.array(b.source, dtype=b.dtype.numpy)
            continue
        if b.kind == "arg":
            arr = args[b.source]
        elif b.kind in ("grad", "dual") and by_name[b.of].kind not in ("arg", "field"):
            arr = (internal or {}).get(f"{by_name[b.of].kind}.{b.kind}")  # e.g. 'temps.grad'
            if arr is None:
                raise KeyError(f"no internal buffer given for the {b.kind} of {b.of}")
        elif b.kind in ("grad", "dual"):
            src = by_name[b.of].source
            table = grads if b.kind == "grad" else duals
            if table is None or src not in table:
                raise KeyError(f"no {b.kind} array given for argument {src} ({b.of})")
            arr = table[src]
        else:
            arr = (internal or {}).get(b.kind)
            if arr is None:
                raise KeyError(f"no internal buffer given for kind {b.kind!r}")
        if not (isinstance(arr, np.ndarray) and arr.flags.c_contiguous):
            raise TypeError(f"buffer {b.name} needs a C-contiguous numpy array")
        buffers[b.name] = arr.reshape(-1)
    return params, buffers


def execute(ir: KernelIR, args: list, grads: dict | None = None, duals: dict | None = None,
            internal: dict | None = None, threads: int = 8) -> Interpreter:
    """Run `ir` on numpy arguments (updated in place); returns the interpreter (see `failures`)."""
    params, buffers = bind(ir, args, grads, duals, internal)
    it = Interpreter(ir, params, buffers, threads)
    it.run()
    return it


__all__ = ["Interpreter", "execute", "bind", "convert", "bitcast", "zero", "f32", "i32", "u32"]
