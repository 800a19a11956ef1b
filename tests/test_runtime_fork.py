"""os.fork() after gfxrt opened a device: the child never hangs. Its first use of gfxrt,
gr.init() included, raises gr.ForkedProcessError naming the fix (the 'spawn' or 'forkserver'
start method); its exit does not wait on the parent's device; the parent goes on unharmed.
Each script runs in a subprocess with a timeout and kills a child that hangs, so a
regression fails instead of hanging the suite."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no os.fork on this platform")

PRELUDE = textwrap.dedent("""
    import os, signal, sys, threading, time
    import numpy as np
    import gfxrt as gr
    from gfxrt.engine import context

    F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)

    @gr.kernel
    def add1(x: F1):
        for i in range(x.shape[0]):
            x[i] += 1.0

    def fork(child, timeout=60):
        '''Run child() in a forked child; its exit status (0: returned normally), or 'hung'.'''
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                child()
                code = 0
            except BaseException:
                import traceback
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
            sys.exit(code)  # a normal exit: the interpreter's finalization runs in the child
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status)
            time.sleep(0.02)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return "hung"
""")

CHILD = PRELUDE + textwrap.dedent("""
    x = gr.ndarray(gr.f32, 8)
    add1(x)
    assert (x.to_numpy() == 1).all()
    add1(x)          # recorded, not submitted, at the fork
    add1(np.zeros(4, np.float32))
    gr.runtime().flush()
    add1(x)          # and one more recorded after a submission that may be in flight

    def expect_fork_error(use):
        try:
            use()
        except gr.ForkedProcessError as e:
            assert "spawn" in str(e) and str(os.getppid()) in str(e), e
        else:
            raise AssertionError("gfxrt was usable in the forked child")

    def child():
        for use in (lambda: x.to_numpy(), lambda: add1(np.zeros(4, np.float32)), lambda: gr.ndarray(gr.f32, 4),
                    lambda: add1(x), lambda: x.fill(0), gr.init, gr.runtime, lambda: gr.reset() or gr.init()):
            expect_fork_error(use)
        gr.sync()    # nothing launched in this process: nothing to wait for
        del globals()["x"]  # dropping the parent's array in the child releases nothing of the parent's
        import gc
        gc.collect()

    assert fork(child) == 0
    add1(x)
    np.testing.assert_array_equal(x.to_numpy(), np.full(8, 4, np.float32))  # the parent is unharmed
    # a child that never uses gfxrt exits at once, also with work in flight in the parent
    add1(x)
    gr.runtime().flush()
    t = time.monotonic()
    assert fork(lambda: None) == 0
    assert time.monotonic() - t < 20
    np.testing.assert_array_equal(x.to_numpy(), np.full(8, 5, np.float32))
    # another thread is inside gfxrt (holds its lock) when the main thread forks
    holding, release = threading.Event(), threading.Event()

    def holder():
        with context.LOCK:
            holding.set()
            release.wait()

    other = threading.Thread(target=holder)
    other.start()
    holding.wait()

    def locked_child():  # without a fresh lock, this would wait forever for the one held at the fork
        expect_fork_error(lambda: gr.ndarray(gr.f32, 4))

    status = fork(locked_child)
    release.set()
    other.join()
    assert status == 0, status
    np.testing.assert_array_equal(x.to_numpy(), np.full(8, 5, np.float32))

    # multiprocessing's 'fork' start method: the workers raise, the pool does not deadlock
    import multiprocessing

    def work(n):
        a = np.zeros(n, np.float32)
        add1(a)
        return float(a.sum())

    with multiprocessing.get_context("fork").Pool(2) as pool:
        try:
            pool.map(work, [3, 4])
        except gr.ForkedProcessError as e:
            assert "spawn" in str(e)
        else:
            raise AssertionError("a forked worker used a device")
    np.testing.assert_array_equal(x.to_numpy(), np.full(8, 5, np.float32))
    print("fork ok")
""")

EXIT = PRELUDE + textwrap.dedent("""
    import atexit, ctypes
    x = gr.ndarray(gr.f32, 8)
    add1(x)
    gr.runtime().flush()
    # a stand-in for the driver's C exit handlers, which in a forked child tear down the
    # parent's device (NVIDIA): registered in the parent, they must not run in the child
    # (a library's C++ destructor is registered this way; abort ignores the argument)
    libc = ctypes.CDLL(None)
    libc.__cxa_atexit.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)
    assert libc.__cxa_atexit(ctypes.cast(libc.abort, ctypes.c_void_p), None, None) == 0

    def child_status(body):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            atexit.register(lambda: os.write(w, b"atexit ran"))  # Python's exit callbacks still run
            body()
            sys.exit(0)
        os.close(w)
        _, status = os.waitpid(pid, 0)
        said = os.read(r, 100)
        os.close(r)
        return os.waitstatus_to_exitcode(status), said

    def fail():
        raise RuntimeError("uncaught in the child")

    assert child_status(lambda: sys.exit(3)) == (3, b"atexit ran")
    assert child_status(lambda: None) == (0, b"atexit ran")
    assert child_status(fail) == (1, b"atexit ran")
    add1(x)
    np.testing.assert_array_equal(x.to_numpy(), np.full(8, 2, np.float32))
    print("exit ok", flush=True)
    os._exit(0)  # the parent's own exit would run the stand-in
""")


def _run(tmp_path, name: str, script: str, marker: str) -> None:
    path = tmp_path / f"{name}.py"  # kernels need a source file
    path.write_text(script)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run([sys.executable, str(path)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=240)
    assert proc.returncode == 0 and marker in proc.stdout, (proc.returncode, proc.stdout[-2000:],
                                                            proc.stderr[-4000:])


def test_forked_child_gets_a_clear_error_and_never_hangs(tmp_path):
    _run(tmp_path, "fork_child", CHILD, "fork ok")


def test_forked_child_exits_with_its_status_and_skips_the_drivers_exit_handlers(tmp_path):
    _run(tmp_path, "fork_exit", EXIT, "exit ok")
