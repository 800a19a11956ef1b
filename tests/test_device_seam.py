"""The device seam (gfxrt/engine/device_api.py): each implementation of the device calls provides
every name of the DeviceCalls interface, and the engine reaches them only through backend.py."""
from __future__ import annotations

import ast
import pathlib

import pytest

from gfxrt.engine import backend, device_api, ffi

ENGINE = pathlib.Path(device_api.__file__).parent
INTERFACE = set(device_api.DeviceCalls.__annotations__) | {
    n for n in vars(device_api.DeviceCalls) if not n.startswith("_")}


def top_level_names(path: pathlib.Path) -> set[str]:
    """Names a module defines or imports at top level (parsed: webgpu.py imports only under Pyodide)."""
    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {a.asname or a.name for a in node.names}
    return names


def test_interface_is_not_empty():
    assert {"create_encoder", "dispatch", "finish", "MapRequest", "translate"} <= INTERFACE


def test_wgpu_native_calls_are_complete():
    assert INTERFACE - set(dir(ffi)) == set()


def test_browser_calls_are_complete():
    assert INTERFACE - top_level_names(ENGINE / "webgpu.py") == set()


def test_desktop_selects_wgpu_native():
    assert backend.IN_BROWSER is False and backend.calls is ffi


def test_engine_imports_calls_only_through_the_backend():
    """No engine module but backend.py imports ffi or webgpu itself (one seam, chosen once)."""
    bad = []
    for path in sorted(ENGINE.parent.rglob("*.py")):
        if path.name in ("backend.py", "ffi.py", "webgpu.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                mods = [node.module or ""] + [f"{node.module or ''}.{a.name}" for a in node.names]
                if any(m.split(".")[-1] in ("ffi", "webgpu") and "wgpu_native" not in m for m in mods):
                    bad.append(f"{path.relative_to(ENGINE.parent)}:{node.lineno}")
    assert bad == []


def test_browser_refuses_pipeline_threads(monkeypatch):
    """A browser tab starts no threads: the knob says so before anything runs (docs/browser.md)."""
    from gfxrt.engine import init_options
    assert init_options.read_env({"GFXRT_PIPELINE_THREADS": "4"}).pipeline_threads == 4
    monkeypatch.setattr(init_options, "IN_BROWSER", True)
    assert init_options.read_env({}).pipeline_threads == 1
    with pytest.raises(ValueError, match="cannot start threads"):
        init_options.read_env({"GFXRT_PIPELINE_THREADS": "4"})
