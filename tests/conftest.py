import os
import tempfile

import numpy as np
import pytest

os.environ.setdefault("XDG_RUNTIME_DIR", "/tmp")
# the offline compile cache of the test run lives in a fresh directory, not in ~/.cache
os.environ.setdefault("GFXRT_CACHE_DIR", tempfile.mkdtemp(prefix="gfxrt-cache-"))
# and its signing key (compiler/cache_secret.py), not in ~/.config
os.environ.setdefault("GFXRT_CACHE_KEY_FILE", os.path.join(tempfile.mkdtemp(prefix="gfxrt-key-"), "cache-key"))


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(autouse=True)
def _sync_after_test():
    yield
    import gfxrt as gr
    gr.sync()


@pytest.fixture(scope="module", autouse=True)
def _no_new_device_in_the_test_process():
    """A test file must not open a new device in the test process (`gr.reset()`, a lost device):
    the module-level fields of every file collected before it would stay on the old one, and
    whichever file ran next would fail, depending on the order. A test that needs a new device runs
    a program of its own (tests/test_runtime.py `_run_program`)."""
    from gfxrt.engine import context
    before = context._state["runtime"]
    yield
    after = context._state["runtime"]
    assert before is None or after is before, "this test file replaced the process's device (see conftest.py)"
