"""kernels.nbody, kernels.cloth and kernels.diffsim against numpy references; the
differentiable simulation's gradients against central finite differences."""
import math

import numpy as np
import pytest
from gfxrt.kernels import cloth, diffsim, nbody

import gfxrt as gr


# -- n-body -------------------------------------------------------------------------------------
def _nbody_numpy(p, v, m, dt, eps, G):
    p, v, m = p.astype(np.float64), v.astype(np.float64), m.astype(np.float64)
    d = p[None, :, :] - p[:, None, :]
    inv3 = (np.sum(d * d, axis=2) + eps * eps) ** -1.5
    a = G * np.einsum("ijk,ij->ik", d, m[None, :] * inv3)
    v = v + a * dt
    return p + v * dt, v


def test_nbody_steps_match_numpy(rng):
    n = 300  # two tiles of 256 bodies, the second partly empty
    p = rng.standard_normal((n, 3)).astype(np.float32)
    v = (0.1 * rng.standard_normal((n, 3))).astype(np.float32)
    m = rng.uniform(0.5, 1.5, n).astype(np.float32) / n
    pd, vd, md = gr.ndarray(nbody.vec3, n), gr.ndarray(nbody.vec3, n), gr.ndarray(gr.f32, n)
    pd.from_numpy(p)
    vd.from_numpy(v)
    md.from_numpy(m)
    pw, vw = p, v
    for _ in range(3):
        nbody.step(pd, vd, md, 0.01, eps=0.05, G=2.0)
        pw, vw = _nbody_numpy(pw, vw, m, 0.01, 0.05, 2.0)
    np.testing.assert_allclose(pd.to_numpy(), pw, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(vd.to_numpy(), vw, rtol=1e-4, atol=1e-6)


def test_nbody_two_body_orbit_conserves_energy():
    # a circular orbit of two equal masses: after one period they are back, energy kept
    r, G, m = 1.0, 1.0, 0.5
    speed = math.sqrt(G * m / (2 * r))
    p = np.array([[-r / 2, 0, 0], [r / 2, 0, 0]], np.float32)
    v = np.array([[0, -speed, 0], [0, speed, 0]], np.float32)
    mass = np.full(2, m, np.float32)
    e0 = nbody.energy(p, v, mass, eps=0.0)
    period = 2 * math.pi * (r / 2) / speed
    steps = 2000
    pd, vd, md = gr.ndarray(nbody.vec3, 2), gr.ndarray(nbody.vec3, 2), gr.ndarray(gr.f32, 2)
    for d, a in ((pd, p), (vd, v), (md, mass)):
        d.from_numpy(a)
    for _ in range(steps):
        nbody.step(pd, vd, md, period / steps, eps=0.0, G=G)
    p, v = pd.to_numpy(), vd.to_numpy()
    assert nbody.energy(p, v, mass, eps=0.0) == pytest.approx(e0, rel=1e-3)
    np.testing.assert_allclose(p, [[-r / 2, 0, 0], [r / 2, 0, 0]], atol=2e-2)


# -- cloth --------------------------------------------------------------------------------------
def test_cloth_step_matches_numpy(rng):
    params = cloth.Params(n=21, spacing=1 / 21, ball_center=(0.5, 0.58, 0.5), ball_radius=0.2)
    x0 = cloth.initial_positions(params) + (0.003 * rng.standard_normal((21, 21, 3))).astype(np.float32)
    v0 = (0.1 * rng.standard_normal((21, 21, 3))).astype(np.float32)
    x, v = x0.copy(), v0.copy()
    cloth.step(x, v, params)
    xw, vw = cloth.step_numpy(x0, v0, params)
    np.testing.assert_allclose(v, vw, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(x, xw, rtol=1e-6, atol=1e-6)
    assert (v[0, 0] == 0).all() and (v[0, -1] == 0).all()  # pinned corners


def test_cloth_falls_onto_the_ball_and_rests_on_it():
    params = cloth.Params(n=16, spacing=1 / 16, ball_center=(0.5, 0.35, 0.5), ball_radius=0.2)
    x, v = cloth.init(params)
    xn, vn = cloth.initial_positions(params), np.zeros((16, 16, 3))
    for _ in range(1500):
        cloth.step(x, v, params)
    for _ in range(1500):
        xn, vn = cloth.step_numpy(xn, vn, params)
    xs = x.to_numpy()
    np.testing.assert_allclose(xs, xn, atol=1e-3)   # 1500 steps of f32 vs f64
    dist = np.linalg.norm(xs - np.array(params.ball_center), axis=-1)
    r = params.ball_radius
    assert r - 0.005 < dist.min() < r + 0.01           # lies on the ball, did not sink into it
    assert xs[..., 1].min() < 0.6 - 0.3                # the sides hang down
    np.testing.assert_array_equal(xs[0, 0], cloth.initial_positions(params)[0, 0])  # pinned


# -- differentiable simulation ------------------------------------------------------------------
@pytest.fixture(scope="module")
def sim():
    return diffsim.MassSpring(n=5, steps=120)


def test_diffsim_forward_matches_numpy(sim, rng):
    tgt = sim.set_target(shift=(0.2, 0.05), angle=0.3)
    v0 = (0.3 * rng.standard_normal((sim.n_particles, 2))).astype(np.float32)
    assert sim.run(v0) == pytest.approx(diffsim.simulate_numpy(sim, v0, tgt), rel=1e-4)


def test_diffsim_gradients_through_every_step_match_finite_differences(sim, rng):
    tgt = sim.set_target(shift=(0.1, -0.1), angle=-0.4)
    v0 = (0.5 * rng.standard_normal((sim.n_particles, 2))).astype(np.float32)
    loss, grad = sim.loss_and_grad(v0)
    assert loss == pytest.approx(diffsim.simulate_numpy(sim, v0, tgt), rel=1e-4)
    eps = 1e-4
    for p, c in [(0, 0), (7, 1), (12, 0), (24, 1)]:
        vp, vm = v0.astype(np.float64), v0.astype(np.float64)
        vp[p, c] += eps
        vm[p, c] -= eps
        fd = (diffsim.simulate_numpy(sim, vp, tgt) - diffsim.simulate_numpy(sim, vm, tgt)) / (2 * eps)
        assert grad[p, c] == pytest.approx(fd, rel=1e-3, abs=1e-7)
    # the springs matter: the gradient is not that of a free flight (2 (x_T - target) T / n)
    t = sim.steps * sim.dt
    free = 2 * (sim.positions() - tgt) * t / sim.n_particles
    assert np.abs(grad - free).max() > 1e-3 * np.abs(free).max()


def test_diffsim_optimization_reaches_the_target_pose(sim):
    tgt = sim.set_target(shift=(0.25, 0.1), angle=0.5)
    v0, losses = diffsim.optimize(sim, iters=6)
    assert losses[-1] < 1e-3 * losses[0]
    assert np.abs(sim.positions() - tgt).max() < 0.02
    assert np.isfinite(v0).all()
