"""Every ```python block of README.md and docs/*.md (not docs/upstream) runs as it stands.

What a block is, is said by an HTML comment alone on the line right before its opening fence (GitHub shows
nothing for it):

- no marker: a complete program. It runs in a fresh interpreter (`sys.executable`, an empty temporary
  working directory, PYTHONPATH the repository root, XDG_RUNTIME_DIR set), written to a .py file first
  (kernels are read from their source file).
- `<!-- continues -->`: the next step of the page's previous run block. It runs right after that block, in
  the same interpreter and with its names, as a reader who pastes a page's examples one after the other.
  (One interpreter per chain of blocks also keeps this file cheap: a chain pays for one start-up.)
- `<!-- fragment -->`: deliberately not a program (a kernel body, a pattern with placeholder names, a file
  of another package, a peer library's code): not run. The prose around it should make that plain.

A block that stops at importing an optional package this environment lacks (OPTIONAL: torch) is
skipped, not failed: CI has no torch; where torch is installed the block runs.

Any other `<!-- word -->` right before a fence fails (a misspelt marker would otherwise silently run a
fragment or skip a program). Each block is one test named `file:line` of its opening fence; a block that
fails names itself and shows its traceback. gfxrt.sync() runs after each block, so an error raised on the
device is charged to the block that launched it.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARKERS = ("fragment", "continues")
OPTIONAL = ("torch",)  # packages gfxrt works with but does not need
CHAIN_TIMEOUT_S = 240  # a whole chain; the blocks take seconds on lavapipe, this is for a hung one

_FENCE = re.compile(r"^(\s*)```\s*(\S*)(.*)$")
_MARKER = re.compile(r"^\s*<!--\s*(\S+)\s*-->\s*$")


@dataclass
class Block:
    file: str      # relative to the repository root
    line: int      # 1-based line of the opening fence
    code: str
    marker: str | None
    info: str = "python"  # the fence's info string

    @property
    def name(self) -> str:
        return f"{self.file}:{self.line}"


def collect(path: Path) -> list[Block]:
    """The ```python blocks of one markdown file, dedented (blocks inside list items are indented)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    out, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m or not m.group(2):
            i += 1
            continue
        indent, info = m.group(1), m.group(2)
        full_info = (m.group(2) + m.group(3)).strip()
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        if info in ("python", "py", "python3"):
            body = [ln[len(indent):] if ln.startswith(indent) else ln.lstrip() for ln in lines[i + 1:j]]
            mk = _MARKER.match(lines[i - 1]) if i > 0 else None
            out.append(Block(str(path.relative_to(ROOT)), i + 1, "\n".join(body) + "\n", mk and mk.group(1),
                             full_info))
        i = j + 1
    return out


BLOCKS = [b for p in DOCS for b in collect(p)]


def chains(blocks: list[Block]) -> list[list[Block]]:
    """Run blocks grouped as they run: a program followed by the blocks that continue it."""
    out: list[list[Block]] = []
    for b in blocks:
        if b.marker == "fragment":
            continue
        if b.marker == "continues" and out and out[-1][0].file == b.file:
            out[-1].append(b)
        else:
            out.append([b])
    return out


_DRIVER = r'''
import json, runpy, sys, time, traceback
plan, results, optional = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
ns = {}
with open(plan) as f:
    blocks = json.load(f)
with open(results, "a") as out:
    for b in blocks:
        out.write(json.dumps({"name": b["name"], "state": "started"}) + "\n"); out.flush()
        t0 = time.perf_counter()
        try:
            ns = runpy.run_path(b["path"], init_globals=ns, run_name="__main__")
            if "gfxrt" in sys.modules:
                sys.modules["gfxrt"].sync()
        except ModuleNotFoundError as e:
            state = "missing" if e.name in optional else "failed"
            out.write(json.dumps({"name": b["name"], "state": state, "tb": traceback.format_exc()}) + "\n")
            break
        except BaseException:
            out.write(json.dumps({"name": b["name"], "state": "failed", "tb": traceback.format_exc()}) + "\n")
            break
        sys.stdout.flush(); sys.stderr.flush()
        out.write(json.dumps({"name": b["name"], "state": "passed", "s": time.perf_counter() - t0}) + "\n"); out.flush()
'''

_results: dict[str, tuple[str, str]] = {}  # block name -> (state, detail)


def _run_chain(chain: list[Block]) -> None:
    with tempfile.TemporaryDirectory(prefix="gfxrt-docs-") as tmp:
        plan = []
        for b in chain:
            path = Path(tmp) / (re.sub(r"\W", "_", b.name) + ".py")
            path.write_text(b.code, encoding="utf-8")
            plan.append({"name": b.name, "path": str(path)})
        (Path(tmp) / "plan.json").write_text(json.dumps(plan))
        (Path(tmp) / "driver.py").write_text(_DRIVER)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
        env.setdefault("XDG_RUNTIME_DIR", "/tmp")
        res_path = Path(tmp) / "results.jsonl"
        res_path.touch()
        try:
            p = subprocess.run([sys.executable, str(Path(tmp) / "driver.py"), str(Path(tmp) / "plan.json"),
                                str(res_path), ",".join(OPTIONAL)], cwd=tmp, env=env, capture_output=True, text=True,
                               timeout=CHAIN_TIMEOUT_S)
            output, ended = p.stdout + p.stderr, f"the interpreter exited with status {p.returncode}"
        except subprocess.TimeoutExpired as e:
            output = "".join(x.decode() if isinstance(x, bytes) else (x or "") for x in (e.stdout, e.stderr))
            ended = f"timed out after {CHAIN_TIMEOUT_S} s"
        seen = {}
        for ln in res_path.read_text().splitlines():
            r = json.loads(ln)
            seen[r["name"]] = r
        tail = output[-4000:]
        failed_at, missing = None, None
        for b in chain:
            r = seen.get(b.name)
            if r is None and missing:  # continues a block that needs a missing optional package
                _results[b.name] = ("missing", missing)
            elif r is None:
                why = f"not run: {failed_at} failed before it" if failed_at else f"not run: {ended}"
                _results[b.name] = ("failed", why)
            elif r["state"] == "passed":
                _results[b.name] = ("passed", f"{r['s']:.2f} s")
            elif r["state"] == "missing":
                missing = r["tb"].strip().splitlines()[-1]
                _results[b.name] = ("missing", missing)
            elif r["state"] == "failed":
                _results[b.name] = ("failed", r["tb"] + "\noutput of the chain:\n" + tail)
                failed_at = b.name
            else:  # started, never finished
                _results[b.name] = ("failed", f"{ended} while running this block\noutput:\n{tail}")
                failed_at = b.name


_CHAIN_OF = {b.name: c for c in chains(BLOCKS) for b in c}


@pytest.mark.parametrize("block", BLOCKS, ids=[b.name for b in BLOCKS])
def test_block_runs(block: Block):
    if block.marker == "fragment":
        pytest.skip("marked <!-- fragment --> in the doc: not a program")
    if block.name not in _results:
        _run_chain(_CHAIN_OF[block.name])
    state, detail = _results[block.name]
    if os.environ.get("GFXRT_DOCS_TIMES"):
        print(f"{block.name}: {detail}")
    if state == "missing":
        pytest.skip(f"needs an optional package this environment lacks: {detail}")
    if state != "passed":
        pytest.fail(f"{block.name} does not run as it stands:\n{detail}", pytrace=False)


def test_blocks_found():
    # the collector sees the blocks: a change of fence style must not turn this file into a no-op
    assert len(BLOCKS) >= 30
    assert {b.file for b in BLOCKS} >= {"README.md", "docs/language.md", "docs/autodiff.md"}


def test_markers_known():
    bad = [f"{b.name}: unknown marker <!-- {b.marker} --> (known: {', '.join(MARKERS)})"
           for b in BLOCKS if b.marker not in (None, *MARKERS)]
    for b in BLOCKS:
        if b.marker == "continues" and not any(c.file == b.file and c.line < b.line and c.marker != "fragment"
                                               for c in BLOCKS):
            bad.append(f"{b.name}: <!-- continues --> but no run block before it on the page")
    bad += [f"{b.name}: write the fence as ```python (with a marker comment above it if needed), not ```{b.info}"
            for b in BLOCKS if b.info != "python"]
    assert not bad, "\n".join(bad)


def test_missing_optional_package_skips(monkeypatch):
    """A block that stops at importing an OPTIONAL package is 'missing' (skipped), and so are the
    blocks that continue it; any other missing module still fails."""
    monkeypatch.setitem(globals(), "OPTIONAL", ("gfxrt_absent_optional",))
    chain = [Block("x.md", 1, "import gfxrt_absent_optional\n", None),
             Block("x.md", 5, "print('continues')\n", "continues")]
    _run_chain(chain)
    assert [_results.pop(b.name)[0] for b in chain] == ["missing", "missing"]
    other = [Block("y.md", 1, "import gfxrt_absent_required\n", None)]
    _run_chain(other)
    assert _results.pop(other[0].name)[0] == "failed"
