"""What the compiler may assume about the device it generates code for."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Target:
    """Device capabilities that change the generated code (part of every cache key)."""

    features: frozenset[str] = field(default_factory=frozenset)
    max_immediate_size: int = 0
    workgroup_size: int = 256  # threads per block of parallel tasks (H100 saxpy: 256 > 64 with interleave)
    debug: bool = False
    adstack_size: int | None = None  # gr.init(adstack_size=N): fixed adstack slots per thread
    adstack_private: int = 32        # adstack slots per thread kept in private memory
    interleave: bool = True          # two parallel iterations per grid-stride step (codegen/interleave.py)

    @property
    def immediates(self) -> bool:
        return "immediates" in self.features and self.max_immediate_size > 0

    def has(self, feature: str) -> bool:
        return feature in self.features

    def key(self) -> tuple:
        return (tuple(sorted(self.features)), self.max_immediate_size, self.workgroup_size, self.debug,
                self.adstack_size, self.adstack_private, self.interleave)
