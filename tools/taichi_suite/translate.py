"""Mechanical ti -> gr translation of Taichi's Python tests.

Only names change: `import taichi as ti` -> `import gfxrt as gr`, `ti.X` -> `gr.X`. Taichi's
test-harness helpers (`ti.test`, `ti.all_archs`, `ti.must_throw`, `ti.require`, ...,
`ti.extension.*`, and the arch constants inside those decorators' arguments) are not
language API: they go to the shim `tests/test_utils.py` instead. Test bodies are otherwise
untouched.

    python translate.py SRC_DIR OUT_DIR
"""
import re
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

INFRA = ("all_archs_with", "all_archs", "test", "must_throw", "host_arch_only", "archs_excluding", "require",
         "archs_with", "program_test")
ARCHS = ("cpu", "x64", "arm64", "cuda", "vulkan", "metal", "opengl", "gles", "cc", "dx11", "dx12", "amdgpu", "gpu")
HELPERS = ("approx", "allclose", "get_rel_eps", "make_temp_file")

_INFRA_ALT, _ARCH_ALT = "|".join(INFRA), "|".join(ARCHS)
_infra_re = re.compile(rf"\bti\.({_INFRA_ALT})\b(?=\s*[\(\n@]|\s*$)", re.M)
_arch_re = re.compile(rf"\bti\.({_ARCH_ALT})\b")


def _match_paren(s, i):
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "(":
            depth += 1
        elif s[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    return len(s) - 1


def translate(src: str) -> str:
    s = src
    # a test's own name `gr` (Taichi's tests call gradients that) would shadow the module: `gr_`
    s = re.sub(r"(?<![\w.])gr(?!\w)", "gr_", s)
    s = re.sub(r"^(\s*)import taichi as ti\s*$", r"\1import gfxrt as gr", s, flags=re.M)
    s = re.sub(r"^(\s*)import taichi as (\w+)\s*$", r"\1import gfxrt as \2", s, flags=re.M)  # `as np`: the same
    s = re.sub(r"^(\s*)import taichi\s*$", r"\1import gfxrt as taichi", s, flags=re.M)
    # old Taichi exported its test helpers from the package
    def _from_taichi(m):
        names = [n.strip() for n in m.group(2).split(",")]
        if all(n in HELPERS for n in names):
            return f"{m.group(1)}from tests.test_utils import {m.group(2)}"
        return f"{m.group(1)}from gfxrt import {m.group(2)}"
    s = re.sub(r"^(\s*)from taichi import (.+)$", _from_taichi, s, flags=re.M)
    # Taichi's test-harness helper
    s = re.sub(r"^from taichi\.lang\.misc import get_host_arch_list$",
               "from tests.test_utils import get_host_arch_list", s, flags=re.M)
    s = re.sub(r"^from taichi\._testing import ([\w, ]+)$", r"from tests.test_utils import \1", s, flags=re.M)
    s = s.replace("ti.get_host_arch_list()", "test_utils.get_host_arch_list()")
    # Taichi's harness helpers that live in taichi.lang.util (whether torch / paddle is importable)
    has = "(?:has_pytorch|has_paddle|has_clangpp)"
    s = re.sub(rf"^(\s*)from taichi\.lang\.util import ({has}(?:, {has})*)$", r"\1from tests.test_utils import \2",
               s, flags=re.M)
    # other `from taichi.x import y`: imported when the test module loads, so that a name gfxrt
    # lacks fails only the tests that use it (as an AttributeError naming it), not the file
    def _deferred(m):
        names = [n.strip() for n in m.group(3).split(",")]
        return (f"{m.group(1)}from tests.test_utils import deferred_import as _deferred_import\n"
                f"{m.group(1)}{', '.join(names)}{',' if len(names) == 1 else ''} = "
                f"_deferred_import('gfxrt.{m.group(2)}', {', '.join(repr(n) for n in names)})")
    s = re.sub(r"^(\s*)from taichi\.([\w.]+) import ([\w, ]+)$", _deferred, s, flags=re.M)
    # a sibling helper module of Taichi's test tree (py38_only, bls_test_template): copied next to the tests
    s = re.sub(r"^(\s*)from \.(\w+) import", r"\1from \2 import", s, flags=re.M)
    s = s.replace("ti.extension.", "test_utils.extension.")
    s = _infra_re.sub(r"test_utils.\1", s)
    # arch constants inside the harness calls' arguments
    out, pos = [], 0
    for m in re.finditer(rf"\btest_utils\.({_INFRA_ALT})\s*\(", s):
        if m.start() < pos:
            continue
        open_i = m.end() - 1
        close_i = _match_paren(s, open_i)
        out.append(s[pos:open_i])
        out.append(_arch_re.sub(r"test_utils.\1", s[open_i:close_i + 1]))
        pos = close_i + 1
    out.append(s[pos:])
    s = "".join(out)
    s = re.sub(r"\bti\.", "gr.", s)
    if "test_utils." in s and not re.search(r"^from tests import test_utils", s, re.M):
        s = "from tests import test_utils\n" + s
    return s


def translate_dir(src_dir: Path, out_dir: Path) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    shutil.copytree(HERE / "shim", out_dir, dirs_exist_ok=True)
    files = []
    for p in sorted(Path(src_dir).glob("*.py")):
        dst = out_dir / p.name
        dst.write_text(translate(p.read_text()))
        if p.name.startswith("test_"):
            files.append(dst)
    return files


if __name__ == "__main__":
    for f in translate_dir(Path(sys.argv[1]), Path(sys.argv[2])):
        print(f)
