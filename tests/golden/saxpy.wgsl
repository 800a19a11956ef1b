struct Params { p0: f32, p1: i32 }
var<immediate> P: Params;
@group(0) @binding(0) var<storage, read> b0_x: array<f32>;
@group(0) @binding(1) var<storage, read_write> b1_y: array<f32>;
@compute @workgroup_size(256)
fn task0(@builtin(global_invocation_id) gid_: vec3<u32>, @builtin(local_invocation_index) lid_: u32, @builtin(workgroup_id) wid_: vec3<u32>, @builtin(num_workgroups) nwg_: vec3<u32>) {
  var l0_t: i32;
  var l1_i: i32;
  var il1_a: f32;
  var l1_i_b: i32;
  var il1_a_b: f32;
  var l0_t_b: i32;
  let extent_ = max(P.p1, 0i);
  let stride_ = i32(nwg_.x) * 256;
  var t_ = i32(gid_.x);
  loop {  // two iterations per step, loads of both first (compiler/codegen/interleave.py)
    if (t_ + stride_ >= extent_) { break; }
    l0_t = t_;
    l1_i = l0_t;  // golden_kernels.py:8
    il1_a = (b1_y[l1_i] + (P.p0 * (b0_x[l1_i] * b0_x[l1_i])));  // golden_kernels.py:9
    l0_t_b = t_ + stride_;
    l1_i_b = l0_t_b;  // golden_kernels.py:8
    il1_a_b = (b1_y[l1_i_b] + (P.p0 * (b0_x[l1_i_b] * b0_x[l1_i_b])));  // golden_kernels.py:9
    b1_y[l1_i] = il1_a;  // golden_kernels.py:9
    b1_y[l1_i_b] = il1_a_b;  // golden_kernels.py:9
    t_ = t_ + 2 * stride_;
  }
  if (t_ < extent_) {
    l0_t = t_;
    l1_i = l0_t;  // golden_kernels.py:8
    b1_y[l1_i] = (b1_y[l1_i] + (P.p0 * (b0_x[l1_i] * b0_x[l1_i])));  // golden_kernels.py:9
  }
}
