"""Every public name has a docstring a user can read with help() (no adapter needed to import).

Public: the names in `gr.__all__`, and the `__all__` of the gfxrt modules it exports (gr.ad,
gr.types, ...). A function, class or module needs its own non-empty `__doc__`; a kernel-language
builtin (gr.sin, gr.atomic_add, ...: a `compiler.builtins.Builtin`) its `.doc`. Values (dtypes,
archs, axes) are data and are not checked.
"""
import inspect
import pydoc

from gfxrt.compiler.builtins import Builtin

import gfxrt as gr


def _public():
    seen = {}
    for name in gr.__all__:
        obj = getattr(gr, name)
        seen[f"gr.{name}"] = obj
        if inspect.ismodule(obj) and obj.__name__.startswith("gfxrt."):
            for sub in getattr(obj, "__all__", ()):
                seen[f"gr.{name}.{sub}"] = getattr(obj, sub)
    return seen


def test_public_names_have_docstrings():
    missing = []
    for name, obj in _public().items():
        if inspect.isclass(obj) or inspect.isfunction(obj) or inspect.ismodule(obj):
            doc = obj.__doc__  # its own: a class without one would show only its base's in help()
        elif isinstance(obj, Builtin):
            doc = obj.doc
        else:
            continue
        if not (doc or "").strip():
            missing.append(name)
    assert not missing, f"public names without a docstring: {missing}"


def test_kernel_help_covers_its_use():
    # help(gr.kernel) is where a user looks first: calling, reverse and forward mode, what the
    # argument annotations accept, and when it compiles
    doc = inspect.getdoc(gr.kernel)
    for needle in ("saxpy(2.0, x, y)", ".grad(", "gr.Tape", "gr.ad.FwdMode", "k.fwd", "gr.types.ndarray",
                   "gr.template()", "numpy array", "Specialization", "asynchronous", "gr.sync()", "TypeError"):
        assert needle in doc, f"help(gr.kernel) does not mention {needle!r}"
    assert ".grad" in inspect.getdoc(gr.Kernel) and "help(gr.kernel)" in inspect.getdoc(gr.Kernel)


def test_help_on_a_builtin_shows_its_own_text():
    """help(gr.sin) showed the Builtin class's implementer text (`lower(fe, args, kwargs, loc)` ...)."""
    for name, obj in _public().items():
        if isinstance(obj, Builtin) and obj.doc.strip():
            text = pydoc.render_doc(obj, renderer=pydoc.plaintext)
            assert obj.doc.strip().splitlines()[0].strip() in text and "lower(fe" not in text, name
