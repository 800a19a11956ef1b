"""gfxrt stand-in for Taichi's tests/test_utils.py (and the old `ti.all_archs` & co.).

Our own code: it mirrors the documented behaviour of Taichi's test helpers. The suite runs
as Taichi's does with TI_WANTED_ARCHS=vulkan (gfxrt is a WebGPU/Vulkan backend): a test
whose `arch=` list leaves Vulkan out, whose `exclude=` names Vulkan, or that requires an
extension gfxrt does not have, is skipped with a reason starting "n/a:" (counted as not
applicable, not as a pass). Every other test calls gr.init(...) with the options gr.init
accepts, then runs.
"""
import functools
import inspect

import pytest

import gfxrt as gr


class _Arch:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"arch({self.name})"


cpu, x64, arm64, cuda, vulkan, metal, opengl, gles, cc, dx11, dx12, amdgpu = (
    _Arch(n) for n in ("cpu", "x64", "arm64", "cuda", "vulkan", "metal", "opengl", "gles", "cc", "dx11", "dx12",
                       "amdgpu"))
gpu = [cuda, vulkan, metal, opengl, dx11, dx12, amdgpu]
CURRENT_ARCH = vulkan


class _Ext:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"extension({self.name})"


class extension:  # noqa: N801 (Taichi's spelling)
    sparse = _Ext("sparse")
    quant = _Ext("quant")
    quant_basic = _Ext("quant_basic")
    data64 = _Ext("data64")
    adstack = _Ext("adstack")
    bls = _Ext("bls")
    assertion = _Ext("assertion")
    extfunc = _Ext("extfunc")
    mesh = _Ext("mesh")
    dynamic_index = _Ext("dynamic_index")
    async_mode = _Ext("async_mode")


# what gfxrt offers on lavapipe / NVIDIA: f64/i64 (shader-f64, shader-int64), the adstack,
# and assert (with debug=True). Sparse SNodes, quantized types, block-local storage (CUDA
# only in Taichi too), meshes and external functions have no counterpart.
SUPPORTED_EXTENSIONS = {"data64", "adstack", "assertion", "dynamic_index"}

# Taichi option name -> gr.init option name
_OPTION_RENAMES = {"ad_stack_size": "adstack_size"}


def _as_list(v):
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        out = []
        for a in v:
            out.extend(a if isinstance(a, list) else [a])
        return out
    return v if isinstance(v, list) else [v]


def init_options(options):
    accepted = inspect.signature(gr.init).parameters
    kw = {}
    for k, v in options.items():
        k = _OPTION_RENAMES.get(k, k)
        if k == "adstack_size" and v == 0:
            v = None  # Taichi: 0 = adaptive size; gfxrt: None
        if k in accepted and k != "arch":
            kw[k] = v
    kw.setdefault("offline_cache", True)
    return kw


def _arch_name(a) -> str:
    """An arch's name, whether it is the shim's constant or gfxrt's own (`gr.vulkan` in a
    module-level list such as test_ndarray's supported_archs_taichi_ndarray)."""
    return getattr(a, "name", None) or str(a).rsplit(".", 1)[-1]


def _na_reason(arch, exclude, require):
    arch, exclude, require = _as_list(arch), _as_list(exclude), _as_list(require)
    if arch and CURRENT_ARCH.name not in {_arch_name(a) for a in arch}:
        return "n/a: arch " + ",".join(_arch_name(a) for a in arch)
    if CURRENT_ARCH.name in {_arch_name(a) for a in exclude if not isinstance(a, tuple)}:
        return "n/a: excludes vulkan"
    missing = [e.name for e in require if e.name not in SUPPORTED_EXTENSIONS]
    if missing:
        return "n/a: requires " + ",".join(missing)
    return None


def _wrap(func, options, expect_raise=None):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:  # an error a previous test left pending (raised at a sync) belongs to that test
            gr.sync()
        except Exception:  # noqa: BLE001
            pass
        gr.init(**init_options(options))
        if expect_raise is None:
            func(*args, **kwargs)
            gr.sync()  # device-side errors of this test's kernels surface here, in this test
            return
        with pytest.raises(expect_raise):
            func(*args, **kwargs)
            gr.sync()

    return wrapper


def test(arch=None, exclude=None, require=None, extensions=None, **options):
    reason = _na_reason(arch, exclude, _as_list(require) + _as_list(extensions))

    def decorator(func):
        if reason:
            return pytest.mark.skip(reason=reason)(func)
        return _wrap(func, options)

    return decorator


def all_archs_with(**options):
    return test(**options)


def all_archs(func):
    return test()(func)


def host_arch_only(func):
    # arch-independent language tests Taichi runs once on the host: here on gfxrt's arch
    return test()(func)


program_test = all_archs


def archs_excluding(*excluded, **options):
    return test(exclude=list(excluded), **options)


def archs_with(archs, **options):
    return test(arch=archs, **options)


def require(*exts):
    reason = _na_reason(None, None, list(exts))

    def decorator(func):
        return pytest.mark.skip(reason=reason)(func) if reason else func

    return decorator


def must_throw(ex):
    def decorator(func):
        return _wrap(func, {}, expect_raise=ex)

    return decorator


def get_host_arch_list():
    # Taichi runs these arch-independent tests on the host: here on gfxrt's arch
    return [CURRENT_ARCH]


class _MissingName:
    """Stands for a name a `from taichi.x import y` wanted and gfxrt lacks: using it raises."""

    def __init__(self, module, name):
        self._what = f"module '{module}' has no attribute '{name}'"

    def __getattr__(self, item):
        if item.startswith("__"):
            raise AttributeError(item)
        raise AttributeError(self._what)

    def __call__(self, *a, **k):
        raise AttributeError(self._what)


def deferred_import(module, *names):
    import importlib
    try:
        mod = importlib.import_module(module)
    except ImportError:
        parent, _, last = module.rpartition(".")
        try:
            mod = getattr(importlib.import_module(parent), last)
        except (ImportError, AttributeError):
            mod = None
    return tuple(getattr(mod, n) if mod is not None and hasattr(mod, n) else _MissingName(module, n) for n in names)


def get_rel_eps():
    return 1e-6


class _Truthy:
    """Equal to anything with the same truth value (a bool expectation against 0 / 1 results)."""

    def __init__(self, value):
        self.value = bool(value)

    def __eq__(self, other):
        return self.value == bool(other)

    def __ne__(self, other):
        return not self == other


def approx(expected, **kwargs):
    """pytest.approx with a relative tolerance of at least get_rel_eps(); a bool expectation
    compares truth values, as Taichi's helper does."""
    if isinstance(expected, bool):
        return _Truthy(expected)
    # numpy comparisons give bool arrays; Taichi's CI pytest compared them to 0 / 1 results as
    # numbers (newer pytest.approx treats bools strictly): compare as integers, as intended
    import numpy as np
    if isinstance(expected, np.ndarray) and expected.dtype == np.bool_:
        expected = expected.astype(np.int32)
    return pytest.approx(expected, **{**kwargs, "rel": max(kwargs.get("rel", 1e-6), get_rel_eps())})


def allclose(x, y, **kwargs):
    return x == approx(y, **kwargs)


def expected_archs():
    return [CURRENT_ARCH]


def make_temp_file(*args, **kwargs):
    import os
    from tempfile import mkstemp
    fd, name = mkstemp(*args, **kwargs)
    os.close(fd)
    return name


__all__ = ["test"]


def _importable(name):
    import importlib.util
    return importlib.util.find_spec(name) is not None


def has_pytorch():
    """Taichi's taichi.lang.util.has_pytorch: whether its torch tests run."""
    return _importable("torch")


def has_paddle():
    return _importable("paddle")


def has_clangpp():
    return False  # gfxrt has no C++ external functions
