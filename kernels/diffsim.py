"""A differentiable 2-D mass-spring simulation, optimized with gradients through time.

A soft square (an n x n grid of particles tied to their 8 neighbours by damped springs) flies
under gravity for `steps` explicit time steps. The loss is the mean squared distance of the
particles' final positions from target positions. `loss_and_grad` runs every step under one
`gr.Tape` and returns d loss / d (initial velocity of every particle): the gradient flows
back through all the steps and all the springs. `optimize` uses it for gradient descent:
which initial velocities make the body land in the target pose?

    sim = kernels.diffsim.MassSpring(n=8, steps=200)
    sim.set_target(shift=(0.4, 0.1), angle=0.5)         # land moved and turned
    v0 = np.zeros((sim.n_particles, 2), np.float32)
    for it in range(20):
        loss, grad = sim.loss_and_grad(v0)              # one Tape over 200 steps
        v0 -= 800.0 * grad                              # (see `optimize` for the step size)

Every time step is one kernel launch that reads state t and writes state t + 1 of the
trajectory arrays x, v of shape (steps + 1, particles): nothing is overwritten, so the
gradient kernels see the forward values (gfxrt's rule: a kernel must not overwrite what it
read). Springs are gathered by each particle at compile-time grid offsets (`gr.static`), so
neither atomics nor the adstack are needed. `step_numpy` is the same simulation in numpy, the
reference the tests compare forward values and finite-difference gradients with.
"""
from __future__ import annotations

import math

import numpy as np

import gfxrt as gr

vec2 = gr.types.vector(2, gr.f32)
X2 = gr.types.ndarray(dtype=vec2, ndim=2)
X1 = gr.types.ndarray(dtype=vec2, ndim=1)

# neighbour offsets (di, dj) and rest length in units of the spacing: structural and shear
_OFFSETS = ((1, 0), (0, 1), (1, 1), (1, -1))
SPRINGS = tuple((s * di, s * dj, math.hypot(di, dj)) for di, dj in _OFFSETS for s in (1, -1))


@gr.kernel
def start(x: X2, v: X2, x0: X1, v0: X1):
    """State 0: the rest positions and the initial velocities."""
    for p in range(x.shape[1]):
        x[0, p] = x0[p]
        v[0, p] = v0[p]


@gr.kernel
def step(x: X2, v: X2, t: gr.i32, side: gr.i32, dt: gr.f32, spacing: gr.f32, inv_mass: gr.f32, k: gr.f32,
         kd: gr.f32, decay: gr.f32, g: gr.f32):
    """State t + 1 from state t: spring and dashpot forces gathered per particle, gravity,
    semi-implicit Euler, velocity decay."""
    for p in range(x.shape[1]):
        i, j = p // side, p % side
        xi = x[t, p]
        vi = v[t, p]
        f = vec2(0.0, g / inv_mass)
        for s in gr.static(SPRINGS):
            a, b = i + s[0], j + s[1]
            if 0 <= a < side and 0 <= b < side:
                q = a * side + b
                d = x[t, q] - xi
                length = d.norm()
                u = d / length
                f += u * (k * (length - s[2] * spacing) + kd * (v[t, q] - vi).dot(u))
        vn = (vi + f * (inv_mass * dt)) * decay
        v[t + 1, p] = vn
        x[t + 1, p] = xi + vn * dt


@gr.kernel
def pose_loss(x: X2, t: gr.i32, target: X1, loss: gr.types.ndarray(dtype=gr.f32, ndim=0)):
    """loss += mean over particles of |x[t, p] - target[p]|^2."""
    for p in range(x.shape[1]):
        loss[None] += (x[t, p] - target[p]).norm_sqr() / x.shape[1]


class MassSpring:
    """The simulation's parameters and device arrays (trajectories with gradients).

    n: particles per side; steps: time steps of dt; spacing: rest distance of neighbours;
    mass: of each particle; stiffness / damping: of each spring; drag: velocity decay rate;
    gravity: along y."""

    def __init__(self, n: int = 8, steps: int = 200, dt: float = 1e-3, spacing: float = 0.05,
                 mass: float = 0.02, stiffness: float = 400.0, damping: float = 0.2, drag: float = 0.5,
                 gravity: float = -9.8):
        if n < 2 or steps < 1:
            raise ValueError(f"need n >= 2 and steps >= 1, got n={n}, steps={steps}")
        self.n, self.steps, self.dt, self.spacing, self.mass = n, steps, dt, spacing, mass
        self.stiffness, self.damping, self.drag, self.gravity = stiffness, damping, drag, gravity
        self.n_particles = n * n
        shape = (steps + 1, self.n_particles)
        self.x = gr.ndarray(vec2, shape, needs_grad=True)
        self.v = gr.ndarray(vec2, shape, needs_grad=True)
        self.v0 = gr.ndarray(vec2, self.n_particles, needs_grad=True)
        self.x0 = gr.ndarray(vec2, self.n_particles)
        self.target = gr.ndarray(vec2, self.n_particles)
        self.loss = gr.ndarray(gr.f32, (), needs_grad=True)
        self.rest = rest_positions(n, spacing)
        self.x0.from_numpy(self.rest)
        self.target.from_numpy(self.rest)

    def set_target(self, shift=(0.0, 0.0), angle: float = 0.0) -> np.ndarray:
        """Target positions: the rest shape turned by `angle` about its centre and moved by
        `shift`. Returns them (numpy)."""
        c = self.rest.mean(axis=0)
        rot = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
        tgt = ((self.rest - c) @ rot.T + c + np.asarray(shift)).astype(np.float32)
        self.target.from_numpy(tgt)
        return tgt

    def _args(self, t: int) -> tuple:
        return (self.x, self.v, t, self.n, self.dt, self.spacing, 1.0 / self.mass, self.stiffness,
                self.damping, math.exp(-self.drag * self.dt), self.gravity)

    def forward(self) -> None:
        """Run every step and the loss from the current initial velocities self.v0 (records
        into an open gr.Tape)."""
        start(self.x, self.v, self.x0, self.v0)
        for t in range(self.steps):
            step(*self._args(t))
        pose_loss(self.x, self.steps, self.target, self.loss)

    def run(self, v0=None) -> float:
        """The loss for initial velocities v0 ((particles, 2); default: the current ones)."""
        if v0 is not None:
            self.v0.from_numpy(np.asarray(v0, np.float32))
        self.loss.fill(0)
        self.forward()
        return float(self.loss.to_numpy())

    def loss_and_grad(self, v0=None) -> tuple[float, np.ndarray]:
        """(loss, d loss / d v0) for initial velocities v0, by one gr.Tape over all steps."""
        if v0 is not None:
            self.v0.from_numpy(np.asarray(v0, np.float32))
        with gr.Tape(self.loss):
            self.forward()
        return float(self.loss.to_numpy()), self.v0.grad.to_numpy()

    def positions(self, t: int | None = None) -> np.ndarray:
        """Particle positions at step t (default: the last), as numpy (particles, 2)."""
        return self.x.to_numpy()[self.steps if t is None else t]


def optimize(sim: MassSpring, iters: int = 50, lr: float | None = None, v0=None) -> tuple[np.ndarray, list[float]]:
    """Gradient descent on the initial velocities: returns (v0, the loss of every iteration).
    The default step, particles / (2 T^2) for flight time T, is about the inverse curvature of
    the loss for a free flight (a particle's final position moves by T per unit of its initial
    velocity, and the loss averages over the particles)."""
    if lr is None:
        lr = sim.n_particles / (2.0 * (sim.steps * sim.dt) ** 2)
    v = np.zeros((sim.n_particles, 2), np.float32) if v0 is None else np.array(v0, np.float32)
    losses = []
    for _ in range(iters):
        loss, g = sim.loss_and_grad(v)
        losses.append(loss)
        v -= lr * g
    return v, losses


def rest_positions(n: int, spacing: float) -> np.ndarray:
    """The n x n grid of particles at rest, (n * n, 2), lower-left corner at (0.2, 0.3)."""
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return np.stack([0.2 + j.ravel() * spacing, 0.3 + i.ravel() * spacing], axis=-1).astype(np.float32)


def simulate_numpy(sim: MassSpring, v0: np.ndarray, target: np.ndarray) -> float:
    """The same simulation and loss in numpy float64 (the tests' reference)."""
    n, h = sim.n, sim.spacing
    x = sim.rest.astype(np.float64).reshape(n, n, 2)
    v = np.asarray(v0, np.float64).reshape(n, n, 2)
    decay = math.exp(-sim.drag * sim.dt)
    for _ in range(sim.steps):
        f = np.zeros_like(x)
        f[..., 1] = sim.gravity * sim.mass
        for di, dj, rest in SPRINGS:
            src = (slice(max(0, -di), n - max(0, di)), slice(max(0, -dj), n - max(0, dj)))
            dst = (slice(max(0, di), n + min(0, di)), slice(max(0, dj), n + min(0, dj)))
            d = x[dst] - x[src]
            length = np.linalg.norm(d, axis=-1, keepdims=True)
            u = d / length
            rel = np.sum((v[dst] - v[src]) * u, axis=-1, keepdims=True)
            f[src] += u * (sim.stiffness * (length - rest * h) + sim.damping * rel)
        v = (v + f / sim.mass * sim.dt) * decay
        x = x + v * sim.dt
    return float(np.mean(np.sum((x.reshape(-1, 2) - target) ** 2, axis=-1)))
