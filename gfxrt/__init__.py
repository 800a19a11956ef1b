"""gfxrt: a Python kernel language with a WebGPU runtime.

    import gfxrt as gr

    @gr.kernel
    def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1),
              y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
        for i in range(x.shape[0]):
            y[i] = a * x[i] + y[i]

One installed name: the compiler is `gfxrt.compiler` (pure: no wgpu), the kernel library
`gfxrt.kernels`. `import gfxrt` itself loads neither the device nor numpy: the public API
(gfxrt/api.py) loads on the first use of one of its names (PEP 562 `__getattr__`), so that
`import gfxrt.compiler` stays pure (docs/design.md "Layers", "One installed name"); a namespace
named through the package (`gr.math`, `gr.types`) loads the API with it.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types as _types

__version__ = "0.1.0"

_HERE = os.path.dirname(__file__)
_CHECKOUT = os.path.dirname(_HERE)
# The repository's top-level folders that the wheel installs as gfxrt/compiler and gfxrt/kernels
# (pyproject.toml's package-dir); in a checkout used without installing they stay beside gfxrt/.
_FOLDERS = ("compiler", "kernels")
# Submodules named like a public name with another value (gfxrt/kernel.py beside the decorator
# gr.kernel): importing one must not bind the module over the API's name (tests/test_one_name.py).
_SHADOWED = frozenset({"graph", "kernel"})
_SUBMODULES = frozenset(n.removesuffix(".py") for n in os.listdir(_HERE) if n.isidentifier() or n.endswith(".py"))
_SUBMODULES |= set(_FOLDERS)
_loading = False  # the API is being loaded: its own `from . import x` find submodules


class _CheckoutFinder:
    """gfxrt.compiler and gfxrt.kernels in a checkout: the folders beside gfxrt/, the only two names
    it finds (an installed gfxrt has them inside gfxrt/ and installs no finder)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        package, _, folder = name.partition(".")
        if package != __name__ or folder not in _FOLDERS:
            return None
        d = os.path.join(_CHECKOUT, folder)
        return importlib.util.spec_from_file_location(name, os.path.join(d, "__init__.py"),
                                                      submodule_search_locations=[d])


if not os.path.isdir(os.path.join(_HERE, "compiler")) and os.path.isdir(os.path.join(_CHECKOUT, "compiler")):
    sys.meta_path.insert(0, _CheckoutFinder)  # before finders of other checkouts (an editable install)


def _load() -> None:
    global _loading
    _loading = True
    try:
        import gfxrt.api as api
    finally:
        _loading = False
    globals().update((k, v) for k, v in vars(api).items() if not k.startswith("__") or k == "__all__")


def __getattr__(name: str):
    if (name.startswith("__") and name != "__all__") or not name.isidentifier():
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _loading:  # the API's own `from . import x`: the import system imports x, as in any package
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in _SUBMODULES and name not in _SHADOWED:
        if name not in _FOLDERS and "__all__" not in globals():
            # gr.math, gr.types, ...: the API completes the types they hand out (`vec3.ndarray`,
            # a struct type's `.field`), so a program whose first name is one of them loads it too
            _load()
        return importlib.import_module(f"{__name__}.{name}")  # a submodule: gr.math, gfxrt.compiler, ...
    if "__all__" not in globals():  # the API is not loaded yet (gfxrt.api may be, imported by name)
        _load()
        if name in globals():
            return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    if "__all__" not in globals():  # the API is not loaded yet (gfxrt.api may be, imported by name)
        _load()
    return sorted(globals())


class _Package(_types.ModuleType):
    def __setattr__(self, name, value):
        if name in _SHADOWED and isinstance(value, _types.ModuleType):
            return  # the import system binding submodule gfxrt.kernel: gr.kernel stays the API's
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
