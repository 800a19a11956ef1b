import dataclasses
import statistics
import time

import gfxrt as gr
from gfxrt.engine import launch

n = 1 << 22
x, y = gr.ndarray(gr.f32, n), gr.ndarray(gr.f32, n)
x.fill(1.0); y.fill(2.0)
dev = gr.device(); base = dev.target
res = {}
variants = [(il, wg, cap) for il in (True, False) for wg in (64, 256, 512) for cap in (64, 256, 1024, 65535)]
for _rep in range(3):
    for il, wg, cap in variants:
        dev.target = dataclasses.replace(base, interleave=il, workgroup_size=wg)
        launch.CPU_MAX_GROUPS = cap
        @gr.kernel
        def saxpy(a: gr.f32, x: gr.types.ndarray(dtype=gr.f32, ndim=1), y: gr.types.ndarray(dtype=gr.f32, ndim=1)):
            for i in range(x.shape[0]):
                y[i] = a * x[i] + y[i]
        saxpy(2.0, x, y); gr.sync()
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(5):
            saxpy(2.0, x, y)
        gr.sync()
        t, c = (time.perf_counter() - t0) / 5, (time.process_time() - c0) / 5
        res.setdefault((il, wg, cap), []).append((12 * n / t / 1e9, 12 * n / c / 1e9))
for k, v in sorted(res.items(), key=lambda kv: -max(a for a, b in kv[1])):
    print(k, f"wall GB/s best {max(a for a, b in v):.2f} med {statistics.median(a for a, b in v):.2f} | cpu-time GB/s med {statistics.median(b for a, b in v):.2f}")
