"""The per-user key that signs offline-cache entries (an HMAC-SHA256 of each entry, see
`cache`), so that only entries this user's gfxrt wrote are trusted: whoever can write the
cache folder (a restored CI cache, a shared home, a GFXRT_CACHE_DIR several users point
at) cannot change what a kernel computes, since an entry signed with another key is a miss.

The key is 32 random bytes, written as 64 hex digits in `$GFXRT_CACHE_KEY_FILE`, else
`$XDG_CONFIG_HOME/gfxrt/cache-key`, else `~/.config/gfxrt/cache-key`: outside the cache
folder, so that copying or restoring a cache never carries it. It is made at the first
store (mode 0600, in a folder made 0700; created atomically, so processes starting together
agree on one key) and read once per process. A key file that is not a regular file of
ours, that others may read or write, or that does not hold a key, or a folder around it that
others may write to, is not used: the disk cache is then off for the process (one warning).
Deleting the file resets the key: every entry written before is a miss and is rewritten.
"""
from __future__ import annotations

import os
import threading

from .private_files import Refused, open_folder, read_file, warn_once, write_file

KEY_BYTES = 32
_KEYS: dict[str, bytes | None] = {}  # key file -> its key (None: unusable), read once per process
_LOCK = threading.Lock()


def _unlock_in_child() -> None:  # a child forked while another thread held the lock must not wait forever
    global _LOCK
    _LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_unlock_in_child)


def _builtin_path() -> str:
    base = os.environ.get("XDG_CONFIG_HOME", "")
    if not os.path.isabs(base):  # unset, or relative (the XDG spec says: ignore it)
        base = os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "gfxrt", "cache-key")


def key_path() -> str:
    """Where this user's key lives (see the module's doc)."""
    return os.environ.get("GFXRT_CACHE_KEY_FILE") or _builtin_path()


def secret() -> bytes | None:
    """This user's key, made on first use; None when it cannot be made or read safely
    (then nothing is read from or written to the disk cache)."""
    path = key_path()
    key = _KEYS.get(path, False)
    if key is not False:
        return key
    with _LOCK:
        if path not in _KEYS:
            try:
                _KEYS[path] = _load_or_make(path)
            except (OSError, ValueError) as e:
                _KEYS[path] = None
                warn_once(f"gfxrt's offline cache is off in this process: its key file {path} cannot be used "
                          f"({e}). Delete the file to make a new key, or set GFXRT_CACHE_KEY_FILE "
                          "(docs/language.md, Offline cache).")
        return _KEYS[path]


def _load_or_make(path: str) -> bytes:
    path = os.path.abspath(path)
    folder_path, name = os.path.split(path)
    with open_folder(folder_path, create=True, fix=path == os.path.abspath(_builtin_path())) as folder:
        for _ in range(3):
            try:
                text, _ = read_file(folder, name, limit=4 * KEY_BYTES, deny=0o077)
            except FileNotFoundError:
                try:
                    write_file(folder, name, (os.urandom(KEY_BYTES).hex() + "\n").encode(), replace=False)
                except FileExistsError:
                    pass  # another process made it first: use theirs
                continue
            try:
                key = bytes.fromhex(text.decode("ascii").strip())
            except (UnicodeDecodeError, ValueError):
                key = b""
            if len(key) != KEY_BYTES:
                raise ValueError(f"it does not hold a key of {KEY_BYTES} bytes in hex")
            return key
    raise Refused(f"{path} keeps vanishing")
