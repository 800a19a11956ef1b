"""The dispatch recorder and the device seam (gfxrt/engine/recorder.py, docs/design.md, "Dispatch"): one
definition of a dispatch behind every path, a warm launch two Python frames deep, raw
wgpu-native handles read only by gfxrt/engine/ffi.py, the runtime's private state touched only by
the runtime."""
import pathlib
import re
import sys

import numpy as np

import gfxrt as gr
from gfxrt.engine import recorder

GFXRT = pathlib.Path(gr.__file__).parent
I1 = gr.types.ndarray(dtype=gr.i32, ndim=1)
F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)
RUNTIME = {"engine/runtime.py", "engine/recorder.py", "engine/status.py"}  # GfxRuntime and its two parts


def _name(p: pathlib.Path) -> str:
    return p.relative_to(GFXRT).as_posix()


@gr.kernel
def saxpy(a: gr.f32, x: F1, y: F1):
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


@gr.kernel
def pair_sums(x: I1, out: I1):
    gr.loop_config(block_dim=2)
    for i in range(x.shape[0]):
        pad = gr.simt.block.SharedArray((2,), gr.i32)
        pad[gr.simt.block.thread_idx()] = x[i] if i < x.shape[0] else 0
        gr.simt.block.sync()
        if i < x.shape[0]:
            out[i] = pad[0] + pad[1]


def test_only_ffi_reads_raw_wgpu_native_handles():
    users = [_name(p) for p in GFXRT.rglob("*.py") if re.search(r"\._internal\b", p.read_text())]
    assert users == ["engine/ffi.py"], users


def test_nothing_outside_the_runtime_touches_its_private_state():
    own = set()
    for name in RUNTIME:
        own |= set(re.findall(r"self\.(_[a-z][a-z_]*)", (GFXRT / name).read_text()))
    pattern = re.compile(r"\b(?:rt|runtime\(\))\.(" + "|".join(sorted(own)) + r")\b")
    hits = [f"{_name(p)}: {m.group(0)}" for p in GFXRT.rglob("*.py") if _name(p) not in RUNTIME
            for line in p.read_text().splitlines() if not line.lstrip().startswith("#")
            for m in pattern.finditer(line)]
    assert hits == []


def test_every_generated_path_records_the_recorders_dispatch():
    """The fast path and a replay contain the lines dispatch_source writes for them."""
    x, y = gr.ndarray(gr.f32, 16), gr.ndarray(gr.f32, 16)
    saxpy(2.0, x, y)
    L = next(iter(saxpy._cache.values())).launcher
    one = recorder.dispatch_source("pipes[0]", "bg", "g[0]", "imm", L.params_size)
    assert "\n".join("        " + s for s in one) in L.fast.source
    with gr.graph() as g:
        saxpy(2.0, x, y)
        saxpy(2.0, x, y)
    src = g._encoders[0].source
    # settings made once, none tested: the replay knows what it bound
    assert src.count("set_pipeline") == 1 and "if R._cur" not in src and src.count("dispatch(p") == 2


def test_warm_launch_is_two_frames_deep():
    """A warm launch runs Kernel.__call__ and the generated fast path, which calls
    wgpu-native directly: no other Python function below them (the argument key aside)."""
    x, y = gr.ndarray(gr.f32, 16), gr.ndarray(gr.f32, 16)
    for _ in range(3):
        saxpy(2.0, x, y)
    stacks = []

    def profile(frame, event, arg):
        if event == "call":
            names, f = [], frame
            while f is not None and f.f_code is not user.__code__:
                names.append(f.f_code.co_name)
                f = f.f_back
            stacks.append(tuple(reversed(names)))

    def user():
        saxpy(2.0, x, y)
    sys.setprofile(profile)
    try:
        user()
    finally:
        sys.setprofile(None)
    stacks = [s for s in stacks if s]  # (the call of `user` itself)
    assert ("__call__", "fast") in stacks
    assert max(map(len, stacks)) == 2 and all(s[-1] in ("__call__", "fast", "<lambda>") for s in stacks), stacks
    gr.sync()


def test_replay_of_more_than_65535_blocks_dispatches_a_2d_grid(rng):
    # a convergent task runs each block once: past 65535 blocks the recorder dispatches a 2-D
    # grid, in a replay as in an eager launch
    n = 2 * 65535 * 2 + 7
    a = rng.integers(-1000, 1000, n).astype(np.int32)
    x, out = gr.ndarray(gr.i32, n), gr.ndarray(gr.i32, n)
    x.from_numpy(a)
    with gr.graph() as g:
        pair_sums(x, out)
    g.replay()
    np.testing.assert_array_equal(out.to_numpy(), np.repeat(np.append(a, 0).reshape(-1, 2).sum(1), 2)[:n])


def test_the_runtime_uses_only_the_device_interface():
    """Every device call gfxrt makes is a name of the DeviceCalls protocol, which
    gfxrt/engine/ffi.py implements whole: a second implementation knows what to provide."""
    from gfxrt.engine import device_api, ffi
    members = {n for n in vars(device_api.DeviceCalls) if not n.startswith("_")} | \
        set(device_api.DeviceCalls.__annotations__)
    # the implementations (device.py opens adapters)
    implementation = ("engine/ffi.py", "engine/webgpu.py", "engine/device.py", "engine/device_api.py")
    used = {m for p in GFXRT.rglob("*.py") if _name(p) not in implementation
            for m in re.findall(r"\bffi\.([A-Za-z_]\w*)", p.read_text()) if m != "py"}
    assert used <= members, used - members
    assert all(hasattr(ffi, n) for n in members), [n for n in members if not hasattr(ffi, n)]
