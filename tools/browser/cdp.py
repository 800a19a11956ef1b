"""A headless Chromium tab on any URL, driven through the DevTools protocol over a pipe
(`--remote-debugging-pipe`: JSON messages ending in a NUL byte, on the browser's fds 3 and 4), so no
driver package and no websocket are needed. Used to test the page a visitor sees (tests/test_browser_page.py):

    with Tab(url) as tab:
        tab.evaluate("page.ready")          # awaits a promise; returns the value as JSON gives it

The browser, its flags and its ending are the test session's (session.py).
"""
from __future__ import annotations

import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
import time

from tools.browser.session import CHROMIUM_FLAGS, BrowserError, chromium, end_group


def high_fd(fd: int) -> int:
    """`fd` moved to a number of 10 or more (the old one closed)."""
    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return new


class Tab:
    """One headless Chromium showing `url`; evaluate() runs JavaScript in it."""

    def __init__(self, url: str, timeout: float = 60.0):
        self.url, self.timeout = url, timeout
        self.replies: dict[int, queue.Queue] = {}
        self.console: list[str] = []  # the page's console lines and uncaught errors (for failure messages)
        self._next = 0
        self._lock = threading.Lock()

    def __enter__(self) -> Tab:
        exe = chromium()
        if exe is None:
            raise BrowserError("no chromium on PATH")
        self.profile = tempfile.mkdtemp(prefix="gfxrt-chromium-")
        to_browser, self._out = os.pipe()  # the browser reads commands on its fd 3
        self._in, from_browser = os.pipe()  # and writes replies and events on its fd 4
        # fds 3 and 4 as the browser expects them, set by bash (Popen keeps only the fds' numbers; dash
        # takes one digit), from numbers above them (`3<&4 4>&3` would not swap them)
        to_browser, from_browser = (high_fd(fd) for fd in (to_browser, from_browser))
        cmd = ["bash", "-c", f'exec "$@" 3<&{to_browser} 4>&{from_browser}', "sh", exe, *CHROMIUM_FLAGS,
               f"--user-data-dir={self.profile}", "--remote-debugging-pipe", "about:blank"]
        self.proc = subprocess.Popen(cmd, pass_fds=(to_browser, from_browser), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        os.close(to_browser)
        os.close(from_browser)
        threading.Thread(target=self._read, daemon=True).start()
        try:
            target = self._first_page()
            self.session = self.send("Target.attachToTarget", targetId=target["targetId"], flatten=True)["sessionId"]
            self.send("Runtime.enable", session=self.session)
            self.send("Page.enable", session=self.session)
            self.send("Page.navigate", session=self.session, url=self.url)
        except BaseException:
            self.close()
            raise
        return self

    def _first_page(self) -> dict:
        """The browser's first tab (it opens about:blank; the target appears shortly after the start)."""
        end = time.monotonic() + self.timeout
        while not (pages := [t for t in self.send("Target.getTargets")["targetInfos"] if t["type"] == "page"]):
            if time.monotonic() > end:
                raise BrowserError(f"Chromium opened no tab within {self.timeout:.0f} s")
            time.sleep(0.1)
        return pages[0]

    def _read(self) -> None:
        """The browser's messages: replies to their command's queue, console lines to self.console."""
        buf = b""
        with os.fdopen(self._in, "rb", buffering=0) as f:
            while chunk := f.read(1 << 16):
                buf += chunk
                while b"\0" in buf:
                    raw, buf = buf.split(b"\0", 1)
                    msg = json.loads(raw)
                    if "id" in msg:
                        self.replies.setdefault(msg["id"], queue.Queue()).put(msg)
                    elif msg.get("method") == "Runtime.consoleAPICalled":
                        self.console.append(" ".join(str(a.get("value", a.get("description", "")))
                                                     for a in msg["params"]["args"]))
                    elif msg.get("method") == "Runtime.exceptionThrown":
                        self.console.append(msg["params"]["exceptionDetails"].get("text", "exception"))

    def send(self, method: str, session: str | None = None, timeout: float | None = None, **params):
        """One DevTools command; its result, or BrowserError with the protocol's error."""
        with self._lock:
            self._next += 1
            n = self._next
            q = self.replies.setdefault(n, queue.Queue())
            msg = {"id": n, "method": method, "params": params} | ({"sessionId": session} if session else {})
            os.write(self._out, json.dumps(msg).encode() + b"\0")
        end = time.monotonic() + (timeout or self.timeout)
        while True:
            try:
                reply = q.get(timeout=1.0)
                break
            except queue.Empty:
                if self.proc.poll() is not None:
                    raise BrowserError(f"{method}: Chromium exited with status {self.proc.returncode}") from None
                if time.monotonic() > end:
                    raise BrowserError(f"{method}: no answer within {timeout or self.timeout:.0f} s; "
                                       f"console: {self.console[-10:]}") from None
        del self.replies[n]
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        return reply["result"]

    def evaluate(self, expression: str, timeout: float | None = None):
        """The value of a JavaScript expression in the page (a promise is awaited), as JSON gives it;
        BrowserError with the JavaScript exception where it throws."""
        out = self.send("Runtime.evaluate", session=self.session, timeout=timeout, expression=expression,
                        awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in out:
            d = out["exceptionDetails"]
            raise BrowserError(f"{d.get('exception', {}).get('description') or d.get('text')}\n"
                               f"console: {self.console[-10:]}")
        return out["result"].get("value")

    def wait_for(self, expression: str, timeout: float | None = None):
        """Poll `expression` until it is truthy (e.g. a global the page defines when loaded); its value."""
        end = time.monotonic() + (timeout or self.timeout)
        while not (value := self.evaluate(expression)):
            if time.monotonic() > end:
                raise BrowserError(f"{expression!r} stayed false for {timeout or self.timeout:.0f} s; "
                                   f"console: {self.console[-10:]}")
            time.sleep(0.1)
        return value

    def close(self) -> None:
        if getattr(self, "proc", None) is not None:
            end_group(self.proc)
        try:
            os.close(self._out)
        except OSError:
            pass
        shutil.rmtree(getattr(self, "profile", ""), ignore_errors=True)

    def __exit__(self, *exc) -> None:
        self.close()
