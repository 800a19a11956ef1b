"""The package metadata a user reads with `pip show gfxrt` / on an index page (pyproject.toml)."""
import ast
import glob
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _project() -> dict:
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]


def test_metadata_has_classifiers_for_python_os_topic_and_status():
    p = _project()
    cls = p.get("classifiers", [])
    assert any(c.startswith("Development Status :: ") for c in cls)
    assert "Operating System :: OS Independent" in cls
    assert any(c.startswith("Topic :: ") for c in cls)
    assert p.get("description") and p.get("readme") and p.get("keywords")
    # each Python version named is one requires-python admits, and the oldest admitted is named
    oldest = re.fullmatch(r">=\s*3\.(\d+)", p["requires-python"]).group(1)
    minors = [int(c.rsplit(".", 1)[1]) for c in cls if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    assert minors and min(minors) == int(oldest)


def test_license_metadata_matches_the_repository():
    """A license is stated exactly when the repository has a license file (none is invented)."""
    p = _project()
    files = [f for f in glob.glob(os.path.join(ROOT, "*")) if re.match(r"(LICEN[CS]E|COPYING)", os.path.basename(f))]
    stated = "license" in p or "license-files" in p or any(c.startswith("License") for c in p.get("classifiers", []))
    assert stated == bool(files), f"license files {files}, license stated in pyproject.toml: {stated}"


def _packages() -> dict[str, str]:
    """The packages `pip install .` installs (pyproject.toml's [tool.setuptools]), each with the
    folder it comes from: package-dir maps compiler/ to gfxrt.compiler, kernels/ to gfxrt.kernels."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        st = tomllib.load(f)["tool"]["setuptools"]
    dirs = st.get("package-dir", {})
    out = {}
    for pkg in st["packages"]:
        top = max((p for p in dirs if pkg == p or pkg.startswith(p + ".")), key=len, default=None)
        out[pkg] = os.path.join(dirs[top], *pkg[len(top):].split(".")[1:]) if top else pkg.replace(".", os.sep)
    return out


def test_one_name_is_installed_and_every_package_of_its_folders_is():
    """Only `gfxrt` goes on the path; the compiler and the kernel library are gfxrt.compiler and
    gfxrt.kernels, and every folder with an __init__.py below them is listed (none left out)."""
    pkgs = _packages()
    assert {p.split(".")[0] for p in pkgs} == {"gfxrt"}
    assert pkgs["gfxrt.compiler"] == "compiler" and pkgs["gfxrt.kernels"] == "kernels"
    roots = {pkgs[p] for p in ("gfxrt", "gfxrt.compiler", "gfxrt.kernels")}
    found = {os.path.relpath(d, ROOT) for r in roots for d, _, files in os.walk(os.path.join(ROOT, r))
             if "__init__.py" in files}
    assert found == set(pkgs.values())


def test_bench_and_experiments_run_from_the_checkout_and_nothing_installed_imports_them():
    """The benchmark suite (bench/) and the probes (experiments/) are not installed, so no
    installed module may import them (it would fail in site-packages)."""
    bad = []
    for folder in _packages().values():
        for path in glob.glob(os.path.join(ROOT, folder, "*.py")):
            with open(path) as f:
                tree = ast.parse(f.read(), path)
            for node in ast.walk(tree):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
                bad += [f"{os.path.relpath(path, ROOT)}:{node.lineno} imports {n}" for n in names
                        if n.split(".")[0] in ("bench", "experiments")]
    assert bad == []


def test_the_wheel_holds_gfxrt_alone_with_the_compiler_and_kernels_inside(tmp_path):
    """Build the wheel (setuptools' PEP 517 hook, as `pip wheel --no-build-isolation` calls it, on a
    copy of the sources so that no build/ is left behind): one top-level name, every file of
    compiler/ and kernels/ (the grammar included) under gfxrt/."""
    pytest.importorskip("setuptools")
    if not (importlib.util.find_spec("setuptools.command.bdist_wheel") or importlib.util.find_spec("wheel")):
        pytest.skip("this setuptools builds no wheel without the `wheel` package")
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(ROOT, name), src / name)
    for folder in ("gfxrt", "compiler", "kernels"):
        shutil.copytree(os.path.join(ROOT, folder), src / folder, ignore=shutil.ignore_patterns("__pycache__"))
    r = subprocess.run([sys.executable, "-c", "import sys; from setuptools import build_meta as b; "
                        "print(b.build_wheel(sys.argv[1]))", str(tmp_path)],
                       cwd=src, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    with zipfile.ZipFile(tmp_path / r.stdout.split()[-1]) as z:
        names = z.namelist()
        top_level = z.read(next(n for n in names if n.endswith(".dist-info/top_level.txt"))).decode().split()
    assert top_level == ["gfxrt"]
    assert {n.split("/")[0] for n in names} == {"gfxrt", next(n.split("/")[0] for n in names if ".dist-info/" in n)}
    want = {"gfxrt/" + os.path.relpath(os.path.join(d, f), ROOT).replace(os.sep, "/")
            for folder in ("compiler", "kernels") for d, _, files in os.walk(os.path.join(ROOT, folder))
            for f in files if f.endswith((".py", ".lark"))}
    assert "gfxrt/compiler/ir.lark" in want and want <= set(names), sorted(want - set(names))
