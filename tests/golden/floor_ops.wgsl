struct Params { p0: i32, p1: i32 }
var<immediate> P: Params;
@group(0) @binding(0) var<storage, read_write> b0_x: array<i32>;
fn gr_floordiv_i32(a: i32, b: i32) -> i32 {
  let ua = select(u32(a), 0u - u32(a), a < 0i);
  let ub = select(u32(b), 0u - u32(b), b < 0i);
  if (ub == 0u) { return 0i; }
  let q = ua / ub;
  if ((a < 0i) == (b < 0i)) { return i32(q); }
  return i32(0u - (q + select(0u, 1u, q * ub != ua)));
}
fn gr_mod_i32(a: i32, b: i32) -> i32 {
  let ua = select(u32(a), 0u - u32(a), a < 0i);
  let ub = select(u32(b), 0u - u32(b), b < 0i);
  if (ub == 0u) { return 0i; }
  let r = ua % ub;
  let m = select(r, ub - r, (r != 0u) && ((a < 0i) != (b < 0i)));
  return select(i32(m), i32(0u - m), b < 0i);
}
@compute @workgroup_size(256)
fn task0(@builtin(global_invocation_id) gid_: vec3<u32>, @builtin(local_invocation_index) lid_: u32, @builtin(workgroup_id) wid_: vec3<u32>, @builtin(num_workgroups) nwg_: vec3<u32>) {
  var l0_t: i32;
  var l1_i: i32;
  var il1_a: i32;
  var l1_i_b: i32;
  var il1_a_b: i32;
  var l0_t_b: i32;
  let extent_ = max(P.p0, 0i);
  let stride_ = i32(nwg_.x) * 256;
  var t_ = i32(gid_.x);
  loop {  // two iterations per step, loads of both first (compiler/codegen/interleave.py)
    if (t_ + stride_ >= extent_) { break; }
    l0_t = t_;
    l1_i = l0_t;  // golden_kernels.py:20
    il1_a = (gr_floordiv_i32(b0_x[l1_i], P.p1) + gr_mod_i32(b0_x[l1_i], P.p1));  // golden_kernels.py:21
    l0_t_b = t_ + stride_;
    l1_i_b = l0_t_b;  // golden_kernels.py:20
    il1_a_b = (gr_floordiv_i32(b0_x[l1_i_b], P.p1) + gr_mod_i32(b0_x[l1_i_b], P.p1));  // golden_kernels.py:21
    b0_x[l1_i] = il1_a;  // golden_kernels.py:21
    if ((b0_x[l1_i] > 100i)) {  // golden_kernels.py:22
      b0_x[l1_i] = max(b0_x[l1_i], (-P.p1));  // golden_kernels.py:23
    }
    b0_x[l1_i_b] = il1_a_b;  // golden_kernels.py:21
    if ((b0_x[l1_i_b] > 100i)) {  // golden_kernels.py:22
      b0_x[l1_i_b] = max(b0_x[l1_i_b], (-P.p1));  // golden_kernels.py:23
    }
    t_ = t_ + 2 * stride_;
  }
  if (t_ < extent_) {
    l0_t = t_;
    l1_i = l0_t;  // golden_kernels.py:20
    b0_x[l1_i] = (gr_floordiv_i32(b0_x[l1_i], P.p1) + gr_mod_i32(b0_x[l1_i], P.p1));  // golden_kernels.py:21
    if ((b0_x[l1_i] > 100i)) {  // golden_kernels.py:22
      b0_x[l1_i] = max(b0_x[l1_i], (-P.p1));  // golden_kernels.py:23
    }
  }
}
