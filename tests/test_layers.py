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

# The core, in layer order (each module may import only modules listed before it): what a
# launch, a copy, a Tape and a graph go through. The Taichi-compatibility modules (snode,
# structs, types, rng, taichi_*, lang, the gr.ad namespace, ...) sit above it: the core
# imports none of them, and the whole package has no cycle either.
CORE = (
    "errors", "tracebacks", "ffi", "device_api", "memory", "returns", "printing", "torch_io", "messages",
    "xdg_runtime", "arch", "device", "lock", "threadstate",
    "init_options", "blit_kernels", "blitter", "status", "program", "recorder", "launch", "runtime",
    "context", "hostaccess", "ndarray", "field", "constarray", "copy", "oop", "tape_check", "autodiff",
    "ad_custom", "adstack", "kernel", "graph", "profiler",
)


def _module_names(package: str) -> dict[str, pathlib.Path]:
    out = {}
    for p in sorted((ROOT / package).rglob("*.py")):
        parts = p.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


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
                if node.module is None:  # `from . import x`: the submodule x, else the package
                    for a in node.names:
                        sub = f"{target}.{a.name}"
                        edges.setdefault(sub if sub in mods else target, node.lineno)
                else:
                    edges.setdefault(target, node.lineno)
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


def test_core_modules_exist():
    names = _module_names("gfxrt")
    assert [m for m in CORE if f"gfxrt.{m}" not in names] == []


def test_core_imports_point_down():
    """Each core module imports only core modules below it in CORE's order."""
    graph = imports("gfxrt")
    rank = {f"gfxrt.{m}": i for i, m in enumerate(CORE)}
    bad = []
    for m in rank:
        for target, line in graph[m].items():
            if target.split(".")[0] != "gfxrt":
                continue
            if target not in rank or rank[target] >= rank[m]:
                bad.append(f"{m} line {line} imports {target}")
    assert bad == [], "upward or sideways imports in the core:\n  " + "\n  ".join(bad)


def test_core_is_acyclic():
    graph = imports("gfxrt")
    cycle = _find_cycle(graph, [f"gfxrt.{m}" for m in CORE])
    assert cycle is None, "import cycle in the core: " + _describe(graph, cycle)


def test_package_is_acyclic():
    """Above the core too (snode, structs, types, rng, the Taichi layer): no cycle, so every
    import, function-local ones included, points down some order of the modules."""
    graph = imports("gfxrt")
    cycle = _find_cycle(graph, graph)
    assert cycle is None, "import cycle in gfxrt: " + _describe(graph, cycle)


def test_only_the_package_imports_its_init():
    """`from . import name` of a re-exported name (not a submodule) would import gfxrt/__init__
    from below; core and API modules name the submodule they need instead."""
    graph = imports("gfxrt")
    top = ("gfxrt", "gfxrt.__main__")  # `python -m gfxrt` runs above the package, as a user's script does
    bad = [f"{m} line {edges['gfxrt']}" for m, edges in graph.items() if m not in top and "gfxrt" in edges]
    assert bad == []


def test_compiler_imports_no_gfxrt_or_wgpu():
    """compiler/ is pure: testable without a GPU, usable without the runtime."""
    bad = [f"{m} line {line} imports {t}" for m, edges in imports("compiler").items()
           for t, line in edges.items() if t.split(".")[0] in ("gfxrt", "wgpu")]
    assert bad == []


def test_the_tool_sees_function_local_imports():
    """The parser counts imports inside functions and `from . import x` as submodule x."""
    graph = imports("gfxrt")
    assert "gfxrt.ffi" in graph["gfxrt.launch"]              # module level, `from . import ffi`
    assert "gfxrt.field" in graph["gfxrt.kernel"]            # only inside functions
    assert _find_cycle({"a": {"b": 1}, "b": {"a": 2}}, "ab") in (["a", "b", "a"], ["b", "a", "b"])


def test_compiler_has_no_cycle_outside_codegen():
    """The frontend, the pipeline and the offline cache import one way (frontend <- pipeline ->
    cache); codegen's three WGSL helper modules are the one cycle left in compiler/."""
    graph = imports("compiler")
    assert _find_cycle(graph, [m for m in graph if not m.startswith("compiler.codegen.")]) is None
