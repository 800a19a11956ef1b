struct Params { p0: i32 }
var<immediate> P: Params;
@group(0) @binding(0) var<storage, read> b0_p: array<f32>;
@group(0) @binding(1) var<storage, read_write> b1_temps: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> b2_result: array<u32>;
var<workgroup> red_f32_: array<f32, 256>;
@compute @workgroup_size(1)
fn task0(@builtin(global_invocation_id) gid_: vec3<u32>, @builtin(local_invocation_index) lid_: u32, @builtin(workgroup_id) wid_: vec3<u32>, @builtin(num_workgroups) nwg_: vec3<u32>) {
  atomicStore(&b1_temps[0i], bitcast<u32>(0.0f));  // golden_kernels.py:13
}
@compute @workgroup_size(256)
fn task1(@builtin(global_invocation_id) gid_: vec3<u32>, @builtin(local_invocation_index) lid_: u32, @builtin(workgroup_id) wid_: vec3<u32>, @builtin(num_workgroups) nwg_: vec3<u32>, @builtin(subgroup_invocation_id) sgl_: u32, @builtin(subgroup_size) sgs_: u32, @builtin(subgroup_id) sgid_: u32, @builtin(num_subgroups) nsg_: u32) {
  var l0_t: i32;
  var l1_i: i32;
  var l2_acc0: f32 = 0.0f;
  let extent_ = max(P.p0, 0i);
  let stride_ = i32(nwg_.x) * 256;
  for (var base_ = i32(wid_.x) * 256; base_ < extent_; base_ = base_ + stride_) {
    l0_t = base_ + i32(lid_);
    if (l0_t < extent_) {
      l1_i = l0_t;  // golden_kernels.py:14
      l2_acc0 = (l2_acc0 + sqrt((((b0_p[(l1_i * 3i)] * b0_p[(l1_i * 3i)]) + (b0_p[((l1_i * 3i) + 1i)] * b0_p[((l1_i * 3i) + 1i)])) + (b0_p[((l1_i * 3i) + 2i)] * b0_p[((l1_i * 3i) + 2i)]))));  // golden_kernels.py:15
    }
  }
  {  // reduce add into temps
    let s_ = subgroupAdd(l2_acc0);
    if (sgl_ == 0u) { red_f32_[sgid_] = s_; }
    workgroupBarrier();
    if (lid_ == 0u) {
      var racc_ = red_f32_[0];
      for (var k_ = 1u; k_ < nsg_; k_ = k_ + 1u) { racc_ = (racc_ + red_f32_[k_]); }
      {
        let v_ = racc_;
        var old_ = atomicLoad(&b1_temps[0i]);
        loop {
          let r_ = atomicCompareExchangeWeak(&b1_temps[0i], old_, bitcast<u32>((bitcast<f32>(old_) + v_)));
          if (r_.exchanged) { break; }
          old_ = r_.old_value;
        }
      }
    }
    workgroupBarrier();
  }
}
@compute @workgroup_size(1)
fn task2(@builtin(global_invocation_id) gid_: vec3<u32>, @builtin(local_invocation_index) lid_: u32, @builtin(workgroup_id) wid_: vec3<u32>, @builtin(num_workgroups) nwg_: vec3<u32>, @builtin(subgroup_invocation_id) sgl_: u32, @builtin(subgroup_size) sgs_: u32, @builtin(subgroup_id) sgid_: u32, @builtin(num_subgroups) nsg_: u32) {
  b2_result[0i] = bitcast<u32>(bitcast<f32>(atomicLoad(&b1_temps[0i])));  // golden_kernels.py:16
}
