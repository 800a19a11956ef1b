"""The offline compile cache: compiled kernels on disk, reused across processes.

The key hashes the kernel's source text, its specialization (argument kinds, dtypes,
ndims, template values), the target and the compiler version (gfxrt's version plus a hash
of the compiler's own source), not where the source lives: the same kernel in another
file, or moved by lines added above it, hits (see `relocate`). An entry also records every
Python value the frontend read while lowering (globals, module attributes, funcs, fields) as
a *path* from the kernel function with a fingerprint; a warm load re-resolves the paths and uses the entry only if
every fingerprint still matches, so editing a global constant or a @gr.func recompiles.
The warm path does no AST parsing, lowering or code generation.

Fields are bound by identity (`FieldInfo.key` = id of the object), which means nothing in
another process: an entry names each field by the path that reached it, and the load binds
the field and gradient bindings to the fields that path reaches in this process.

Entries are JSON text (see FORMAT below), never pickles: whoever can write the cache
directory must not be able to run code in the processes that read it, nor change what a
kernel computes: each entry is signed with this user's key (`cache_secret`), and files
are read and written by `cache_store` (where they live, their permissions, the size bound).
"""
from __future__ import annotations

import dataclasses
import hashlib
import hmac
import inspect
import json
import os
import re
from functools import lru_cache

from . import cache_secret, cache_store
from .cache_store import default_dir  # noqa: F401 - the runtime's name for the cache folder
from .frontend.deps import MISSING, fingerprint, resolve
from .frontend.source import source_lines
from .hosteval import _FMT, compile_host_expr, host_evaluable
from .ir import Node, Op
from .spec import BindingSpec, KernelSpec, ParamSpec, TaskSpec
from .types import SCALARS, DType

VERSION = "0.1.0"


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


def _arg_key(a) -> tuple:
    if a.kind == "template":
        return ("template", a.name, fingerprint(a.value))
    if a.kind == "texture":  # (Format, storage, lod): plain data with a stable repr
        return ("texture", a.name, a.ndim, repr(a.value))
    return (a.kind, a.name, repr(a.dtype), repr(a.elem), a.ndim, a.needs_grad) + \
        (("clamp",) if a.boundary == "clamp" else ()) + (("chunks", a.chunks) if a.chunks != 1 else ())


def _aliases(args) -> tuple:
    """Which template arguments are one object (`dot(x, x)` against `dot(x, y)`): a kernel binds an
    object once, so an entry compiled for `(x, x)` binds one buffer for both and must not serve
    `(x, y)`, whose fingerprints are the same. Each object argument names the first argument
    holding it."""
    first: dict[int, int] = {}
    return tuple(first.setdefault(id(a.value), i) for i, a in enumerate(args)
                 if a.kind == "template" and not isinstance(a.value, (bool, int, float, str, type(None))))


def kernel_key(func, args, target, name: str | None, mode: str = "primal") -> str | None:
    """The entry's name: a hash of everything that changes the compiled code except the
    Python values the kernel reads (checked on load, see `load`) and its location (the file
    and first line; `relocate`). None for a function without source."""
    try:
        lines = source_lines(func)[0]
    except (OSError, TypeError):
        return None
    # the return annotation may be a closure variable (`-> dt`): it is part of the kernel
    ret = getattr(func, "__annotations__", {}).get("return", inspect.Signature.empty)
    text = repr((compiler_digest(), target.key(), mode, name or func.__name__, "".join(lines),
                 tuple(_arg_key(a) for a in args), _aliases(args), repr(ret)))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def location(func) -> list:
    """[file, first line, last line] of a kernel's source (what the key leaves out)."""
    lines, first, file = source_lines(func)
    return [file, first, first + len(lines) - 1]


def _basename(path: str) -> str:  # as the code generator's statement comments name a file
    return path.replace("\\", "/").rsplit("/", 1)[-1]


def relocate(spec_json: dict, rest, old: list, new: list) -> dict | None:
    """An entry's spec compiled at location `old` ([file, first, last]) as the same source
    compiles at `new`, or None when that cannot be done exactly.

    The source text is the same (the key covers it), so every position inside the kernel
    moves by the same number of lines. Positions reach the spec as the WGSL's statement
    comments (`  // file.py:LINE`, codegen/wgsl.py `comment`), which are rewritten, and
    through messages (debug checks, asserts: "file:line"), which are not: an entry whose
    spec outside its WGSL, or `rest` (the entry's other JSON data), names the kernel's
    file, or whose WGSL names it other than in those comments, is a miss. Comments of the
    file outside the kernel's lines belong to inlined @gr.funcs, whose positions their
    fingerprints pin: they stay where the file stays, and make a moved-to-another-file entry
    a miss. (A func of another file with the same name, inside the kernel's lines, would have
    its comments moved too: comments only.) Print site ids hash the old position: they only
    tell sites of different formats apart, and still do."""
    (old_file, first, last), (new_file, new_first, _) = old, new
    old_base, new_base = _basename(old_file), _basename(new_file)
    # JSON escapes character by character: a string containing the name holds its escaped form
    others = json.dumps([{k: v for k, v in spec_json.items() if k != "wgsl"}, rest], ensure_ascii=False)
    if json.dumps(old_base, ensure_ascii=False)[1:-1] in others:
        return None
    wgsl = spec_json["wgsl"]
    lines = [int(n) for base, n in _COMMENT.findall(wgsl) if base == old_base]
    if wgsl.count(old_base) != len(lines):
        return None
    inside = all(first <= n <= last for n in lines)
    if not inside and new_file != old_file:
        return None
    shift = new_first - first
    if inside and shift == 0:
        return {**spec_json, "wgsl": wgsl.replace(f"  // {old_base}:", f"  // {new_base}:")}

    def move(m):
        n = int(m.group(2))
        return f"  // {new_base}:{n + shift}" if m.group(1) == old_base and first <= n <= last else m.group(0)
    return {**spec_json, "wgsl": _COMMENT.sub(move, wgsl)}


_COMMENT = re.compile(r"  // (\S+):(\d+)$", re.M)


# -- entries on disk: JSON text only ----------------------------------------------------------
# One file per key (`cache_store`), two lines of JSON text: a header {"format", "version", "mac"},
# then the payload {"key", "loc", "spec", "deps", "fields"}, whose bytes "mac" signs (HMAC-SHA256
# under this user's key, `cache_secret`); "loc" is where the kernel's source was ([file, first
# line, last line]).
# Nothing in it is executable (no pickle) and nothing is process-local: a field binding names
# the field by its index into "fields" (the dependency path that reaches it), never by id.
# The spec is written field by field of its dataclasses (`_encode`): tagged objects for
# dtypes, sets, maps, host-evaluable extents and the four spec classes, nothing else; loading
# rebuilds only those (`_decode`), checking every dataclass's field names.
# A file that is unreadable, not ours, signed with another key, foreign, of another version
# or fails any check is a miss: the kernel recompiles and the entry is rewritten.
FORMAT = "gfxrt-kernel-cache"
FORMAT_VERSION = 4


class _Invalid(Exception):
    pass


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


# name -> (class, the names an entry's object of it must have: its fields and "@")
_SPEC_CLASSES = {c.__name__: (c, frozenset(f.name for f in dataclasses.fields(c)) | {"@"})
                 for c in (BindingSpec, KernelSpec, ParamSpec, TaskSpec)}


def _encode(v, field_index: dict):
    """JSON data for a spec value. Every dataclass field is written (a field added to the
    spec later travels without a change here); a value of a type not listed raises TypeError,
    and the kernel is then not cached rather than cached without it."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, DType):
        return {"dtype": v.name}
    if isinstance(v, (tuple, list)):
        return [_encode(x, field_index) for x in v]
    if isinstance(v, frozenset):
        return {"frozenset": sorted(_encode(x, field_index) for x in v)}
    if isinstance(v, dict):
        return {"map": [[_encode(k, field_index), _encode(x, field_index)] for k, x in v.items()]}
    if isinstance(v, Node):
        return {"extent": _extent_json(v)} if host_evaluable(v) else None
    name = type(v).__name__
    if dataclasses.is_dataclass(v) and _SPEC_CLASSES.get(name, (None,))[0] is type(v):
        out = {"@": name}
        for f in dataclasses.fields(v):
            x = getattr(v, f.name)
            if name == "TaskSpec" and f.name == "extent_fn":
                out[f.name] = None  # rebuilt from the extent on load
            elif name == "BindingSpec" and f.name == "source" and (
                    v.kind == "field" or (v.kind != "arg" and isinstance(x, int) and x in field_index)):
                out[f.name] = {"field": field_index[x]}  # a field's (or its gradient's) key: process-local
            elif name == "BindingSpec" and f.name == "grad_of" and x is not None and x[0] == "field":
                out[f.name] = ["field", {"field": field_index[x[1]]}]
            else:
                out[f.name] = _encode(x, field_index)
        return out
    raise TypeError(f"a {name} in a kernel spec")


def _decode(j, field_keys: list):
    if j is None or isinstance(j, (bool, int, float, str)):
        return j
    if isinstance(j, list):
        return tuple([_decode(x, field_keys) for x in j])
    _check(isinstance(j, dict))
    if "@" in j:
        cls, names = _SPEC_CLASSES[j["@"]]
        _check(j.keys() == names)
        return cls(**{k: _decode(x, field_keys) for k, x in j.items() if k != "@"})
    _check(len(j) == 1)
    if "dtype" in j:
        return SCALARS[j["dtype"]]
    if "field" in j:
        return field_keys[j["field"]]
    if "frozenset" in j:
        return frozenset(_decode(x, field_keys) for x in j["frozenset"])
    if "map" in j:
        return {_decode(k, field_keys): _decode(x, field_keys) for k, x in j["map"]}
    return _extent_from(j["extent"])


def spec_to_json(spec, field_index: dict) -> dict:
    """A KernelSpec as JSON data; `field_index` maps FieldInfo.key -> position in the entry's
    field paths (a field binding stores that position, not the process-local key)."""
    return _encode(spec, field_index)


def spec_from_json(d: dict, field_keys: list):
    """The KernelSpec of `spec_to_json`, its fields bound to `field_keys` (this process's
    FieldInfo.key of each field path). Raises _Invalid (or a lookup error) on anything odd."""
    spec = _decode(d, field_keys)
    _check(type(spec).__name__ == "KernelSpec" and isinstance(spec.wgsl, str)
           and all(type(t).__name__ == "TaskSpec" and t.kind in ("range", "serial") for t in spec.tasks))
    return spec


def _mac(secret: bytes, payload: bytes) -> str:
    return hmac.new(secret, payload, hashlib.sha256).hexdigest()


def _read_entry(directory: str, key: str) -> dict | None:
    data = cache_store.read(directory, key)
    if data is None:
        return None
    secret = cache_secret.secret()
    if secret is None:
        return None
    head, _, text = data.partition(b"\n")
    try:
        outer = json.loads(head)
        if not (isinstance(outer, dict) and outer.get("format") == FORMAT and outer.get("version") == FORMAT_VERSION
                and isinstance(outer.get("mac"), str)):
            return None
        if not hmac.compare_digest(_mac(secret, text), outer["mac"]):
            return None  # written with another key (another user's, an old one) or changed since
        payload = json.loads(text)
        return payload if isinstance(payload, dict) and payload.get("key") == key else None
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def load(directory: str, key: str, func, args, loc: list | None = None):
    """The cached KernelSpec for this key if its dependencies still match, else None.
    `loc`: the kernel's `location` now (None: the entry's, as stored)."""
    payload = _read_entry(directory, key)
    if payload is None:
        return None
    try:
        spec_json = payload["spec"]
        if loc is not None and payload["loc"] != loc:
            spec_json = relocate(spec_json, [payload["deps"], payload["fields"]], payload["loc"], loc)
            if spec_json is None:
                return None
        deps = [(_tuples(path), _tuples(fp)) for path, fp in payload["deps"]]
        field_paths = [_tuples(p) for p in payload["fields"]]
        for path, fp in deps:
            v = resolve(func, args, path)
            if v is MISSING or fingerprint(v) != fp:
                return None
        keys = []
        for path in field_paths:
            info = getattr(resolve(func, args, path), "__gfxrt_field__", None)
            if info is None:
                return None
            keys.append(info.key)
        return with_host_functions(spec_from_json(spec_json, keys))
    except Exception:  # noqa: BLE001 - a malformed entry is a miss, never an error
        return None


def store(directory: str, key: str, spec, deps: dict, field_paths: dict, loc: list) -> None:
    field_index = {k: i for i, k in enumerate(field_paths)}
    try:
        payload = json.dumps({"key": key, "loc": loc, "spec": spec_to_json(spec, field_index),
                              "deps": [[path, fp] for path, fp in deps.items()],
                              "fields": list(field_paths.values())}, sort_keys=True, separators=(",", ":"))
    except (KeyError, TypeError, ValueError):
        return  # something only this process can name (an unbound field, an object): not cached
    if "nosource:" in payload:  # a func without source is fingerprinted by id: never valid elsewhere
        return
    secret = cache_secret.secret()
    if secret is None:
        return
    text = payload.encode("utf-8")
    head = json.dumps({"format": FORMAT, "version": FORMAT_VERSION, "mac": _mac(secret, text)})
    cache_store.write(directory, key, head.encode("utf-8") + b"\n" + text)


def with_host_functions(spec):
    """Rebuild what an entry on disk cannot hold: the extent functions."""
    names = [p.name for p in spec.params]
    tasks = tuple(dataclasses.replace(t, extent_fn=compile_host_expr(t.extent, names))
                  if t.extent is not None and host_evaluable(t.extent) else t for t in spec.tasks)
    return dataclasses.replace(spec, tasks=tasks)

