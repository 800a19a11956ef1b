"""`python -m gfxrt` prints what a bug report needs (versions, adapters, features, limits, cache)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(tmp_path, **env_extra):
    path = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
    env = dict(os.environ, PYTHONPATH=path, XDG_RUNTIME_DIR="/tmp", GFXRT_CACHE_DIR=str(tmp_path / "cache"),
               **env_extra)
    return subprocess.run([sys.executable, "-m", "gfxrt"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.gpu
def test_diagnose_names_versions_adapter_limits_and_cache(tmp_path):
    import gfxrt as gr
    proc = _run(tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = proc.stdout
    assert f"gfxrt {gr.__version__}" in out and "wgpu 0.32" in out and "numpy " in out and "python " in out
    assert f"gfxrt's adapter: {gr.device().name}" in out      # the one gfxrt picks (this process picks the same)
    assert "adapters wgpu sees" in out and "backend " in out and "type " in out
    assert "max-storage-buffer-binding-size: " in out and "features gfxrt uses: " in out
    assert f"offline cache: {tmp_path / 'cache'}" in out
    assert f"GFXRT_CACHE_DIR={tmp_path / 'cache'}" in out


@pytest.mark.gpu
def test_diagnose_reports_why_no_device_opened(tmp_path):
    proc = _run(tmp_path, GFXRT_ADAPTER="no-such-adapter-xyz")
    assert proc.returncode == 1
    assert "gfxrt's adapter: none: " in proc.stdout and "no-such-adapter-xyz" in proc.stdout
    assert "adapters wgpu sees" in proc.stdout and "offline cache: " in proc.stdout
