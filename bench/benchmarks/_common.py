"""Helpers shared by benchmark modules: deterministic non-zero data, result checks, limits."""
from __future__ import annotations

import numpy as np

from ..registry import NA


def rand_f32(n, seed: int = 0, lo: float = 0.5, hi: float = 1.5) -> np.ndarray:
    """Uniform float32 data in [lo, hi): never all zeros, never denormal."""
    return np.random.default_rng(seed).uniform(lo, hi, size=n).astype(np.float32)


def rand_i32(n, hi: int, seed: int = 0) -> np.ndarray:
    """Uniform int32 data in [0, hi)."""
    return np.random.default_rng(seed).integers(0, hi, size=n, dtype=np.int32)


def close(got, want, rtol: float = 1e-5, atol: float = 1e-6) -> str | None:
    """None when `got` matches `want`, else a one-line description of the worst mismatch."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    err = np.abs(got - want)
    excess = err - (atol + rtol * np.abs(want))
    bad = ~(excess <= 0)  # NaN counts as bad
    if not bad.any():
        return None
    i = np.unravel_index(np.argmax(np.where(np.isnan(excess), np.inf, excess)), err.shape)
    return f"{int(bad.sum())} of {bad.size} elements differ, worst at {tuple(int(k) for k in i)}: " \
           f"{got[i]:.6g} vs {want[i]:.6g}"


def gfxrt_fits(fw, nbytes: int) -> None:
    """Raise NA when one gfxrt buffer of `nbytes` exceeds the adapter's storage binding limit."""
    limit = fw.mod.device().limits.get("max-storage-buffer-binding-size")
    if limit and nbytes > limit:
        raise NA(f"{nbytes >> 20} MiB exceeds this adapter's storage binding limit ({limit >> 20} MiB)")


def library():
    """The kernels/ library (gfxrt's kernels written in its own language), imported on first use
    so that the peers' workers never load gfxrt."""
    from gfxrt import kernels
    return kernels


def no_graph_capture(fw) -> None:
    """Raise NA when gfxrt has no graph capture (`with gr.graph() as g: ...; g.replay()`)."""
    if not callable(getattr(fw.mod, "graph", None)):
        raise NA("gfxrt has no gr.graph() yet")


def first_line(e: BaseException) -> str:
    """'ExcType: first line of the message'."""
    lines = str(e).strip().splitlines()
    return f"{type(e).__name__}: {lines[0] if lines else ''}"
