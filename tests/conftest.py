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
