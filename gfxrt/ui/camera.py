"""`gr.ui.Camera`: Taichi 1.7.4's GGUI camera, its view and projection matrices to the bit of
layout (`get_view_matrix()`, `get_projection_matrix(aspect)`: 4x4 float32 arrays laid out as
Taichi returns them, column-major as a GPU reads them: a point's clip coordinates are
`[x, y, z, 1] @ view @ projection`) and `track_user_inputs`, the keyboard and mouse control.

Taichi's conventions, kept: a right-handed view looking down -z; reversed depth (near maps to
1, far to 0); perspective by a vertical field of view (45 degrees by default, near 0.1, far
1000); orthographic by `left`, `right`, `top`, `bottom` (defaults -1, 1, -1, 1, the aspect
ratio unused).
"""
from __future__ import annotations

import enum
import math
import time

from gfxrt.compiler.npcompat import np


class ProjectionMode(enum.IntEnum):
    """Taichi's `ti.ui.ProjectionMode`."""

    Perspective = 0
    Orthogonal = 1


def _vec3(x, y, z) -> np.ndarray:
    return np.array([float(x), float(y), float(z)], dtype=np.float64)


def _normalized(v: np.ndarray) -> np.ndarray:
    n = float(np.linalg.norm(v))
    return v / n if n > 0 else v


def euler_to_vec(yaw: float, pitch: float) -> np.ndarray:
    return np.array([math.sin(yaw) * math.cos(pitch), math.sin(pitch), math.cos(yaw) * math.cos(pitch)])


def vec_to_euler(v: np.ndarray) -> tuple[float, float]:
    v = _normalized(v)
    pitch = math.asin(max(-1.0, min(1.0, v[1])))
    cos_pitch = math.sqrt(max(0.0, 1.0 - v[1] * v[1]))
    return math.atan2(v[0] / cos_pitch, v[2] / cos_pitch), pitch


class Camera:
    """Taichi's `ti.ui.Camera()`: set its `position`, `lookat`, `up` (and optionally `fov`,
    `projection_mode`, `z_near`, `z_far`, `left` ...) and pass it to `scene.set_camera`."""

    def __init__(self):
        self._fov, self._near, self._far = 45.0, 0.1, 1000.0
        self._left, self._right, self._top, self._bottom = -1.0, 1.0, -1.0, 1.0
        self._mode = ProjectionMode.Perspective
        self.position(0.0, 0.0, 0.0)
        self.lookat(0.0, 0.0, 1.0)
        self.up(0.0, 1.0, 0.0)
        self.last_mouse_x = self.last_mouse_y = self.last_time = None

    def position(self, x, y, z):
        self.curr_position = _vec3(x, y, z)

    def lookat(self, x, y, z):
        self.curr_lookat = _vec3(x, y, z)

    def up(self, x, y, z):
        self.curr_up = _vec3(x, y, z)

    def projection_mode(self, mode):
        self._mode = ProjectionMode(int(mode))

    def fov(self, fov):
        self._fov = float(fov)

    def left(self, left):
        self._left = float(left)

    def right(self, right):
        self._right = float(right)

    def top(self, top):
        self._top = float(top)

    def bottom(self, bottom):
        self._bottom = float(bottom)

    def z_near(self, z_near):
        self._near = float(z_near)

    def z_far(self, z_far):
        self._far = float(z_far)

    @property
    def tan_half_fov(self) -> float:
        return math.tan(math.radians(self._fov) / 2)

    def get_view_matrix(self) -> np.ndarray:
        """The world-to-camera matrix (glm's lookAt, right-handed), as Taichi lays it out."""
        eye = self.curr_position
        f = _normalized(self.curr_lookat - eye)
        s = _normalized(np.cross(f, self.curr_up))
        u = np.cross(s, f)
        m = np.eye(4)
        m[:3, 0], m[:3, 1], m[:3, 2] = s, u, -f
        m[3, :3] = -s @ eye, -u @ eye, f @ eye
        return m.astype(np.float32)

    def get_projection_matrix(self, aspect) -> np.ndarray:
        """The camera-to-clip matrix for a width / height ratio `aspect`, reversed depth, as Taichi
        lays it out."""
        n, fr = self._near, self._far
        m = np.zeros((4, 4))
        if self._mode == ProjectionMode.Perspective:
            t = self.tan_half_fov
            m[0, 0], m[1, 1] = 1 / (t * float(aspect)), 1 / t
            m[2, 2], m[2, 3], m[3, 2] = n / (fr - n), -1.0, fr * n / (fr - n)
        else:
            lt, r, b, t = self._left, self._right, self._top, self._bottom  # Taichi's order: top is glm's bottom
            m[0, 0], m[1, 1] = 2 / (r - lt), 2 / (t - b)
            m[3, 0], m[3, 1] = -(r + lt) / (r - lt), -(t + b) / (t - b)
            m[2, 2], m[3, 2], m[3, 3] = 1 / (fr - n), fr / (fr - n), 1.0
        return m.astype(np.float32)

    def track_user_inputs(self, window, movement_speed: float = 1.0, yaw_speed: float = 2.0,
                          pitch_speed: float = 2.0, hold_key=None):
        """Taichi's camera control: keys w s a d e q move it (forward, back, left, right, up,
        down), the mouse turns it while `hold_key` is held (always, for None)."""
        front = _normalized(self.curr_lookat - self.curr_position)
        left, up = np.cross(self.curr_up, front), self.curr_up
        now = time.perf_counter_ns()
        if self.last_time is None:
            self.last_time = now
        elapsed, self.last_time = (now - self.last_time) * 1e-9, now
        movement_speed *= elapsed * 60.0
        change = np.zeros(3)
        for key, direction in (("w", front), ("s", -front), ("a", left), ("d", -left), ("e", up), ("q", -up)):
            if window.is_pressed(key):
                change = change + direction * movement_speed
        self.position(*(self.curr_position + change))
        x, y = window.get_cursor_pos()
        if hold_key is None or window.is_pressed(hold_key):
            if self.last_mouse_x is None or self.last_mouse_y is None:
                self.last_mouse_x, self.last_mouse_y = x, y
            yaw, pitch = vec_to_euler(front)
            yaw -= (x - self.last_mouse_x) * yaw_speed * elapsed * 60.0
            pitch += (y - self.last_mouse_y) * pitch_speed * elapsed * 60.0
            limit = math.pi / 2 * 0.99
            front = euler_to_vec(yaw, max(-limit, min(limit, pitch)))
        self.lookat(*(self.curr_position + front))
        self.last_mouse_x, self.last_mouse_y = x, y
