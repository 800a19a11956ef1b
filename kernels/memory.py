"""Bandwidth kernels: fill, memcpy, saxpy on arrays of any shape (flattened).

    kernels.fill(x, 3.0)           # x[...] = 3
    kernels.memcpy(dst, src)       # dst[...] = src (same number of elements and dtype)
    kernels.saxpy(2.0, x, y)       # y = 2 x + y

One thread per element in blocks of 256 (grid-stride beyond 65535 blocks). The runtime's own
`x.fill(v)` / `dst.copy_from(src)` use the copy engine instead; these are the same
operations as kernels (for the bandwidth benchmark, and to record into graphs).
"""
from __future__ import annotations

import gfxrt as gr

from ._util import Args

B = 256


@gr.kernel
def fill_kernel(x: gr.types.ndarray(), vf: gr.f32, vi: gr.i32, is_float: gr.template()):
    gr.loop_config(block_dim=B)
    for idx in gr.grouped(x):
        if gr.static(is_float):
            x[idx] = vf
        else:
            x[idx] = vi  # u32 arrays receive the bit pattern


@gr.kernel
def copy_kernel(dst: gr.types.ndarray(), src: gr.types.ndarray()):
    gr.loop_config(block_dim=B)
    for idx in gr.grouped(dst):
        dst[idx] = src[idx]


@gr.kernel
def saxpy_kernel(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32), y: gr.types.ndarray(dtype=gr.f32)):
    gr.loop_config(block_dim=B)
    for idx in gr.grouped(x):
        y[idx] = a * x[idx] + y[idx]


def _scalar_array(a: gr.Ndarray, name: str) -> gr.Ndarray:
    if a.element_type not in (gr.f32, gr.i32, gr.u32):
        raise TypeError(f"{name}: expected an f32, i32 or u32 array, not {a.element_type}")
    return a


def fill(x, value) -> None:
    """Set every element of x (f32, i32 or u32, any shape) to value."""
    args = Args()
    xd = _scalar_array(args.dev(x, "x", written=True), "x")
    if xd.element_type == gr.f32:
        fill_kernel(xd, float(value), 0, True)
    else:
        v = int(value)
        dt = xd.element_type
        if not -2**31 <= v < 2**32 or (dt == gr.i32 and v >= 2**31) or (dt == gr.u32 and v < 0):
            raise ValueError(f"{value} does not fit in {xd.element_type}")
        fill_kernel(xd, 0.0, v - 2**32 if v >= 2**31 else v, False)
    args.finish()


def memcpy(dst, src) -> None:
    """Copy src into dst (same dtype and shape)."""
    args = Args()
    s = _scalar_array(args.dev(src, "src"), "src")
    d = args.dev(dst, "dst", dtype=s.element_type, written=True)
    if d.shape != s.shape:
        raise ValueError(f"memcpy needs the same shape: dst {d.shape}, src {s.shape}")
    copy_kernel(d, s)
    args.finish()


def saxpy(a: float, x, y) -> None:
    """y = a * x + y for f32 arrays of the same shape."""
    args = Args()
    xd = args.dev(x, "x", dtype=gr.f32)
    yd = args.dev(y, "y", dtype=gr.f32, written=True)
    if xd.shape != yd.shape:
        raise ValueError(f"x and y must have the same shape: {xd.shape} and {yd.shape}")
    saxpy_kernel(float(a), xd, yd)
    args.finish()
