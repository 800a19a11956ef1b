"""WGSL's limit on nested blocks: at most 127 brace-enclosed levels in a function, counting
its body (the WGSL spec's limits; naga rejects the 128th brace with "brace nesting limit
reached"). The Python side has no such limit (a 200-branch elif chain nests 200 deep), so
generated code that passes it is the user's to restructure: a CompileError at the line,
not a shader the driver rejects as a compiler bug.
"""
from __future__ import annotations

import re

from ..errors import CompileError
from ..ir import KernelIR, walk_task

MAX_NESTING = 127
_SITE = re.compile(r"//\s*([^:\s]+):(\d+)")  # the statement comment `// file.py:12` (wgsl.py `comment`)


def check_nesting(wgsl: str, ir: KernelIR) -> None:
    """Raise a CompileError when `wgsl` nests braces deeper than MAX_NESTING."""
    if wgsl.count("{") <= MAX_NESTING:
        return
    depth, site = 0, None
    for line in wgsl.split("\n"):
        code, _, comment = line.partition("//")
        if comment:
            m = _SITE.match("//" + comment)
            site = m.groups() if m else site
        opens = code.count("{")
        if not opens:
            depth -= code.count("}")
            continue
        if "}" not in code:
            depth += opens
            peak = depth
        else:  # `} else {`, `{ let v_ = ...; }`: the deepest point within the line
            peak = depth
            for ch in code:
                depth += (ch == "{") - (ch == "}")
                peak = max(peak, depth)
        if peak > MAX_NESTING:
            raise CompileError(
                f"the kernel nests blocks more than {MAX_NESTING} deep in the generated WGSL, WGSL's limit "
                "(each if, elif and loop adds a level): split the nesting, e.g. a long elif chain into a "
                "lookup or into several ifs that each end the item", _loc(ir, site), ir.name)


def _loc(ir: KernelIR, site):
    """The IR location of the statement a `// file:line` comment names (None if none)."""
    if site is None:
        return ir.loc
    base, line = site[0], int(site[1])
    for t in ir.tasks:
        for n in walk_task(t):
            if n.loc is not None and n.loc.line == line and n.loc.file.replace("\\", "/").endswith(base):
                return n.loc
    return ir.loc
