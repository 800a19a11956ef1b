"""What a kernel depends on: the Python values the frontend reads, as paths from the kernel
function with fingerprints, which the offline cache (compiler/cache.py) checks on load."""
from __future__ import annotations

import builtins
import hashlib
import importlib
import inspect
import types as _pytypes

MISSING = object()


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
        offset = (tuple(info.offset),) if info.offset else ()  # (no offset: the fingerprint fields always had)
        sparse = getattr(v, "__gfxrt_sparse__", None)  # a field under sparse SNodes compiles differently
        return ("field", repr(info.elem), tuple(info.shape), info.needs_grad, *offset) + (() if sparse is None else
                                                                                         (sparse.signature,))
    if getattr(v, "__gfxrt_func__", False):
        return ("f", v.__qualname__, _source_hash(v.fn))
    if type(v).__name__ in ("Builtin", "VectorBuiltin", "MatrixBuiltin"):
        return ("b", v.name)
    if getattr(type(v), "__gfxrt_matrix__", False):  # a gr.Vector / gr.Matrix value: its numbers
        return ("hm", str(v.dtype), tuple(v.shape), tuple(v.ravel().tolist()))
    if type(v).__name__ == "StructType" and type(v).__module__ == "gfxrt.compiler.structs":  # layout and methods
        return ("st", repr(v), tuple((n, fingerprint(f)) for n, f in v.methods))
    if getattr(v, "__gfxrt_struct_field__", False):
        return ("sf", repr(v.type), tuple(v.shape))
    if type(v).__module__ == "gfxrt.compiler.types":
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


def resolve(func, args, path):
    """The Python value at a dependency path (see the frontend's `from_python`)."""
    cur, obj = func, MISSING
    for step in path:
        kind = step[0]
        try:
            if kind == "arg":
                obj = args[step[1]].value
            elif kind == "n":
                obj = lookup_name(cur, step[1])
            elif kind == "a":
                obj = getattr(obj, step[1])
            elif kind == "i":
                obj = obj[step[1]]
            elif kind == "mod":  # a module-level object of gfxrt (gr.random's state)
                obj = importlib.import_module(step[1])
            elif kind == "f":
                cur, obj = obj.fn, MISSING
            else:
                return MISSING
        except Exception:  # noqa: BLE001 - anything unresolvable is a mismatch
            return MISSING
        if obj is MISSING and kind != "f":
            return MISSING
    return obj


def lookup_name(func, name: str, missing=MISSING):
    """What `name` means inside `func`: its closure variable, else its module global, else a
    Python builtin; `missing` when none (or an empty closure cell)."""
    code = getattr(func, "__code__", None)
    if code is not None and name in code.co_freevars:
        try:
            return func.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:  # a closure variable not assigned yet
            return missing
    g = getattr(func, "__globals__", {})
    if name in g:
        return g[name]
    return getattr(builtins, name, missing)
