"""The page `bash dev.sh web` serves (tools/browser/webpage.py, tools/browser/web/): its static site
and runner here, then the page itself in headless Chromium (tools/browser/cdp.py drives it), its two
examples against the desktop run of the same source (runner.py on lavapipe). The browser part skips
as the browser tier does where chromium or Pyodide is absent (`bash dev.sh test` installs both)."""
from __future__ import annotations

import array
import functools
import http.server
import json
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
import zipfile

import numpy as np
import pytest

import gfxrt as gr
from tools.browser import cdp, webpage
from tools.browser import session as browser
from tools.browser.web import runner

WEB = webpage.WEB
# the npm package's files (Pyodide 0.29): the runtime, and what the export leaves out
PYODIDE_RUNTIME = ["pyodide.js", "pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip",
                   "pyodide-lock.json", "package.json"]
PYODIDE_EXTRA = ["pyodide.js.map", "pyodide.d.ts", "console.html", "README.md"]


@pytest.fixture
def fake_cache(tmp_path, monkeypatch):
    """A browser cache laid out as dev.sh installs it, with stand-in contents."""
    cache = tmp_path / "cache"
    (cache / "pyodide").mkdir(parents=True)
    (cache / "wheels").mkdir()
    for name in PYODIDE_RUNTIME + PYODIDE_EXTRA:
        (cache / "pyodide" / name).write_text(f"stand-in {name}")
    (cache / "wheels" / "lark-1.3.1-py3-none-any.whl").write_bytes(b"stand-in wheel")
    monkeypatch.setenv("GFXRT_BROWSER_CACHE", str(cache))
    return cache


def test_export_holds_what_the_page_loads(tmp_path, fake_cache):
    """Every file index.html and page.js name, the manifest's wheels and examples, and Pyodide's
    runtime are in the exported folder (and nothing from a CDN is named); gfxrt.zip is the package."""
    out = tmp_path / "site"
    paths = webpage.export(out)
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()) == paths
    html, js = (out / "index.html").read_text(), (out / "page.js").read_text()
    assert not re.search(r"[\"'`(]\s*(https?:)?//", html + js), "the page must not load from another site"
    named = re.findall(r'(?:src|href)="([^"]+)"', html) + re.findall(r'(?<![.\w])get\("([^"]+)"\)', js)
    assert {"pyodide/pyodide.js", "page.js", "manifest.json", "gfxrt.zip", "runner.py"} <= set(named)
    manifest = json.loads((out / "manifest.json").read_text())
    named += manifest["wheels"] + [e["file"] for e in manifest["examples"]]
    named += [f"pyodide/{n}" for n in PYODIDE_RUNTIME]  # what loadPyodide fetches from indexURL
    for path in named:
        assert (out / path).is_file(), path
    assert [e["name"] for e in manifest["examples"]] == list(webpage.EXAMPLES)
    assert manifest["wheels"] == ["wheels/lark-1.3.1-py3-none-any.whl"]
    assert not any((out / "pyodide" / n).exists() for n in PYODIDE_EXTRA)
    names = zipfile.ZipFile(out / "gfxrt.zip").namelist()
    assert {"gfxrt/__init__.py", "gfxrt/compiler/__init__.py", "gfxrt/kernels/__init__.py"} <= set(names)
    assert any(n.endswith(".lark") for n in names)


def test_server_serves_the_export(tmp_path, fake_cache):
    """`bash dev.sh web` answers each path with the exported file's bytes, and 404 elsewhere."""
    out = tmp_path / "site"
    paths = webpage.export(out)
    s = webpage.server(0)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{s.server_address[1]}/"
    try:
        assert urllib.request.urlopen(base).read() == (out / "index.html").read_bytes()
        for path in paths:
            with urllib.request.urlopen(base + path) as r:
                body = r.read()
            if path != "gfxrt.zip":  # (zipped again: the entries' times differ)
                assert body == (out / path).read_bytes(), path
        with pytest.raises(urllib.error.HTTPError, match="404"):
            urllib.request.urlopen(base + "nothing.js")
    finally:
        s.shutdown()
        s.server_close()


def test_export_without_pyodide_says_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("GFXRT_BROWSER_CACHE", str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError, match="no Pyodide"):
        webpage.export(tmp_path / "site")
    assert webpage.main(["--export", str(tmp_path / "site")]) == 1


def test_show_draws_plots_and_images_as_documented():
    """show(x): (n,) a plot; (w, h), (w, h, 3 / 4) an image; values flat in x's order; gr containers
    read back; ragged, empty, other shapes and non-numbers rejected with the reason."""
    v = runner.view([3, 1.5, 2], "loss")
    assert (v["kind"], v["shape"], v["data"].tolist(), v["title"]) == ("plot", (3,), [3, 1.5, 2], "loss")
    assert runner.view(array.array("d", [1, 2]))["kind"] == "plot"
    img = runner.view([[0, 0.25], [0.5, 1], [1, 1]])
    assert (img["kind"], img["shape"], img["data"].tolist()) == ("image", (3, 2), [0, 0.25, 0.5, 1, 1, 1])
    f = gr.field(gr.f32, (2, 3, 4))
    f.fill(0.5)
    assert runner.view(f)["shape"] == (2, 3, 4) and set(runner.view(f)["data"]) == {0.5}
    assert runner.view(np.zeros((4, 2, 3)))["kind"] == "image"
    for bad, err in [([[1, 2], [3]], "ragged"), ([], "nothing to draw"), ([[[1, 2]]], r"not \(1, 1, 2\)"),
                     (np.zeros((2, 2, 2, 2)), "not"), ("abc", "not str"), ([1, "a"], "numbers only"),
                     (3.0, "not float")]:
        with pytest.raises((TypeError, ValueError), match=err):
            runner.view(bad)


def test_runner_reports_errors_in_the_programs_terms(tmp_path, capsys):
    """An error's text names the program's lines only (main.py), with a compile error's caret."""
    source = ("import gfxrt as gr\nx = gr.field(gr.f32, 4)\n\n\n@gr.kernel\ndef bad():\n    for i in x:\n"
              "        x[i] = undefined_name + 1\n\n\nprint('before')\nbad()\n")
    assert runner.run(source, None, str(tmp_path)) is False
    out, err = capsys.readouterr()
    assert out == "before\n"
    assert 'File "main.py", line 12, in <module>' in err and 'File "main.py", line 8, in bad' in err
    assert "           ^\nname 'undefined_name' is not defined" in err
    assert "runner.py" not in err and "site-packages" not in err and str(tmp_path) not in err
    assert runner.run("x = [1,\n", None, str(tmp_path)) is False
    assert "SyntaxError" in capsys.readouterr().err
    assert runner.run("import sys\nsys.exit(0)\n", None, str(tmp_path)) is True


# -- the page in headless Chromium -------------------------------------------------------------------
def desktop(name: str) -> subprocess.Popen:
    """The example run on the desktop by runner.py, as the page runs it (started now, read later)."""
    return subprocess.Popen([sys.executable, str(WEB / "runner.py"), str(WEB / "examples" / f"{name}.py")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=webpage.ROOT,
                            env={**os.environ, "PYTHONPATH": str(webpage.ROOT)})


def desktop_result(p: subprocess.Popen) -> dict:
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err[-3000:]
    lines = out.strip().splitlines()
    return {**json.loads(lines[-1]), "output": "\n".join(lines[:-1])}


class StaticHost(http.server.SimpleHTTPRequestHandler):
    """A plain static file server, as any host: the exported folder, here under /some/path/."""
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """The page as a visitor gets it from a static host: `bash dev.sh web --export` served by a plain
    file server under a sub-path (webpage.server serves the same bytes: test_server_serves_the_export)."""
    why = browser.missing()
    if why:
        pytest.skip(why)
    runs = {name: desktop(name) for name in webpage.EXAMPLES}  # beside the browser's start
    root = tmp_path_factory.mktemp("host")
    webpage.export(root / "some" / "path")
    s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(StaticHost, directory=str(root)))
    threading.Thread(target=s.serve_forever, daemon=True).start()
    try:
        with cdp.Tab(f"http://127.0.0.1:{s.server_address[1]}/some/path/?example=fit", timeout=120) as tab:
            tab.wait_for("window.page !== undefined")
            tab.evaluate("page.ready")
            tab.opened_on = tab.evaluate("[document.getElementById('example').value, page.lastRun]")
            tab.desktop = {name: desktop_result(p) for name, p in runs.items()}
            yield tab
    finally:
        s.shutdown()
        s.server_close()


def run_example(tab, name: str) -> dict:
    """Choose `name` in the dropdown, run it; the run's output and views (data as lists)."""
    return tab.evaluate(f"""page.select({name!r}).then(() => page.run()).then(r => ({{
        ...r, views: r.views.map(v => ({{...v, data: Array.from(v.data)}}))}}))""", timeout=120)


# the canvas against the documented convention: pixel (i, j) of a (w, h) image at column i, row h-1-j
CANVAS_CHECK = """(() => {
  const c = document.querySelector("#views canvas"), [w, h] = page.lastRun.views[0].shape;
  const px = c.getContext("2d").getImageData(0, 0, c.width, c.height).data, v = page.lastRun.views[0].data;
  let off = 0;
  for (let i = 0; i < w; i++) for (let j = 0; j < h; j++) {
    const want = Math.round(Math.min(1, Math.max(0, v[i * h + j])) * 255), at = ((h - 1 - j) * w + i) * 4;
    if (px[at] !== want || px[at + 1] !== want || px[at + 2] !== want || px[at + 3] !== 255) off++;
  }
  return {width: c.width, height: c.height, off, kind: c.dataset.kind};
})()"""


def test_page_opens_on_the_example_its_address_names(page):
    assert page.opened_on == ["fit", None]  # ?example=fit, not yet run


def test_page_fractal_matches_desktop(page):
    """The page's fractal example: its image is the desktop's (bar a few boundary pixels whose
    iteration count rounding may change), and the canvas shows it as show() documents."""
    got, want = run_example(page, "fractal"), page.desktop["fractal"]
    assert got["ok"] and "via the browser's WebGPU" in got["output"]
    assert got["output"].splitlines()[-1] == want["output"].splitlines()[-1]  # its print()
    (v,), (w,) = got["views"], want["views"]  # 20 frames, each redrawing the one view
    assert (v["kind"], v["shape"], v["count"]) == (w["kind"], w["shape"], w["count"]) == ("image", [640, 320], 20)
    differ = np.count_nonzero(np.abs(np.array(v["data"]) - np.array(w["data"])) > 1e-6)
    assert differ <= 20, f"{differ} of 204800 pixels differ from the desktop's"  # (SwiftShader vs lavapipe)
    assert len(set(v["data"])) > 20  # a picture, not a flat colour
    assert page.evaluate(CANVAS_CHECK) == {"width": 640, "height": 320, "off": 0, "kind": "image"}


def test_page_fit_matches_desktop(page):
    """The differentiable example: gradient descent through a run-time loop (gr.Tape) in the tab
    gives the desktop's losses, and the loss goes down."""
    got, want = run_example(page, "fit"), page.desktop["fit"]
    assert got["ok"], got["output"]
    (v,), (w,) = got["views"], want["views"]
    assert (v["kind"], v["shape"], v["title"]) == ("plot", [50], "loss")
    np.testing.assert_allclose(v["data"], w["data"], rtol=1e-3, atol=1e-7)
    assert v["data"][-1] < v["data"][0] * 1e-3 and all(b <= a for a, b in zip(v["data"], v["data"][1:]))
    assert got["output"].strip().splitlines()[-1] == want["output"].splitlines()[-1]  # the fitted pushes


def test_page_shows_errors_and_runs_on(page):
    """A compile error shows as text with its line and caret; the Run button then runs the next program;
    show() under an earlier view's title redraws that view."""
    bad = "import gfxrt as gr\\n\\n@gr.kernel\\ndef k(n: gr.i32) -> gr.i32:\\n    return n + nope\\n\\nk(1)\\n"
    out = page.evaluate(f"""(async () => {{
        document.getElementById("code").value = "{bad}";
        document.getElementById("run").click();
        while (document.getElementById("run").disabled) await new Promise(r => setTimeout(r, 50));
        const first = page.lastRun;
        document.getElementById("code").value = "show([1, 2, 4], 'a')\\nshow([[0, 1]], 'b')\\nshow([5, 6], 'a')";
        const second = await page.run();
        return {{first, second: {{...second, views: second.views.map(v => ({{...v, data: Array.from(v.data)}}))}},
                status: document.getElementById("status").textContent,
                canvases: document.querySelectorAll("#views canvas").length}};
    }})()""", timeout=60)
    first, second = out["first"], out["second"]
    assert not first["ok"] and 'File "main.py", line 5, in k' in first["output"]
    assert "return n + nope\n               ^" in first["output"] and "'nope' is not defined" in first["output"]
    assert second["ok"] and second["output"] == ""
    assert [(v["title"], v["kind"], v["count"], v["data"]) for v in second["views"]] == [
        ("a", "plot", 2, [5, 6]), ("b", "image", 1, [0, 1])]  # show under a title again: redrawn in place
    assert out["canvases"] == 2
    assert out["status"].startswith("ran in")
