"""Import layering (docs/runtime.md "How the core fits together"): a tool test that reads the
sources with `ast`, no GPU.

Every intra-package import counts, module level and function-local alike (a function-local
import is a dependency too, only a late one). `from . import x` names submodule x; a name
that is not a submodule comes from the package's __init__, which only __init__ itself may
use (it re-exports everything, so importing it from below is a cycle through the top).
"""
from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent

# gfxrt's floors, bottom first, the compiler (gfxrt.compiler) below them all: a module imports
# only modules of its own floor or of a floor below it (within a floor, the package's
# acyclicity is the order). The wings are folders, so the order reads off the tree: errors
# (the shared base) <- engine/ (the device, the recorder, the launcher, GfxRuntime, the context)
# <- data/ (arrays, fields) <- ad/ (the Tape, the adstack heap; its __init__ is the gr.ad
# namespace) <- the API modules at the top of gfxrt/ <- gui/ (gr.GUI, the off-screen frame,
# image files) and ui/ (gr.ui, GGUI: it draws into gui's frame) <- taichi/ and lang/ (Taichi's names)
# <- the package's __init__, __main__ and api (gr.*), which import everything.
FLOORS = (
    ("compiler", ("compiler",)),
    ("base", ("errors",)),
    ("engine", ("engine",)),
    ("data", ("data",)),
    ("ad", ("ad",)),
    ("api", ("kernel", "graph", "profiler", "session", "types", "math", "simt")),
    ("gui", ("gui", "ui", "tools")),
    ("taichi", ("taichi", "lang", "_lib")),
    ("top", ("", "__main__", "api")),
)
WINGS = ("engine", "data", "ad", "gui", "ui", "taichi")  # the sub-packages; lang/ is gr.lang's own folder


def floor_of(module: str) -> int | None:
    """The index in FLOORS of a gfxrt module (`gfxrt.engine.ffi` is on the floor of `engine`)."""
    rest = module.split(".")[1:]
    head = rest[0] if rest else ""
    for i, (_, names) in enumerate(FLOORS):
        if head in names:
            return i
    return None


# The folders installed under another name (pyproject.toml's package-dir: one installed name).
INSTALLED_AS = {"compiler": "gfxrt.compiler", "kernels": "gfxrt.kernels"}


def _module_names(folder: str) -> dict[str, pathlib.Path]:
    out = {}
    for p in sorted((ROOT / folder).rglob("*.py")):
        parts = p.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join((INSTALLED_AS.get(parts[0], parts[0]), *parts[1:]))] = p
    return out


def _in(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def imports(package: str) -> dict[str, dict[str, int]]:
    """module -> {imported module (absolute name): first line}, for every module of `package`;
    relative and absolute imports, at any depth of the file."""
    mods = _module_names(package)
    graph: dict[str, dict[str, int]] = {}
    for name, path in mods.items():
        base = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for a in node.names:
                    edges.setdefault(a.name, node.lineno)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    pkg = base
                    for _ in range(node.level - 1):
                        pkg = pkg.rpartition(".")[0]
                    target = pkg + ("." + node.module if node.module else "")
                else:
                    target = node.module
                for a in node.names:  # `from P import x`: the submodule P.x, else P itself
                    sub = f"{target}.{a.name}"
                    edges.setdefault(sub if sub in mods or sub in INSTALLED_AS.values() else target, node.lineno)
        for target, line in list(edges.items()):  # importing a.b.c runs a.b's __init__ first
            pkg = target.rpartition(".")[0]
            while pkg.count(".") and pkg in mods and not (name + ".").startswith(pkg + "."):
                edges.setdefault(pkg, line)
                pkg = pkg.rpartition(".")[0]
        graph[name] = edges
    return graph


def _find_cycle(graph: dict[str, dict[str, int]], nodes) -> list[str] | None:
    """A cycle (a list of modules, first == last) in `graph` restricted to `nodes`, or None."""
    nodes = set(nodes)
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(v):
        state[v] = 1
        path.append(v)
        for w in graph.get(v, {}):
            if w not in nodes:
                continue
            if state.get(w) == 1:
                return path[path.index(w):] + [w]
            if w not in state:
                found = visit(w)
                if found:
                    return found
        path.pop()
        state[v] = 2
        return None

    for v in sorted(nodes):
        if v not in state:
            found = visit(v)
            if found:
                return found
    return None


def _describe(graph, cycle) -> str:
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:])) + f" -> {cycle[-1]}"


def test_every_module_has_a_floor():
    """A new module is put on a floor (a wing, or the API list) before it is imported."""
    assert [m for m in _module_names("gfxrt") if floor_of(m) is None] == []


def upward(graph: dict[str, dict[str, int]]) -> list[str]:
    """The imports of `graph` that point to a higher floor."""
    return [f"{m} line {line} imports {t} ({FLOORS[floor_of(t)][0]} is above {FLOORS[floor_of(m)][0]})"
            for m, edges in graph.items() for t, line in edges.items()
            if t.split(".")[0] == "gfxrt" and t != "gfxrt" and floor_of(t) > floor_of(m)]


def test_imports_point_down_the_floors():
    """Each module imports only modules of its own floor or of the floors below it."""
    bad = upward(imports("gfxrt"))
    assert bad == [], "upward imports:\n  " + "\n  ".join(bad)


def test_the_floor_check_sees_an_upward_import():
    assert upward({"gfxrt.engine.ffi": {"gfxrt.kernel": 3, "gfxrt.errors": 4},
                   "gfxrt.data.field": {"gfxrt.engine.lock": 5, "gfxrt.taichi.rng": 6}}) == [
        "gfxrt.engine.ffi line 3 imports gfxrt.kernel (api is above engine)",
        "gfxrt.data.field line 6 imports gfxrt.taichi.rng (taichi is above data)"]


def test_the_wings_are_folders_with_a_docstring():
    """engine/, data/, ad/, taichi/ are packages; their __init__ holds a docstring and nothing
    else, except ad/'s and ui/'s, which are the gr.ad and gr.ui namespaces (Taichi's ti.ad, ti.ui)."""
    for wing in WINGS:
        init = ROOT / "gfxrt" / wing / "__init__.py"
        body = ast.parse(init.read_text()).body
        assert body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant), wing
        assert wing in ("ad", "ui") or len(body) == 1, f"gfxrt/{wing}/__init__.py defines names"


def test_package_is_acyclic():
    """No cycle, within a floor too: every import, function-local ones included, points down
    some order of the modules."""
    graph = imports("gfxrt")
    cycle = _find_cycle(graph, graph)
    assert cycle is None, "import cycle in gfxrt: " + _describe(graph, cycle)


def test_only_the_package_imports_its_init():
    """`from . import name` of a re-exported name (not a submodule) would import gfxrt/__init__
    from below; the modules name the submodule they need instead."""
    graph = imports("gfxrt")
    top = ("gfxrt", "gfxrt.__main__")  # `python -m gfxrt` runs above the package, as a user's script does
    bad = [f"{m} line {edges['gfxrt']}" for m, edges in graph.items() if m not in top and "gfxrt" in edges]
    assert bad == []


def test_compiler_imports_no_gfxrt_or_wgpu():
    """compiler/ (gfxrt.compiler) is pure: testable without a GPU, usable without the runtime."""
    bad = [f"{m} line {line} imports {t}" for m, edges in imports("compiler").items()
           for t, line in edges.items() if t.split(".")[0] in ("gfxrt", "wgpu") and not _in(t, "gfxrt.compiler")]
    assert bad == []


def test_compiler_imports_no_numpy():
    """compiler/ imports and compiles without numpy (Pyodide has none, issue 26): numpy is an input
    format, reached only through compiler/npcompat.py, which imports it lazily (importlib, on first
    use); no module imports it, at module level or in a function (tests/test_compiler_nonumpy.py
    compiles kernels with numpy blocked)."""
    bad = [f"{m} line {line} imports {t}" for m, edges in imports("compiler").items()
           for t, line in edges.items() if t.split(".")[0] == "numpy"]
    assert bad == []


def test_the_tool_sees_function_local_imports():
    """The parser counts imports inside functions, `from . import x` as submodule x, and the
    package __init__ an import runs."""
    graph = imports("gfxrt")
    assert "gfxrt.engine.xdg_runtime" in graph["gfxrt.engine.device"]  # module level, `from . import xdg_runtime`
    assert "gfxrt.engine.ffi" in graph["gfxrt.engine.backend"]     # (under an `if`)
    assert "gfxrt.engine.context" in graph["gfxrt.taichi.rng"]   # `from ..engine import context`
    assert "gfxrt.compiler.builtins" in graph["gfxrt.api"]     # gfxrt.compiler: the folder compiler/
    assert "gfxrt.ad" in graph["gfxrt.graph"]                  # `from .ad import adstack` runs ad/__init__
    assert "gfxrt.ad" not in graph["gfxrt.ad.ad_custom"]       # (its own package's is running already)
    assert _find_cycle({"a": {"b": 1}, "b": {"a": 2}}, "ab") in (["a", "b", "a"], ["b", "a", "b"])
    import tempfile
    with tempfile.TemporaryDirectory(dir=ROOT) as d:
        pkg = pathlib.Path(d)
        (pkg / "__init__.py").write_text("")
        (pkg / "low.py").write_text("")
        (pkg / "high.py").write_text("def f():\n    if True:\n        from .low import X\n")
        assert f"{pkg.name}.low" in imports(pkg.name)[f"{pkg.name}.high"]


def test_compiler_has_no_cycle_outside_codegen():
    """The frontend, the pipeline and the offline cache import one way (frontend <- pipeline ->
    cache); codegen's three WGSL helper modules are the one cycle left in compiler/."""
    graph = imports("compiler")
    assert _find_cycle(graph, [m for m in graph if not m.startswith("gfxrt.compiler.codegen.")]) is None


_REGISTER = {"append", "extend", "insert", "update", "setdefault", "add"}
_ARGUMENTS = {"ffi.SUBMIT_SLOT"}  # the device interface's submit argument (a C array the caller fills), no table


def _registrations(package: str) -> list[str]:
    """Statements of `package` that change another module's state: `mod.NAME = v`,
    `mod.NAME[k] = v` or `mod.NAME.append(...)` (update, add, ...), `mod` an imported module;
    and hooks: a function of this module (or a lambda) put into a table imported by name
    (`from .low import HOOKS` ... `HOOKS.update(f=f)`, `HOOKS[k] = f`)."""
    mods = _module_names(package)
    every = set(mods) | set(_module_names("gfxrt")) | set(_module_names("compiler"))
    return sorted(x for name, path in mods.items() for x in _registrations_in(name, path, every))


def _registrations_in(name: str, path: pathlib.Path, every: set) -> list[str]:
    out = []
    tree = ast.parse(path.read_text(), str(path))
    base = name if path.name == "__init__.py" else name.rpartition(".")[0]
    modules, imported = set(), set()  # local names bound to modules / to other modules' globals
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            pkg = base
            for _ in range(node.level - 1):
                pkg = pkg.rpartition(".")[0]
            src = (pkg + ("." + node.module if node.module else "")) if node.level else node.module
            for a in node.names:
                (modules if f"{src}.{a.name}" in every else imported).add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name.split(".")[0] in ("gfxrt", "compiler")}
    funcs = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}

    def root(e):
        while isinstance(e, ast.Subscript):
            e = e.value
        return e

    def module_attr(e):
        e = root(e)
        return isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id in modules \
            and f"{e.value.id}.{e.attr}" not in _ARGUMENTS

    def imported_table(e, values):
        e = root(e)
        return isinstance(e, ast.Name) and e.id in imported and any(
            isinstance(v, ast.Lambda) or (isinstance(v, ast.Name) and v.id in funcs) for v in values)

    for node in ast.walk(tree):
        bad = False
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            bad = any(module_attr(t) or (isinstance(t, ast.Subscript) and imported_table(t, [node.value]))
                      for t in targets)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _REGISTER:
            values = list(node.args) + [k.value for k in node.keywords]
            bad = module_attr(node.func.value) or imported_table(node.func.value, values)
        if bad:
            out.append(f"{name} line {node.lineno}: {ast.unparse(node)[:80]}")
    return out


def test_no_module_registers_into_another():
    """Layers hand things down (arguments, objects the context and the runtime own); none
    fills another module's table or sets its globals at import (no hook registries)."""
    assert _registrations("gfxrt") == [] and _registrations("compiler") == []


def test_the_registration_check_sees_one():
    import tempfile
    with tempfile.TemporaryDirectory(dir=ROOT) as d:
        pkg = pathlib.Path(d)
        (pkg / "__init__.py").write_text("")
        (pkg / "low.py").write_text("HOOKS = []\n")
        (pkg / "high.py").write_text("from . import low\nfrom .low import HOOKS\nlow.HOOKS.append(print)\n"
                                     "low.X = 1\ndef f(): pass\nHOOKS.update(f=f)\nHOOKS[0] = 2\n")
        found = _registrations(pkg.name)
    assert [f.split(":")[0] for f in found] == [f"{pkg.name}.high line {n}" for n in (3, 4, 6)]
