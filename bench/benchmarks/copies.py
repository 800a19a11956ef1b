"""Batched host <-> device copies: 64 small arrays (256 float32 each) moved one call at a time,
and in one batched call (gr.copy_tensors; torch._foreach_copy_ where torch has it).

Issue 6: gr.copy_tensors of 64 small host arrays at least 5x faster than 64 from_numpy calls.
"""
import numpy as np

from ..registry import NA, Case, Work, benchmark
from ._common import close, rand_f32

COUNT, N = 64, 256


def _speedups(got: dict) -> dict:
    out = {}
    for way in ("upload", "download"):
        one, batched = got.get(f"{way} 64, one by one"), got.get(f"{way} 64, batched")
        if one and batched:
            out[f"{way}: one by one / batched"] = one / batched
    return out


copies = benchmark(
    "copies", "64 arrays of 256 float32 to / from the device: one call each vs one batched call (time per 64)",
    unit="us", group="copies", derived=_speedups,
    cases=lambda quick: [Case(f"{w} 64, {how}", (w, how == "batched")) for w in ("upload", "download")
                         for how in ("one by one", "batched")],
    na={"numpy": "no device"},
    note="host time per 64 copies at the harness's throughput (one sync per batch of runs); a download "
         "waits for its data, so one by one means 64 round trips")


def _data():
    return [rand_f32(N, 40 + k) for k in range(COUNT)]


def _check(gets, want):
    def check():
        for g, w in zip(gets(), want):
            problem = close(g, w, rtol=0, atol=0)
            if problem:
                return problem
        return None
    return check


@copies.impl("gfxrt")
def _gfxrt(fw, param):
    way, batched = param
    gr = fw.mod
    hosts = _data()
    if way == "upload":
        devs = [gr.ndarray(gr.f32, N) for _ in range(COUNT)]
        pairs = list(zip(devs, hosts))
        if batched:
            run, impl = (lambda: gr.copy_tensors(pairs)), "gr.copy_tensors([(x, a), ...])"
        else:
            def run():
                for d, h in pairs:
                    d.from_numpy(h)
            impl = "x.from_numpy(a) x 64"
        return Work(run=run, check=_check(lambda: [d.to_numpy() for d in devs], hosts), impl=impl)
    devs = [fw.to_device(h) for h in hosts]
    outs = [np.empty(N, np.float32) for _ in range(COUNT)]
    pairs = list(zip(outs, devs))
    if batched:
        run, impl = (lambda: gr.copy_tensors(pairs)), "gr.copy_tensors([(a, x), ...])"
    else:
        def run():
            for o, d in pairs:
                o[...] = d.to_numpy()
        impl = "a[...] = x.to_numpy() x 64"
    return Work(run=run, check=_check(lambda: outs, hosts), impl=impl)


@copies.impl("torch")
def _torch(fw, param):
    way, batched = param
    torch = fw.mod
    hosts = _data()
    if batched and not hasattr(torch, "_foreach_copy_"):
        raise NA("this torch has no torch._foreach_copy_")
    if way == "upload":
        srcs = [torch.from_numpy(h) for h in hosts]
        devs = [torch.empty(N, device=fw.dev) for _ in range(COUNT)]
        if batched:
            run, impl = (lambda: torch._foreach_copy_(devs, srcs)), "torch._foreach_copy_(device, host)"
        else:
            def run():
                for d, s in zip(devs, srcs):
                    d.copy_(s)
            impl = "d.copy_(host tensor) x 64"
        return Work(run=run, check=_check(lambda: [fw.to_numpy(d) for d in devs], hosts), impl=impl)
    devs = [fw.to_device(h) for h in hosts]
    outs = [torch.empty(N) for _ in range(COUNT)]
    if batched:
        run, impl = (lambda: torch._foreach_copy_(outs, devs)), "torch._foreach_copy_(host, device)"
    else:
        def run():
            for o, d in zip(outs, devs):
                o.copy_(d)
        impl = "host.copy_(d) x 64"
    return Work(run=run, check=_check(lambda: [o.numpy() for o in outs], hosts), impl=impl)


@copies.impl("taichi", "quadrants", "warp")
def _one_by_one(fw, param):
    way, batched = param
    if batched:
        raise NA(f"{fw.kind} has no batched copy call")
    hosts = _data()
    if way == "upload":
        devs = [fw.to_device(np.zeros(N, np.float32)) for _ in range(COUNT)]
        if fw.kind == "warp":
            wp = fw.mod
            srcs = [wp.array(h, device="cpu") for h in hosts]

            def run():
                for d, s in zip(devs, srcs):
                    wp.copy(d, s)
        else:
            def run():
                for d, h in zip(devs, hosts):
                    d.from_numpy(h)
        return Work(run=run, check=_check(lambda: [fw.to_numpy(d) for d in devs], hosts), impl="one call per array")
    devs = [fw.to_device(h) for h in hosts]
    outs = [np.empty(N, np.float32) for _ in range(COUNT)]

    def run():
        for o, d in zip(outs, devs):
            o[...] = fw.to_numpy(d)
    return Work(run=run, check=_check(lambda: outs, hosts), impl="to_numpy per array")
