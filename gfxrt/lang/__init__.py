"""`gr.lang.impl`: the few pieces of Taichi's `ti.lang.impl` that programs and test suites
read (the current configuration), for code ported by renaming `ti` to `gr`."""
from . import impl  # noqa: F401
