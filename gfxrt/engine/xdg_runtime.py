"""A private XDG_RUNTIME_DIR for the Vulkan driver, set before wgpu-native loads it.

Mesa's Vulkan drivers (lavapipe included) link the Wayland client library, which prints
`error: XDG_RUNTIME_DIR is invalid or not set in the environment.` once per driver probe
(4-6 lines when wgpu enumerates adapters) when the variable is unset or not an absolute
path, as under cron, ssh without a login session, containers and CI. gfxrt computes without
a display, so a private empty folder serves: Wayland finds no display socket there and says
nothing. A value the user set (an absolute path) is never replaced.

The folder is `<tempfile.gettempdir()>/gfxrt-runtime-<uid>`, made 0700 and used only if it
is this user's and nobody else may write to it (compiler/private_files.py checks that; a
folder gfxrt made that lost its mode is made private again). When it cannot be used, the
variable stays unset and the driver's lines come back: noise, never a folder of someone else.
The variable is set in `os.environ`, so child processes inherit it.
"""
from __future__ import annotations

import os
import sys
import tempfile

from gfxrt.compiler import private_files

VAR = "XDG_RUNTIME_DIR"


def invalid(value: str | None) -> bool:
    """What the Wayland client library rejects: unset, empty or a relative path."""
    return not value or not os.path.isabs(value)


def ensure() -> str | None:
    """Set XDG_RUNTIME_DIR to gfxrt's private folder when it is unset or invalid (Linux and
    the other Wayland platforms; nothing on Windows and macOS). Returns the folder it set, or None."""
    if os.name != "posix" or sys.platform == "darwin" or not invalid(os.environ.get(VAR)):
        return None
    path = os.path.join(tempfile.gettempdir(), f"gfxrt-runtime-{os.geteuid()}")
    try:
        with private_files.open_folder(path, create=True, fix=True):
            pass
    except OSError:  # not ours, not a folder, not writable: leave the environment alone
        return None
    os.environ[VAR] = path
    return path
