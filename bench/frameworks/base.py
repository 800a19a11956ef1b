"""The adapter every framework implements (bench/frameworks/<kind>_fw.py)."""
from __future__ import annotations

import numpy as np


class Unavailable(Exception):
    """The framework is not installed or cannot start on the requested backend."""


class Framework:
    """A started framework: its module, backend, sync, optional device timer and array helpers.

    Subclasses set `mod`, `backend`, `version`, `device` in `start()`; `unsupported` lists
    exception types that mean "this framework cannot do that (yet)" rather than a bug.
    """

    unsupported: tuple[type[BaseException], ...] = ()

    def __init__(self, kind: str, backend: str | None, spec: str):
        self.kind = kind
        self.requested = backend
        self.spec = spec
        self.mod = None
        self.backend = ""
        self.version = ""
        self.device = ""
        self.details: dict = {}
        self._memo: dict = {}

    def start(self) -> None:
        """Import and initialize; raise `Unavailable` with the reason if it cannot."""
        raise NotImplementedError

    def sync(self) -> None:
        """Wait until all queued work has finished."""

    def device_timer(self):
        """A factory of context managers whose `.seconds` is the device time spent inside
        (None when unknown), or None when the framework has no device timer here."""
        return None

    def to_device(self, a: np.ndarray, needs_grad: bool = False):
        """A framework array holding a copy of `a`."""
        raise NotImplementedError

    def to_numpy(self, x) -> np.ndarray:
        """A numpy copy of a framework array (waits for pending work)."""
        raise NotImplementedError

    def memo(self, key, factory):
        """Build something once per framework process (compiled kernels shared by cases)."""
        if key not in self._memo:
            self._memo[key] = factory()
        return self._memo[key]

    def info(self) -> dict:
        """What the JSON records about this framework."""
        return {"kind": self.kind, "spec": self.spec, "backend": self.backend, "version": self.version,
                "device": self.device, **self.details}
