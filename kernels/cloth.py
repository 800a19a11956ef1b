"""A mass-spring cloth: an n x n grid of particles, one explicit time step.

    params = kernels.cloth.Params(n=64)              # stiffness, damping, gravity, a ball, ...
    x, v = kernels.cloth.init(params)                # gr.ndarrays (n, n) of vec3, the cloth flat
    for _ in range(steps):
        kernels.cloth.step(x, v, params)

Each particle is tied to its neighbours at grid offsets SPRINGS (structural: 1 apart,
shear: diagonal, bend: 2 apart), with rest length `spacing * |offset|`. One step:
1. `forces`: every particle gathers its springs' forces (Hooke along the spring, plus a
   dashpot on the relative velocity along it) and gravity, v += f / m dt, v *= exp(-drag dt);
   a particle inside the ball loses its velocity into the ball; pinned particles (the two
   corners of row 0) keep v = 0. The new velocities go to a scratch array: the neighbours'
   dashpots still read the old ones.
2. v = the new velocities, x += v dt: a second parallel loop of the same kernel, which runs
   after every particle's forces, so no particle sees a neighbour's new state.
Gathering (each particle sums its own springs) needs no atomics; every spring is evaluated
from both ends.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

import gfxrt as gr

from ._util import Args, scratch

vec3 = gr.types.vector(3, gr.f32)
V2 = gr.types.ndarray(dtype=vec3, ndim=2)

# (di, dj, rest length in units of spacing): structural, shear, bend; each with its mirror
_OFFSETS = ((1, 0), (0, 1), (1, 1), (1, -1), (2, 0), (0, 2))
SPRINGS = tuple((s * di, s * dj, math.hypot(di, dj)) for di, dj in _OFFSETS for s in (1, -1))


@dataclass(frozen=True)
class Params:
    """A cloth of n x n particles `spacing` apart, each of mass `mass`."""

    n: int = 32
    spacing: float = 1.0 / 32
    mass: float = 1.0 / 1024
    stiffness: float = 3000.0      # spring constant (force per unit stretch)
    damping: float = 0.5           # dashpot along each spring (force per unit relative speed)
    drag: float = 1.0              # velocity decays by exp(-drag dt)
    gravity: float = -9.8          # along y
    ball_center: tuple = (0.5, -0.5, 0.5)
    ball_radius: float = 0.3
    dt: float = 2e-4


@gr.kernel
def step_kernel(x: V2, v: V2, vn: V2, dt: gr.f32, spacing: gr.f32, inv_mass: gr.f32, k: gr.f32, kd: gr.f32,
                decay: gr.f32, g: gr.f32, cx: gr.f32, cy: gr.f32, cz: gr.f32, radius: gr.f32):
    for i, j in gr.ndrange(x.shape[0], x.shape[1]):
        n0, n1 = x.shape[0], x.shape[1]
        xi = x[i, j]
        vi = v[i, j]
        f = vec3(0.0, g / inv_mass, 0.0)
        for s in gr.static(SPRINGS):
            a, b = i + s[0], j + s[1]
            if 0 <= a < n0 and 0 <= b < n1:
                d = x[a, b] - xi
                length = d.norm()
                u = d / gr.max(length, 1e-9)
                f += u * (k * (length - s[2] * spacing) + kd * (v[a, b] - vi).dot(u))
        vi = (vi + f * (inv_mass * dt)) * decay
        c = vec3(cx, cy, cz)
        r = xi - c
        dist = r.norm()
        if dist < radius:  # inside the ball: drop the velocity component into it
            nrm = r / gr.max(dist, 1e-9)
            vi -= nrm * gr.min(vi.dot(nrm), 0.0)
        if i == 0 and (j == 0 or j == n1 - 1):
            vi = vec3(0.0)
        vn[i, j] = vi  # not v: the neighbours' dashpots read the old velocities
    for i, j in gr.ndrange(x.shape[0], x.shape[1]):
        v[i, j] = vn[i, j]
        x[i, j] = x[i, j] + vn[i, j] * dt


def init(params: Params = Params()) -> tuple[gr.Ndarray, gr.Ndarray]:
    """Positions (a flat cloth in the plane y = 0.6, spread over x and z in [0, 1]-ish) and
    zero velocities, as (n, n) gr.ndarrays of vec3."""
    x, v = gr.ndarray(vec3, (params.n, params.n)), gr.ndarray(vec3, (params.n, params.n))
    x.from_numpy(initial_positions(params))
    return x, v


def initial_positions(params: Params) -> np.ndarray:
    """The flat starting cloth as a numpy (n, n, 3) array."""
    n, h = params.n, params.spacing
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return np.stack([j * h + 0.5 - (n - 1) * h / 2, np.full((n, n), 0.6), i * h + 0.5 - (n - 1) * h / 2],
                    axis=-1).astype(np.float32)


def step(x, v, params: Params = Params(), dt: float | None = None) -> None:
    """One time step (params.dt unless dt is given) of the cloth x, v (updated in place)."""
    args = Args()
    xd = args.dev(x, "x", dtype=vec3, ndim=2, written=True)
    vd = args.dev(v, "v", dtype=vec3, ndim=2, written=True)
    if xd.shape != vd.shape:
        raise ValueError(f"x and v must have the same shape: {xd.shape} and {vd.shape}")
    dt = params.dt if dt is None else float(dt)
    c = params.ball_center
    vn = scratch("cloth.v", vec3, vd.shape)
    step_kernel(xd, vd, vn, dt, params.spacing, 1.0 / params.mass, params.stiffness, params.damping,
                math.exp(-params.drag * dt), params.gravity, c[0], c[1], c[2], params.ball_radius)
    args.finish()


def step_numpy(x: np.ndarray, v: np.ndarray, params: Params = Params(), dt: float | None = None):
    """The same step in numpy (float64): the reference the tests compare with. Returns (x, v)."""
    dt = params.dt if dt is None else float(dt)
    x, v = x.astype(np.float64), v.astype(np.float64)
    n0, n1 = x.shape[:2]
    f = np.zeros_like(x)
    f[..., 1] = params.gravity * params.mass
    for di, dj, rest in SPRINGS:
        src = (slice(max(0, -di), n0 - max(0, di)), slice(max(0, -dj), n1 - max(0, dj)))
        dst = (slice(max(0, di), n0 + min(0, di)), slice(max(0, dj), n1 + min(0, dj)))
        d = x[dst] - x[src]
        length = np.linalg.norm(d, axis=-1, keepdims=True)
        u = d / np.maximum(length, 1e-9)
        rel = np.sum((v[dst] - v[src]) * u, axis=-1, keepdims=True)
        f[src] += u * (params.stiffness * (length - rest * params.spacing) + params.damping * rel)
    v = (v + f / params.mass * dt) * math.exp(-params.drag * dt)
    r = x - np.asarray(params.ball_center)
    dist = np.linalg.norm(r, axis=-1, keepdims=True)
    nrm = r / np.maximum(dist, 1e-9)
    inside = dist < params.ball_radius
    v -= np.where(inside, nrm * np.minimum(np.sum(v * nrm, axis=-1, keepdims=True), 0.0), 0.0)
    v[0, 0] = v[0, -1] = 0.0
    return x + v * dt, v
