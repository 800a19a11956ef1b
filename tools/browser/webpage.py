"""The page `bash dev.sh web` serves (docs/browser.md, "The page"): an editor that runs gfxrt
programs in the visitor's browser, on its WebGPU, through Pyodide. Offline: every file comes from
the checkout (tools/browser/web/) and from .cache/browser (Pyodide's runtime files, lark's wheel),
and gfxrt's sources are zipped from the checkout as the test tier's session zips them.

    python -m tools.browser.webpage [--port N] [--host H]   serve it (http://localhost:8000/)
    python -m tools.browser.webpage --export DIR            write it as static files for any host

The site is one table, site_files(): a path in the site -> a file or the bytes to serve. The server
answers from it (live: an edited source shows on reload) and the export writes it out.
"""
from __future__ import annotations

import argparse
import ast
import functools
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tools.browser.session import ROOT, cache_dir, source_zip, wheels

WEB = Path(__file__).resolve().parent / "web"
EXAMPLES = ("fractal", "fit")  # the dropdown's order; examples/NAME.py, its docstring's line the label
# Pyodide's npm package: the runtime files loadPyodide fetches (not its typings, source maps, demos)
PYODIDE_SKIP = (".map", ".d.ts", ".html", ".md")
TYPES = {".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript", ".wasm": "application/wasm",
         ".json": "application/json", ".zip": "application/zip", ".whl": "application/zip",
         ".py": "text/x-python", ".css": "text/css"}


def missing() -> str | None:
    """Why the page cannot be served from here (None: it can): Pyodide or lark's wheel is absent."""
    if not (cache_dir() / "pyodide" / "pyodide.js").exists():
        return f"no Pyodide in {cache_dir() / 'pyodide'} (bash dev.sh web installs it from npm)"
    if not any(w.name.startswith("lark-") for w in wheels()):
        return f"no lark wheel in {cache_dir() / 'wheels'} (bash dev.sh web downloads it)"
    return None


def example_label(path: Path) -> str:
    """An example's label in the dropdown: the first line of its docstring."""
    doc = ast.get_docstring(ast.parse(path.read_text())) or path.stem
    return doc.splitlines()[0].rstrip(".")


def manifest() -> bytes:
    """manifest.json: what page.js loads beside its fixed files: the wheels and the examples."""
    return json.dumps({
        "wheels": [f"wheels/{w.name}" for w in wheels()],
        "examples": [{"name": n, "file": f"examples/{n}.py", "label": example_label(WEB / "examples" / f"{n}.py")}
                     for n in EXAMPLES]}, indent=1).encode()


def site_files(root: Path = ROOT) -> dict:
    """The site: path -> Path (a file to copy) or a function returning the bytes (built on demand)."""
    files = {p.relative_to(WEB).as_posix(): p for p in sorted(WEB.rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts}
    for p in sorted((cache_dir() / "pyodide").iterdir()):
        if p.is_file() and not p.name.endswith(PYODIDE_SKIP):
            files[f"pyodide/{p.name}"] = p
    for w in wheels():
        files[f"wheels/{w.name}"] = w
    files["gfxrt.zip"] = functools.partial(source_zip, root)
    files["manifest.json"] = manifest
    return files


def content(value) -> bytes:
    return value.read_bytes() if isinstance(value, Path) else value()


def export(dest: Path, root: Path = ROOT) -> list[str]:
    """Write the site into `dest` (created; files already there are overwritten); its paths."""
    why = missing()
    if why:
        raise FileNotFoundError(why)
    files = site_files(root)
    for rel, value in files.items():
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(content(value))
    return sorted(files)


class Handler(BaseHTTPRequestHandler):
    root = ROOT

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self, head: bool = False) -> None:
        path = self.path.split("?", 1)[0].split("#", 1)[0].lstrip("/") or "index.html"
        value = site_files(self.root).get(path)
        body = content(value) if value is not None else b"not found"
        self.send_response(200 if value is not None else 404)
        self.send_header("Content-Type", TYPES.get(Path(path).suffix, "application/octet-stream"))
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")  # live: an edit shows on reload
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def do_HEAD(self) -> None:
        self.do_GET(head=True)


def server(port: int = 8000, host: str = "127.0.0.1", root: Path = ROOT) -> ThreadingHTTPServer:
    """An http server of the site (not yet serving: call serve_forever); port 0 picks a free one."""
    why = missing()
    if why:
        raise FileNotFoundError(why)
    handler = type("SiteHandler", (Handler,), {"root": root})
    s = ThreadingHTTPServer((host, port), handler)
    s.daemon_threads = True
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bash dev.sh web", description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--host", default="127.0.0.1",
                    help="the address to listen on (WebGPU needs a secure context: localhost, or https)")
    ap.add_argument("--export", metavar="DIR", type=Path, help="write the site's static files into DIR and exit")
    args = ap.parse_args(argv)
    try:
        if args.export:
            paths = export(args.export)
            print(f"wrote {len(paths)} files into {args.export}: serve that folder from any static host")
            return 0
        s = server(args.port, args.host)
    except (FileNotFoundError, OSError) as e:
        print(f"bash dev.sh web: {e}", file=sys.stderr)
        return 1
    print(f"serving the gfxrt page at http://{'localhost' if args.host == '127.0.0.1' else args.host}:"
          f"{s.server_address[1]}/ (Ctrl-C stops; Chrome 137+ or another browser with WebGPU and JSPI)")
    try:
        s.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        s.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
