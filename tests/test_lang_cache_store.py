"""The offline cache's files (compiler/cache_store.py, cache_secret.py, private_files.py):
nothing planted in the folder is followed, blocks or is trusted, writes leave nothing
half-done, folders others may write are not used, entries are signed with a per-user key,
and the cache stays under its size bound (least recently used entries go first)."""
import errno
import hashlib
import hmac
import json
import os
import stat
import subprocess
import sys
import threading
import time
import warnings

import pytest
from gfxrt.compiler import ArgSpec, Target, compile_kernel
from gfxrt.compiler.cache import kernel_key
from gfxrt.compiler.types import f32

from gfxrt import compiler

TARGET = Target(frozenset({"immediates", "shader-float32-atomic"}), 128)
ARGS = [ArgSpec("x", "ndarray", elem=f32, ndim=1)]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def kern(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * 3.0 + 1.0


def scaled(x, k):
    for i in range(x.shape[0]):
        x[i] = x[i] * k


@pytest.fixture(autouse=True)
def own_key(tmp_path, monkeypatch):
    """Each test signs with a key of its own and warns afresh."""
    monkeypatch.setenv("GFXRT_CACHE_KEY_FILE", str(tmp_path / "config" / "cache-key"))
    monkeypatch.delenv("GFXRT_CACHE_MAX_BYTES", raising=False)
    try:
        from gfxrt.compiler import private_files
        monkeypatch.setattr(private_files, "_WARNED", set())
    except ImportError:  # gfxrt before issue 21 (these tests then fail on their assertions)
        pass


@pytest.fixture(params=["dir_fd", "by_path"])
def fs_mode(request, monkeypatch):
    """Folders held open (POSIX) or named by path (platforms without dir_fd, such as Windows)."""
    if request.param == "by_path":
        monkeypatch.setattr("gfxrt.compiler.private_files._DIR_FD", False)
    return request.param


def _compile(monkeypatch, d, func=kern, args=ARGS):
    """(spec, whether it was lowered: a miss)."""
    calls, real = [], compiler.pipeline.frontend
    monkeypatch.setattr(compiler.pipeline, "frontend", lambda *a, **k: calls.append(1) or real(*a, **k))
    spec = compile_kernel(func, args, TARGET, directory=d)
    monkeypatch.setattr(compiler.pipeline, "frontend", real)
    return spec, bool(calls)


def _entry_path(d, func=kern, args=ARGS):
    key = kernel_key(func, args, TARGET, None)
    return os.path.join(d, key[:2], key + ".json")


def _files(d):
    return sorted(os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs)


def _runs_right(spec):
    assert "fn task0" in spec.wgsl and "3.0f" in spec.wgsl


# -- item 1: links -------------------------------------------------------------------------------
def test_a_link_at_the_old_temporary_name_is_not_followed(tmp_path, monkeypatch, fs_mode):
    d = str(tmp_path / "cache")
    path = _entry_path(d)
    os.makedirs(os.path.dirname(path), 0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, f"{path}.{os.getpid()}.tmp")  # the name gfxrt used to write through
    _runs_right(_compile(monkeypatch, d)[0])
    assert victim.read_text() == "precious"
    assert stat.S_ISREG(os.lstat(path).st_mode)
    assert _compile(monkeypatch, d)[1] is False  # and the entry is used


def test_a_taken_temporary_name_is_never_opened_through(tmp_path, monkeypatch, fs_mode):
    """Temporary names are unpredictable; one that is taken anyway (a link planted there) is
    created exclusively, so the write fails instead of following it."""
    d = str(tmp_path / "cache")
    path = _entry_path(d)
    os.makedirs(os.path.dirname(path), 0o700)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    os.symlink(victim, path + ".taken.tmp")
    with pytest.MonkeyPatch.context() as m:
        m.setattr("gfxrt.compiler.private_files.temp_name", lambda name: name + ".taken.tmp")
        _runs_right(_compile(monkeypatch, d)[0])
    assert victim.read_text() == "precious" and not os.path.lexists(path)
    _compile(monkeypatch, d)
    assert stat.S_ISREG(os.lstat(path).st_mode)


def test_a_link_at_an_entry_is_a_miss_and_is_replaced(tmp_path, monkeypatch, fs_mode):
    d = str(tmp_path / "cache")
    _compile(monkeypatch, d)
    path = _entry_path(d)
    elsewhere = tmp_path / "elsewhere.json"
    os.replace(path, elsewhere)  # a valid entry of ours, reached through a link
    before = elsewhere.read_bytes()
    os.symlink(elsewhere, path)
    spec, missed = _compile(monkeypatch, d)
    assert missed
    _runs_right(spec)
    assert stat.S_ISREG(os.lstat(path).st_mode) and elsewhere.read_bytes() == before


# -- item 2: FIFOs, folders and oversized files at an entry's name -------------------------------------
def test_a_fifo_at_an_entry_is_a_miss_not_a_hang(tmp_path, monkeypatch, fs_mode):
    d = str(tmp_path / "cache")
    path = _entry_path(d)
    os.makedirs(os.path.dirname(path), 0o700)
    os.mkfifo(path, 0o600)
    out = []
    worker = threading.Thread(target=lambda: out.append(compile_kernel(kern, ARGS, TARGET, directory=d)), daemon=True)
    worker.start()
    worker.join(60)
    hung = worker.is_alive()
    if hung:  # release it: a writer opening the FIFO ends the reader's wait
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        worker.join(60)
    assert not hung, "the first compile blocked on a FIFO planted at its entry"
    _runs_right(out[0])
    assert stat.S_ISREG(os.lstat(path).st_mode)  # replaced by the entry


def test_a_folder_at_an_entry_is_a_miss_and_leaves_nothing(tmp_path, monkeypatch, fs_mode):
    d = str(tmp_path / "cache")
    path = _entry_path(d)
    os.makedirs(path, 0o700)
    for _ in range(2):
        spec, missed = _compile(monkeypatch, d)
        assert missed
        _runs_right(spec)
    assert _files(d) == []


def test_an_entry_over_the_read_bound_is_a_miss(tmp_path, monkeypatch):
    """Entries are read only up to a quarter of the cache's size bound (and larger ones are
    not written)."""
    d = str(tmp_path / "cache")
    _compile(monkeypatch, d)
    size = os.path.getsize(_entry_path(d))
    monkeypatch.setenv("GFXRT_CACHE_MAX_BYTES", str(4 * (size - 1)))
    assert _compile(monkeypatch, d)[1] is True
    os.remove(_entry_path(d))
    _compile(monkeypatch, d)
    assert not os.path.exists(_entry_path(d))
    monkeypatch.setenv("GFXRT_CACHE_MAX_BYTES", str(4 * size))
    _compile(monkeypatch, d)
    assert _compile(monkeypatch, d)[1] is False


# -- item 3: whose folder, and its mode -------------------------------------------------------
def _caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [str(x.message) for x in w if issubclass(x.category, RuntimeWarning)]


@pytest.mark.parametrize("mode", [0o777, 0o770])
def test_a_named_folder_others_may_write_is_not_used(tmp_path, monkeypatch, mode):
    d = str(tmp_path / "shared")
    os.mkdir(d)
    os.chmod(d, mode)
    messages = _caught(lambda: [_runs_right(_compile(monkeypatch, d)[0]) for _ in range(2)])
    assert len(messages) == 1 and d in messages[0] and "offline cache is off" in messages[0]
    assert _files(d) == [] and stat.S_IMODE(os.stat(d).st_mode) == mode  # never chmod-ed: not gfxrt's


def test_the_builtin_folder_is_made_private_again(tmp_path, monkeypatch):
    import gfxrt.compiler.cache as cache
    monkeypatch.delenv("GFXRT_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    d = cache.default_dir()
    assert d == str(tmp_path / "xdg" / "gfxrt")
    os.makedirs(d)
    os.chmod(d, 0o777)
    assert _caught(lambda: _compile(monkeypatch, d)) == []
    assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    assert _compile(monkeypatch, d)[1] is False


def test_a_subfolder_others_may_write_is_made_private_again(tmp_path, monkeypatch):
    d = str(tmp_path / "cache")
    sub = os.path.dirname(_entry_path(d))
    os.makedirs(sub, 0o700)
    os.chmod(sub, 0o777)
    _compile(monkeypatch, d)
    assert stat.S_IMODE(os.stat(sub).st_mode) == 0o700 and os.path.isfile(_entry_path(d))


def test_a_folder_of_another_user_is_not_used(tmp_path, monkeypatch):
    d = str(tmp_path / "theirs")
    _compile(monkeypatch, str(tmp_path / "mine"))  # this user's key is made and read
    os.mkdir(d, 0o700)
    uid = os.geteuid() + 1  # everything on disk now belongs to "another user"
    monkeypatch.setattr(os, "geteuid", lambda: uid)
    monkeypatch.setattr(os, "getuid", lambda: uid)
    messages = _caught(lambda: [_runs_right(_compile(monkeypatch, d)[0]) for _ in range(2)])
    assert len(messages) == 1 and "another user" in messages[0]
    assert _files(d) == []


# -- item 4: failed writes ---------------------------------------------------------------------
@pytest.mark.parametrize("fails", ["write", "replace"])
def test_a_full_disk_leaves_no_temporary_file(tmp_path, monkeypatch, fails):
    d = str(tmp_path / "cache")
    _compile(monkeypatch, str(tmp_path / "other"))  # the key is made before the disk fills up
    real = getattr(os, fails)

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, fails, full)
    for _ in range(2):
        _runs_right(compile_kernel(kern, ARGS, TARGET, directory=d))
    monkeypatch.setattr(os, fails, real)
    assert _files(d) == []
    _compile(monkeypatch, d)
    assert _files(d) == [os.path.relpath(_entry_path(d), d)]


# -- item 5: entries signed with this user's key ----------------------------------------------------
def test_the_key_is_private_and_outside_the_cache(tmp_path, monkeypatch):
    d = str(tmp_path / "cache")
    _compile(monkeypatch, d)
    key = tmp_path / "config" / "cache-key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(key.parent.stat().st_mode) == 0o700
    assert len(bytes.fromhex(key.read_text().strip())) == 32
    # by default under $XDG_CONFIG_HOME/gfxrt
    monkeypatch.delenv("GFXRT_CACHE_KEY_FILE")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    _compile(monkeypatch, str(tmp_path / "cache2"))
    assert (tmp_path / "xdg" / "gfxrt" / "cache-key").is_file()


def test_entries_of_another_key_miss(tmp_path, monkeypatch):
    """Another user's gfxrt writing to the same folder (GFXRT_CACHE_DIR shared, a restored CI
    cache): entries signed with their key are misses, and ours are rewritten."""
    d = str(tmp_path / "cache")
    assert _compile(monkeypatch, d)[1] is True
    assert _compile(monkeypatch, d)[1] is False
    monkeypatch.setenv("GFXRT_CACHE_KEY_FILE", str(tmp_path / "other-user" / "cache-key"))
    assert _compile(monkeypatch, d)[1] is True
    assert _compile(monkeypatch, d)[1] is False  # rewritten with that key
    monkeypatch.setenv("GFXRT_CACHE_KEY_FILE", str(tmp_path / "config" / "cache-key"))
    assert _compile(monkeypatch, d)[1] is True


def test_a_forged_entry_is_a_miss(tmp_path, monkeypatch):
    """Whoever can write the folder changes the WGSL and recomputes every check that needs
    no key of ours: a plain SHA-256, a MAC under a key of their own."""
    d = str(tmp_path / "cache")
    _compile(monkeypatch, d)
    path = _entry_path(d)
    head, payload = open(path).read().split("\n")
    payload = payload.replace("3.0f", "5.0f")
    for mac in (hashlib.sha256(payload.encode()).hexdigest(),
                hmac.new(b"k" * 32, payload.encode(), hashlib.sha256).hexdigest()):
        open(path, "w").write(json.dumps({**json.loads(head), "mac": mac}) + "\n" + payload)
        spec, missed = _compile(monkeypatch, d)
        assert missed and "5.0f" not in spec.wgsl
        _runs_right(spec)


def test_deleting_the_key_resets_it(tmp_path, monkeypatch):
    from gfxrt.compiler import cache_secret
    d = str(tmp_path / "cache")
    _compile(monkeypatch, d)
    key = tmp_path / "config" / "cache-key"
    old = key.read_text()
    key.unlink()
    monkeypatch.setattr(cache_secret, "_KEYS", {})  # as in the next process
    assert _compile(monkeypatch, d)[1] is True
    assert key.read_text() != old
    assert _compile(monkeypatch, d)[1] is False


def _bad_key_mode(key):
    key.write_text("ab" * 32 + "\n")
    key.chmod(0o640)


def _bad_key_link(key):
    (key.parent / "real").write_text("ab" * 32 + "\n")
    (key.parent / "real").chmod(0o600)
    key.symlink_to(key.parent / "real")


def _bad_key_text(key):
    key.write_text("not a key\n")
    key.chmod(0o600)


def _bad_key_folder(key):
    key.parent.chmod(0o777)


@pytest.mark.parametrize("spoil", [_bad_key_mode, _bad_key_link, _bad_key_text, _bad_key_folder],
                         ids=["readable-by-others", "a-link", "not-a-key", "folder-writable-by-others"])
def test_a_key_that_is_not_safe_turns_the_disk_cache_off(tmp_path, monkeypatch, spoil):
    d = str(tmp_path / "cache")
    key = tmp_path / "config" / "cache-key"
    key.parent.mkdir(mode=0o700)
    spoil(key)
    messages = _caught(lambda: [_runs_right(_compile(monkeypatch, d)[0]) for _ in range(2)])
    assert len(messages) == 1 and str(key) in messages[0]
    assert not any(f.endswith(".json") for f in _files(d))


# -- item 6: the size bound -------------------------------------------------------------------------
def _scaled(k):
    return [ArgSpec("x", "ndarray", elem=f32, ndim=1), ArgSpec("k", "template", value=float(k))]


def test_the_cache_is_trimmed_least_recently_used_first(tmp_path, monkeypatch):
    d = str(tmp_path / "cache")
    paths = []
    for k in range(8):
        _compile(monkeypatch, d, scaled, _scaled(k))
        paths.append(_entry_path(d, scaled, _scaled(k)))
    now = time.time()
    for k, p in enumerate(paths):  # written 10, 9, ... hours ago
        os.utime(p, (now - 3600 * (10 - k),) * 2)
    assert _compile(monkeypatch, d, scaled, _scaled(0))[1] is False  # a hit: entry 0 is now the most recent
    sizes = [os.path.getsize(p) for p in paths]
    bound = sum(sizes) + max(sizes) // 2  # the next two stores go over it
    monkeypatch.setenv("GFXRT_CACHE_MAX_BYTES", str(bound))
    for k in (8, 9):
        _compile(monkeypatch, d, scaled, _scaled(k))
    alive = [os.path.exists(_entry_path(d, scaled, _scaled(k))) for k in range(10)]
    assert alive[0] and alive[8] and alive[9] and not alive[1]
    total = sum(os.path.getsize(os.path.join(d, f)) for f in _files(d))
    assert total <= bound


def test_trimming_removes_only_the_caches_files(tmp_path):
    from gfxrt.compiler import cache_store
    from gfxrt.compiler.private_files import open_folder
    d = tmp_path / "cache"
    (d / "ab").mkdir(parents=True, mode=0o700)
    (d / "zz").mkdir(mode=0o700)
    key = "ab" * 16
    keep = {d / "notes.txt": b"mine", d / "ab" / "readme": b"mine too", d / "zz" / (key + ".json"): b"x",
            d / "ab" / (key + ".json.0123456789abcdef.tmp"): b"being written"}
    for p, data in keep.items():
        p.write_bytes(data)
    stale = d / "ab" / (key + ".json.fedcba9876543210.tmp")
    stale.write_bytes(b"a dead writer's")
    os.utime(stale, (time.time() - 7200,) * 2)
    (d / "ab" / (key + ".json")).write_bytes(b"an entry")
    (d / "ab" / ("cd" * 16 + ".json")).symlink_to(d / "notes.txt")
    with open_folder(str(d), create=False, fix=False) as root:
        cache_store.trim(root, 1)
    assert all(p.read_bytes() == data for p, data in keep.items())
    assert not stale.exists() and not (d / "ab" / (key + ".json")).exists()
    assert os.path.islink(d / "ab" / ("cd" * 16 + ".json"))  # not a regular file: never counted or removed


WRITER = '''
import os, sys, secrets
from gfxrt.compiler import cache_store
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    key = secrets.token_hex(16)
    data = (key * 128).encode()  # 4 KB: a tenth of the bound, so every store checks the size
    cache_store.write(d, key, data)
    got = cache_store.read(d, key)
    assert got in (None, data), "a torn entry"
print("ok")
'''


def test_several_processes_writing_and_trimming_at_once(tmp_path):
    d = str(tmp_path / "cache")
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    env = dict(os.environ, GFXRT_CACHE_MAX_BYTES="40K",
               PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    procs = [subprocess.Popen([sys.executable, str(script), d, "40"], env=env, cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0 and out.strip() == "ok", err[-2000:]
    files = _files(d)  # the last check began after every write had ended: it saw them all
    assert files and not any(f.endswith(".tmp") for f in files)
    assert sum(os.path.getsize(os.path.join(d, f)) for f in files) <= 40 * 1024


@pytest.mark.parametrize("value,expect", [("4096", 4096), ("64M", 64 << 20), ("2g", 2 << 30), ("500k", 500 << 10),
                                          ("lots", None), ("0", None), ("-5", None), ("1.5G", None)])
def test_the_size_bound_setting(tmp_path, monkeypatch, value, expect):
    from gfxrt.compiler import cache_store
    monkeypatch.setenv("GFXRT_CACHE_MAX_BYTES", value)
    if expect is not None:
        assert cache_store.max_bytes() == expect
    else:
        with pytest.raises(ValueError, match="GFXRT_CACHE_MAX_BYTES"):
            compile_kernel(kern, ARGS, TARGET, directory=str(tmp_path / "cache"))
