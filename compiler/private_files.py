"""Files and folders that only this user can change: the offline cache's entries
(`cache_store`) and its key (`cache_secret`) are read and written only through this.

- A folder is used only if this user owns it and nobody else may write to it (POSIX). It is
  held open while it is used and everything in it is named relative to the open folder
  (`dir_fd`), so a path swapped meanwhile changes nothing. A folder gfxrt made for itself
  (`fix=True`) that has lost its mode is made private again (0700); a folder someone named
  is never chmod-ed: one writable by others, or not ours, is refused (`Refused`).
- A file is opened without following a symbolic link and without blocking (a FIFO planted
  there opens at once), then checked: a regular file of ours, not writable by others, not
  larger than the caller's bound. Anything else is `Refused`.
- A file is written whole or not at all: into a fresh temporary file of an unpredictable
  name (created exclusively, never through a link, mode 0600), then renamed (or linked,
  for create-if-absent) onto its name; every failure removes the temporary file.

Where the platform has no `dir_fd` (Windows), the same operations go by path and
ownership is left to the platform's ACLs.
"""
from __future__ import annotations

import os
import secrets
import stat
import time
import warnings

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_BASE = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_DIR_FD = (bool(_DIRECTORY) and os.scandir in os.supports_fd
           and all(getattr(os, f, None) in os.supports_dir_fd for f in ("open", "mkdir", "unlink", "replace", "link")))
# (Pyodide's os has no link: folders there go by path)
_POSIX = hasattr(os, "geteuid")


class Refused(OSError):
    """A file or folder that is there but must not be used (whose, its mode, its kind)."""


def temp_name(name: str) -> str:
    """A fresh, unpredictable name for a file being written as `name`."""
    return f"{name}.{secrets.token_hex(8)}.tmp"


def _check(st, what: str, deny: int) -> None:
    if _POSIX and st.st_uid != os.geteuid():
        raise Refused(f"{what} belongs to another user (uid {st.st_uid})")
    if _POSIX and st.st_mode & deny:
        raise Refused(f"{what} has mode {stat.S_IMODE(st.st_mode):o}: others may "
                      + ("write to it" if st.st_mode & deny & 0o022 else "read it"))


class Folder:
    """An open folder: its descriptor (POSIX) and path; files in it are named relative to it."""

    __slots__ = ("fd", "path")

    def __init__(self, fd: int | None, path: str):
        self.fd, self.path = fd, path

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _at(self, name: str) -> str:
        return name if self.fd is not None else os.path.join(self.path, name)

    def open(self, name: str, flags: int, mode: int = 0o600) -> int:
        return os.open(self._at(name), flags | _BASE, mode, dir_fd=self.fd)

    def unlink(self, name: str) -> None:
        os.unlink(self._at(name), dir_fd=self.fd)

    def replace(self, src: str, dst: str) -> None:
        os.replace(self._at(src), self._at(dst), src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def link(self, src: str, dst: str) -> None:
        os.link(self._at(src), self._at(dst), src_dir_fd=self.fd, dst_dir_fd=self.fd)

    def scandir(self):
        """The folder's entries (DirEntry: name, is_dir/stat without following links)."""
        return os.scandir(self.fd if self.fd is not None else self.path)

    def sub(self, name: str, *, create: bool) -> Folder:
        """A folder of gfxrt's own inside this one (made 0700; made private again if it
        is ours and lost its mode; never a link). FileNotFoundError when absent and not
        created; Refused when it is not usable."""
        if create:
            try:
                os.mkdir(self._at(name), 0o700, dir_fd=self.fd)
            except FileExistsError:
                pass
        return _open_folder(self._at(name), self.fd, os.path.join(self.path, name), follow=False, fix=True)


def open_folder(path: str, *, create: bool, fix) -> Folder:
    """The folder at `path` (a link to a folder is followed: what it reaches is checked),
    made with its missing parents when `create` (itself 0700). `fix` (a bool, or a function
    asked only when it matters): gfxrt's own folder, made private again if it is ours and
    others may read or write it; otherwise a folder others may write to is refused. Raises
    FileNotFoundError, Refused or another OSError."""
    if create:
        os.makedirs(path, 0o700, exist_ok=True)
    return _open_folder(path, None, path, follow=True, fix=fix)


def _open_folder(at: str, dir_fd: int | None, path: str, *, follow: bool, fix) -> Folder:
    if not _DIR_FD:  # by path: the same checks, not proof against a swap in between
        st = os.stat(at, follow_symlinks=follow)
        if not stat.S_ISDIR(st.st_mode):
            raise Refused(f"{path} is not a folder")
        _private(st, path, fix, lambda: os.chmod(at, 0o700))
        return Folder(None, path)
    fd = os.open(at, os.O_RDONLY | _DIRECTORY | NONBLOCK | (0 if follow else NOFOLLOW) | _BASE, dir_fd=dir_fd)
    try:
        _private(os.fstat(fd), path, fix, lambda: os.fchmod(fd, 0o700))
        return Folder(fd, path)
    except BaseException:
        os.close(fd)
        raise


def _private(st, path: str, fix, chmod) -> None:
    _check(st, path, 0)
    if _POSIX and st.st_mode & 0o077:
        if fix() if callable(fix) else fix:
            chmod()
        else:
            _check(st, path, 0o022)


def read_file(folder: Folder, name: str, *, limit: int, deny: int = 0o022, refresh_after: float | None = None):
    """(content, stat) of a regular file of ours in `folder`, at most `limit` bytes, that
    nobody else may change (`deny`: the mode bits that must be clear). `refresh_after`:
    seconds; a file last modified longer ago gets its modification time set to now (a
    cache's record of its last use). Raises FileNotFoundError, Refused or another OSError."""
    fd = folder.open(name, os.O_RDONLY | NONBLOCK | NOFOLLOW)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"{name} is not a regular file")
        _check(st, name, deny)
        if st.st_size > limit:
            raise Refused(f"{name} is larger than {limit} bytes")
        chunks, left = [], limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, max(st.st_size, 1 << 16)))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        if left <= 0:
            raise Refused(f"{name} grew past {limit} bytes")
        if refresh_after is not None and st.st_mtime < time.time() - refresh_after:
            _touch(fd, folder, name)
        return b"".join(chunks), st
    finally:
        os.close(fd)


def _touch(fd: int, folder: Folder, name: str) -> None:
    try:
        if os.utime in os.supports_fd:
            os.utime(fd)
        else:
            os.utime(folder._at(name), dir_fd=folder.fd)
    except OSError:  # the entry's last use is only a hint for trimming
        pass


def write_file(folder: Folder, name: str, data: bytes, *, replace: bool = True) -> None:
    """Write `data` as `name` in `folder`, whole or not at all (see the module's doc).
    `replace=False`: only if no `name` is there yet (FileExistsError otherwise). The file
    is not fsync-ed: a reader treats a torn file as garbage (a checked hash or key)."""
    tmp = temp_name(name)
    fd = folder.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o600)
    done = False
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)  # a deferred write error (a network file system) raises here
        if replace:
            folder.replace(tmp, name)
            done = True
        else:
            folder.link(tmp, name)
    finally:
        if not done:
            try:
                folder.unlink(tmp)
            except OSError:
                pass


_WARNED: set[str] = set()


def warn_once(message: str) -> None:
    """A RuntimeWarning, once per process for each message."""
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, RuntimeWarning, stacklevel=3)
