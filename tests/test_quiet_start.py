"""Issue 22 item 1, a quiet start: no Wayland noise without XDG_RUNTIME_DIR (gfxrt/engine/xdg_runtime.py),
one `[gfxrt] Starting on ...` line per device opened that the log level silences (gfxrt/engine/messages.py), and
the arch fallback's warning at the user's line."""
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import pytest

import gfxrt as gr
from gfxrt.engine import messages as log
from gfxrt.engine import xdg_runtime

ROOT = str(Path(__file__).parents[1])


def _other_arch():
    """An arch no adapter of this machine's current device serves (its fallback warns)."""
    return gr.dx12 if str(gr.device().adapter.info.get("backend_type", "")).lower() == "metal" else gr.metal


def _run(script: str, tmp_path, **env_set):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(script))
    env = {k: v for k, v in os.environ.items() if k not in ("XDG_RUNTIME_DIR", "GFXRT_LOG_LEVEL", "TI_LOG_LEVEL")}
    env.update(PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p), **env_set)
    r = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return path, r


def test_a_plain_run_is_quiet_but_names_its_device_once(tmp_path):
    arch = _other_arch().name
    path, r = _run(f"""
        import warnings
        import numpy as np
        import gfxrt as gr
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            gr.init(arch=gr.{arch})  # line 7: opens the device; no such adapter: a warned fallback
            @gr.kernel
            def k(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
                for i in range(x.shape[0]):
                    x[i] = i
            a = np.zeros(4, np.float32)
            k(a)
            gr.init(arch=gr.{arch}, debug=True)  # line 14: the same request keeps the device: no line
        print(a.tolist())
        for w in seen:
            print("warning", w.filename, w.lineno, w.message)
    """, tmp_path)
    assert "XDG_RUNTIME_DIR" not in r.stderr, r.stderr  # the driver's Wayland library stayed quiet
    started = [ln for ln in r.stderr.splitlines() if ln.startswith("[gfxrt] Starting on ")]
    assert len(started) == 1, r.stderr
    assert "[gfxrt]" not in r.stdout, r.stdout  # stdout is the program's own
    out = r.stdout.splitlines()
    assert out[0] == "[0.0, 1.0, 2.0, 3.0]"
    fallbacks = [ln.split(" falling back")[0] for ln in out if ln.startswith("warning") and "falling back" in ln]
    assert fallbacks == [f"warning {path} 7 arch [gr.{arch}] is not supported here,"], r.stdout


@pytest.mark.parametrize("env, call", [({"GFXRT_LOG_LEVEL": "warn"}, "gr.init()"),
                                       ({"TI_LOG_LEVEL": "error"}, "gr.init()"),
                                       ({"GFXRT_LOG_LEVEL": "info"}, "gr.init(log_level=gr.WARN)")])
def test_the_log_level_silences_the_device_line(tmp_path, env, call):
    _, r = _run(f"import gfxrt as gr\n{call}\nprint(gr.device().name)\n", tmp_path, XDG_RUNTIME_DIR="/tmp", **env)
    assert "[gfxrt]" not in r.stderr + r.stdout, r.stderr


def test_log_levels(monkeypatch):
    from gfxrt.engine.init_options import read_env

    def resolve(requested=None):  # as gr.init does: the argument, else the variables it read
        return log.resolve(requested, read_env().log_level)
    monkeypatch.delenv("GFXRT_LOG_LEVEL", raising=False)
    monkeypatch.delenv("TI_LOG_LEVEL", raising=False)
    assert resolve() == "info" and resolve("WARNING") == "warn" and resolve(gr.ERROR) == "error"
    monkeypatch.setenv("TI_LOG_LEVEL", "trace")
    assert resolve() == "trace"
    monkeypatch.setenv("GFXRT_LOG_LEVEL", "Error")  # gfxrt's variable first, the argument before both
    assert resolve() == "error" and resolve("debug") == "debug"
    monkeypatch.setenv("GFXRT_LOG_LEVEL", "loud")
    with pytest.raises(ValueError, match="GFXRT_LOG_LEVEL must be one of"):
        resolve()
    with pytest.raises(ValueError, match="log_level must be one of"):
        gr.init(log_level="verbose")


def test_the_fallback_warning_points_at_the_callers_line(monkeypatch):
    """gr.init(arch=...) with no adapter of that arch: the warning names this file and line, not
    gfxrt's frames (the call goes init -> lock -> device choice -> arch.choose). Only the current
    device's adapter is offered, so the fallback keeps the device (a GPU machine would otherwise
    fall back to its CPU adapter, and the other test files' arrays would lose their device)."""
    arch, dev = _other_arch(), gr.device()
    monkeypatch.setattr(sys.modules["gfxrt.engine.device"], "_adapters", lambda gl=False: [dev.adapter])
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            line = sys._getframe().f_lineno + 1
            gr.init(arch=arch)
        hits = [w for w in seen if "falling back" in str(w.message)]
        assert [(w.filename, w.lineno) for w in hits] == [(__file__, line)], [(w.filename, w.lineno) for w in seen]
        assert gr.device() is dev
    finally:
        gr.init()


def _private_dir(tmp_path, monkeypatch, value):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    if value is None:
        monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    else:
        monkeypatch.setenv("XDG_RUNTIME_DIR", value)
    return tmp_path / f"gfxrt-runtime-{os.geteuid()}"


@pytest.mark.skipif(os.name != "posix" or sys.platform == "darwin", reason="Wayland platforms only")
@pytest.mark.parametrize("value", [None, "", "relative/dir"])
def test_an_unset_or_invalid_runtime_dir_becomes_a_private_folder(tmp_path, monkeypatch, value):
    want = _private_dir(tmp_path, monkeypatch, value)
    assert xdg_runtime.ensure() == str(want) == os.environ["XDG_RUNTIME_DIR"]
    st = os.stat(want)
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.geteuid()
    os.chmod(want, 0o777)  # ours but opened up: made private again
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert xdg_runtime.ensure() == str(want) and stat.S_IMODE(os.stat(want).st_mode) == 0o700


@pytest.mark.skipif(os.name != "posix", reason="POSIX")
def test_a_users_runtime_dir_and_an_unusable_folder_are_left_alone(tmp_path, monkeypatch):
    want = _private_dir(tmp_path, monkeypatch, "/run/user/somewhere")
    assert xdg_runtime.ensure() is None and os.environ["XDG_RUNTIME_DIR"] == "/run/user/somewhere"
    assert not want.exists()
    if sys.platform == "darwin":
        return
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    want.write_text("not a folder")  # planted: refused, the variable stays unset
    assert xdg_runtime.ensure() is None and "XDG_RUNTIME_DIR" not in os.environ
