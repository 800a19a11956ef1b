"""The offline cache's entries on disk: one file per key, `<dir>/<key[:2]>/<key>.json`,
read and written through `private_files` (never through a link, never blocking on a FIFO,
whole or not at all), and trimmed to a size bound, least recently used first.

- Where: `$GFXRT_CACHE_DIR`, else `$XDG_CACHE_HOME/gfxrt`, else `~/.cache/gfxrt`.
  gfxrt makes the folder 0700 (and its subfolders, which it also makes private again
  if they lose their mode). A folder that is not the user's, or that others may write to,
  is not used: kernels compile in every process, with one warning. Only the built-in
  location is chmod-ed back to 0700 if it is the user's; a folder named by GFXRT_CACHE_DIR
  never is (it may be a folder of the user's with other uses).
- Size: `$GFXRT_CACHE_MAX_BYTES` (a number of bytes, or with a K, M or G suffix), by default
  100M, Taichi's default for its own offline cache (`offline_cache_max_size_of_files`):
  about 7,000 entries of a 20-line kernel (about 15 KB each). A store checks the total
  with probability (entry size) / (a tenth of the bound), so about once per tenth of the
  bound written, whichever processes write it, at no cost to the others; a check that
  finds the cache over its bound removes the least recently used entries until it is
  under three quarters of it (Taichi's default cleaning factor, 0.25). An entry larger
  than a quarter of the bound is not written. A hit records the use as the entry's
  modification time (at most once an hour per entry: a hit rarely writes).
- Several processes at once: names are unique per write and renames atomic; a check
  tolerates entries vanishing under it (another process trimming); a temporary file is
  removed only when it is an hour old (a write takes milliseconds: its writer died).
  Only files named as entries or their temporary files are ever removed, in subfolders
  named as gfxrt names them: a cache folder pointed at a folder with other files keeps them.
"""
from __future__ import annotations

import os
import random
import re
import stat
import time
from functools import lru_cache

from .private_files import Folder, Refused, open_folder, read_file, warn_once, write_file

DEFAULT_MAX_BYTES = "100M"
CHECK_EVERY = 0.1     # fraction of the bound written between size checks, on average
KEEP = 0.75           # a trim keeps the most recently used entries up to this fraction of the bound
REFRESH_AFTER = 3600  # seconds: a hit on an entry last used longer ago records its use
STALE_TEMP = 3600     # seconds: a temporary file this old belongs to a writer that died

_SUB = re.compile(r"[0-9a-f]{2}\Z")
_ENTRY = re.compile(r"[0-9a-f]{32}\.(json|pkl)\Z")          # .pkl: entries of gfxrt before 0.1 (never read)
_TEMP = re.compile(r"[0-9a-f]{32}\.(json|pkl)\.[0-9a-f]+\.tmp\Z")


def _builtin_dir() -> str:
    base = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(base):  # unset, or relative (the XDG spec says: ignore it)
        base = os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gfxrt")


def default_dir() -> str:
    """The cache folder (see the module's doc)."""
    return os.environ.get("GFXRT_CACHE_DIR") or _builtin_dir()


def max_bytes() -> int:
    """The cache's size bound in bytes (`GFXRT_CACHE_MAX_BYTES`)."""
    return _parse_size(os.environ.get("GFXRT_CACHE_MAX_BYTES") or DEFAULT_MAX_BYTES)


@lru_cache(maxsize=8)
def _parse_size(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+)\s*([kmg]?)i?b?\s*", text, re.I)
    n = int(m.group(1)) << (10 * " kmg".index(m.group(2).lower() or " ")) if m else 0
    if n <= 0:
        raise ValueError(f"GFXRT_CACHE_MAX_BYTES={text!r}: expected a positive number of bytes, "
                         "optionally with a K, M or G suffix (such as 500M)")
    return n


def _open_root(directory: str, *, create: bool) -> Folder:
    try:
        return open_folder(directory, create=create,
                           fix=lambda: os.path.abspath(directory) == os.path.abspath(_builtin_dir()))
    except Refused as e:
        warn_once(f"gfxrt's offline cache is off for {directory}: {e}. Make it private (chmod 700) or set "
                  "GFXRT_CACHE_DIR to a folder of yours (docs/language.md, Offline cache).")
        raise


def read(directory: str, key: str) -> bytes | None:
    """The entry's bytes, or None (absent, or anything that is not a regular file of ours)."""
    limit = max_bytes() // 4
    try:
        with _open_root(directory, create=False) as root, root.sub(key[:2], create=False) as sub:
            return read_file(sub, key + ".json", limit=limit, refresh_after=REFRESH_AFTER)[0]
    except OSError:
        return None


def write(directory: str, key: str, data: bytes) -> None:
    """Store an entry (errors, such as a full or read-only disk, only cost a later compile)."""
    bound = max_bytes()
    if len(data) > bound // 4:
        return
    try:
        with _open_root(directory, create=True) as root:
            with root.sub(key[:2], create=True) as sub:
                write_file(sub, key + ".json", data)
            if random.random() * CHECK_EVERY * bound < len(data):
                trim(root, bound)
    except OSError:
        pass


def trim(root: Folder, bound: int) -> int:
    """Remove least recently used entries (and dead writers' temporary files) while the
    cache is over `bound`, down to KEEP of it. Returns the bytes left (as this process saw them)."""
    entries, total, now = [], 0, time.time()
    with root.scandir() as it:
        subs = [e.name for e in it if _SUB.match(e.name)]
    for s in subs:
        try:
            sub = root.sub(s, create=False)
        except OSError:  # vanished, or not a private folder of ours: not the cache's
            continue
        with sub, sub.scandir() as it:
            for e in it:
                entry, temp = _ENTRY.match(e.name), _TEMP.match(e.name)
                if not (entry or temp):
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                except OSError:
                    continue
                if not stat.S_ISREG(st.st_mode):
                    continue
                if temp and st.st_mtime < now - STALE_TEMP:
                    _remove(sub, e.name)
                    continue
                total += st.st_size
                if entry:
                    entries.append((st.st_mtime, st.st_size, s, e.name))
    if total <= bound:
        return total
    entries.sort()
    for _, size, s, name in entries:
        if total <= KEEP * bound:
            break
        _remove(root, s + "/" + name)  # the subfolder was checked above: ours, not a link
        total -= size
    return total


def _remove(folder: Folder, name: str) -> None:
    try:
        folder.unlink(name)
    except OSError:  # already gone (another process trimming), or not removable: not ours to force
        pass
