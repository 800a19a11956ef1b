"""Built-in compute kernels for fills and copies that copy commands cannot do: a fill with a
repeating word pattern, and a copy of 2-byte elements at odd element offsets (WebGPU copies
need 4-byte aligned offsets and sizes). Both run on the device, in order with launches, and
can be captured by a graph (they go through `rt.dispatch`).

Each dispatch reads its parameters from a small pool buffer written once before it is used
(no immediates, so they work on every device); the buffer is released after the dispatch,
or owned by the graph that captured it.
"""
from __future__ import annotations

import math

from gfxrt.compiler.npcompat import np
from gfxrt.compiler.target import CHUNK_ALIGN

from .backend import ShaderStage
from .backend import calls as ffi

WG = 64

FILL_WGSL = f"""
@group(0) @binding(0) var<storage, read_write> dst: array<u32>;
@group(0) @binding(1) var<storage, read> prm: array<u32>;  // [words, period, pattern...]
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let count = prm[0];
  let period = prm[1];
  let stride = nwg.x * {WG}u;
  if (period == 1u) {{
    let v = prm[2];
    for (var i = gid.x; i < count; i = i + stride) {{ dst[i] = v; }}
  }} else {{
    for (var i = gid.x; i < count; i = i + stride) {{ dst[i] = prm[2u + i % period]; }}
  }}
}}
"""

# halfword h of a buffer: bits 16*(h%2).. of word h/2 (little-endian)
COPY16_WGSL = f"""
@group(0) @binding(0) var<storage, read_write> dst: array<u32>;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read> prm: array<u32>;  // [dst halfword, src halfword, halfwords]
@compute @workgroup_size({WG})
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {{
  let d0 = prm[0];
  let s0 = prm[1];
  let n = prm[2];
  let w1 = (d0 + n + 1u) / 2u;
  let stride = nwg.x * {WG}u;
  for (var w = d0 / 2u + gid.x; w < w1; w = w + stride) {{
    var word = dst[w];
    for (var h = 0u; h < 2u; h = h + 1u) {{
      let dh = 2u * w + h;
      if (dh >= d0 && dh < d0 + n) {{
        let sh = s0 + (dh - d0);
        let v = (src[sh / 2u] >> (16u * (sh % 2u))) & 0xffffu;
        word = (word & ~(0xffffu << (16u * h))) | (v << (16u * h));
      }}
    }}
    dst[w] = word;
  }}
}}
"""

_KERNELS = {"fill": (FILL_WGSL, ("storage", "read-only-storage")),
            "copy16": (COPY16_WGSL, ("storage", "read-only-storage", "read-only-storage"))}


def _pipeline(rt, name: str):
    """(pipeline, bind group layout) of a built-in kernel, created once per runtime."""
    cache = rt.blit_pipelines
    if name not in cache:
        code, kinds = _KERNELS[name]
        d = rt.device
        bgl = d.create_bind_group_layout(entries=[
            {"binding": k, "visibility": ShaderStage.COMPUTE, "buffer": {"type": t}} for k, t in enumerate(kinds)])
        module = d.create_shader_module(code=code, label=f"gfxrt {name}")
        pipe = d.create_compute_pipeline(layout=d.create_pipeline_layout(bind_group_layouts=[bgl]),
                                         compute={"module": module, "entry_point": "main"}, label=f"gfxrt {name}")
        cache[name] = (pipe, bgl)
    return cache[name]


def _run(rt, name: str, buffers: tuple, params: bytes, items: int, windows: tuple) -> None:
    """Dispatch built-in kernel `name` over `items` threads (grid-stride) with `buffers`
    (the (offset, bytes) `windows` of them) and a fresh params buffer holding `params` as its
    last binding."""
    pipe, bgl = _pipeline(rt, name)
    prm = rt.alloc(len(params), what=f"{name} parameters")
    try:
        ffi.queue_write(rt.queue, prm, 0, params, len(params))  # idle buffer
        bufs = (*buffers, prm)
        bg = rt.bind_group(bgl, bufs, f"binding a {name}", windows=(*windows, None))
        groups = max(1, min(-(-items // WG), ffi.MAX_WORKGROUPS))
        rt.dispatch(pipe, bg, b"", groups, label=f"gfxrt {name}", buffers=buffers)
    finally:  # after the dispatch is recorded: a flush in between must not retire it early
        if rt.capture is not None:
            rt.capture.own(prm)
        else:
            rt.free_later(prm)


def _span(rt, unit: int) -> int:
    """The bytes of one window of a built-in kernel's buffer: a multiple of `unit` (itself a
    multiple of the storage offset alignment) within one storage binding."""
    return max(unit, rt.dev.target.max_binding // unit * unit)


def fill_words(rt, buffer, nbytes: int, element: bytes) -> None:
    """Fill the first `nbytes` of `buffer` (rounded up to whole words) with the repeated
    bytes of one `element`; a window of at most one storage binding per dispatch."""
    period = math.lcm(len(element), 4)
    pattern = element * (period // len(element))
    total = (nbytes + 3) // 4 * 4
    span = _span(rt, math.lcm(CHUNK_ALIGN, period))  # each window starts at a whole pattern
    for start in range(0, total, span):
        words = min(span, total - start) // 4
        _run(rt, "fill", (buffer,), np.array([words, period // 4], np.uint32).tobytes() + pattern, words,
             ((start, words * 4),))


def copy_halfwords(rt, src, src_half: int, dst, dst_half: int, count: int) -> None:
    """Copy `count` 2-byte halfwords from halfword `src_half` of `src` to halfword
    `dst_half` of `dst` (any parity), on the device. `src` and `dst` must differ. Pieces of
    at most one storage binding per dispatch, each bound from the alignment below it."""
    piece = max(CHUNK_ALIGN, (rt.dev.target.max_binding - 2 * CHUNK_ALIGN) // 2)
    for k in range(0, count, piece):
        n = min(piece, count - k)
        d, s = dst_half + k, src_half + k
        do, so = d * 2 // CHUNK_ALIGN * CHUNK_ALIGN, s * 2 // CHUNK_ALIGN * CHUNK_ALIGN  # window offsets (bytes)
        dh, sh = d - do // 2, s - so // 2  # the halfwords in their windows
        words = (dh + n + 1) // 2 - dh // 2
        _run(rt, "copy16", (dst, src), np.array([dh, sh, n], np.uint32).tobytes(), words,
             ((do, ((dh + n) * 2 + 3) // 4 * 4), (so, ((sh + n) * 2 + 3) // 4 * 4)))


__all__ = ["fill_words", "copy_halfwords"]
