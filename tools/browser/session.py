"""A headless Chromium tab running Pyodide, driven through a local http server: the server serves
Pyodide (from the npm package dev.sh installs), lark's wheel and gfxrt's sources (zipped from the
checkout), and hands the page Python jobs one at a time (page/harness.js). No browser driver: the
page itself asks for work, so one Pyodide serves every job of a test session.

    with BrowserSession() as tab:
        tab.run("result = 1 + 1")   # -> 2 (whatever `result` holds, through JSON)

Where things are: GFXRT_BROWSER_CACHE (default <checkout>/.cache/browser) holds pyodide/ (the npm
package's files) and wheels/ (lark); the browser is chromium-headless-shell or chromium on PATH
(GFXRT_CHROMIUM names another); GFXRT_BROWSER_ROOT serves another checkout's gfxrt to the tab.
`missing()` says what is absent (the test tier skips with it).
"""
from __future__ import annotations

import io
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]          # the checkout
PAGE = Path(__file__).resolve().parent / "page"
# the checkout's folders as the installed package names them (pyproject.toml's package-dir)
PACKAGES = {"gfxrt": "gfxrt", "compiler": "gfxrt/compiler", "kernels": "gfxrt/kernels"}
# wgpu's WebGPU is the browser's, and CPU Vulkan is blocklisted without --enable-unsafe-webgpu
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--enable-unsafe-webgpu", "--disable-gpu-sandbox",
                  "--no-first-run", "--disable-extensions", "--mute-audio"]


def cache_dir() -> Path:
    return Path(os.environ.get("GFXRT_BROWSER_CACHE", ROOT / ".cache" / "browser"))


def chromium() -> str | None:
    named = os.environ.get("GFXRT_CHROMIUM")
    if named:
        return named if shutil.which(named) else None
    for name in ("chromium-headless-shell", "chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def wheels() -> list[Path]:
    return sorted((cache_dir() / "wheels").glob("*.whl"))


def missing() -> str | None:
    """Why a browser session cannot start here (None: it can)."""
    if chromium() is None:
        return "no chromium on PATH (bash dev.sh test installs Debian's chromium-headless-shell)"
    if not (cache_dir() / "pyodide" / "pyodide.js").exists():
        return f"no Pyodide in {cache_dir() / 'pyodide'} (bash dev.sh test installs it from npm)"
    if not any(w.name.startswith("lark-") for w in wheels()):
        return f"no lark wheel in {cache_dir() / 'wheels'} (bash dev.sh test downloads it)"
    return None


def source_zip(root: Path = ROOT) -> bytes:
    """gfxrt's sources from the checkout `root`, laid out as the installed package (.py and .lark)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for folder, name in PACKAGES.items():
            for path in sorted((root / folder).rglob("*")):
                if path.suffix in (".py", ".lark") and "__pycache__" not in path.parts:
                    z.write(path, f"{name}/{path.relative_to(root / folder)}")
    return out.getvalue()


def end_group(proc: subprocess.Popen) -> None:
    """End a browser started with start_new_session=True: its whole process group. Debian's
    chromium-headless-shell is a shell script that runs the browser as its child: ending the script
    alone left the browser running."""
    def gone(seconds: float) -> bool:  # True once no process of the group is left
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            proc.poll()  # (reaps the launcher script: a zombie still counts as the group's)
            try:
                os.killpg(proc.pid, 0)
            except ProcessLookupError:
                return True
            time.sleep(0.05)
        return False

    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        if gone(wait):
            break
    proc.wait()


class BrowserError(RuntimeError):
    """A job raised in the browser (its Python traceback is the message), or the tab failed."""


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, session: BrowserSession):
        self.session = session
        super().__init__(("127.0.0.1", 0), _Handler)

    def handle_error(self, request, client_address) -> None:
        """A page that went away mid-answer (the browser closed with a job poll open) is no error."""
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


class _Handler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes = b"", ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def translate_path(self, path: str) -> str:
        path = path.split("?", 1)[0]
        for prefix, base in (("/pyodide/", cache_dir() / "pyodide"), ("/wheels/", cache_dir() / "wheels"),
                             ("/page/", PAGE)):
            if path.startswith(prefix):
                return str(base / path[len(prefix):])
        return str(PAGE / "missing")

    def do_GET(self) -> None:
        s = self.server.session
        if self.path == "/":
            self._send(200, (PAGE / "harness.html").read_bytes(), "text/html")
        elif self.path == "/info":
            self._send(200, json.dumps({"wheels": [f"/wheels/{w.name}" for w in wheels()]}).encode())
        elif self.path == "/src.zip":
            self._send(200, source_zip(s.root), "application/zip")
        elif self.path == "/job":
            try:
                job = s.jobs.get(timeout=5)
            except queue.Empty:
                self._send(204)
                return
            self._send(200, json.dumps(job).encode())
        else:
            super().do_GET()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        s = self.server.session
        if self.path == "/ready":
            s.ready.put(body)
        elif self.path == "/result":
            s.results.put(body)
        self._send(200, b"{}")

    def guess_type(self, path):
        if str(path).endswith(".wasm"):
            return "application/wasm"
        if str(path).endswith(".mjs"):
            return "text/javascript"
        return super().guess_type(path)


class BrowserSession:
    """One headless Chromium tab with Pyodide (see the module docstring)."""

    def __init__(self, start_timeout: float = 120.0, root: Path | None = None):
        self.start_timeout = start_timeout
        # the checkout whose gfxrt the tab gets (GFXRT_BROWSER_ROOT: another one, e.g. a merge to try)
        self.root = Path(root or os.environ.get("GFXRT_BROWSER_ROOT") or ROOT)
        self.jobs: queue.Queue = queue.Queue()
        self.results: queue.Queue = queue.Queue()
        self.ready: queue.Queue = queue.Queue()
        self.info: dict = {}
        self._next_id = 0
        self._lock = threading.Lock()

    def __enter__(self) -> BrowserSession:
        why = missing()
        if why:
            raise BrowserError(why)
        self.server = _Server(self)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.profile = tempfile.mkdtemp(prefix="gfxrt-chromium-")
        self.log = open(Path(self.profile) / "chromium.log", "w+")
        self.proc = subprocess.Popen([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={self.profile}",
                                      "--remote-debugging-port=0", self.url],
                                     stdout=self.log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)  # its own process group: see close()
        try:
            self.info = self._wait(self.ready, self.start_timeout, "Pyodide did not start")
        except BrowserError:
            self.close()
            raise
        if "error" in self.info:
            self.close()
            raise BrowserError(f"the harness page failed: {self.info['error']}")
        return self

    def run(self, code: str, timeout: float = 120.0):
        """Run Python `code` in the tab (top-level await allowed); return what it left in `result`."""
        with self._lock:
            self._next_id += 1
            job_id = self._next_id
            self.jobs.put({"id": job_id, "code": code})
            end = time.monotonic() + timeout
            while True:
                out = self._wait(self.results, max(0.1, end - time.monotonic()), "the job did not finish")
                if out.get("id") == job_id:
                    break
        if not out["ok"]:
            raise BrowserError(out["error"])
        return json.loads(out["value"])

    def _wait(self, q: queue.Queue, timeout: float, what: str):
        """The next item of `q`; BrowserError once `timeout` passes or Chromium has exited (with its log's end)."""
        end = time.monotonic() + timeout
        while True:
            try:
                return q.get(timeout=min(1.0, max(0.01, end - time.monotonic())))
            except queue.Empty:
                pass
            if self.proc.poll() is not None:
                raise BrowserError(f"{what}: Chromium exited with status {self.proc.returncode}\n{self.log_tail()}")
            if time.monotonic() > end:
                raise BrowserError(f"{what} within {timeout:.0f} s\n{self.log_tail()}")

    def log_tail(self, lines: int = 20) -> str:
        """The end of Chromium's output (its errors, the page's console when it logs one)."""
        try:
            self.log.flush()
            return "".join((Path(self.profile) / "chromium.log").read_text(errors="replace").splitlines(True)[-lines:])
        except OSError:
            return ""

    def close(self) -> None:
        self.jobs.put({"stop": True})
        if getattr(self, "proc", None) is not None:
            end_group(self.proc)
        if getattr(self, "server", None) is not None:
            self.server.shutdown()
            self.server.server_close()
        if getattr(self, "log", None) is not None:
            self.log.close()
        shutil.rmtree(getattr(self, "profile", ""), ignore_errors=True)

    def __exit__(self, *exc) -> None:
        self.close()
