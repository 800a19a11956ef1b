"""The public API from several Python threads: launches (numpy and device arrays), readbacks,
allocation and sync are serialized; results are right and the process does not abort."""
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = textwrap.dedent("""
    import threading
    import numpy as np
    import gfxrt as gr

    F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)

    @gr.kernel
    def inc(x: F1, k: gr.f32):
        for i in range(x.shape[0]):
            x[i] += k

    @gr.kernel
    def total(x: F1) -> gr.f32:
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i]
        return s

    THREADS, LAUNCHES = 4, 200
    shared = gr.ndarray(gr.f32, 128)
    errors = []
    start = threading.Barrier(THREADS)

    def worker(t):
        try:
            own = gr.ndarray(gr.f32, 256)
            start.wait()
            for n in range(LAUNCHES):
                a = np.full(64, n + t, np.float32)
                inc(a, 1.0)                          # numpy argument: copied in and back
                assert (a == n + t + 1).all(), (t, n, a[:4])
                inc(own, 1.0)                        # device arrays: the fast path
                inc(shared, 1.0)
                if n % 50 == 0:
                    fresh = gr.ndarray(gr.f32, 100)  # allocation, zeroed
                    assert not fresh.to_numpy().any()
                    assert total(own) == (n + 1) * 256
                if n % 67 == 0:
                    gr.sync()
            assert (own.to_numpy() == LAUNCHES).all()
        except BaseException as e:  # noqa: BLE001
            errors.append(f"thread {t}: {e!r}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    np.testing.assert_array_equal(shared.to_numpy(), np.full(128, THREADS * LAUNCHES, np.float32))
    print("threads ok")
""")


def test_launches_from_several_threads(tmp_path):
    script = tmp_path / "threads.py"  # kernels need a source file
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    proc = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-3000:])
    assert "threads ok" in proc.stdout


BACKENDS = textwrap.dedent("""
    import wgpu
    import gfxrt as gr
    from gfxrt.engine.device import choose_adapter
    from gfxrt.errors import GfxrtError

    gr.init()
    backends = {str(a.info["backend_type"]).lower() for a in wgpu.gpu.enumerate_adapters_sync()}
    assert "opengl" not in backends, backends  # the instance has no GL backend (no EGL context)
    assert "opengl" not in str(gr.device().adapter.info["backend_type"]).lower()
    try:
        gl = choose_adapter("OpenGL")  # named: a GL-only instance of its own
    except GfxrtError:
        print("no OpenGL adapter on this machine")
    else:
        assert str(gl.info["backend_type"]).lower() == "opengl", gl.summary
    print("backends ok")
""")


def test_the_opengl_backend_is_created_only_when_named(tmp_path):
    script = tmp_path / "backends.py"
    script.write_text(BACKENDS)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p))
    env.pop("GFXRT_ADAPTER", None)
    proc = subprocess.run([sys.executable, str(script)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-3000:])
    assert "backends ok" in proc.stdout
