"""Compile errors a user can read: the user's frames and the caret message only (gfxrt's own
frames behind GFXRT_FULL_TRACEBACK=1), and messages that say what the user wrote and what to do."""
import os
import subprocess
import sys
import textwrap
import traceback

import numpy as np
import pytest

import gfxrt as gr

F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
factor = 2.0
params = {"scale": 2.0}
weights = [1.0, 2.0]
OURS = (os.path.dirname(gr.__file__), os.path.dirname(os.path.dirname(gr.__file__)) + os.sep + "compiler")


def _frames(text: str) -> list[str]:
    return [ln for ln in text.splitlines() if ln.lstrip().startswith('File "')]


def _short(e: BaseException) -> str:
    """The traceback as printed, checked to hold no frame of gfxrt's and no chained block."""
    text = "".join(traceback.format_exception(e))
    assert not [f for f in _frames(text) if any(o + os.sep in f for o in OURS)], text
    assert "During handling" not in text and "direct cause" not in text, text
    return text


@gr.kernel
def typo(x: F1):
    for i in range(x.shape[0]):
        x[i] = x[i] * facter  # noqa: F821


@gr.func
def scaled(v):
    return v * facter  # noqa: F821


@gr.kernel
def calls_func(x: F1):
    for i in range(x.shape[0]):
        x[i] = scaled(x[i])



def test_kernel_call_shows_the_users_frames_and_the_caret():
    with pytest.raises(gr.CompileError) as e:
        typo(np.zeros(4, np.float32))
    text = _short(e.value)
    assert f'File "{__file__}"' in text and "x[i] = x[i] * facter" in text and "^" in text
    assert "did you mean 'factor'?" in text


def test_an_error_in_a_func_points_at_the_funcs_line():
    with pytest.raises(gr.CompileError) as e:
        calls_func(np.zeros(4, np.float32))
    text = _short(e.value)
    assert "return v * facter" in text and "in calls_func: `x[i] = scaled(x[i])`" in text
    line = scaled.fn.__code__.co_firstlineno + 2  # the decorator, the def, the line
    assert f'line {line}, in scaled' in text  # the func's name heads its line, as in Python's tracebacks


def test_grad_and_tape_errors_are_short():
    x = gr.field(gr.f32, shape=4, needs_grad=True)
    total = gr.field(gr.f32, shape=(), needs_grad=True)

    @gr.kernel
    def product():
        for i in x:
            gr.atomic_mul(total[None], x[i])  # compiles; its reverse mode does not

    with pytest.raises(gr.CompileError, match="atomic_mul is not differentiable") as e:
        with gr.Tape(total):
            product()
    _short(e.value)
    with pytest.raises(gr.CompileError) as e:
        product.grad()
    _short(e.value)


def test_data_oriented_method_errors_are_short():
    @gr.data_oriented
    class Sim:
        @gr.kernel
        def step(self, x: F1):
            for i in range(x.shape[0]):
                x[i] = facter  # noqa: F821

    with pytest.raises(gr.CompileError) as e:
        Sim().step(np.zeros(2, np.float32))
    _short(e.value)


def test_full_traceback_behind_the_env_var(monkeypatch):
    monkeypatch.setenv("GFXRT_FULL_TRACEBACK", "1")
    gr.init()  # the environment is read by gr.init (gfxrt/engine/init_options.py)

    @gr.kernel
    def typo2(x: F1):
        for i in range(x.shape[0]):
            x[i] = facter  # noqa: F821

    try:
        with pytest.raises(gr.CompileError) as e:
            typo2(np.zeros(2, np.float32))
    finally:
        monkeypatch.delenv("GFXRT_FULL_TRACEBACK")
        gr.init()
    text = "".join(traceback.format_exception(e.value))
    assert any(os.sep + "compiler" + os.sep in f for f in _frames(text))


def test_uncaught_compile_error_prints_short(tmp_path):
    script = tmp_path / "user.py"
    script.write_text(textwrap.dedent("""\
        import gfxrt as gr
        import numpy as np
        factor = 2.0

        @gr.kernel
        def k(x: gr.types.ndarray(dtype=gr.f32, ndim=1)):
            for i in range(x.shape[0]):
                x[i] = x[i] * facter

        k(np.zeros(4, np.float32))
        """))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("GFXRT_FULL_TRACEBACK", None)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120).stderr
    assert _frames(out) == [f'  File "{script}", line 10, in <module>'], out
    assert "During handling" not in out and f'File "{script}", line 8, in k' in out
    assert "x[i] = x[i] * facter" in out and "did you mean 'factor'?" in out


def test_internal_errors_keep_the_full_trace(monkeypatch):
    import gfxrt.compiler.frontend.exprs as exprs

    def broken(self, node, loc):
        raise ZeroDivisionError("a compiler bug")

    monkeypatch.setattr(exprs.ExprMixin, "visit_Constant", broken)

    @gr.kernel
    def k() -> gr.i32:
        return 1

    with pytest.raises(gr.CompileError, match="internal compiler error") as e:
        k()
    text = "".join(traceback.format_exception(e.value))
    assert "ZeroDivisionError" in text and any(os.sep + "compiler" + os.sep in f for f in _frames(text))


# -- messages -----------------------------------------------------------------------------------
def test_a_list_is_called_a_list():
    @gr.kernel
    def local_list() -> gr.f32:
        a = [1.0, 2.0]
        return a[5]

    @gr.kernel
    def global_list(i: gr.i32) -> gr.f32:
        return weights[i]

    @gr.kernel
    def a_tuple() -> gr.f32:
        return (1.0, 2.0)[5]

    with pytest.raises(gr.CompileError, match="index 5 out of range for a list of 2"):
        local_list()
    with pytest.raises(gr.CompileError, match="lists can only be indexed by compile-time integers"):
        global_list(1)
    with pytest.raises(gr.CompileError, match="index 5 out of range for a tuple of 2"):
        a_tuple()


def test_a_dict_read_with_a_missing_or_run_time_key_says_what_is_wrong():
    @gr.kernel
    def missing_key() -> gr.f32:
        return params["scal"]

    @gr.kernel
    def run_time_key(k: gr.i32) -> gr.f32:
        return {0: 1.0, 1: 2.0}[k]

    with pytest.raises(gr.CompileError, match=r"the dict 'params' has no key 'scal'"):
        missing_key()
    with pytest.raises(gr.CompileError, match=r"a dict key in a kernel must be known at compile time"):
        run_time_key(1)


def test_did_you_mean_for_locals_arguments_and_attributes():
    @gr.kernel
    def misspelt_arg(value: gr.f32) -> gr.f32:
        return valeu  # noqa: F821

    @gr.kernel
    def misspelt_builtin(v: gr.f32) -> gr.f32:
        return gr.sqrtt(v)

    @gr.kernel
    def nothing_close(v: gr.f32) -> gr.f32:
        return zzqqx  # noqa: F821

    with pytest.raises(gr.CompileError, match="name 'valeu' is not defined; did you mean 'value'?"):
        misspelt_arg(1.0)
    with pytest.raises(gr.CompileError, match="has no attribute 'sqrtt'; did you mean 'sqrt'?"):
        misspelt_builtin(1.0)
    with pytest.raises(gr.CompileError) as e:
        nothing_close(1.0)
    assert "did you mean" not in str(e.value)


@pytest.mark.parametrize("filename", ["<string>", "generated_kernels.py", "the module's file"])
def test_a_kernel_from_exec_asks_for_a_file(tmp_path, filename):
    # exec'd in a module's namespace: inspect reads a code's lines through the module's loader
    # (linecache's lazy loader) when its file is none, so the module's `helper` was compiled as k
    import importlib.util
    path = tmp_path / "helper_mod.py"
    path.write_text("def helper(v):\n    return [w for w in range(v)]\n")
    spec = importlib.util.spec_from_file_location("helper_mod", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sys.modules["helper_mod"] = mod
    try:
        mod.gr = gr
        src = "@gr.kernel\ndef k() -> gr.i32:\n    return 1\n"
        exec(compile(src, str(path) if filename == "the module's file" else filename, "exec"), mod.__dict__)
        with pytest.raises(gr.CompileError, match="kernels must be defined in a file") as e:
            mod.k()
        assert "internal" not in str(e.value)
    finally:
        del sys.modules["helper_mod"]
