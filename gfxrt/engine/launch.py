"""The launch path: everything a specialization needs per launch, precomputed once.

A `Launcher` belongs to one compiled specialization on one runtime. It holds the packer of
the immediates, how to find each binding's buffer (the kernel hands its table down: kernel.BINDING_RESOLVERS), the
raw pipeline handles, a cache of bind groups keyed by the tuple of bound buffers and a
cache of workgroup counts keyed by the immediates.

Two entry points:
- `launch(values)`: any arguments (numpy arrays are blitted in and, when written, back).
  Arguments have been checked by the kernel.
- `fast(*args)`: a function generated per specialization (its dispatches from the recorder,
  gfxrt/engine/recorder.py) for calls whose array arguments are all device arrays and whose checks
  the kernel has already done for this call shape (see Kernel.__call__). It returns MISS
  when anything is unusual (profiling, a runtime that was closed or lost, a scalar that does
  not pack), and the caller then takes the checked path, which raises the proper error.
"""
from __future__ import annotations

import struct

from gfxrt.compiler import hostmatrix, npcompat
from gfxrt.compiler.npcompat import np

from ..errors import GfxrtError
from .backend import calls as ffi
from .recorder import launch_source
from .recorder import names as recorder_names
from .returns import decode_returns

MISS = object()          # fast() could not launch: take the checked path
I32_MAX = 2 ** 31 - 1    # array extents reach kernels as i32 immediates
BIND_CACHE_LIMIT = 512   # bind groups cached per launcher (all dropped when exceeded)
CPU_MAX_GROUPS = 1024
GROUPS_CACHE_LIMIT = 1024
# A grid-stride task with more than SPREAD_MIN_GROUPS blocks' worth of iterations gets 1/SPREAD
# of them (never fewer than SPREAD_MIN_GROUPS, about a full H100 of 256-thread blocks): each
# thread runs SPREAD iterations (two interleaved steps, compiler/codegen/interleave.py) instead
# of one. H100, 16 MB arrays (experiments/bandwidth13.py): saxpy 15.3 -> 11.4 us, memcpy
# 14.5 -> 9.1, fill 12.2 -> 6.5 (16384 blocks of one element per thread cost their scheduling);
# 256 MB unchanged (capped at 65535 either way). Off on CPU adapters and loop-capped ones.
SPREAD = 4
SPREAD_MIN_GROUPS = 1024


class Launcher:
    """Launches one compiled specialization (`compiled`, see kernel.Compiled) on `rt`."""

    def __init__(self, rt, compiled, resolvers: dict):
        spec = compiled.spec
        self.rt = rt
        self.compiled = compiled
        self.spec = spec
        self.name = spec.name
        self.program = compiled.program
        self.struct = struct.Struct("<" + "".join(p.dtype.pack for p in spec.params))
        self.params_size = spec.params_size
        self.param_src = [p.source for p in spec.params]
        # a CPU driver runs each workgroup as a task on a few cores: many small ones cost more
        # than they spread (lavapipe saxpy 2^22: 1024 groups of 256 ~2x faster than 16384; experiments/sweep_cpu.py)
        self.max_groups = CPU_MAX_GROUPS if rt.dev.is_cpu else ffi.MAX_WORKGROUPS
        # more iterations per thread would count against a loop cap (and CPU_MAX_GROUPS is lower)
        self.spread = 1 if rt.dev.is_cpu or rt.dev.target.loop_cap else SPREAD
        self.resolvers = []
        for b in spec.bindings:
            r = resolvers.get(b.kind)
            if r is None:
                raise NotImplementedError(f"binding kind {b.kind!r}")
            self.resolvers.append((b, r))
        self.writable = tuple(not b.read_only for b in spec.bindings)
        self.arg_bindings = tuple(b for b in spec.bindings if b.kind == "arg" and not (b.chunk and b.chunk[0]))
        self.arg_chunks = {b.source: sum(1 for c in spec.bindings if c.kind == "arg" and c.source == b.source)
                           for b in self.arg_bindings}  # binding windows per array argument (checked for numpy)
        # (offset, bytes): window j of an array larger than one binding (BindingSpec.chunk), else None
        self.windows = tuple(b.chunk and (b.chunk[0] * b.chunk[1] * b.dtype.size, b.chunk[1] * b.dtype.size)
                             for b in spec.bindings)
        self.bind_cache: dict[tuple, tuple] = {}   # buffers -> (bind group handle, pipeline handles, bind group)
        self.groups_cache: dict[bytes, tuple] = {}
        self.status = compiled.internal_buffer(rt, "status") if spec.asserts else None
        self.fast = _generate_fast(self)
        rt.add_launcher(self)

    # -- pieces shared by both paths ---------------------------------------------------------
    def bind(self, buffers: tuple):
        """The cached (bind group handle, pipeline handles) for these buffers; on a miss,
        validate them in Python (nothing invalid may reach the queue) and create it."""
        rt = self.rt
        for k, b in enumerate(buffers):
            if getattr(b, "_gfxrt_destroyed", False):
                raise GfxrtError(f"kernel {self.name!r}: binding {self.spec.bindings[k].name!r} uses a buffer "
                                 "that was destroyed")
            if b._device is not rt.device:
                raise GfxrtError(f"kernel {self.name!r}: argument {self.spec.bindings[k].name!r} belongs to "
                                 "another device (allocated before gr.init()?); allocate it again")
        self._texture_conflicts(buffers)
        program = self.program
        if len(set(map(id, buffers))) < len(buffers) and self._conflicting(buffers):
            program = program.aliasing()
        bg = rt.bind_group(program.bind_group_layout, buffers, f"binding the arguments of {self.name!r}",
                           windows=self.windows if any(self.windows) else None)
        if len(self.bind_cache) >= BIND_CACHE_LIMIT:
            self.bind_cache.clear()
        entry = self.bind_cache[buffers] = (ffi.handle(bg), program.pipeline_handles, bg)
        return entry

    def _texture_conflicts(self, buffers) -> None:
        """WebGPU refuses a dispatch that writes a texture through one binding and reads it through
        another (its validation would abort the process at submit): say so first."""
        owners: dict[int, list] = {}
        for b, buf in zip(self.spec.bindings, buffers):
            if b.kind == "texture":
                owners.setdefault(id(getattr(buf, "_gfxrt_owner", buf)), []).append(b)
        for bs in owners.values():
            if len(bs) > 1 and any(b.written for b in bs):
                raise ValueError(f"kernel {self.name!r}: arguments {', '.join(repr(b.name) for b in bs)} are one "
                                 "texture, which the kernel writes: WebGPU cannot write a texture and read it "
                                 "through another argument in one kernel; pass it once as a rw_texture (load and "
                                 "store), or copy it")

    def _conflicting(self, buffers) -> bool:
        """True when one buffer is bound both read-only and writable (WebGPU rejects it)."""
        modes: dict[int, set] = {}
        for b, w in zip(buffers, self.writable):
            modes.setdefault(id(b), set()).add(w)
        return any(len(m) > 1 for m in modes.values())

    def groups(self, imm: bytes, pvals) -> tuple:
        """Workgroups per task (0 = nothing to do), cached by the immediates. Range tasks
        are grid-stride loops, so any count is exact: capped at 65535 groups, and spread
        (SPREAD iterations per thread) beyond SPREAD_MIN_GROUPS; one-pass tasks get one
        block per `workgroup_size` iterations (a 2-D grid beyond 65535: see `spec.grid`)."""
        out = []
        for t in self.spec.tasks:
            if t.kind == "serial":
                out.append(1)
                continue
            if t.one_pass:  # every block once (a CPU group cap would not apply: no grid-stride loop)
                n = t.extent_fn(pvals)
                out.append(0 if n <= 0 else -(-int(n) // t.workgroup_size))
                continue
            cap = min(t.max_groups, ffi.MAX_WORKGROUPS, self.max_groups)
            if t.capped:  # an adstack task: its stacks are sized for this many threads
                cap = min(cap, self.rt.adstack.max_groups(t.workgroup_size))
            n = t.extent_fn(pvals) if t.extent_fn else cap * t.workgroup_size
            if t.items is not None:  # a variant of the task for some sizes only (extent_fn is set)
                lo, hi = t.items
                if (lo is not None and n < lo) or (hi is not None and n >= hi):
                    out.append(0)
                    continue
            g = -(-int(n) // t.workgroup_size)
            if g > SPREAD_MIN_GROUPS and self.spread > 1 and not t.capped:
                g = max(SPREAD_MIN_GROUPS, -(-g // self.spread))
            out.append(0 if n <= 0 else min(g, cap))
        if len(self.groups_cache) >= GROUPS_CACHE_LIMIT:
            self.groups_cache.clear()
        g = self.groups_cache[imm] = tuple(out)
        return g

    def pack(self, values, quick: bool = False):
        """(packed immediates, their values) of checked argument values. A value that does
        not pack raises ValueError (`quick`: returns MISS)."""
        try:  # (the quick path passes vector arguments unchecked: flatten each once here)
            flats = {i: flat_components(values[i], n) for i, n in {(s[1], s[3]) for s in self.param_src
                                                                    if s[0] == "elem"}}
            pvals = [values[s[1]] if s[0] == "arg" else flats[s[1]][s[2]] if s[0] == "elem"
                     else values[s[1]].shape[s[2]] for s in self.param_src]
        except (IndexError, TypeError, ValueError):
            if quick:
                return MISS
            raise
        try:
            return (self.struct.pack(*pvals) if pvals else b""), pvals
        except (struct.error, OverflowError) as e:
            if quick:
                return MISS
            raise self._pack_error(pvals, e) from None

    def prepare(self, values, imm: bytes, pvals, numpy_buffer) -> tuple:
        """(buffers, bind cache entry, workgroups per task) of a launch; `numpy_buffer(b)`
        gives the buffer of binding `b` when its argument is a numpy array."""
        rt = self.rt
        buffers = []
        for b, resolver in self.resolvers:
            buf = resolver(rt, self.compiled, b, values)
            buffers.append(numpy_buffer(b) if buf is None else buf)
        buffers = tuple(buffers)
        entry = self.bind_cache.get(buffers) or self.bind(buffers)
        return buffers, entry, self.groups_cache.get(imm) or self.groups(imm, pvals)

    # -- the checked path ---------------------------------------------------------------------
    def launch_quick(self, *args):
        """`launch` for a call shape the kernel checked before (numpy arguments included);
        MISS sends the caller to the checked path."""
        if self.rt.closed:
            return MISS
        return self.launch(args, quick=True)

    def launch(self, values, quick: bool = False):
        """Launch with checked argument values (scalars already converted); numpy arrays
        are copied in, and back when the kernel writes them. Returns the kernel's return
        value(s), or None."""
        rt = self.rt
        rt.check_alive()
        if rt.capture is not None:  # a graph is capturing: record instead of launching
            return rt.capture.launch(self, values)
        for b in self.arg_bindings:
            if npcompat.is_array(values[b.source]):
                self._check_numpy_size(values[b.source], b)
                if quick and rt.dev.target.chunks(values[b.source].size, b.dtype.size) != self.arg_chunks[b.source]:
                    return MISS  # a numpy array of another size class than this launcher's (binding windows)
        packed = self.pack(values, quick)
        if packed is MISS:
            return MISS
        imm, pvals = packed
        transient, reads, copybacks = [], [], []
        try:
            uploaded: dict = {}  # argument index -> its buffer (an array bound in windows has several bindings)
            _, entry, groups = self.prepare(values, imm, pvals, lambda b: uploaded.get(b.source) or uploaded.setdefault(
                b.source, self._numpy_buffer(values[b.source], b, transient, reads, copybacks)))
            if self.status is not None:
                rt.watch_status(self.status, self.spec)
            rt.record_launch(entry[1], entry[0], imm, groups, self.name, self.spec.params_uniform)
        except BaseException:
            rt.ctx_buffers.extend(transient)  # recorded work may use them: release through the FIFO
            raise
        result = self._result_read() if self.spec.returns else None
        if result is not None:
            reads.append(result[0])
        if reads:
            rt.after_launch()
            try:
                rt.blitter.device_to_host(reads)
            finally:
                rt.release(transient)  # the readback waited: the queue is idle
            for tmp, arr in copybacks:
                np.copyto(arr, tmp, casting="unsafe")
            return result[1]() if result is not None else None
        rt.ctx_buffers.extend(transient)
        rt.after_launch()
        return None

    def _check_numpy_size(self, arr: np.ndarray, b) -> None:
        """A numpy argument the device can hold in one buffer, indexed by 32-bit integers;
        checked before anything is converted, allocated or copied (a broadcast view can stand
        for terabytes)."""
        what = f"{self.name}() argument {b.name!r} (a numpy array of shape {arr.shape}: {arr.size} {b.dtype} elements)"
        self.rt.pool.check(max(arr.size * np.dtype(b.dtype.numpy).itemsize, 4), what=what)
        for d, n in enumerate(arr.shape):
            if n > I32_MAX:
                raise ValueError(f"{what} has {n} elements along axis {d}: kernels index arrays with 32-bit integers "
                                 f"(at most {I32_MAX} per axis)")
        if arr.size > I32_MAX:
            raise ValueError(f"{what} has more scalars than kernels address with 32-bit indices (at most {I32_MAX} "
                             "per array)")

    def _pack_error(self, pvals, e) -> ValueError:
        """The message for immediates that did not pack: which argument, which value."""
        for p, v in zip(self.spec.params, pvals):
            try:
                struct.pack("<" + p.dtype.pack, v)
            except (struct.error, OverflowError):
                if p.source[0] == "shape":
                    return ValueError(f"{self.name}() argument {p.name.rsplit('.', 1)[0]!r}: extent {v} along axis "
                                      f"{p.source[2]} does not fit the 32-bit integers kernels index arrays with "
                                      f"(at most {I32_MAX})")
                return ValueError(f"{self.name}() argument {p.name!r}: {v!r} does not fit {p.dtype}")
        return ValueError(f"{self.name}(): an argument does not fit its type: {e}")

    def _numpy_buffer(self, arr: np.ndarray, b, transient: list, reads: list, copybacks: list):
        """A pool buffer holding a copy of numpy argument `arr`; registered for readback
        when the kernel writes it."""
        rt = self.rt
        if b.written and not arr.flags.writeable:
            raise ValueError(f"{self.name}() writes argument {b.name!r}, but the numpy array is read-only")
        want = b.dtype.numpy
        data = arr if arr.dtype == want else arr.astype(want)
        buf = rt.pool.alloc(max(data.nbytes, 4), what=f"numpy argument {b.name!r}")
        transient.append(buf)
        rt.blitter.host_to_device(buf, data, fresh=True)  # a buffer from the pool is idle
        if b.written:
            if data is arr and arr.flags.c_contiguous:
                reads.append((buf, 0, arr.nbytes, arr))
            else:  # read into a contiguous temporary, then into the user's array
                tmp = np.empty(arr.shape, want)
                reads.append((buf, 0, tmp.nbytes, tmp))
                copybacks.append((tmp, arr))
        return buf

    def _result_read(self):
        """(read, decode) for the kernel's return values: one 4-byte word per value in the
        'result' buffer."""
        rets = self.spec.returns
        buf = self.compiled.internal_buffer(self.rt, "result")
        words = bytearray(4 * sum(2 if t.size == 8 else 1 for t in rets))

        def decode():
            return decode_returns(self.spec, words)
        return (buf, 0, len(words), words), decode


# -- the generated fast path -----------------------------------------------------------------
def flat_components(v, n: int | None = None) -> list:
    """The components of a vector / matrix argument, row-major, as Python numbers (n of
    them: IndexError otherwise). A flat list / tuple of n is taken as it is (one holding anything
    but numbers fails at packing, and the launch takes the checked path)."""
    t = type(v)
    if t is tuple or t is list:
        out = v if n is None or len(v) == n else hostmatrix.components(v)[0]
    elif npcompat.is_array(v):  # (a gr.Vector value where numpy is installed)
        out = np.asarray(v).ravel().tolist()
    else:
        out = hostmatrix.components(v)[0]
    if n is not None and len(out) != n:
        raise IndexError(f"{len(out)} components instead of {n}")
    return out


_CODE: dict[tuple, object] = {}  # (kernel name, generated source) -> code object (its names live in ns)
CODE_CACHE_LIMIT = 1024


def _generate_fast(L: Launcher):
    """`fast(a0, a1, ...)`: pack, look up the bind group and workgroups, and append raw
    dispatches (the recorder's, gfxrt/engine/recorder.py); about 1 us of Python on top of the
    wgpu-native calls."""
    spec = L.spec
    nargs = max([s[1] for s in L.param_src] + [b.source for b, _ in L.resolvers if b.kind in ("arg", "texture")]
                + [-1]) + 1
    args = [f"a{i}" for i in range(nargs)]
    ns = {**recorder_names(L.rt), "MISS": MISS, "rt": L.rt, "L": L, "pack": L.struct.pack, "bind_get": L.bind_cache.get,
          "bind": L.bind, "groups_get": L.groups_cache.get, "groups": L.groups, "compiled": L.compiled,
          "struct_error": (struct.error, OverflowError), "status": L.status, "spec": spec, "name": L.name}
    # ('elem', i, k): component k of vector / matrix argument i, flattened once into f{i}
    pexprs = [f"a{s[1]}" if s[0] == "arg" else f"f{s[1]}[{s[2]}]" if s[0] == "elem" else f"a{s[1]}.shape[{s[2]}]"
              for s in L.param_src]
    flats = sorted({(s[1], s[3]) for s in L.param_src if s[0] == "elem"})  # (argument, components)
    ns["flat"], ns["flat_error"] = flat_components, (IndexError, TypeError, ValueError)
    bexprs = []
    for k, (b, r) in enumerate(L.resolvers):
        if b.kind == "arg":
            bexprs.append(f"a{b.source}._buffer")
        else:
            ns[f"r{k}"], ns[f"b{k}"] = r, b
            bexprs.append(f"r{k}(rt, compiled, b{k}, values)")
    head = []
    if any(b.kind != "arg" for b, _ in L.resolvers):
        head.append(f"    values = ({', '.join(args)}{',' if len(args) == 1 else ''})")
    if flats:
        head += ["    try:", *[f"        f{i} = flat(a{i}, {n})" for i, n in flats], "    except flat_error:",
                 "        return MISS"]
    if pexprs:
        head += ["    try:", f"        imm = pack({', '.join(pexprs)})", "    except struct_error:",
                 "        return MISS"]
    else:
        head.append("    imm = b''")
    head += [f"    bufs = ({', '.join(bexprs)}{',' if len(bexprs) == 1 else ''})",
             "    e = bind_get(bufs)",
             "    if e is None:",
             "        e = bind(bufs)",
             "    g = groups_get(imm)",
             "    if g is None:",
             f"        g = groups(imm, ({', '.join(pexprs)}{',' if len(pexprs) == 1 else ''}))"]
    # *_ takes the trailing arguments no binding or immediate reads (template values)
    src = launch_source(f"def fast({', '.join([*args, '*_'])}):", head,
                        [(t.kind == "serial", t.one_pass) for t in spec.tasks], L.params_size,
                        L.status is not None, spec.params_uniform)
    key = (spec.name, src)  # (the name only labels tracebacks)
    code = _CODE.get(key)
    if code is None:  # Python's compile() is most of a warm load's launcher cost (~0.15-0.3 ms)
        if len(_CODE) >= CODE_CACHE_LIMIT:
            _CODE.clear()
        code = _CODE[key] = compile(src, f"<gfxrt launcher {spec.name}>", "exec")
    exec(code, ns)  # noqa: S102 (generated launcher)
    fn = ns["fast"]
    fn.source = src
    return fn
