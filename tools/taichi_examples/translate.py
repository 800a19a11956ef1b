"""`ti` -> `gr` for Taichi's example programs: the unit-test translator plus imports of submodules.

`import taichi.math as tm` -> `import gfxrt.math as tm`, `from taichi.x import y` ->
`from gfxrt.x import y` (a name gfxrt lacks fails the program, and counts), and the examples'
shared `taichi.examples.patterns` module -> its translated copy, `patterns`, found at the root
of the translated examples. The rest is tools/taichi_suite/translate.py.
"""
import importlib.util
import re
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "taichi_suite_translate", Path(__file__).resolve().parent.parent / "taichi_suite" / "translate.py")
_suite = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_suite)


def translate_example(src: str) -> str:
    s = re.sub(r"^(\s*)from taichi\.examples\.(\w+) import", r"\1from \2 import", src, flags=re.M)
    s = re.sub(r"^(\s*)from taichi\.([\w.]+) import", r"\1from gfxrt.\2 import", s, flags=re.M)
    s = re.sub(r"^(\s*)import taichi\.([\w.]+) as (\w+)", r"\1import gfxrt.\2 as \3", s, flags=re.M)
    return _suite.translate(s)
