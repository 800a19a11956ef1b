"""One installed name (docs/design.md "Layers"): the compiler is gfxrt.compiler and stays pure, the
public API loads on the first use of a name (gfxrt/__init__.py), a checkout maps its compiler/ and
kernels/ folders to gfxrt.compiler and gfxrt.kernels as the wheel does (pyproject.toml), and they
are importable under no other name. No GPU: the subprocesses import and compile, they open no device."""
import os
import pkgutil
import re
import subprocess
import sys

import gfxrt as gr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(code: str, tmp_path) -> str:
    """Run `code` as a file (kernels must be defined in one) in a fresh interpreter; its output."""
    (tmp_path / "prog.py").write_text(code)
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    r = subprocess.run([sys.executable, str(tmp_path / "prog.py")], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_the_compiler_compiles_without_the_runtime_or_wgpu(tmp_path):
    out = _run("""
import sys
from gfxrt.compiler import ArgSpec, Target, compile_kernel
from gfxrt.compiler.types import f32
def saxpy(a, x, y):
    for i in range(x.shape[0]):
        y[i] += a * x[i]
spec = compile_kernel(saxpy, [ArgSpec("a", "scalar", dtype=f32), ArgSpec("x", "ndarray", elem=f32, ndim=1),
                              ArgSpec("y", "ndarray", elem=f32, ndim=1)], Target())
assert "fn " in spec.wgsl
print(sorted(m for m in sys.modules if m == "wgpu" or m.startswith("wgpu.") or m == "gfxrt.api"))
""", tmp_path)
    assert out == "[]"


def test_import_gfxrt_alone_loads_nothing_and_a_name_loads_the_api(tmp_path):
    out = _run("""
import sys, gfxrt as gr
before = "gfxrt.api" in sys.modules or "wgpu" in sys.modules
k = gr.kernel
print(before, "gfxrt.api" in sys.modules, callable(k), gr.__version__)
""", tmp_path)
    assert out == f"False True True {gr.__version__}"


def test_a_submodule_imported_first_leaves_the_api_names(tmp_path):
    """`from gfxrt.kernel import Kernel` (or `import gfxrt.api`) before any `gr.` name: gr.kernel
    is still the decorator."""
    names = sorted(gr._SHADOWED)
    out = _run(f"""
from gfxrt.kernel import Kernel
from gfxrt.graph import Graph
import gfxrt.api
import types, gfxrt as gr
print([n for n in {names!r} if isinstance(getattr(gr, n), types.ModuleType)])
""", tmp_path)
    assert out == "[]"


def test_a_namespace_used_first_gives_complete_types(tmp_path):
    """`gr.math.vec3.ndarray(4)` (or `gr.types.struct(...).field(...)`) as a program's first gfxrt
    name: the containers of the types the namespace hands out exist (each line its own process)."""
    lines = ["import gfxrt as gr; print(gr.math.vec3.ndarray(4).shape)",
             "import gfxrt as gr; print(gr.types.struct(a=gr.types.f32).field(shape=4).shape)",
             "import gfxrt as gr; print(gr.types.matrix(2, 2, gr.types.f32).field(shape=4).shape)",
             "from gfxrt.math import ivec2; print(ivec2.field(shape=4).shape)"]
    out = _run("import subprocess, sys\n" + "\n".join(
        f"print(subprocess.run([sys.executable, '-c', {code!r}], capture_output=True, text=True).stdout.strip() "
        f"or 'failed: ' + {code!r})" for code in lines), tmp_path)
    assert out.splitlines() == ["(4,)"] * len(lines), out


def test_shadowed_names_are_exactly_the_submodules_named_like_an_api_name():
    """_SHADOWED must follow the package: a new module named like a public function joins it."""
    subs = {m.name for m in pkgutil.iter_modules(gr.__path__)}
    clash = {n for n in subs if n in dir(gr) and getattr(gr, n) is not sys.modules.get(f"gfxrt.{n}")}
    assert clash == set(gr._SHADOWED)


def test_the_checkout_folders_are_gfxrt_compiler_and_kernels_and_nothing_else(tmp_path):
    """PYTHONPATH=checkout (tests, CI, the GPU machine): gfxrt.compiler is compiler/; a top-level
    `import compiler` (the checkout on the path, as here) is an ImportError that names the right
    import, and loads no second copy of any module."""
    out = _run("""
import os, sys
import gfxrt.compiler.ir, gfxrt.kernels
print(os.path.relpath(gfxrt.compiler.__file__), os.path.relpath(gfxrt.kernels.__path__[0]))
for name in ("compiler", "kernels", "compiler.ir"):
    try:
        __import__(name)
    except ImportError as e:
        print(name, "gfxrt." + name.split(".")[0] in str(e))
print(sorted(m for m in sys.modules if m.split(".")[0] in ("compiler", "kernels")))
""", tmp_path)
    assert out.splitlines() == [os.path.join("compiler", "__init__.py") + " kernels", "compiler True", "kernels True",
                                "compiler.ir True", "[]"]


def test_nothing_imports_the_old_top_level_names():
    """`compiler` and `kernels` are gfxrt.compiler and gfxrt.kernels."""
    pat = re.compile(r"^\s*(?:from|import)\s+(?:compiler|kernels)\b", re.M)
    bad = []
    for d, dirs, files in os.walk(ROOT):
        dirs[:] = [x for x in dirs if not x.startswith(".") and x not in ("out", "__pycache__", "node_modules")]
        for f in files:
            if f.endswith(".py"):
                with open(os.path.join(d, f), encoding="utf-8") as fh:
                    bad += [f"{os.path.relpath(os.path.join(d, f), ROOT)}: {m.group(0).strip()}"
                            for m in pat.finditer(fh.read())]
    assert bad == []
