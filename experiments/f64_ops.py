"""Which f64 operation differs on this adapter from IEEE double (numpy): the pieces of gfxrt's
f64 sin (argument reduction, Horner polynomial with divisions), plus plain + * / sqrt round.
Run: python -m experiments.f64_ops   (GPU machine: . .gl/enter.sh && python3 ...)
"""
import numpy as np
import wgpu

adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
dev = adapter.request_device_sync(required_features=["shader-f64"])
print(adapter.summary)
N = 7
CODE = """
@group(0) @binding(0) var<storage, read> X: array<f64>;
@group(0) @binding(1) var<storage, read_write> Y: array<f64>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let i = g.x;
  if (i >= arrayLength(&X)) { return; }
  let x = X[i];
  let k = round(x * 0.6366197723675814lf);
  let r = ((x - k * 1.57079632673412561417lf) - k * 6.07710050630396597660e-11lf) - k * 2.02226624871116645580e-21lf;
  let z = r * r;
  var s = 1.0lf;
  for (var n = 11; n >= 1; n = n - 1) { s = 1.0lf - s * z / f64((2 * n) * (2 * n + 1)); }
  Y[N * i + 0u] = k;
  Y[N * i + 1u] = r;
  Y[N * i + 2u] = s * r;
  Y[N * i + 3u] = x / 3.0lf;
  Y[N * i + 4u] = x * 1.0000001lf + 0.3lf;
  Y[N * i + 5u] = sqrt(abs(x));
  Y[N * i + 6u] = x - k * 1.57079632673412561417lf;
}
""".replace("N *", f"{N}u *")
rng = np.random.default_rng(0)
x = np.concatenate([rng.uniform(-10, 10, 200), rng.uniform(-700, 700, 200)])
sm = dev.create_shader_module(code=CODE)
p = dev.create_compute_pipeline(layout="auto", compute={"module": sm, "entry_point": "main"})
xb = dev.create_buffer_with_data(data=x, usage=wgpu.BufferUsage.STORAGE)
yb = dev.create_buffer(size=x.nbytes * N, usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
bg = dev.create_bind_group(layout=p.get_bind_group_layout(0), entries=[{"binding": 0, "resource": {"buffer": xb}},
                                                                       {"binding": 1, "resource": {"buffer": yb}}])
enc = dev.create_command_encoder()
cp = enc.begin_compute_pass()
cp.set_pipeline(p)
cp.set_bind_group(0, bg)
cp.dispatch_workgroups((len(x) + 63) // 64)
cp.end()
dev.queue.submit([enc.finish()])
y = np.frombuffer(dev.queue.read_buffer(yb), np.float64).reshape(len(x), N)
k = np.round(x * 0.6366197723675814)
r = ((x - k * 1.57079632673412561417) - k * 6.07710050630396597660e-11) - k * 2.02226624871116645580e-21
z = r * r
s = np.ones_like(x)
for n in range(11, 0, -1):
    s = 1.0 - s * z / float((2 * n) * (2 * n + 1))
want = [k, r, s * r, x / 3.0, x * 1.0000001 + 0.3, np.sqrt(np.abs(x)), x - k * 1.57079632673412561417]
names = ["k", "r", "sin poly", "x/3", "x*c+d", "sqrt", "x-k*C1"]
for j, (nm, w) in enumerate(zip(names, want)):
    d = np.abs(y[:, j] - w) / np.maximum(np.abs(w), 1e-300)
    print(f"{nm:9s} max rel diff vs numpy {d.max():.3e}  (n differing {int(np.sum(y[:, j] != w))}/{len(x)})")
print("sin vs np.sin max rel", np.max(np.abs(y[:, 2] - np.sin(x)) / np.abs(np.sin(x))))
