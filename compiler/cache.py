"""The offline compile cache: compiled kernels on disk, reused across processes.

The key hashes the kernel's source text, its specialization (argument kinds, dtypes,
ndims, template values), the target and the compiler version (gfxrt's version plus a hash
of the compiler's own source). An entry also records every Python value the frontend read
while lowering (globals, module attributes, funcs, fields) as a *path* from the kernel
function with a fingerprint; a warm load re-resolves the paths and uses the entry only if
every fingerprint still matches, so editing a global constant or a @gr.func recompiles.
The warm path does no AST parsing, lowering or code generation.

Fields are bound by identity (`FieldInfo.key` = id of the object); an entry stores how each
field was reached, and the load re-binds the bindings to the fields of this process.
"""
from __future__ import annotations

import dataclasses
import hashlib
import inspect
import os
import pickle
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
    if type(v).__name__ in ("Builtin", "VectorBuiltin", "MatrixBuiltin"):
        return ("b", v.name)
    if getattr(type(v), "__gfxrt_matrix__", False):  # a gr.Vector / gr.Matrix value: its numbers
        return ("hm", str(v.dtype), tuple(v.shape), tuple(v.ravel().tolist()))
    if type(v).__module__ == "compiler.types":
        return ("ty", repr(v))
    if hasattr(v, "item") and hasattr(v, "dtype") and getattr(v, "shape", None) == ():
        return ("v", str(v.dtype), repr(v.item()))
    if type(v).__name__ == "ndarray" and hasattr(v, "tobytes"):  # a captured numpy array: its content
        return ("np", str(v.dtype), tuple(v.shape), hashlib.blake2b(v.tobytes(), digest_size=16).hexdigest())
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
    try:  # the return annotation may be a closure variable (`-> dt`): it is part of the kernel
        ret = repr(inspect.signature(func).return_annotation)
    except (TypeError, ValueError):
        ret = None
    text = repr((compiler_digest(), target.key(), mode, name or func.__name__, file, first, "".join(lines),
                 tuple(_arg_key(a) for a in args), ret))
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
            elif kind == "mod":  # a module-level object of gfxrt (gr.random's state)
                import importlib
                obj = importlib.import_module(step[1])
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


@dataclasses.dataclass
class Entry:
    spec: object                       # KernelSpec without host functions
    deps: dict                         # path -> fingerprint
    field_paths: dict                  # FieldInfo.key at store time -> path


def _path(directory: str, key: str) -> str:
    return os.path.join(directory, key[:2], key + ".pkl")


def load(directory: str, key: str, func, args):
    """The cached KernelSpec for this key if its dependencies still match, else None."""
    try:
        with open(_path(directory, key), "rb") as f:
            entry: Entry = pickle.load(f)
    except (OSError, pickle.PickleError, EOFError, AttributeError, ImportError, TypeError, ValueError):
        return None
    for path, fp in entry.deps.items():
        v = resolve(func, args, path)
        if v is _MISSING or fingerprint(v) != fp:
            return None
    remap = {}
    for old, path in entry.field_paths.items():
        obj = resolve(func, args, path)
        info = getattr(obj, "__gfxrt_field__", None)
        if info is None:
            return None
        remap[old] = info.key
    return with_host_functions(entry.spec, remap)


def store(directory: str, key: str, spec, deps: dict, field_paths: dict) -> None:
    bare = dataclasses.replace(spec, tasks=tuple(dataclasses.replace(t, extent_fn=None) for t in spec.tasks))
    path = _path(directory, key)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            pickle.dump(Entry(bare, deps, field_paths), f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only or full disk only costs the next process a compile


def with_host_functions(spec, field_remap: dict | None = None):
    """Rebuild what pickling dropped (extent functions) and re-bind fields."""
    from .hosteval import compile_host_expr, host_evaluable
    names = [p.name for p in spec.params]
    tasks = tuple(dataclasses.replace(t, extent_fn=compile_host_expr(t.extent, names))
                  if t.extent is not None and host_evaluable(t.extent) else t for t in spec.tasks)
    bindings = spec.bindings
    if field_remap:
        def remap(b):
            if b.kind == "field":
                return dataclasses.replace(b, source=field_remap.get(b.source, b.source))
            if b.grad_of is not None and b.grad_of[0] == "field":  # a field's .grad / .dual / access shadow
                key = field_remap.get(b.grad_of[1], b.grad_of[1])
                return dataclasses.replace(b, source=key if b.source == b.grad_of[1] else b.source,
                                           grad_of=("field", key))
            return b
        bindings = tuple(remap(b) for b in bindings)
    return dataclasses.replace(spec, tasks=tasks, bindings=bindings)


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
        from .semantic import defaults
        with defaults(target.default_fp, target.default_ip):
            fe = lower_raw(func, args, debug=target.debug, name=name)
        spec = compile_ir(pipeline(fe.ir), target, mode)
    except GfxrtError:
        raise
    except Exception as e:  # a bug in a pass or the code generator: never a bare Python error
        raise InternalCompilerError(f"while compiling {name or func.__name__}: {type(e).__name__}: {e}") from e
    if key is not None and fe.cacheable:
        store(directory, key, spec, fe.deps, fe.field_paths)
    return spec
