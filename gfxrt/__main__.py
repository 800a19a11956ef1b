"""`python -m gfxrt`: what a bug report needs (as Taichi's `ti diagnose`): versions, the OS, every
adapter wgpu sees and the one gfxrt picks, its features and the limits gfxrt uses, the offline
cache's folder and the environment variables that change gfxrt's behaviour. Paste its output into
the report. Exit status 1 when no device could be opened (the output says why)."""
from __future__ import annotations

import os
import platform
import sys

# Environment variables that change what gfxrt does or which adapter it gets (GFXRT_* all).
OTHER_ENV = ("TI_ARCH", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "VK_ICD_FILENAMES", "VK_DRIVER_FILES",
             "WGPU_BACKEND_TYPE", "WGPU_ADAPTER_NAME", "WGPU_POWER_PREFERENCE")


def _version(module: str) -> str:
    try:
        mod = __import__(module, fromlist=["__version__"])
    except Exception as e:  # noqa: BLE001 - a report shows a broken install, it does not fail on it
        return f"not importable ({type(e).__name__}: {e})"
    return str(getattr(mod, "__version__", "?"))


def _adapter_line(a) -> str:
    info = a.info
    return (f"{info.get('device') or a.summary} | backend {info.get('backend_type')}, type {info.get('adapter_type')}, "
            f"vendor {info.get('vendor')} (id {info.get('vendor_id')}), driver {info.get('description')}")


def _cache_lines() -> list[str]:
    from gfxrt.compiler.cache import default_dir
    from gfxrt.compiler.cache_store import max_bytes
    d = default_dir()
    entries = size = 0
    for base, _, files in os.walk(d):
        for f in files:
            if f.endswith(".json"):
                entries += 1
                try:
                    size += os.path.getsize(os.path.join(base, f))
                except OSError:
                    pass
    state = f"{entries} entries, {size / 2**20:.1f} MiB" if os.path.isdir(d) else "not created yet"
    try:
        bound = f"{max_bytes() / 2**20:.0f} MiB"
    except ValueError as e:
        bound = str(e)
    return [f"offline cache: {d} ({state}; size bound {bound})"]


def report() -> tuple[list[str], bool]:
    """(the report's lines, whether gfxrt opened a device)."""
    import gfxrt as gr
    from gfxrt.engine.device import WANTED_FEATURES, WANTED_LIMITS, _adapters

    lines = [f"gfxrt {gr.__version__} ({os.path.dirname(os.path.abspath(gr.__file__))})",
             f"python {sys.version.split()[0]} ({sys.executable})",
             f"numpy {_version('numpy')}, wgpu {_version('wgpu')}, "
             f"wgpu-native {_version('wgpu.backends.wgpu_native')}",
             f"os: {platform.platform()} ({platform.machine()}), {os.cpu_count()} cores", ""]
    ok = True
    try:
        adapters = _adapters()
        lines.append(f"adapters wgpu sees ({len(adapters)}; OpenGL ones only when asked for by name):")
        lines += [f"  {_adapter_line(a)}" for a in adapters] or ["  none"]
    except Exception as e:  # noqa: BLE001
        lines.append(f"adapters: listing failed: {type(e).__name__}: {e}")
    try:
        dev = gr.device()
        lines += ["", f"gfxrt's adapter: {dev.name}  (arch {dev.arch}; gr.init(adapter=NAME) or GFXRT_ADAPTER "
                      "picks another)",
                  "  features gfxrt uses: " + ", ".join(f for f in WANTED_FEATURES if f in dev.features),
                  "  missing: " + (", ".join(f for f in WANTED_FEATURES if f not in dev.features) or "none"),
                  "  limits:"]
        lines += [f"    {k}: {dev.limits[k]}" for k in WANTED_LIMITS if k in dev.limits]
        if dev.loop_cap:
            lines.append(f"  loop cap: {dev.loop_cap} loop passes per invocation (the CPU driver ends longer loops)")
    except Exception as e:  # noqa: BLE001 - the reason is what the report needs
        ok = False
        lines += ["", f"gfxrt's adapter: none: {type(e).__name__}: {e}"]
    lines.append("")
    try:
        lines += _cache_lines()
    except Exception as e:  # noqa: BLE001
        lines.append(f"offline cache: unknown ({type(e).__name__}: {e})")
    env = sorted(k for k in os.environ if k.startswith("GFXRT_")) + [k for k in OTHER_ENV if k in os.environ]
    lines.append("environment:" if env else "environment: none of GFXRT_*, " + ", ".join(OTHER_ENV) + " set")
    lines += [f"  {k}={os.environ[k]}" for k in env]
    return lines, ok


def main() -> int:
    lines, ok = report()
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
