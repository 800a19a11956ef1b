"""Move gfxrt's modules into their wings and rewrite every reference to them (issue 23 item 4).

    python tools/relayout.py          # from the repository root; prints what it changed

The table `MOVES` (old module -> new module, names under gfxrt) is the layout; docs/design.md
("Layers") says why each module sits where it does. The script
- moves each old file that is still there (`git mv`), creating a wing's `__init__.py`;
- rewrites every import of a moved module, relative and absolute, at any depth of any .py file
  of the checkout, in the style it was written in (relative inside gfxrt/), from the importing
  file's new place; `from . import a, b` becomes one statement per wing where a and b part;
- rewrites module paths in text: `gfxrt.ffi` (strings, comments: monkeypatch targets,
  importlib, sys.modules keys) and `gfxrt/ffi.py` (docs, docstrings, README);
- sorts the imports it touched (`ruff check --fix --select I`, where ruff is found).

It can run again after a merge: a name that already names a new module is left alone, so only
what still uses the old layout changes.
bench/results/ (raw output of past runs) is history and is left as it was.
"""
from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = "gfxrt"

_WINGS = {
    "engine": ("tracebacks ffi device_api memory returns printing messages xdg_runtime arch init_options device "
                "lock threadstate blit_kernels blitter status program recorder launch context"),
    "data": "torch_io hostaccess ndarray field copy oop",
    "ad": "tape_check autodiff ad_custom adstack",
    "taichi": "compat rng linalg containers structs snode",
}
MOVES = {old: f"{wing}.{old}" for wing, names in _WINGS.items() for old in names.split()}
MOVES.update({
    "runtime": "engine.runtime",  # GfxRuntime, in the engine wing
    "ad": "ad",                       # gr.ad: ad.py becomes the autodiff wing's __init__
    "taichi_errors": "taichi.errors",
    "taichi_init": "taichi.init",
    "taichi_ops": "taichi.ops",
})
DOCSTRINGS = {
    "engine": "The engine wing: the device and its interface, memory, the dispatch recorder, the launcher,\n"
               "GfxRuntime and the process context (docs/design.md, \"Layers\").",
    "data": "The data wing: ndarrays, fields, host element access, copies (docs/design.md, \"Layers\").",
    "taichi": "The Taichi compatibility wing: Taichi's names on top of gfxrt's own; nothing below imports it\n"
              "(docs/design.md, \"Layers\").",
}
SKIP_DIRS = {".git", ".venv", "node_modules", "__pycache__", ".ruff_cache", ".pytest_cache"}
TEXT_SUFFIXES = {".py", ".md", ".txt", ".toml", ".cfg", ".sh", ".yml", ".yaml", ".ini", ".rst"}


def old_file(old: str) -> Path:
    return ROOT / PKG / f"{old}.py"


def new_file(new: str) -> Path:
    p = ROOT / PKG / Path(*new.split("."))
    return p / "__init__.py" if new in _WINGS else p.with_suffix(".py")


def new_modules() -> set[str]:
    """Every module name of the new layout: the table's targets, the wings, and the modules
    that stay where they are (every file of gfxrt/ but the old ones not moved yet)."""
    out = {f"{PKG}.{n}" for n in MOVES.values()} | {f"{PKG}.{w}" for w in _WINGS} | {PKG}
    for p in (ROOT / PKG).rglob("*.py"):
        if p.parent == ROOT / PKG and p.stem in MOVES:
            continue
        out.add(module_name(p)[0])
    return out


NEW: set[str] = set()  # new_modules(), when main() starts


def is_new(name: str) -> bool:
    """`name` (absolute) names a module of the new layout that no old module had."""
    return name in NEW and name[len(PKG) + 1:] not in MOVES


def map_module(name: str) -> str:
    """The new absolute name of module `name` (gfxrt.x or gfxrt.x.y...); unchanged if not moved."""
    if not name.startswith(PKG + ".") or is_new(name):
        return name
    head, _, rest = name[len(PKG) + 1:].partition(".")
    if head in MOVES:
        if rest and is_new(f"{PKG}.{head}.{rest.split('.')[0]}"):
            return name  # gfxrt.engine.ffi: already a module of the new package
        return f"{PKG}.{MOVES[head]}" + (f".{rest}" if rest else "")
    return name


def module_name(path: Path) -> tuple[str, bool]:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def relative(target: str, package: str) -> str:
    """`target` (absolute) as a relative module reference from inside `package`."""
    t, p = target.split("."), package.split(".")
    common = 0
    while common < min(len(t), len(p)) and t[common] == p[common]:
        common += 1
    return "." * (len(p) - common + 1) + ".".join(t[common:])


def rewrite_imports(src: str, path: Path, name: str, is_pkg: bool, new_name: str, new_pkg: bool) -> tuple[str, list]:
    """The source with its imports of moved modules rewritten (from the file's new place,
    `new_name`), and the spans (line ranges) of every import statement."""
    tree = ast.parse(src, str(path))
    lines = src.splitlines(keepends=True)
    base = name if is_pkg else name.rpartition(".")[0]
    new_base = new_name if new_pkg else new_name.rpartition(".")[0]
    edits, spans = [], []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        spans.append((node.lineno, node.end_lineno))
        indent = " " * node.col_offset
        if isinstance(node, ast.Import):
            if not any(a.name.split(".")[0] == PKG for a in node.names):
                continue
            names = [(map_module(a.name), a.asname) for a in node.names]
            if [n for n, _ in names] == [a.name for a in node.names]:
                continue
            text = "import " + ", ".join(n + (f" as {a}" if a else "") for n, a in names)
            edits.append((node, text))
            continue
        if node.level:
            pkg = base
            for _ in range(node.level - 1):
                pkg = pkg.rpartition(".")[0]
            src_mod = pkg + ("." + node.module if node.module else "")
        else:
            src_mod = node.module or ""
        if not (src_mod == PKG or src_mod.startswith(PKG + ".")):
            continue

        def spell(target: str, level: int = node.level) -> str:
            return relative(target, new_base) if level else target

        every = {f"{src_mod}.{a.name}" for a in node.names}
        subs = [m for m in every if m[len(PKG) + 1:].split(".")[0] in MOVES or m in NEW]
        if subs and all(m in NEW or m[len(PKG) + 1:] in MOVES for m in every):
            # `from P import a, b`: submodules; one statement per new parent
            groups: dict[str, list[str]] = {}
            for a in node.names:
                full = map_module(f"{src_mod}.{a.name}")
                parent, _, leaf = full.rpartition(".")
                alias = a.asname or (a.name if leaf != a.name else None)
                groups.setdefault(parent, []).append(leaf + (f" as {alias}" if alias else ""))
            stmts = [f"from {spell(p)} import {', '.join(ns)}" for p, ns in groups.items()]
            if [spell(p) for p in groups] == [("." * node.level + (node.module or "")) if node.level else node.module] \
                    and len(groups) == 1 and groups[next(iter(groups))] == [
                        a.name + (f" as {a.asname}" if a.asname else "") for a in node.names]:
                continue
            edits.append((node, ("\n" + indent).join(stmts)))
            continue
        target = map_module(src_mod)
        spelled = spell(target)
        old_spelled = ("." * node.level + (node.module or "")) if node.level else node.module
        if spelled == old_spelled:
            continue
        seg = "".join(lines[node.lineno - 1:node.end_lineno])
        start = sum(len(x) for x in lines[:node.lineno - 1]) + node.col_offset
        m = re.compile(r"from\s+(\S+)\s+import").match(seg, node.col_offset)
        assert m and m.group(1) == old_spelled, (path, node.lineno, seg)
        edits.append((node, ("span", start + m.start(1) - node.col_offset, start + m.end(1) - node.col_offset,
                             spelled)))
    # apply from the end
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln))
    out = src
    for node, text in sorted(edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True):
        if isinstance(text, tuple):
            _, a, b, repl = text
            out = out[:a] + repl + out[b:]
        else:
            a = offsets[node.lineno - 1] + node.col_offset
            b = offsets[node.end_lineno - 1] + node.end_col_offset
            out = out[:a] + text + out[b:]
    return out, spans


_DOTTED = re.compile(r"(?<![\w.])" + PKG + r"((?:\.[A-Za-z_]\w*)+)")
_PATH = re.compile(r"(?<![\w.])" + PKG + r"/(\w+)\.py\b")


def rewrite_text(text: str) -> str:
    def dotted(m):
        parts = m.group(1)[1:].split(".")
        # the longest prefix that names a module decides
        for k in range(len(parts), 0, -1):
            mod = ".".join([PKG, *parts[:k]])
            if is_new(mod) or mod[len(PKG) + 1:] in MOVES or f"{PKG}/{'/'.join(parts[:k])}.py" in _FILES:
                after = re.match(r"\s+import\s+(\w+)", m.string[m.end():])
                if k == len(parts) and after and is_new(f"{mod}.{after.group(1)}"):
                    return m.group(0)  # `from gfxrt.engine import ffi` in a string: the new package
                if k == len(parts) and mod in NEW and not old_file(parts[0]).exists():
                    return m.group(0)  # a bare `gfxrt.runtime` once the package exists: the package
                new = map_module(mod)
                return new + "".join("." + p for p in parts[k:])
        return m.group(0)

    def path(m):
        old = m.group(1)
        if old in MOVES:
            return str(new_file(MOVES[old]).relative_to(ROOT))
        return m.group(0)

    return _PATH.sub(path, _DOTTED.sub(dotted, text))


_FILES: set[str] = set()


def rewrite_outside(src: str, spans) -> str:
    """rewrite_text on the lines outside import statements, and on the comments of those inside."""
    lines = src.splitlines(keepends=True)
    inside = set()
    for a, b in spans:
        inside.update(range(a, b + 1))

    def one(i, ln):
        if i + 1 not in inside:
            return rewrite_text(ln)
        code, hash_, comment = ln.partition("#")
        return code + hash_ + rewrite_text(comment)

    return "".join(one(i, ln) for i, ln in enumerate(lines))


def files():
    for dirpath, dirnames, names in os.walk(ROOT):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        rel = Path(dirpath).relative_to(ROOT)
        if rel.parts[:2] == ("bench", "results"):
            continue
        for n in sorted(names):
            p = Path(dirpath) / n
            if p.suffix in TEXT_SUFFIXES or n == "README":
                yield p


def main() -> int:
    global NEW
    NEW = new_modules()
    _FILES.update(str(p.relative_to(ROOT)) for p in (ROOT / PKG).rglob("*.py"))
    moves = {old_file(o): new_file(n) for o, n in MOVES.items() if old_file(o).exists()}
    changed = []
    for p in files():
        if p == Path(__file__).resolve():
            continue
        try:
            src = p.read_text()
        except UnicodeDecodeError:
            continue
        if p.suffix == ".py":
            name, is_pkg = module_name(p)
            dest = moves.get(p, p)
            new_name, new_pkg = module_name(dest)
            try:
                out, spans = rewrite_imports(src, p, name, is_pkg, new_name, new_pkg)
            except SyntaxError:
                out, spans = src, []
            out = rewrite_outside(out, spans)
        else:
            out = rewrite_text(src)
        if out != src:
            p.write_text(out)
            changed.append(p)
    for src, dest in moves.items():
        dest.parent.mkdir(exist_ok=True)
        subprocess.run(["git", "mv", str(src), str(dest)], cwd=ROOT, check=True)
        changed = [dest if c == src else c for c in changed]
        print(f"moved {src.relative_to(ROOT)} -> {dest.relative_to(ROOT)}")
    for wing, doc in DOCSTRINGS.items():
        init = ROOT / PKG / wing / "__init__.py"
        if not init.exists():
            init.write_text(f'"""{doc}"""\n')
            subprocess.run(["git", "add", str(init)], cwd=ROOT, check=True)
            print(f"created {init.relative_to(ROOT)}")
    for c in changed:
        print(f"rewrote {c.relative_to(ROOT)}")
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    py = [str(c) for c in changed if c.suffix == ".py"]
    if py and Path(ruff).exists():
        subprocess.run([ruff, "check", "--fix", "--select", "I", "--quiet", *py], cwd=ROOT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
