"""The generator's view of the variables in scope: block-scoped, each with its type, whether
the generator may assign it, and for integers a static interval (what loop bounds are built
from, so trip counts stay small)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class VarInfo:
    name: str
    type: str
    kind: str                       # local / loop / param / kernel / counter / reduced
    lo: int | None = None           # a static bound of an int's value, when known
    hi: int | None = None

    @property
    def readable(self) -> bool:
        return self.kind != "reduced"

    @property
    def assignable(self) -> bool:
        return self.kind == "local"


class Scopes:
    def __init__(self):
        self.stack: list[dict] = [{}]
        self.names = 0

    def push(self):
        self.stack.append({})

    def pop(self):
        self.stack.pop()

    def declare(self, v: VarInfo):
        self.stack[-1][v.name] = v

    def get(self, name: str) -> VarInfo | None:
        for s in reversed(self.stack):
            if name in s:
                return s[name]
        return None

    def visible(self) -> list[VarInfo]:
        seen = {}
        for s in self.stack:
            seen.update(s)
        return list(seen.values())

    def fresh(self, prefix: str) -> str:
        self.names += 1
        return f"{prefix}{self.names}"
