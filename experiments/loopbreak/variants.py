"""Hand-written shaders of Taichi's test_for_break3 (issue 21, item 1), each a small change of the one gfxrt
emitted, to find which form an NVIDIA driver runs wrong:

    for i in range(8):                  # one thread per i
        for j in range(i, 8 - i):
            if i == 0: break
            x[i, j] = 100 * i + j

Every shader binds x (array<i32>, 64 elements) at binding 0 and a u32 array at binding 1 (unused by most),
runs with workgroup size 256 and one workgroup, and must leave x equal to `expected()`.
"""
from __future__ import annotations

import numpy as np

HEAD = """@group(0) @binding(0) var<storage, read_write> x: array<i32>;
@group(0) @binding(1) var<storage, read_write> aux: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let i = i32(gid.x);
  if (i >= 8) { return; }
"""


def expected() -> np.ndarray:
    x = np.zeros((8, 8), np.int32)
    for i in range(8):
        for j in range(i, 8 - i):
            if i == 0:
                break
            x[i, j] = 100 * i + j
    return x


def _body(loop: str) -> str:
    return HEAD + loop + "}\n"


WGSL = {
    # the loop as gfxrt writes it, without the grid-stride loop around it
    "for_break_top": _body("""  for (var j = i; j < 8 - i; j = j + 1) {
    if (i == 0) { break; }
    x[i * 8 + j] = 100 * i + j;
  }
"""),
    # the trigger removed: no break (x is the same, since row 0's range writes nothing... it writes row 0)
    "for_nobreak_guarded": _body("""  for (var j = i; j < 8 - i; j = j + 1) {
    if (i != 0) { x[i * 8 + j] = 100 * i + j; }
  }
"""),
    "for_continue": _body("""  for (var j = i; j < 8 - i; j = j + 1) {
    if (i == 0) { continue; }
    x[i * 8 + j] = 100 * i + j;
  }
"""),
    "for_break_bottom": _body("""  for (var j = i; j < 8 - i; j = j + 1) {
    if (i != 0) { x[i * 8 + j] = 100 * i + j; }
    if (i == 0) { break; }
  }
"""),
    # the break depends on j too (not loop-invariant)
    "for_break_variant_cond": _body("""  for (var j = i; j < 8 - i; j = j + 1) {
    if (i + j * 0 == 0 && j >= 0) { break; }
    x[i * 8 + j] = 100 * i + j;
  }
"""),
    "for_break_memcond": _body("""  for (var j = i; j < 8 - i; j = j + 1) {
    if (aux[u32(i)] == 1u) { break; }
    x[i * 8 + j] = 100 * i + j;
  }
"""),
    # only the start or only the end depends on i
    "for_break_start_only": _body("""  for (var j = i; j < 8; j = j + 1) {
    if (i == 0) { break; }
    if (j < 8 - i) { x[i * 8 + j] = 100 * i + j; }
  }
"""),
    "for_break_end_only": _body("""  for (var j = 0; j < 8 - i; j = j + 1) {
    if (i == 0) { break; }
    if (j >= i) { x[i * 8 + j] = 100 * i + j; }
  }
"""),
    # the end read from memory (aux[8] = 8): opaque to the compiler
    "for_break_memend": _body("""  let end = i32(aux[8]) - i;
  for (var j = i; j < end; j = j + 1) {
    if (i == 0) { break; }
    x[i * 8 + j] = 100 * i + j;
  }
"""),
    # a counted loop: trip count first, the index derived from the counter
    "counted_break": _body("""  let start = i;
  let end = 8 - i;
  let n = select(0, end - start, end > start);
  for (var k = 0; k < n; k = k + 1) {
    let j = start + k;
    if (i == 0) { break; }
    x[i * 8 + j] = 100 * i + j;
  }
"""),
    # the break turned into a flag the loop condition tests
    "flag_break": _body("""  var go = true;
  for (var j = i; go && j < 8 - i; j = j + 1) {
    if (i == 0) { go = false; } else {
      x[i * 8 + j] = 100 * i + j;
    }
  }
"""),
    # loop{} with the exit test in the body and the step in continuing (naga's shape for `for`)
    "loop_continuing": _body("""  var j = i;
  loop {
    if (!(j < 8 - i)) { break; }
    if (i == 0) { break; }
    x[i * 8 + j] = 100 * i + j;
    continuing { j = j + 1; }
  }
"""),
    # the exit test at the bottom (break_if)
    "loop_break_if": _body("""  var j = i;
  if (j < 8 - i) {
    loop {
      if (i == 0) { break; }
      x[i * 8 + j] = 100 * i + j;
      continuing { j = j + 1; break if !(j < 8 - i); }
    }
  }
"""),
    # one row per warp (lane 0 only): no two rows share a subgroup
    "for_break_top_row_per_warp": HEAD.replace("let i = i32(gid.x);\n  if (i >= 8) { return; }",
                                               "if (gid.x % 32u != 0u) { return; }\n  let i = i32(gid.x / 32u);\n"
                                               "  if (i >= 8) { return; }") + """  for (var j = i; j < 8 - i; j = j + 1) {
    if (i == 0) { break; }
    x[i * 8 + j] = 100 * i + j;
  }
}
""",
    # no thread of row 0: nobody takes the break
    "for_break_top_no_row0": HEAD.replace("let i = i32(gid.x);\n  if (i >= 8) { return; }",
                                          "let i = i32(gid.x) + 1;\n  if (i >= 8) { return; }") + """  for (var j = i; j < 8 - i; j = j + 1) {
    if (i == 0) { break; }
    x[i * 8 + j] = 100 * i + j;
  }
}
""",
    # the whole body in a grid-stride loop, as gfxrt emits parallel loops
    "gridstride_for_break": """@group(0) @binding(0) var<storage, read_write> x: array<i32>;
@group(0) @binding(1) var<storage, read_write> aux: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let stride = i32(nwg.x) * 256;
  for (var t = i32(gid.x); t < 8; t = t + stride) {
    let i = t;
    let end = 8 - i;
    for (var j = i; j < end; j = j + 1) {
      if (i == 0) { break; }
      x[i * 8 + j] = 100 * i + j;
    }
  }
}
""",
}

# The same program in GLSL, compiled by glslangValidator (no naga): the form for a driver bug report.
GLSL = {
    "glsl_for_break_top": """#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer X { int x[]; };
layout(std430, binding = 1) buffer A { uint aux[]; };
void main() {
  int i = int(gl_GlobalInvocationID.x);
  if (i >= 8) return;
  for (int j = i; j < 8 - i; j++) {
    if (i == 0) break;
    x[i * 8 + j] = 100 * i + j;
  }
}
""",
    "glsl_for_nobreak": """#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer X { int x[]; };
layout(std430, binding = 1) buffer A { uint aux[]; };
void main() {
  int i = int(gl_GlobalInvocationID.x);
  if (i >= 8) return;
  for (int j = i; j < 8 - i; j++) {
    if (i != 0) x[i * 8 + j] = 100 * i + j;
  }
}
""",
}


GLSL["glsl_do_while_break"] = """#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer X { int x[]; };
layout(std430, binding = 1) buffer A { uint aux[]; };
void main() {
  int i = int(gl_GlobalInvocationID.x);
  if (i >= 8) return;
  int j = i;
  if (j < 8 - i) {
    do {
      if (i == 0) break;
      x[i * 8 + j] = 100 * i + j;
      j++;
    } while (j < 8 - i);
  }
}
"""
GLSL["glsl_gridstride_for_break"] = """#version 450
layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer X { int x[]; };
layout(std430, binding = 1) buffer A { uint aux[]; };
void main() {
  int stride = int(gl_NumWorkGroups.x) * 256;
  for (int t = int(gl_GlobalInvocationID.x); t < 8; t += stride) {
    int i = t;
    int end = 8 - i;
    int j;
    for (j = i; j < end; j++) {
      if (i == 0) break;
      x[i * 8 + j] = 100 * i + j;
    }
  }
}
"""


def aux() -> np.ndarray:
    a = np.zeros(16, np.uint32)
    a[0] = 1      # for_break_memcond: row 0 breaks
    a[8] = 8      # for_break_memend: the end
    return a


# gfxrt's own WGSL for the kernel (H100 target: no loop cap), and one change at a time of it
_GFXRT = """@group(0) @binding(0) var<storage, read_write> b0_x: array<i32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid_: vec3<u32>, @builtin(num_workgroups) nwg_: vec3<u32>) {
  var l0_t: i32;
  var l1_i: i32;
  var l2_j: i32;
  let extent_ = 8i;
  let stride_ = i32(nwg_.x) * 256;
  for (var t_ = i32(gid_.x); t_ < extent_; t_ = t_ + stride_) {
    l0_t = t_;
    l1_i = l0_t;
    {
      let end_ = (8i - l1_i);
      let step_ = 1i;
      for (l2_j = l1_i; l2_j < end_; l2_j = l2_j + step_) {
        if ((l1_i == 0i)) {
          break;
        }
        b0_x[((l1_i * 8i) + l2_j)] = ((100i * l1_i) + l2_j);
      }
    }
  }
}
"""
WGSL["gfxrt"] = _GFXRT
# the loop variable declared in the for statement
WGSL["gfxrt_for_var"] = _GFXRT.replace("for (l2_j = l1_i; l2_j < end_; l2_j = l2_j + step_) {",
                                       "for (var j = l1_i; j < end_; j = j + step_) {\n        l2_j = j;")
# i a `let` (SSA) instead of a function-scope var
WGSL["gfxrt_let_i"] = _GFXRT.replace("    l1_i = l0_t;\n", "    let i = l0_t;\n").replace("l1_i", "i")
# no grid-stride loop: one row per thread, guarded
WGSL["gfxrt_no_gridstride"] = _GFXRT.replace(
    "for (var t_ = i32(gid_.x); t_ < extent_; t_ = t_ + stride_) {", "let t_ = i32(gid_.x);\n  if (t_ < extent_) {")
# the loop as a counted loop (trip count first, j from the counter)
WGSL["gfxrt_counted"] = _GFXRT.replace(
    "for (l2_j = l1_i; l2_j < end_; l2_j = l2_j + step_) {",
    "let b_ = l1_i;\n      let n_ = select(0u, bitcast<u32>(end_) - bitcast<u32>(b_), end_ > b_);\n"
    "      for (var k_ = 0u; k_ < n_; k_ = k_ + 1u) {\n        l2_j = b_ + i32(k_);")
