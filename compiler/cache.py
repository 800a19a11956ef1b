"""The offline compile cache: compiled kernels on disk, reused across processes.

The key hashes the kernel's source text, its specialization (argument kinds, dtypes,
ndims, template values), the target and the compiler version (gfxrt's version plus a hash
of the compiler's own source). An entry also records every Python value the frontend read
while lowering (globals, module attributes, funcs, fields) as a *path* from the kernel
function with a fingerprint; a warm load re-resolves the paths and uses the entry only if
every fingerprint still matches, so editing a global constant or a @gr.func recompiles.
The warm path does no AST parsing, lowering or code generation.

Fields are bound by identity (`FieldInfo.key` = id of the object), which means nothing in
another process: an entry names each field by the path that reached it, and the load binds
the field and gradient bindings to the fields that path reaches in this process.

Entries are JSON text (see FORMAT below), never pickles: whoever can write the cache
directory must not be able to run code in the processes that read it.
"""
from __future__ import annotations

import dataclasses
import hashlib
import inspect
import json
import os
import types as _pytypes
from functools import lru_cache

from .errors import GfxrtError, InternalCompilerError

_MISSING = object()
VERSION = "0.1.0"


def fingerprint(v):
    """A stable, hashable summary of a Python value a kernel depends on."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return ("v", type(v).__name__, repr(v))
    if isinstance(v, (tuple, list)):
        return ("t", tuple(fingerprint(x) for x in v))
    if isinstance(v, _pytypes.ModuleType):
        return ("m", v.__name__)
    info = getattr(v, "__gfxrt_field__", None)
    if info is not None:
        return ("field", repr(info.elem), tuple(info.shape), info.needs_grad)
    if getattr(v, "__gfxrt_func__", False):
        return ("f", v.__qualname__, _source_hash(v.fn))
    if type(v).__name__ == "Builtin":
        return ("b", v.name)
    if type(v).__module__ == "compiler.types":
        return ("ty", repr(v))
    if hasattr(v, "item") and hasattr(v, "dtype") and getattr(v, "shape", None) == ():
        return ("v", str(v.dtype), repr(v.item()))
    return ("o", type(v).__module__, type(v).__qualname__, getattr(v, "__qualname__", None))


def _source_hash(fn) -> str:
    try:
        lines, first = inspect.getsourcelines(fn)
        text = "".join(lines)
    except (OSError, TypeError):
        return f"nosource:{id(fn)}"
    return hashlib.sha256(f"{first}:{text}".encode()).hexdigest()[:20]


@lru_cache(maxsize=1)
def compiler_digest() -> str:
    """A hash of the compiler's own source files (so a changed compiler never reuses entries)."""
    root = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256(VERSION.encode())
    for dirpath, dirnames, files in sorted(os.walk(root)):
        dirnames.sort()
        for f in sorted(files):
            if f.endswith((".py", ".lark")):
                with open(os.path.join(dirpath, f), "rb") as fh:
                    h.update(f.encode())
                    h.update(fh.read())
    return h.hexdigest()[:20]


def default_dir() -> str:
    return os.environ.get("GFXRT_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "gfxrt")


def _arg_key(a) -> tuple:
    if a.kind == "template":
        return ("template", a.name, fingerprint(a.value))
    return (a.kind, a.name, repr(a.dtype), repr(a.elem), a.ndim, a.needs_grad)


def kernel_key(func, args, target, name: str | None, mode: str = "primal") -> str | None:
    try:
        lines, first = inspect.getsourcelines(func)
        file = inspect.getsourcefile(func) or ""
    except (OSError, TypeError):
        return None
    text = repr((compiler_digest(), target.key(), mode, name or func.__name__, file, first, "".join(lines),
                 tuple(_arg_key(a) for a in args)))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def resolve(func, args, path):
    """The Python value at a dependency path (see the frontend's `from_python`)."""
    cur, obj = func, _MISSING
    for step in path:
        kind = step[0]
        try:
            if kind == "arg":
                obj = args[step[1]].value
            elif kind == "n":
                obj = _lookup(cur, step[1])
            elif kind == "a":
                obj = getattr(obj, step[1])
            elif kind == "i":
                obj = obj[step[1]]
            elif kind == "f":
                cur, obj = obj.fn, _MISSING
            else:
                return _MISSING
        except Exception:  # noqa: BLE001 - anything unresolvable is a mismatch
            return _MISSING
        if obj is _MISSING and kind != "f":
            return _MISSING
    return obj


def _lookup(func, name: str):
    code = getattr(func, "__code__", None)
    if code is not None and name in code.co_freevars:
        return func.__closure__[code.co_freevars.index(name)].cell_contents
    g = getattr(func, "__globals__", {})
    if name in g:
        return g[name]
    import builtins
    return getattr(builtins, name, _MISSING)


# -- entries on disk: JSON text only ----------------------------------------------------------
# One file per key, `<dir>/<key[:2]>/<key>.json`: {"format", "version", "sha256", "payload"}
# where payload is the JSON text of {"key", "spec", "deps", "fields"} and sha256 its hash.
# Nothing in it is executable (no pickle) and nothing is process-local: a field binding names
# the field by its index into "fields" (the dependency path that reaches it), never by id.
# A file that is unreadable, not ours, foreign, of another version or fails any check is a
# miss: the kernel recompiles and the entry is rewritten.
FORMAT = "gfxrt-kernel-cache"
FORMAT_VERSION = 2


class _Invalid(Exception):
    pass


def _path(directory: str, key: str) -> str:
    return os.path.join(directory, key[:2], key + ".json")


def _tuples(x):
    """JSON lists back to the tuples they were written from."""
    return tuple(_tuples(v) for v in x) if isinstance(x, list) else x


def _check(cond: bool) -> None:
    if not cond:
        raise _Invalid


def _extent_json(n):
    return [n.op.name, n.dtype.name if n.dtype else None, n.attr, [_extent_json(a) for a in n.args]]


def _extent_from(j):
    """A host-evaluable extent expression (`compiler.hosteval`), checked op by op: the host
    compiles it to a lambda, so nothing but its own ops, numeric constants and param names."""
    from .hosteval import _FMT
    from .ir import Node, Op
    from .types import SCALARS
    _check(isinstance(j, list) and len(j) == 4 and isinstance(j[0], str) and isinstance(j[3], list))
    op, dt, attr, args = j
    _check(op in Op.__members__ and (dt is None or dt in SCALARS))
    op = Op[op]
    if op is Op.CONST:
        _check(isinstance(attr, (bool, int, float)) and not args)
    elif op is Op.PARAM:
        _check(isinstance(attr, str) and not args)
    else:
        _check(op in _FMT and attr is None)
    return Node(op, SCALARS[dt] if dt else None, tuple(_extent_from(a) for a in args), attr)


def spec_to_json(spec, field_index: dict) -> dict:
    """A KernelSpec as JSON data; `field_index` maps FieldInfo.key -> position in the entry's
    field paths (a field binding stores that position, not the process-local key)."""
    from .hosteval import host_evaluable

    def binding(b):
        source = b.source  # a field's (and a field gradient's) source is the field's key
        if b.kind == "field" or (b.kind != "arg" and isinstance(source, int) and source in field_index):
            source = {"field": field_index[source]}
        grad_of = b.grad_of
        if grad_of is not None and grad_of[0] == "field":
            grad_of = ("field", field_index[grad_of[1]])
        return {"binding": b.binding, "name": b.name, "dtype": b.dtype.name, "kind": b.kind, "source": source,
                "read_only": b.read_only, "atomic": b.atomic, "written": b.written, "grad_of": grad_of}

    def task(t):
        extent = _extent_json(t.extent) if t.extent is not None and host_evaluable(t.extent) else None
        return {"entry": t.entry, "kind": t.kind, "workgroup_size": t.workgroup_size, "extent": extent,
                "max_groups": t.max_groups, "one_pass": t.one_pass, "capped": t.capped,
                "stack_depth": t.stack_depth, "stack_level1": t.stack_level1}

    return {"name": spec.name, "wgsl": spec.wgsl, "bindings": [binding(b) for b in spec.bindings],
            "params": [{"name": p.name, "dtype": p.dtype.name, "source": p.source, "offset": p.offset}
                       for p in spec.params],
            "params_size": spec.params_size, "tasks": [task(t) for t in spec.tasks],
            "returns": [t.name for t in spec.returns], "features": sorted(spec.features),
            "internal": dict(spec.internal), "asserts": spec.asserts, "params_uniform": spec.params_uniform,
            "return_shapes": spec.return_shapes, "return_tuple": spec.return_tuple,
            "assumes_distinct": spec.assumes_distinct}


def spec_from_json(d: dict, field_keys: list):
    """The KernelSpec of `spec_to_json`, its fields bound to `field_keys` (this process's
    FieldInfo.key of each field path). Raises _Invalid (or a lookup error) on anything odd."""
    from .spec import BindingSpec, KernelSpec, ParamSpec, TaskSpec
    from .types import SCALARS

    def binding(b):
        source, grad_of = _tuples(b["source"]), _tuples(b["grad_of"])
        if isinstance(source, dict):
            source = field_keys[source["field"]]
        if grad_of is not None and grad_of[0] == "field":
            grad_of = ("field", field_keys[grad_of[1]])
        _check(isinstance(b["binding"], int) and isinstance(b["name"], str) and isinstance(b["kind"], str))
        return BindingSpec(b["binding"], b["name"], SCALARS[b["dtype"]], b["kind"], source, bool(b["read_only"]),
                           bool(b["atomic"]), bool(b["written"]), grad_of)

    def task(t):
        _check(isinstance(t["entry"], str) and t["kind"] in ("range", "serial")
               and isinstance(t["workgroup_size"], int) and isinstance(t["max_groups"], int))
        extent = _extent_from(t["extent"]) if t["extent"] is not None else None
        return TaskSpec(t["entry"], t["kind"], t["workgroup_size"], extent, None, t["max_groups"],
                        bool(t["one_pass"]), bool(t["capped"]), t["stack_depth"], t["stack_level1"])

    _check(isinstance(d["wgsl"], str) and isinstance(d["name"], str) and isinstance(d["params_size"], int))
    params = tuple(ParamSpec(p["name"], SCALARS[p["dtype"]], _tuples(p["source"]), p["offset"]) for p in d["params"])
    _check(all(isinstance(p.name, str) and isinstance(p.offset, int) for p in params))
    return KernelSpec(d["name"], d["wgsl"], tuple(binding(b) for b in d["bindings"]), params, d["params_size"],
                      tuple(task(t) for t in d["tasks"]), tuple(SCALARS[t] for t in d["returns"]),
                      frozenset(d["features"]), dict(d["internal"]), _tuples(d["asserts"]),
                      bool(d["params_uniform"]), _tuples(d["return_shapes"]), bool(d["return_tuple"]),
                      _tuples(d["assumes_distinct"]))


def _ours(st) -> bool:
    """A file this user owns that nobody else may write (POSIX; elsewhere, any file)."""
    if not hasattr(os, "getuid"):
        return True
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def _read_entry(directory: str, key: str) -> dict | None:
    try:
        with open(_path(directory, key), "rb") as f:
            if not _ours(os.fstat(f.fileno())):
                return None
            outer = json.loads(f.read().decode("utf-8"))
        if not (isinstance(outer, dict) and outer.get("format") == FORMAT and outer.get("version") == FORMAT_VERSION
                and isinstance(outer.get("payload"), str)):
            return None
        text = outer["payload"]
        if hashlib.sha256(text.encode("utf-8")).hexdigest() != outer.get("sha256"):
            return None
        payload = json.loads(text)
        return payload if isinstance(payload, dict) and payload.get("key") == key else None
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return None


def load(directory: str, key: str, func, args):
    """The cached KernelSpec for this key if its dependencies still match, else None."""
    payload = _read_entry(directory, key)
    if payload is None:
        return None
    try:
        deps = [(_tuples(path), _tuples(fp)) for path, fp in payload["deps"]]
        field_paths = [_tuples(p) for p in payload["fields"]]
        for path, fp in deps:
            v = resolve(func, args, path)
            if v is _MISSING or fingerprint(v) != fp:
                return None
        keys = []
        for path in field_paths:
            info = getattr(resolve(func, args, path), "__gfxrt_field__", None)
            if info is None:
                return None
            keys.append(info.key)
        return with_host_functions(spec_from_json(payload["spec"], keys))
    except Exception:  # noqa: BLE001 - a malformed entry is a miss, never an error
        return None


def _private_dir(path: str) -> None:
    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.stat(path)
    if st.st_mode & 0o077 and _ours(st):
        os.chmod(path, 0o700)


def store(directory: str, key: str, spec, deps: dict, field_paths: dict) -> None:
    field_index = {k: i for i, k in enumerate(field_paths)}
    try:
        payload = json.dumps({"key": key, "spec": spec_to_json(spec, field_index),
                              "deps": [[path, fp] for path, fp in deps.items()],
                              "fields": list(field_paths.values())}, sort_keys=True, separators=(",", ":"))
    except (KeyError, TypeError, ValueError):
        return  # something only this process can name (an unbound field, an object): not cached
    if "nosource:" in payload:  # a func without source is fingerprinted by id: never valid elsewhere
        return
    text = json.dumps({"format": FORMAT, "version": FORMAT_VERSION,
                       "sha256": hashlib.sha256(payload.encode("utf-8")).hexdigest(), "payload": payload})
    path = _path(directory, key)
    try:
        _private_dir(directory)
        _private_dir(os.path.dirname(path))
        tmp = f"{path}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only or full disk only costs the next process a compile


def with_host_functions(spec):
    """Rebuild what an entry on disk cannot hold: the extent functions."""
    from .hosteval import compile_host_expr, host_evaluable
    names = [p.name for p in spec.params]
    tasks = tuple(dataclasses.replace(t, extent_fn=compile_host_expr(t.extent, names))
                  if t.extent is not None and host_evaluable(t.extent) else t for t in spec.tasks)
    return dataclasses.replace(spec, tasks=tasks)


def compile_cached(func, args, target, *, name: str | None = None, directory: str | None = None,
                   mode: str = "primal"):
    """compile_kernel through the offline cache (directory None: no cache)."""
    from . import compile_ir, lower_raw
    from .passes import pipeline
    key = kernel_key(func, args, target, name, mode) if directory else None
    if key is not None:
        spec = load(directory, key, func, args)
        if spec is not None:
            return spec
    try:
        fe = lower_raw(func, args, debug=target.debug, name=name)
        spec = compile_ir(pipeline(fe.ir), target, mode)
    except GfxrtError:
        raise
    except Exception as e:  # a bug in a pass or the code generator: never a bare Python error
        raise InternalCompilerError(f"while compiling {name or func.__name__}: {type(e).__name__}: {e}") from e
    if key is not None and fe.cacheable:
        store(directory, key, spec, fe.deps, fe.field_paths)
    return spec
