struct Params { p0: f32, p1: i32 }
var<immediate> P: Params;
@group(0) @binding(0) var<storage, read> b0_x: array<f32>;
@group(0) @binding(1) var<storage, read_write> b1_y: array<f32>;
@compute @workgroup_size(64)
fn task0(@builtin(global_invocation_id) gid_: vec3<u32>, @builtin(local_invocation_index) lid_: u32, @builtin(workgroup_id) wid_: vec3<u32>, @builtin(num_workgroups) nwg_: vec3<u32>) {
  var l0_t: i32;
  var l1_i: i32;
  let extent_ = max(P.p1, 0i);
  let stride_ = i32(nwg_.x) * 64;
  for (var t_ = i32(gid_.x); t_ < extent_; t_ = t_ + stride_) {
    l0_t = t_;
    l1_i = l0_t;  // golden_kernels.py:8
    b1_y[l1_i] = (b1_y[l1_i] + (P.p0 * (b0_x[l1_i] * b0_x[l1_i])));  // golden_kernels.py:9
  }
}
