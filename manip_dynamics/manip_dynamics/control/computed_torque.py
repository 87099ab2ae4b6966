# Copyright 2026 The manip_dynamics Authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
Trajectory tracking with the full dynamics: computed torque and joint impedance (no rclpy).

Computed torque (Craig, *Introduction to Robotics*, ch. 10, model-based control: the
control law partitioned into a model-based part ``tau = alpha tau' + beta`` with
``alpha = M(q)``, ``beta = V(q, qd) + G(q) + F(qd)`` and a servo part
``tau' = qdd_d + Kv e_dot + Kp e``; with a perfect model the error obeys
``e_ddot + Kv e_dot + Kp e = 0``, critically damped for ``Kv = 2 sqrt(Kp)``)::

    tau = M(q) (qdd_d + Kd (qd_d - qd) + Kp (q_d - q) [+ Ki int e]) + C(q, qd) qd + g(q)
          + friction(qd_r),    qd_r = qd_d + Lambda e,  Lambda = Kp / Kd

computed as one inverse-dynamics call ``ID(q, qd, v)`` with rotor inertia. The friction is
compensated at the reference velocity ``qd_r`` of Slotine and Li's sliding-mode and
adaptive controllers: the desired velocity plus the velocity that would close the position
error at the servo's own rate. With the measured velocity the Coulomb friction's steep
smooth sign closes a fast loop that a controller sampled every few ms makes unstable; at the
desired velocity alone the Coulomb friction holds a light joint away from where it should
be (cobot7's wrist stopped 16 mrad from its hold pose after a push: its 0.42 N m of
friction against 10 N m/rad of servo stiffness). ``qd_r`` is a feed-forward while the arm
tracks (e = 0) and pushes a stuck joint toward the reference with up to its Coulomb
friction, from position error only (measured: back within 5 mrad 0.2 s after a 15 N push,
stable with 16 ms of loop delay at Kp 400, Kd 40).
Joint impedance, for arms where the full inverse-dynamics law is too stiff::

    tau = g(q) + Kp e + Kd e_dot + [ID(q_d, qd_d, qdd_d) - g(q_d)] + friction(qd_r)

(gains in N m/rad and N m s/rad; the bracket is the feed-forward of the desired motion;
``qd_r`` as above).

Both hold the last point after the trajectory's end, clamp every command to the effort
limits, refuse a trajectory that starts away from the current pose (no jump), stop and hold
the current pose when the tracking error exceeds ``max_tracking_error``, and react to a
collision by holding (``'hold'``) or by gravity compensation alone (``'float'``), until
:meth:`resume`.
"""

from dataclasses import dataclass
import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from manip_dynamics.control.gravity_compensation import EFFORT_SCALE_RANGE
from manip_dynamics.errors import InputError
from manip_dynamics.safety.ranges import check_range
from manip_dynamics.small_arrays import all_finite, any_true

FloatArray = NDArray[np.float64]

#: Reactions to a collision: hold the pose where it happened, or gravity compensation only.
REACTIONS = ('hold', 'float')
#: After :meth:`TrajectoryController.resume` the trajectory's clock speeds up from
#: standstill to real time over this long [s], its rate a smoothstep ``3u^2 - 2u^3``:
#: continuing mid-motion at once would ask the trajectory's velocity of an arm at rest, a
#: torque step (behind a controller_manager the external-torque observer took that step for
#: a collision in 2 of 3 resumes). The rest of the trajectory takes RESUME_RAMP / 2 longer.
RESUME_RAMP = 0.5


@dataclass
class Command:
    """
    One control step.

    :ivar tau: Efforts [N m or N], model order, finite and within the effort limits.
    :ivar state: ``'idle'`` (no trajectory: holding), ``'tracking'``, ``'done'`` (after
        the end: holding the last point), ``'holding'`` (stopped on a tracking error or a
        collision, holding the pose there), ``'floating'`` (collision, gravity only).
    :ivar error: ``q_d - q`` [rad or m], model order.
    :ivar event: ``''`` or what changed at this step (``'finished'``, ``'tracking_error'``).
    :ivar saturated: Whether the effort limits clipped the command.
    :ivar message: Text for the log when something changed.
    """

    tau: FloatArray
    state: str
    error: FloatArray
    event: str = ''
    saturated: bool = False
    message: str = ''


def quintic_hermite(t: FloatArray, q: FloatArray, qd: FloatArray, qdd: FloatArray) -> Any:
    """
    Return the piecewise quintic through every point's position, velocity and acceleration.

    Per interval of length ``h``, with ``s`` the time since its start, ``p(s) = q0 + v0 s +
    a0/2 s^2 + c3 s^3 + c4 s^4 + c5 s^5`` where, with ``dq = q1 - q0 - v0 h - a0 h^2/2``,
    ``dv = v1 - v0 - a0 h`` and ``da = a1 - a0``: ``c3 h^3 = 10 dq - 4 dv h + da h^2/2``,
    ``c4 h^4 = -15 dq + 7 dv h - da h^2``, ``c5 h^5 = 6 dq - 3 dv h + da h^2/2`` (the
    three end conditions solved in closed form). The same polynomial as scipy's
    ``BPoly.from_derivatives(..., orders=5)``, built for all intervals and joints at once:
    scipy builds it interval by interval in Python (111 ms for 151 points of a 7-joint arm
    against 0.23 ms here, side by side), which held the GIL while the control loop had to
    answer.

    :param t: Increasing times [s], shape (m,), m >= 2.
    :param q: Positions, (m, n); ``qd`` velocities and ``qdd`` accelerations, (m, n).
    :return: A ``scipy.interpolate.PPoly`` of shape (n,) per time (derivatives with ``nu``).
    """
    from scipy.interpolate import PPoly

    h = np.diff(t)[:, None]
    q0, v0, a0 = q[:-1], qd[:-1], qdd[:-1]
    dq = q[1:] - q0 - v0 * h - 0.5 * a0 * h * h
    dv = qd[1:] - v0 - a0 * h
    da = qdd[1:] - a0
    c = np.empty((6,) + q0.shape)   # highest power first, as PPoly wants
    c[0] = (6.0 * dq - 3.0 * dv * h + 0.5 * da * h * h) / h ** 5
    c[1] = (-15.0 * dq + 7.0 * dv * h - da * h * h) / h ** 4
    c[2] = (10.0 * dq - 4.0 * dv * h + 0.5 * da * h * h) / h ** 3
    c[3] = 0.5 * a0
    c[4] = v0
    c[5] = q0
    return PPoly(c, t)


class TimedPoints:
    """
    A trajectory from arrays: times and points, ``sample(t) -> (q, qd, qdd)``.

    With velocities and accelerations: piecewise quintic per joint (each point's values
    kept); with velocities only: piecewise cubic Hermite; positions only: a cubic spline with
    zero velocity at both ends. Before the first time the first point, after the last one
    the last point, at rest.
    """

    def __init__(self, times: ArrayLike, positions: ArrayLike,
                 velocities: ArrayLike | None = None,
                 accelerations: ArrayLike | None = None) -> None:
        """
        Check and store the points.

        :param times: Increasing times [s] from the start, shape (m,), m >= 1.
        :param positions: (m, n); ``velocities``, ``accelerations`` (m, n) or None.
        :raises InputError: Shapes, NaN/inf, times not increasing.
        """
        from scipy.interpolate import CubicHermiteSpline, CubicSpline

        t = np.asarray(times, dtype=np.float64).reshape(-1)
        q = np.asarray(positions, dtype=np.float64)
        if q.ndim != 2 or q.shape[0] != t.shape[0] or t.shape[0] < 1:
            raise InputError('times (m,) and positions (m, n) must match, got %s and %s'
                             % (t.shape, q.shape))
        if not (np.all(np.isfinite(t)) and np.all(np.isfinite(q))):
            raise InputError('times and positions must be finite')
        if t[0] < 0.0 or np.any(np.diff(t) <= 0.0):
            raise InputError('times must start at >= 0 and increase')
        arrays = []
        for name, value in (('velocities', velocities), ('accelerations', accelerations)):
            if value is None:
                arrays.append(None)
                continue
            v = np.asarray(value, dtype=np.float64)
            if v.shape != q.shape or not np.all(np.isfinite(v)):
                raise InputError('%s must be finite and shaped like positions %s'
                                 % (name, q.shape))
            arrays.append(v)
        qd, qdd = arrays
        self._t = t
        self._q = q
        self.duration = float(t[-1])
        if t.shape[0] == 1:
            self._spline = None
        elif qd is not None and qdd is not None:
            self._spline = quintic_hermite(t, q, qd, qdd)
        elif qd is not None:
            self._spline = CubicHermiteSpline(t, q, qd, axis=0)
        else:
            self._spline = CubicSpline(t, q, axis=0, bc_type='clamped')
        if self._spline is not None:   # powers of the polynomial pieces, highest first
            self._exponents = np.arange(self._spline.c.shape[0] - 1, -1, -1, dtype=np.float64)

    def sample(self, t: ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Return ``(q, qd, qdd)`` at times ``t``, each (len(t), n)."""
        tt = np.atleast_1d(np.asarray(t, dtype=np.float64)).ravel()
        n = self._q.shape[1]
        if self._spline is None:
            return (np.repeat(self._q, len(tt), axis=0), np.zeros((len(tt), n)),
                    np.zeros((len(tt), n)))
        if tt.size == 1:
            return self._sample_one(float(tt[0]))
        inside = (tt > self._t[0]) & (tt < self._t[-1])
        tc = np.clip(tt, self._t[0], self._t[-1])
        q = self._spline(tc)
        qd = np.where(inside[:, None], self._spline(tc, 1), 0.0)
        qdd = np.where(inside[:, None], self._spline(tc, 2), 0.0)
        return q, qd, qdd

    def _sample_one(self, t: float) -> tuple[FloatArray, FloatArray, FloatArray]:
        """
        :meth:`sample` at one time, as the control loop asks: the interval's polynomial.

        Every spline here is a piecewise polynomial (scipy ``PPoly``: coefficients ``c``
        (k, m - 1, n), highest power first, breakpoints ``x``); value, first and second
        derivative at ``s = t - x[i]`` are one (3, k) @ (k, n) product: 29 us against 517 us
        for three ``PPoly`` calls, side by side on a loaded machine.
        """
        x, c = self._spline.x, self._spline.c
        tc = min(max(t, x[0]), x[-1])
        i = min(max(int(np.searchsorted(x, tc, side='right')) - 1, 0), len(x) - 2)
        s = tc - x[i]
        e = self._exponents
        w = np.empty((3, e.size))
        w[0] = s ** e
        w[1] = e * s ** np.maximum(e - 1.0, 0.0)
        w[2] = e * (e - 1.0) * s ** np.maximum(e - 2.0, 0.0)
        out = w @ c[:, i, :]
        if not x[0] < t < x[-1]:   # before the start and after the end: at rest
            out[1:] = 0.0
        return out[0:1], out[1:2], out[2:3]


class TrajectoryController:
    """
    Shared tracking machinery: trajectory timing, hold, limits, collision reaction.

    Subclasses give the control law (:meth:`_law`).
    """

    def __init__(self, model, kp: ArrayLike, kd: ArrayLike, *, ki: ArrayLike | None = None,
                 effort_limits: ArrayLike | None = None, effort_scale: float = 1.0,
                 max_tracking_error: float = 0.2, start_tolerance: float = 0.05,
                 integral_limit: float = 0.5, include_friction: bool = True) -> None:
        """
        Set up gains and limits for one model (model joint order).

        :param model: The :class:`~manip_dynamics.RobotModel` (payloads included).
        :param kp: Position gains, one number or one per joint (> 0).
        :param kd: Velocity gains, one number or one per joint (>= 0).
        :param ki: Integral gains (>= 0), or None for none.
        :param effort_limits: [N m or N] per joint; default the URDF's (required finite).
        :param effort_scale: Fraction (0, 1] of the effort limits used.
        :param max_tracking_error: Largest |q_d - q| [rad or m] before the motion stops and
            the pose is held.
        :param start_tolerance: Largest distance [rad or m] between the current pose and a
            new trajectory's first point (or the trajectory at the resume time).
        :param integral_limit: Bound of each integrated error [rad s] (anti wind-up).
        :param include_friction: Compensate the model's joint friction.
        :raises InputError: Bad gains or limits (named).
        """
        n = model.dof
        self.model = model
        self.set_gains(kp, kd, ki)
        limits = (np.array(model.effort_limits, dtype=np.float64) if effort_limits is None
                  else np.array(effort_limits, dtype=np.float64).reshape(-1))
        if limits.shape != (n,) or not (np.all(np.isfinite(limits)) and np.all(limits > 0)):
            bad = [model.joint_names[i] for i in range(min(n, limits.size))
                   if not (math.isfinite(limits[i]) and limits[i] > 0.0)]
            raise InputError('effort limits must be finite and > 0 for every joint (%s): '
                             'give effort_limits' % (bad or limits.shape,))
        if not 0.0 < effort_scale <= 1.0:
            raise InputError('effort_scale must be in (0, 1], got %r' % effort_scale)
        for value, name in ((max_tracking_error, 'max_tracking_error'),
                            (start_tolerance, 'start_tolerance'),
                            (integral_limit, 'integral_limit')):
            if not (math.isfinite(value) and value > 0.0):
                raise InputError('%s must be > 0, got %r' % (name, value))
        self._full_limits = limits
        self.limits = limits * effort_scale
        self.max_tracking_error = float(max_tracking_error)
        self.start_tolerance = float(start_tolerance)
        self.integral_limit = float(integral_limit)
        self.include_friction = bool(include_friction)
        self._traj = None
        self._t0 = 0.0
        self._paused_at: float | None = None   # trajectory time where it stopped
        self._ramp_start: float | None = None  # time of the last resume, while it ramps
        self._ramp_from = 0.0                  # trajectory time of that resume
        self._state = 'idle'
        self._hold_q: FloatArray | None = None
        self._integral = np.zeros(n)
        self._last_t: float | None = None

    def set_gains(self, kp: ArrayLike, kd: ArrayLike, ki: ArrayLike | None = None) -> None:
        """
        Use these gains from the next command on (at construction, or on a running arm).

        :param kp: Position gains, one number or one per joint (> 0).
        :param kd: Velocity gains, one number or one per joint (>= 0).
        :param ki: Integral gains (>= 0), or None for none.
        :raises InputError: Bad gains (named); the old gains stay.
        """
        n = self.model.dof
        gains = (self._gains(kp, n, 'kp', positive=True), self._gains(kd, n, 'kd'),
                 self._gains(0.0 if ki is None else ki, n, 'ki'))
        self.kp, self.kd, self.ki = gains
        # Lambda = Kp / Kd of the reference velocity qd_r = qd_d + Lambda e [1/s]
        self._lam = np.where(self.kd > 0.0, self.kp / np.where(self.kd > 0.0, self.kd, 1.0),
                             0.0)
        # qd_r never beyond the URDF velocity limit (joints with a damping gain and a limit)
        vmax = np.asarray(self.model.velocity_limits, dtype=np.float64)
        self._damped = self.kd > 0.0
        self._vmax = np.where(self._damped & np.isfinite(vmax) & (vmax > 0.0), vmax, np.inf)

    def rescale(self, effort_scale: float) -> None:
        """
        Use ``effort_scale`` of the effort limits from the next command on.

        :raises InputError: Outside (0, 1] (the old scale stays).
        """
        self.limits = self._full_limits * check_range('effort_scale', effort_scale,
                                                      EFFORT_SCALE_RANGE)

    @staticmethod
    def _gains(value: ArrayLike, n: int, name: str, positive: bool = False) -> FloatArray:
        g = np.asarray(value, dtype=np.float64)
        g = np.full(n, float(g)) if g.ndim == 0 else g.reshape(-1)
        if g.shape != (n,) or not np.all(np.isfinite(g)) or np.any(g < 0.0) or (
                positive and np.any(g <= 0.0)):
            raise InputError('%s must be one number or %d, finite and %s 0, got %s'
                             % (name, n, '>' if positive else '>=', np.asarray(value).tolist()))
        return g

    @property
    def state(self) -> str:
        """Return the controller state: idle, tracking, done, holding or floating."""
        return self._state

    def _check_state(self, q: ArrayLike, qd: ArrayLike) -> tuple[FloatArray, FloatArray]:
        n = self.model.dof
        q = np.asarray(q, dtype=np.float64)
        qd = np.asarray(qd, dtype=np.float64)
        if q.shape != (n,) or qd.shape != (n,):
            raise InputError('q and qd must have shape (%d,)' % n)
        if not (all_finite(q) and all_finite(qd)):
            raise InputError('q and qd must be finite')
        return q, qd

    def set_trajectory(self, trajectory, t: float, q: ArrayLike) -> None:
        """
        Start following ``trajectory`` at time ``t`` from the current pose ``q``.

        :param trajectory: Anything with ``duration`` and ``sample(t) -> (q, qd, qdd)``
            (e.g. :class:`~manip_dynamics.planning.RetimedTrajectory`, :class:`TimedPoints`).
        :param t: Current time [s] (the clock of :meth:`update`).
        :param q: Current joint positions, model order.
        :raises InputError: The trajectory's first point is more than ``start_tolerance``
            from ``q`` (the message names the joint), or it has the wrong size.
        """
        self.check_start(trajectory, q)
        self._traj = trajectory
        self._t0 = float(t)
        self._paused_at = None
        self._ramp_start = None
        self._state = 'tracking'
        self._integral[:] = 0.0

    def check_start(self, trajectory, q: ArrayLike) -> None:
        """
        Check that ``trajectory`` starts at the pose ``q`` (what :meth:`set_trajectory` checks).

        :param trajectory: As for :meth:`set_trajectory`.
        :param q: Current joint positions [rad or m], model order, shape (n,).
        :raises InputError: Its first point is more than ``start_tolerance`` from ``q`` (the
            message names the joint), or it has the wrong size.
        """
        q = np.asarray(q, dtype=np.float64)
        start, _, _ = trajectory.sample(np.array([0.0]))
        if start.shape != (1, self.model.dof):
            raise InputError('the trajectory has %d joints, the model %d'
                             % (start.shape[1], self.model.dof))
        self._check_start(start[0], q, 'its first point')

    def _check_start(self, start: FloatArray, q: FloatArray, what: str) -> None:
        gap = np.abs(start - q)
        k = int(np.argmax(gap))
        if gap[k] > self.start_tolerance:
            raise InputError('refused: %s is %.4g away from the current pose at joint %r '
                             '(start_tolerance %g): it would jump' % (
                                 what, gap[k], self.model.joint_names[k],
                                 self.start_tolerance))

    def react(self, reaction: str, q: ArrayLike) -> None:
        """
        Stop the motion after a collision: ``'hold'`` the pose ``q`` or ``'float'``.

        :raises InputError: An unknown reaction.
        """
        if reaction not in REACTIONS:
            raise InputError('reaction must be one of %s, got %r' % (REACTIONS, reaction))
        self._pause(np.asarray(q, dtype=np.float64))
        self._state = 'holding' if reaction == 'hold' else 'floating'

    def drop(self, q: ArrayLike) -> None:
        """Forget the trajectory (nothing to resume) and hold the pose ``q``."""
        self._traj = None
        self._paused_at = None
        self._ramp_start = None
        self._hold_q = np.asarray(q, dtype=np.float64).copy()
        self._integral[:] = 0.0
        self._state = 'holding'

    def hold(self, q: ArrayLike) -> None:
        """Stop the motion and hold the pose ``q`` (model order)."""
        self._pause(np.asarray(q, dtype=np.float64))
        self._state = 'holding'

    def _trajectory_time(self, t: float) -> tuple[float, float, float]:
        """
        Return the trajectory's time at ``t``, its rate and the rate's derivative [1/s].

        Real time (rate 1) but for :data:`RESUME_RAMP` s after a resume, where the rate rises
        as ``3u^2 - 2u^3`` with ``u`` the fraction of the ramp gone, so the desired velocity
        and acceleration start at zero.
        """
        if self._ramp_start is not None:
            u = (t - self._ramp_start) / RESUME_RAMP
            if u < 1.0:
                u = max(u, 0.0)
                return (self._ramp_from + RESUME_RAMP * (u ** 3 - 0.5 * u ** 4),
                        3.0 * u ** 2 - 2.0 * u ** 3, (6.0 * u - 6.0 * u ** 2) / RESUME_RAMP)
            self._ramp_start = None
        return t - self._t0, 1.0, 0.0

    def _pause(self, q: FloatArray) -> None:
        if self._state == 'tracking' and self._last_t is not None:
            self._paused_at = self._trajectory_time(self._last_t)[0]
        self._hold_q = q.copy()
        self._integral[:] = 0.0

    def resume(self, t: float, q: ArrayLike) -> str:
        """
        Continue the trajectory from where it stopped (or hold if there is none).

        :return: What happened, for the log.
        :raises InputError: The arm is more than ``start_tolerance`` from the trajectory's
            pose at the stop time (pushed away while floating): move it back first.
        """
        q = np.asarray(q, dtype=np.float64)
        if self._traj is None or self._paused_at is None:
            self.hold(q)
            return 'nothing to resume: holding the current pose'
        at = self._paused_at
        ref, _, _ = self._traj.sample(np.array([at]))
        self._check_start(ref[0], q, 'the trajectory at %.3f s' % at)
        # after the ramp the trajectory runs in real time again, RESUME_RAMP / 2 behind
        self._t0 = float(t) + 0.5 * RESUME_RAMP - at
        self._ramp_start, self._ramp_from = float(t), at
        self._paused_at = None
        self._state = 'tracking'
        self._integral[:] = 0.0
        return 'resumed at %.3f s of %.3f s' % (at, self._traj.duration)

    def update(self, t: float, q: ArrayLike, qd: ArrayLike) -> Command:
        """
        Return the efforts for the state ``(q, qd)`` at time ``t``.

        :param t: Time [s] (monotonic, the clock of :meth:`set_trajectory`).
        :param q: Joint positions, model order, (n,); ``qd`` velocities.
        :return: The :class:`Command` (finite, clamped efforts).
        :raises InputError: Bad shapes or NaN/inf state (nothing to send then).
        """
        q, qd = self._check_state(q, qd)
        dt = 0.0 if self._last_t is None else max(0.0, t - self._last_t)
        self._last_t = float(t)
        event = ''
        n = self.model.dof
        zero = np.zeros(n)
        if self._state == 'idle' and self._hold_q is None:
            self._hold_q = q.copy()
        if self._state == 'tracking':
            local, rate, rate_dot = self._trajectory_time(t)
            qs, qds, qdds = self._traj.sample(np.array([local]))
            q_d = qs[0]
            qd_d = qds[0] * rate
            qdd_d = qdds[0] * rate ** 2 + qds[0] * rate_dot
            if local >= self._traj.duration:
                self._state = 'done'
                self._hold_q = q_d.copy()
                event = 'finished'
        if self._state in ('idle', 'done', 'holding'):
            q_d, qd_d, qdd_d = self._hold_q, zero, zero
        if self._state == 'floating':
            tau = self.model.gravity_torques(q)
            if self.include_friction:
                tau = tau + self.model.friction_torques(qd)
            return self._finish(tau, 'floating', zero, event)
        e = q_d - q
        worst = int(np.argmax(np.abs(e)))
        message = ''
        if self._state == 'tracking' and abs(e[worst]) > self.max_tracking_error:
            message = ('tracking error %.4g at joint %r above max_tracking_error %g: stopped, '
                       'holding the current pose' % (abs(e[worst]),
                                                     self.model.joint_names[worst],
                                                     self.max_tracking_error))
            self.hold(q)
            q_d, qd_d, qdd_d, e = q, zero, zero, zero
            event = 'tracking_error'
        if any_true(self.ki > 0.0):
            self._integral = np.clip(self._integral + e * dt, -self.integral_limit,
                                     self.integral_limit)
        tau = self._law(q, qd, q_d, qd_d, qdd_d, e, self.reference_velocity(qd_d, e))
        return self._finish(tau, self._state, e, event, message)

    def _finish(self, tau: FloatArray, state: str, e: FloatArray, event: str,
                message: str = '') -> Command:
        if not all_finite(tau):
            raise InputError('non-finite efforts %s: nothing to send' % tau)
        clipped = np.clip(tau, -self.limits, self.limits)
        return Command(clipped, state, e, event, any_true(clipped != tau), message)

    def _law(self, q, qd, q_d, qd_d, qdd_d, e, qd_r) -> FloatArray:
        """Return the efforts; ``qd_r`` is :meth:`reference_velocity` at ``(qd_d, e)``."""
        raise NotImplementedError

    def reference_velocity(self, qd_d: FloatArray, e: FloatArray) -> FloatArray:
        """
        Return the reference velocity ``qd_r = qd_d + Lambda e`` within the velocity limits.

        ``Lambda = Kp / Kd``, so the PD term ``Kd e_dot + Kp e`` is ``Kd (qd_r - qd)``. With
        ``qd_r`` clamped to the URDF velocity limits (joints with ``Kd > 0`` and a finite
        limit) a large position error (the arm pushed away at hold, or left behind while
        the controller was starved) is closed at most at the joint's velocity limit instead
        of with an acceleration ``Kp e`` that drives the joint past it: measured behind the
        controller_manager stand-in, cobot7's wrist came back from 1 rad at 3.3 x its limit.
        Within the limits nothing changes.

        :param qd_d: Desired velocity [rad/s or m/s], model order, shape (n,).
        :param e: Position error ``q_d - q`` [rad or m], shape (n,).
        :return: ``qd_r`` [rad/s or m/s], shape (n,).
        """
        qd_r = qd_d + self._lam * e
        if any_true(np.abs(qd_r) > self._vmax):
            qd_r = np.clip(qd_r, -self._vmax, self._vmax)
        return qd_r

    def _feedback(self, qd: FloatArray, qd_r: FloatArray, e: FloatArray) -> FloatArray:
        """Return the PD term ``Kd e_dot + Kp e`` as ``Kd (qd_r - qd)`` (``Kp e`` where Kd = 0)."""
        return np.where(self._damped, self.kd * (qd_r - qd), self.kp * e)

    def friction(self, qd_d: FloatArray, e: FloatArray) -> FloatArray:
        """
        Return the friction compensation at the reference velocity (:meth:`reference_velocity`).

        :param qd_d: Desired velocity [rad/s or m/s], model order, shape (n,).
        :param e: Position error ``q_d - q`` [rad or m], shape (n,).
        :return: Torques [N m or N], shape (n,); zeros when friction is not compensated.
        """
        return self._friction_at(self.reference_velocity(qd_d, e))

    def _friction_at(self, qd_r: FloatArray) -> FloatArray:
        """Return the friction compensation at ``qd_r`` (zeros when not compensated)."""
        if not self.include_friction:
            return np.zeros(self.model.dof)
        return self.model.friction_torques(qd_r)


class ComputedTorqueController(TrajectoryController):
    """``tau = M (qdd_d + Kd e_dot + Kp e + Ki int e) + C qd + g + F(qd_r)`` (Craig ch. 10)."""

    def _law(self, q, qd, q_d, qd_d, qdd_d, e, qd_r) -> FloatArray:
        v = qdd_d + self._feedback(qd, qd_r, e) + self.ki * self._integral
        tau = self.model.inverse_dynamics(q, qd, v, include_armature=True)
        # at the reference velocity, not the measured one (module docstring)
        return tau + self._friction_at(qd_r)


class JointImpedanceController(TrajectoryController):
    """``tau = g(q) + Kp e + Kd e_dot + [ID(q_d, qd_d, qdd_d) - g(q_d)] + friction(qd_r)``."""

    def _law(self, q, qd, q_d, qd_d, qdd_d, e, qd_r) -> FloatArray:
        feed = (self.model.inverse_dynamics(q_d, qd_d, qdd_d, include_armature=True)
                - self.model.gravity_torques(q_d))
        return (self.model.gravity_torques(q) + self._feedback(qd, qd_r, e)
                + self.ki * self._integral + feed + self._friction_at(qd_r))
