"""The package metadata a user reads with `pip show gfxrt` / on an index page (pyproject.toml)."""
import ast
import fnmatch
import glob
import os
import re

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



def _installed_packages() -> list[str]:
    """The top-level folders `pip install .` puts on the path: those with an __init__.py that
    match pyproject.toml's [tool.setuptools.packages.find] include patterns."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        include = tomllib.load(f)["tool"]["setuptools"]["packages"]["find"]["include"]
    return [d for d in sorted(os.listdir(ROOT)) if os.path.isfile(os.path.join(ROOT, d, "__init__.py"))
            and any(fnmatch.fnmatchcase(d, pat) for pat in include)]


def test_bench_and_experiments_run_from_the_checkout_and_nothing_installed_imports_them():
    """The benchmark suite (bench/) and the probes (experiments/) are not installed, so no
    installed module may import them (it would fail in site-packages)."""
    installed = _installed_packages()
    assert "gfxrt" in installed and not {"bench", "experiments"} & set(installed), installed
    bad = []
    for pkg in installed:
        for path in glob.glob(os.path.join(ROOT, pkg, "**", "*.py"), recursive=True):
            with open(path) as f:
                tree = ast.parse(f.read(), path)
            for node in ast.walk(tree):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
                bad += [f"{os.path.relpath(path, ROOT)}:{node.lineno} imports {n}" for n in names
                        if n.split(".")[0] in ("bench", "experiments")]
    assert bad == []
