"""Issue 21, item 1: which layer runs Taichi's test_for_break3 wrong on an NVIDIA H100 (our WGSL, naga's
SPIR-V or the driver)? Prints one line per experiment:

1. gfxrt: the kernel itself, a summing variant, and `--random N` random integer kernels of that shape
   (loopgen.py) against their plain-Python run;
2. the hand-written WGSL variants of variants.py through wgpu (naga 29 inside wgpu-native);
3. raw Vulkan (vkrun.py, no wgpu, no naga): the SPIR-V naga gave the driver for each of them (captured by
   the dumpspv layer when VK_INSTANCE_LAYERS=VK_LAYER_GFXRT_dump and GFXRT_SPV_DUMP are set), and the
   .spv files of a folder given with --spv (glslang's compile of the GLSL variants, naga 30's of the WGSL).

    python3 experiments/loopbreak/probe.py --random 400 --spv .probe/spv --save $OUT
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import loopgen  # noqa: E402
import variants  # noqa: E402


def _dumped(before: set) -> list[str]:
    d = os.environ.get("GFXRT_SPV_DUMP")
    if not d:
        return []
    return sorted(set(os.listdir(d)) - before)


def _dumpset() -> set:
    d = os.environ.get("GFXRT_SPV_DUMP")
    return set(os.listdir(d)) if d else set()


def gfxrt_checks(n_random: int, save: str | None, first: int = 0) -> dict:
    import gfxrt as gr
    gr.init(offline_cache=False)
    print("adapter:", gr.runtime().dev.adapter.info.get("device", "?"), flush=True)
    x = gr.field(gr.i32, shape=(8, 8))

    @gr.kernel
    def brk():
        for i in range(8):
            for j in range(i, 8 - i):
                if i == 0:
                    break
                x[i, j] = 100 * i + j

    brk()
    if save:
        with open(os.path.join(save, "brk.wgsl"), "w") as f:
            f.write(brk.specialize(()).spec.wgsl)
    got = x.to_numpy()
    ok = (got == variants.expected()).all()
    print(f"gfxrt test_for_break3: {'OK' if ok else 'WRONG'}")
    if not ok:
        print(got)
    s = gr.field(gr.i32, shape=8)

    @gr.kernel
    def brk_sum():
        for i in range(8):
            t = 0
            for j in range(i, 8 - i):
                if i == 0:
                    break
                t += 10 * j + 1
            s[i] = t

    brk_sum()
    want = [sum(10 * j + 1 for j in range(i, 8 - i)) if i else 0 for i in range(8)]
    print(f"gfxrt break3 sum: {'OK' if list(s.to_numpy()) == want else 'WRONG'} got {list(s.to_numpy())} want {want}")
    wrong = []
    t0 = time.perf_counter()
    for seed in range(first, first + n_random):
        src = loopgen.program(seed)
        a = np.random.default_rng(seed).integers(0, 20, loopgen.N).astype(np.int32)
        bad = _mismatch(gr, src, a)
        if bad is None:
            continue
        wrong.append(seed)
        small = shrink(gr, src, a)
        got, want = _mismatch(gr, small, a)
        text = (f"# loopgen seed {seed}, minimized; a = {a.tolist()}\n# got  {got.tolist()}\n# want {want.tolist()}\n"
                f"# original:\n" + "".join("#   " + ln + "\n" for ln in src.splitlines()) + small)
        print(text, flush=True)
        if save:
            with open(os.path.join(save, f"loopgen_{seed}.py"), "w") as f:
                f.write(text)
    if n_random:
        print(f"gfxrt random loop kernels: {len(wrong)} of {n_random} wrong ({time.perf_counter() - t0:.1f} s);"
              f" seeds {wrong[:40]}")
    return {"wrong": wrong}


def _mismatch(gr, src: str, a: np.ndarray):
    """None if the kernel of `src` agrees with its plain-Python run on input a, else (got, want)."""
    env: dict = {}
    exec(compile(src, "<loopgen>", "exec"), env)
    want = np.zeros(loopgen.N, np.int32)
    env["prog"](a, want)
    A = gr.types.ndarray(dtype=gr.i32, ndim=1)
    path = f"/tmp/loopgen_{os.getpid()}_{abs(hash(src))}.py"
    with open(path, "w") as f:
        f.write(src.replace("def prog(a, out):", "def prog(a: A, out: A):"))
    genv = {"gr": gr, "A": A}
    exec(compile(open(path).read(), path, "exec"), genv)
    out = np.zeros(loopgen.N, np.int32)
    gr.kernel(genv["prog"])(a, out)
    os.remove(path)
    return None if (out == want).all() else (out, want)


def shrink(gr, src: str, a: np.ndarray) -> str:
    """Remove statements (and unwrap ifs) of the kernel while it still disagrees with Python."""
    import ast
    tree = ast.parse(src)

    def bodies(t):
        for node in ast.walk(t):
            for field in ("body", "orelse"):
                b = getattr(node, field, None)
                if isinstance(b, list) and b and isinstance(node, (ast.For, ast.If, ast.While)):
                    yield b

    changed = True
    while changed:
        changed = False
        loop_i = tree.body[0].body[0]  # for i in range(N)
        for b in list(bodies(loop_i)):
            for k in range(len(b) - 1, -1, -1):
                trial = ast.parse(ast.unparse(tree))
                # find the same body in the copy by position in the walk
                tb = list(bodies(trial.body[0].body[0]))[list(bodies(loop_i)).index(b)]
                removed = tb.pop(k)
                if not tb:
                    tb.append(ast.Pass())
                cand = ast.unparse(trial) + "\n"
                try:
                    bad = _mismatch(gr, cand, a)
                except Exception:
                    bad = None
                if bad is not None:
                    tree = trial
                    changed = True
                    break
                del removed
            if changed:
                break
    return ast.unparse(tree) + "\n"


def wgsl_checks(checks: str) -> dict:
    """Each WGSL variant through wgpu-native; `checks`: "full" = wgpu's default (naga adds its loop
    bounding counter to every loop), "bounds" = gfxrt's default (no loop bounding)."""
    import wgpu

    from gfxrt.engine import ffi
    adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    device = adapter.request_device_sync()
    dumps = {}
    bgl = device.create_bind_group_layout(entries=[
        {"binding": b, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": "storage"}} for b in (0, 1)])
    layout = device.create_pipeline_layout(bind_group_layouts=[bgl])
    for name, src in variants.WGSL.items():
        before = _dumpset()
        x = np.zeros(64, np.int32)
        aux = variants.aux()
        bx = device.create_buffer_with_data(data=x, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
        ba = device.create_buffer_with_data(data=aux, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
        mod = ffi.create_shader_module(device, src, name, checks)
        pipe = device.create_compute_pipeline(layout=layout, compute={"module": mod, "entry_point": "main"})
        bg = device.create_bind_group(layout=bgl, entries=[
            {"binding": 0, "resource": {"buffer": bx}}, {"binding": 1, "resource": {"buffer": ba}}])
        enc = device.create_command_encoder()
        p = enc.begin_compute_pass()
        p.set_pipeline(pipe)
        p.set_bind_group(0, bg)
        p.dispatch_workgroups(1)
        p.end()
        device.queue.submit([enc.finish()])
        got = np.frombuffer(device.queue.read_buffer(bx), np.int32).reshape(8, 8)
        ok = (got == variants.expected()).all()
        new = _dumped(before)
        dumps[name] = new
        print(f"wgpu/{checks} {name}: {'OK' if ok else 'WRONG'}  (spv {new})")
        if not ok:
            print(got)
    return dumps


def vulkan_checks(dumps: dict, spv_dir: str | None) -> None:
    import vkrun
    r = vkrun.Runner()
    print("raw vulkan on", r.name)
    files = []
    d = os.environ.get("GFXRT_SPV_DUMP")
    for name, new in dumps.items():
        files += [(f"naga29_{name}", os.path.join(d, f)) for f in new]  # noqa: PERF401
    if spv_dir:
        files += [(f[:-4], os.path.join(spv_dir, f)) for f in sorted(os.listdir(spv_dir)) if f.endswith(".spv")]
    for name, path in files:
        spv = open(path, "rb").read()
        got = r.run(spv, "main", [np.zeros(64, np.int32), variants.aux()], 1)[0].reshape(8, 8)
        ok = (got == variants.expected()).all()
        print(f"vulkan {name}: {'OK' if ok else 'WRONG'}")
        if not ok:
            print(got)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--random", type=int, default=0)
    ap.add_argument("--first", type=int, default=0, help="first random seed")
    ap.add_argument("--spv", default=None)
    ap.add_argument("--save", default=None)
    ap.add_argument("--skip", default="", help="comma list of: gfxrt,wgsl,vulkan")
    ap.add_argument("--checks", default="full", help="naga's runtime checks for the WGSL variants: full | bounds")
    a = ap.parse_args()
    skip = set(a.skip.split(","))
    if "gfxrt" not in skip:
        gfxrt_checks(a.random, a.save, a.first)
    dumps = {} if "wgsl" in skip else wgsl_checks(a.checks)
    if "vulkan" not in skip:
        vulkan_checks(dumps, a.spv)


if __name__ == "__main__":
    main()
