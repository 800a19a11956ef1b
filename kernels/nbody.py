"""All-pairs gravitational n-body, one time step.

    kernels.nbody.step(pos, vel, mass, dt, eps=0.01, G=1.0)

pos, vel: (n, 3) f32 (gr.ndarray of gr.types.vector(3, gr.f32), or numpy (n, 3)); mass: (n,)
f32. Semi-implicit Euler: every body's acceleration

    a_i = G * sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps^2)^(3/2)

from the positions at the start of the step, then v += a dt, then p += v dt. A body adds
nothing to itself (also with eps = 0). `energy(pos, vel, mass, eps, G)` is the
(softened) total energy, on the host, for checking.

The force pass is the classic tiled form: each block of 256 threads stages 256 bodies
(position and mass as one vec4) in workgroup memory, every thread accumulates their pull on
its body, and the block moves to the next tile: each body's data is read from device memory
n / 256 times instead of n times.
"""
from __future__ import annotations

import numpy as np

import gfxrt as gr

from ._util import Args

B = 256
vec3 = gr.types.vector(3, gr.f32)
vec4 = gr.types.vector(4, gr.f32)
V1 = gr.types.ndarray(dtype=vec3, ndim=1)
F1 = gr.types.ndarray(dtype=gr.f32, ndim=1)


@gr.kernel
def step_kernel(pos: V1, vel: V1, mass: F1, dt: gr.f32, eps2: gr.f32, G: gr.f32):
    gr.loop_config(block_dim=B)
    for i in range((pos.shape[0] + B - 1) // B * B):
        n = pos.shape[0]
        tid = gr.simt.block.thread_idx()
        tile = gr.simt.block.SharedArray((B,), vec4)
        p = vec3(0.0)
        if i < n:
            p = pos[i]
        acc = vec3(0.0)
        for base in range(0, n, B):
            q = vec4(0.0)  # mass 0 beyond the end: no pull
            j = base + tid
            if j < n:
                pj = pos[j]
                q = vec4(pj.x, pj.y, pj.z, mass[j])
            tile[tid] = q
            gr.simt.block.sync()
            for k in range(B):
                o = tile[k]
                d = vec3(o.x - p.x, o.y - p.y, o.z - p.z)
                r2 = d.dot(d) + eps2
                inv = gr.select(r2 > 0.0, gr.rsqrt(r2), 0.0)  # itself, without softening: nothing
                acc += d * (o.w * inv * inv * inv)
            gr.simt.block.sync()
        if i < n:
            vel[i] = vel[i] + acc * (G * dt)
    for i in range(pos.shape[0]):  # after every body's force: the second task
        pos[i] = pos[i] + vel[i] * dt


def step(pos, vel, mass, dt: float, eps: float = 0.01, G: float = 1.0) -> None:
    """Advance the bodies by one step of dt (see the module doc). pos and vel are updated in
    place."""
    args = Args()
    p = args.dev(pos, "pos", dtype=vec3, ndim=1, written=True)
    v = args.dev(vel, "vel", dtype=vec3, ndim=1, written=True)
    m = args.dev(mass, "mass", dtype=gr.f32, ndim=1)
    if not p.shape == v.shape == m.shape:
        raise ValueError(f"pos, vel and mass must describe the same bodies: {p.shape}, {v.shape}, {m.shape}")
    if p.shape[0]:
        step_kernel(p, v, m, float(dt), float(eps) ** 2, float(G))
    args.finish()


def energy(pos, vel, mass, eps: float = 0.01, G: float = 1.0) -> float:
    """Kinetic plus softened potential energy (float64, on the host) of numpy or device arrays."""
    p, v, m = (np.asarray(a.to_numpy() if isinstance(a, gr.Ndarray) else a, np.float64) for a in (pos, vel, mass))
    kinetic = 0.5 * np.sum(m * np.sum(v * v, axis=1))
    d = p[None, :, :] - p[:, None, :]
    r = np.sqrt(np.sum(d * d, axis=2) + eps * eps)
    mm = m[:, None] * m[None, :]
    np.fill_diagonal(mm, 0.0)
    np.fill_diagonal(r, 1.0)  # no self-interaction (r is 0 there when eps is 0)
    return float(kinetic - 0.5 * G * np.sum(mm / r))
