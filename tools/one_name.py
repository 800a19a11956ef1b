"""Issue 23 item 5, one installed name: rewrite every reference to the top-level modules
`compiler` and `kernels` as `gfxrt.compiler` and `gfxrt.kernels`. The folders stay where they are
(compiler/, kernels/ at the repository's top; pyproject.toml installs them inside gfxrt, and
gfxrt/__init__.py maps them in a checkout). Idempotent: rerun it on a tree merged from a branch that
still says `from compiler...` and it rewrites what is new.

    python tools/one_name.py          # from the repository root, then:
    ruff check --fix .                # import order; wrap by hand the lines it reports as too long

What it rewrites, in *.py and *.md outside .git, .venv and bench/out:
- imports: `from compiler.x import y` -> `from gfxrt.compiler.x import y`, `import compiler.x as y` ->
  `import gfxrt.compiler.x as y`, `import compiler` -> `from gfxrt import compiler` (the name the code
  uses stays `compiler`), the same for kernels;
- module names in strings: "compiler.private_files._DIR_FD" -> "gfxrt.compiler.private_files._DIR_FD".
Paths (compiler/pipeline.py) stay: the files did not move.
"""
from __future__ import annotations

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP = {".git", ".venv", "out", "__pycache__", "node_modules"}
N = "compiler|kernels"

RULES = [
    # `from compiler.x import y`, `from kernels import z`
    (re.compile(rf"^(\s*)from ({N})(\.[\w.]+)? import ", re.M), r"\1from gfxrt.\2\3 import "),
    # `import compiler.x as y`
    (re.compile(rf"^(\s*)import ({N})(\.[\w.]+)( as \w+)", re.M), r"\1import gfxrt.\2\3\4"),
    # `import compiler` / `import kernels as k`
    (re.compile(rf"^(\s*)import ({N})(\s*(?:#.*)?)$", re.M), r"\1from gfxrt import \2\3"),
    (re.compile(rf"^(\s*)import ({N}) as (\w+)", re.M), r"\1from gfxrt import \2 as \3"),
    # module names in strings (monkeypatch targets, __module__ checks)
    (re.compile(r"""(["'])compiler\.(?=[a-z_])"""), r"\1gfxrt.compiler."),
]


def files():
    for d, dirs, names in os.walk(ROOT):
        dirs[:] = [x for x in dirs if x not in SKIP]
        for n in names:
            if n.endswith((".py", ".md")) and n not in ("one_name.py", "test_one_name.py"):  # these name the old names
                yield os.path.join(d, n)


def main() -> int:
    changed = []
    for path in files():
        with open(path, encoding="utf-8") as f:
            text = f.read()
        new = text
        for pat, rep in RULES:  # in *.md too: the code blocks' imports
            new = pat.sub(rep, new)
        if new != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
            changed.append(os.path.relpath(path, ROOT))
    print(f"{len(changed)} files rewritten", file=sys.stderr)
    for c in changed:
        print(c)
    return 0


if __name__ == "__main__":
    sys.exit(main())
