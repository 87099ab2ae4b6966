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
Torque-feasible, near time-optimal retiming of a joint-space path through waypoints.

The path: a natural cubic spline ``q(s)`` through the waypoints, parameterized by
cumulative chord length in joint space (``s_k = sum |q_k - q_{k-1}|``), so it passes through
every waypoint exactly and has continuous first and second derivatives.

The timing: TOPP-RA (:mod:`.reachability`) on a grid that contains every waypoint's ``s_k``
gives the time-optimal ``x = sd^2`` at the grid points under velocity, acceleration and
torque limits; the torque constraint comes from the model as loaded (payloads, rotor
inertia, and joint friction bounded conservatively in the direction of motion: Coulomb at
full size, viscous by a tangent of ``sd = sqrt(x)``, linear in ``x``).
``s(t)`` is then a piecewise quintic through the grid points (position, velocity and the
mean of the two adjacent path accelerations at each point), so ``qd = q' sd`` and
``qdd = q' sdd + q'' sd^2`` are continuous in time.

The everywhere-guarantee, by check and repair: the quintic (and the grid itself) can
exceed a limit between grid points. Every piece of the result (one grid interval) is
sampled on its own time, first at a few points with a bound on what lies between them (the
samples' curvature; :func:`.reachability.limit_usage`), and where that bound does not prove
the piece within the limits, equally spaced at ``check_rate`` (4 kHz) or closer, at least
four points inside; velocities and accelerations (from the spline) and torques (the
model's inverse dynamics along the path at the grid points, interpolated, plus a bound of
the interpolation's error, with the real friction at the sampled velocity) are compared
with the limits, and where a piece uses more than ``1 - margin`` of one, the limits of the
grid points around it are tightened by the ratio (at least 3 %) and the profile
recomputed. A repair changes the profile near the tightened points only: the pieces whose
ends (duration, ``sd``, ``sdd``) are unchanged keep their check, the others are checked
again. After ``max_repairs`` rounds, a uniform slow-down by the worst ratio ends it.
TOPP-RA's own output guarantees its limits only at its grid points (0.2 to 1.3 % over
between them on the arms tried when it was written).
"""

from collections.abc import Callable
from dataclasses import dataclass
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from manip_dynamics.planning.limits import limit_vector, LimitSpec, read_joint_limits_yaml
from manip_dynamics.planning.reachability import (
    controllable_sets, CURVE_SAFETY, forward_profile, limit_usage, scale_rows)

FloatArray = NDArray[np.float64]

#: Fractions of the first (last) grid cell at which extra points are put near the ends.
END_REFINEMENT = np.array([1.0 / 256, 1.0 / 64, 1.0 / 16, 1.0 / 4])
#: Starting factors of the acceleration limit at the first (last) grid points: the quintic
#: pieces that ramp the acceleration from 0 at rest in the refined end cells overshoot
#: TOPP-RA's constant ``u`` there by the same ratio on every path (1.372 at the first check,
#: on all 16 long-path benchmark cases), and the repair always converged to about these
#: factors in two rounds. Starting from them saves those rounds; the check still decides.
#: Measured on those cases: 1 to 2 repair rounds fewer, durations 0.03 to 0.25 % longer.
END_START = np.array([0.53, 0.53, 0.865, 0.865, 0.96, 0.96])
END_STOP = np.array([0.96, 0.96, 0.96, 0.848, 0.468, 0.53])
#: Check points inside each refined end interval.
END_CHECK_POINTS = 40
#: Points inside a piece of the coarse first check (see reachability.limit_usage): a piece
#: it proves within the limits is not sampled at ``check_rate``.
COARSE_CHECK_POINTS = 6
#: Half-width of the moving average applied to TOPP-RA's ``sd^2`` profile [grid points].
SMOOTHING = 2
#: Default grid points per waypoint segment. Measured on the 16 varied long-path benchmark
#: cases (2 to 20 waypoints): against 50 with SMOOTHING 3, 35 with SMOOTHING 2 gives
#: durations 0.3 to 1.0 % longer (40: 0.0 to 1.0, 30: 0.5 to 2.0) and about 0.7 of the
#: computation, every limit still kept.
GRID_PER_SEGMENT = 35
#: Default share of each limit the check accepts at a sample (the rest covers the peaks
#: between samples of smooth functions at ``check_rate``).
DEFAULT_MARGIN = 1e-3
#: Every limit factor starts at this share of ``1 - margin``. The quintic between the grid
#: points overshoots TOPP-RA's profile on most pieces at the first check (median 0.5 %, up
#: to 16 % on the 16 long-path benchmark cases) and a repair tightens a point by at least
#: 2 %; starting 2 % lower made one repair round the rule (13 of 16 cases, against 6) with
#: durations within 0.7 % (shorter in 12 of the 16).
START_FACTOR = 0.98
#: Where (share of the top speed) the viscous friction's line in ``x = sd^2`` touches it:
#: ``sd <= (sd0 + x / sd0) / 2`` overestimates ``sd`` by ``(sd0 - sd)^2 / (2 sd0)``, at
#: most ``sd_max / 4`` over ``[0, sd_max]`` at half the top speed (``sd_max / 2`` at the top).
TANGENT_SPEED = 0.5
#: Stands for an infinite limit in the constraint rows.
_BIG = 1e300


@dataclass(frozen=True)
class RetimingReport:
    """What the check found: peak use of each limit (1.0 = at the limit) and the repairs."""

    velocity: float
    acceleration: float
    effort: float
    repairs: int
    slowed_down: float  # uniform time scaling applied at the end (1.0: none)
    grid_points: int


class RetimedTrajectory:
    """
    A timed trajectory along a spline path: ``sample(t) -> (q, qd, qdd)``.

    Units: seconds, rad (m for prismatic joints) and their derivatives; joints in model
    order (:attr:`joint_names`).
    """

    def __init__(self, joint_names: list[str], path, knots: FloatArray,
                 t: FloatArray, s: FloatArray, sd: FloatArray, sdd: FloatArray,
                 waypoint_index: NDArray[np.int64], report: RetimingReport,
                 derivatives: tuple | None = None) -> None:
        """
        Store the path and the timing (use :func:`retime`, not this).

        ``derivatives``: the path's first and second derivative splines, if already made.
        """
        self.joint_names = list(joint_names)
        self._path = path
        self._dpath, self._ddpath = (derivatives if derivatives is not None
                                     else (path.derivative(1), path.derivative(2)))
        self._knots = knots
        self._set_timing(t, s, sd, sdd)
        self._waypoint_index = waypoint_index
        self.report = report

    def _set_timing(self, t: FloatArray, s: FloatArray, sd: FloatArray,
                    sdd: FloatArray) -> None:
        self._t, self._s, self._sd, self._sdd = t, s, sd, sdd
        self._coef = _quintic_coefficients(t, s, sd, sdd)

    @property
    def duration(self) -> float:
        """Return the time to the last waypoint [s]."""
        return float(self._t[-1])

    @property
    def waypoint_times(self) -> FloatArray:
        """Return when each waypoint is reached [s], increasing, shape (K,)."""
        return self._t[self._waypoint_index].copy()

    @property
    def waypoints(self) -> FloatArray:
        """Return the waypoints the path passes through, shape (K, n)."""
        return self._path(self._knots)

    def path_state(self, t: ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Return the path coordinate ``s``, ``sd`` and ``sdd`` at times ``t`` (clipped)."""
        tt = np.clip(np.atleast_1d(np.asarray(t, dtype=np.float64)), 0.0, self.duration)
        k = np.clip(np.searchsorted(self._t, tt, side='right') - 1, 0, len(self._t) - 2)
        tau = tt - self._t[k]
        c = self._coef[k]
        s = c[:, 0] + tau * (c[:, 1] + tau * (c[:, 2] + tau * (c[:, 3] + tau * (
            c[:, 4] + tau * c[:, 5]))))
        sd = c[:, 1] + tau * (2 * c[:, 2] + tau * (3 * c[:, 3] + tau * (4 * c[:, 4] + tau * (
            5 * c[:, 5]))))
        sdd = 2 * c[:, 2] + tau * (6 * c[:, 3] + tau * (12 * c[:, 4] + tau * 20 * c[:, 5]))
        return np.clip(s, self._knots[0], self._knots[-1]), sd, sdd

    def sample(self, t: ArrayLike) -> tuple[FloatArray, FloatArray, FloatArray]:
        """
        Return positions, velocities and accelerations at times ``t``.

        Before 0 the first waypoint and after :attr:`duration` the last one, at rest.

        :param t: Times [s], any shape that flattens to (m,).
        :return: ``(q, qd, qdd)``, each (m, n).
        """
        tt = np.atleast_1d(np.asarray(t, dtype=np.float64)).ravel()
        if not np.all(np.isfinite(tt)):
            raise ValueError('sample times must be finite')
        s, sd, sdd = self.path_state(tt)
        outside = (tt <= 0.0) | (tt >= self.duration)
        sd = np.where(outside, 0.0, sd)
        sdd = np.where(outside, 0.0, sdd)
        q = self._path(s)
        dq = self._dpath(s)
        ddq = self._ddpath(s)
        qd = dq * sd[:, None]
        qdd = dq * sdd[:, None] + ddq * (sd * sd)[:, None]
        return q, qd, qdd

    def to_joint_trajectory(self, rate: float = 100.0, *,
                            efforts: Callable[[FloatArray, FloatArray, FloatArray],
                                              FloatArray] | None = None) -> dict:
        """
        Return the trajectory sampled at ``rate`` as trajectory_msgs/JointTrajectory fields.

        A plain document (the library imports no ROS message type): ``joint_names`` and
        ``points`` with ``positions``, ``velocities``, ``accelerations``, ``effort`` and
        ``time_from_start`` ``{sec, nanosec}``; the waypoint times are always among the points
        (each waypoint appears exactly). ``manip_dynamics.ros.runtime.trajectory_player`` turns it
        into the message.

        :param rate: Points per second [Hz], > 0.
        :param efforts: ``efforts(q, qd, qdd)`` -> the torques at the points [N m or N],
            each argument and the result (N, n) in the trajectory's joint order, for each
            point's ``effort`` (the feed-forward torques:
            :func:`manip_dynamics.control.feedforward.joint_trajectory_with_feedforward`);
            None: ``effort`` is empty.
        """
        if not (math.isfinite(rate) and rate > 0.0):
            raise ValueError('rate must be > 0 Hz, got %r' % rate)
        grid = np.arange(0.0, self.duration, 1.0 / rate)
        times = np.unique(np.concatenate([grid, self.waypoint_times, [self.duration]]))
        # two points closer than 1 us (a waypoint next to a grid time) would be one stamp
        keep = np.concatenate([[True], np.diff(times) > 1e-6])
        times = times[keep]
        q, qd, qdd = self.sample(times)
        torques = [[] for _ in times] if efforts is None else \
            np.asarray(efforts(q, qd, qdd), dtype=np.float64).tolist()
        points = []
        for k, t in enumerate(times):
            sec, nanosec = divmod(int(round(float(t) * 1e9)), 1_000_000_000)
            points.append({'positions': q[k].tolist(), 'velocities': qd[k].tolist(),
                           'accelerations': qdd[k].tolist(), 'effort': torques[k],
                           'time_from_start': {'sec': sec, 'nanosec': nanosec}})
        return {'joint_names': list(self.joint_names), 'points': points}


def _quintic_coefficients(t: FloatArray, s: FloatArray, v: FloatArray,
                          a: FloatArray) -> FloatArray:
    """Return (N, 6) coefficients of the quintic Hermite pieces through the knots."""
    h = np.diff(t)
    p0, p1 = s[:-1], s[1:]
    v0, v1 = v[:-1], v[1:]
    a0, a1 = a[:-1], a[1:]
    dp = p1 - p0
    c = np.empty((len(h), 6))
    c[:, 0] = p0
    c[:, 1] = v0
    c[:, 2] = 0.5 * a0
    c[:, 3] = (20 * dp - (8 * v1 + 12 * v0) * h - (3 * a0 - a1) * h ** 2) / (2 * h ** 3)
    c[:, 4] = (-30 * dp + (14 * v1 + 16 * v0) * h + (3 * a0 - 2 * a1) * h ** 2) / (2 * h ** 4)
    c[:, 5] = (12 * dp - 6 * (v1 + v0) * h + (a1 - a0) * h ** 2) / (2 * h ** 5)
    return c


def _waypoints(model, waypoints: ArrayLike) -> FloatArray:
    try:
        w = np.array(waypoints, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError('waypoints must be numbers, shape (K, %d)' % model.dof) from None
    if w.ndim != 2 or w.shape[1] != model.dof or w.shape[0] < 2:
        raise ValueError('waypoints must have shape (K >= 2, %d) in model joint order, got %s'
                         % (model.dof, w.shape))
    bad = np.argwhere(~np.isfinite(w))
    if bad.size:
        k, j = bad[0]
        raise ValueError('waypoint %d has NaN/inf for joint %r' % (k, model.joint_names[j]))
    step = np.linalg.norm(np.diff(w, axis=0), axis=1)
    same = np.flatnonzero(step <= 1e-9)
    if same.size:
        raise ValueError('waypoints %d and %d are the same pose: drop one'
                         % (same[0], same[0] + 1))
    lower, upper = model.position_lower, model.position_upper
    out = (w < lower - 1e-9) | (w > upper + 1e-9)
    if np.any(out):
        k, j = np.argwhere(out)[0]
        raise ValueError('waypoint %d is outside the limits of joint %r: %.6g not in '
                         '[%.6g, %.6g]' % (k, model.joint_names[j], w[k, j], lower[j],
                                           upper[j]))
    return w


def _spline_range(path) -> tuple[FloatArray, FloatArray]:
    """
    Return the smallest and largest value of each joint on each spline segment, (K - 1, n).

    Exact: a cubic piece ``c0 h^3 + c1 h^2 + c2 h + c3`` on ``[0, L]`` takes its extremes
    at the ends or where its derivative ``3 c0 h^2 + 2 c1 h + c2`` vanishes inside.
    """
    c = path.c                                  # (4, K - 1, n), highest power first
    length = np.diff(path.x)[:, None] * np.ones(c.shape[2])

    def value(h: FloatArray) -> FloatArray:
        return ((c[0] * h + c[1]) * h + c[2]) * h + c[3]
    ends = [value(np.zeros_like(length)), value(length)]
    a, b, d = 3.0 * c[0], 2.0 * c[1], c[2]
    disc = b * b - 4.0 * a * d
    root = np.sqrt(np.maximum(disc, 0.0))
    with np.errstate(divide='ignore', invalid='ignore'):
        quadratic = np.abs(a) > 1e-12 * (np.abs(b) + np.abs(d) + 1e-300)
        candidates = [np.where(quadratic, (-b + root) / (2.0 * a), -d / b),
                      np.where(quadratic, (-b - root) / (2.0 * a), np.nan)]
    low, high = np.minimum(*ends), np.maximum(*ends)
    for h in candidates:
        inside = (disc >= 0.0) & np.isfinite(h) & (h > 0.0) & (h < length)
        v = value(np.where(inside, h, 0.0))
        low = np.where(inside, np.minimum(low, v), low)
        high = np.where(inside, np.maximum(high, v), high)
    return low, high


def _grid(knots: FloatArray, grid_points: int | None) -> tuple[FloatArray, NDArray[np.int64]]:
    """Return grid points containing every knot, spaced by length, and the knots' indices."""
    segments = len(knots) - 1
    total = (int(np.clip(GRID_PER_SEGMENT * segments, 150, 1500)) if grid_points is None
             else int(grid_points))
    if total < segments * 2:
        raise ValueError('grid_points must be at least 2 per waypoint segment (%d)'
                         % (2 * segments))
    span = np.diff(knots)
    m = np.maximum(2, np.ceil(total * span / (knots[-1] - knots[0])).astype(np.int64))
    ends = np.cumsum(m)
    # m[k] equal steps in segment k, its end the knot itself
    seg = np.repeat(np.arange(segments), m)
    step = np.arange(1, ends[-1] + 1) - np.repeat(ends - m, m)
    inner = knots[seg] + span[seg] * (step / m[seg])
    inner[ends - 1] = knots[1:]
    grid = np.concatenate([knots[:1], inner])
    index = np.concatenate([[0], ends])
    # geometric refinement of the first and last cells: the pieces that ramp the
    # acceleration from 0 at rest to the profile's are then short (in time and length)
    first, last = grid[1] - grid[0], grid[-1] - grid[-2]
    head = grid[0] + first * END_REFINEMENT
    tail = grid[-1] - last * END_REFINEMENT[::-1]
    grid = np.concatenate([grid[:1], head, grid[1:-1], tail, grid[-1:]])
    index = index + len(END_REFINEMENT)
    index[0] = 0
    index[-1] = len(grid) - 1
    return grid, index


@dataclass
class _Problem:
    """The path sampled on the grid and the constant parts of the constraints."""

    s: FloatArray
    dq: FloatArray
    ddq: FloatArray
    A: FloatArray
    B: FloatArray
    C: FloatArray
    f_hi: FloatArray
    f_lo: FloatArray
    e_hi: FloatArray
    e_lo: FloatArray
    v: FloatArray
    a: FloatArray
    tau: FloatArray

    def __post_init__(self) -> None:
        """
        Keep what no repair changes.

        The limits' reciprocals for the check (0 where a limit is infinite), the constraint
        rows ``al``, ``be`` and the right-hand sides before the limit factors.
        """
        self.inv_v = 1.0 / self.v
        self.inv_a = 1.0 / self.a
        self.inv_tau = 1.0 / self.tau
        self.al = np.ascontiguousarray(
            np.concatenate([self.dq, -self.dq, self.A, -self.A], axis=1))
        self.be = np.ascontiguousarray(
            np.concatenate([self.ddq, -self.ddq, self.B + self.e_hi, -self.B + self.e_lo],
                           axis=1))
        # x <= phi_v^2 (v / |q'|)^2 for every joint: the factor comes out of the minimum
        self.x_cap = _top_speed(self.dq, self.v) ** 2
        acc = np.where(np.isfinite(self.a), self.a, _BIG) * np.ones_like(self.dq)
        finite = np.isfinite(self.tau)
        tau = np.where(finite, self.tau, _BIG)
        up = tau - self.C - self.f_hi
        down = tau + self.C + self.f_lo
        self.ga = np.ascontiguousarray(np.concatenate([acc, acc, up, down], axis=1))
        # which factor scales each right-hand side: 1 acceleration, 2 effort, -1 none
        acc_kind = np.where(np.isfinite(self.a), 1, -1) * np.ones_like(self.dq, dtype=np.int64)
        self.ga_kind = np.ascontiguousarray(np.concatenate(
            [acc_kind, acc_kind, np.where(finite & (up > 0.0), 2, -1),
             np.where(finite & (down > 0.0), 2, -1)], axis=1))


def _top_speed(dq: FloatArray, v: FloatArray) -> FloatArray:
    """Return the largest ``sd`` the velocity limits ``v`` allow at each point, (N + 1,)."""
    moving = np.abs(dq) > 1e-12
    with np.errstate(divide='ignore'):
        return np.min(np.where(moving, v / np.where(moving, np.abs(dq), 1.0), np.inf), axis=1)


def _constraints(p: _Problem, phi: FloatArray) -> tuple:
    """
    Return ``al, be, ga`` (N + 1, m) and ``x_cap`` for limit factors ``phi`` (3, N + 1).

    ``phi[0]`` scales the velocity limits, ``phi[1]`` the acceleration limits, ``phi[2]``
    the part of the effort limits left after gravity and friction (the motion's share: a
    tightened effort limit never makes holding the arm infeasible). ``al`` and ``be`` do
    not depend on ``phi`` (the problem's own arrays).
    """
    x_cap = np.minimum(phi[0] ** 2 * p.x_cap, _BIG)
    return p.al, p.be, scale_rows(p.ga, p.ga_kind, phi), x_cap


def _friction_rows(dq: FloatArray, v: FloatArray, friction: tuple | None, tangent: float,
                   C: FloatArray, tau: FloatArray,  # noqa: N803
                   ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """
    Return lines in ``x = sd^2`` that bound the joint friction along the path, (N + 1, n).

    The friction ``d q' sd + c sign(q')`` (``friction``: damping ``d`` and Coulomb level
    ``c`` per joint; None: no friction, all zero) is bounded in the direction of motion:
    above by ``f_hi + e_hi x`` (joints with q' > 0), below by ``f_lo - e_lo x`` (q' < 0), 0
    on the other side. ``sd <= (sd0 + x / sd0) / 2`` for any ``sd0 > 0`` (the tangent of
    the concave ``sqrt(x)``), so the constraints stay linear in ``x``; ``sd0`` is
    ``tangent`` times the top speed at the point: the lower of what the velocity limits
    ``v`` allow and the speed at which a joint's viscous friction alone would use up what
    its gravity torque ``C`` (N + 1, n) and Coulomb friction leave of its effort limit
    ``tau`` (1 where neither bounds it). Returns ``f_hi, f_lo, e_hi, e_lo``.
    """
    zero = np.zeros_like(dq)
    if friction is None:
        return zero, zero, zero, zero
    damping, coulomb = friction
    moving = np.abs(dq) > 1e-12
    top = _top_speed(dq, v)
    viscous = damping * np.abs(dq)
    # the speed at which the viscous friction alone uses up what gravity and the Coulomb
    # friction leave of the effort limit: the profile stays below it
    with np.errstate(divide='ignore', invalid='ignore'):
        room = np.where(viscous > 0.0, np.maximum(tau - np.abs(C) - coulomb, 0.0) / viscous,
                        np.inf)
    top = np.minimum(top, np.min(room, axis=1))
    sd0 = np.where(np.isfinite(top), tangent * np.maximum(top, 1e-6), 1.0)[:, None]
    level = np.where(moving, 0.5 * viscous * sd0 + coulomb, 0.0)
    slope = np.where(moving, 0.5 * viscous / sd0, 0.0)
    return (np.where(dq > 0.0, level, 0.0), np.where(dq < 0.0, -level, 0.0),
            np.where(dq > 0.0, slope, 0.0), np.where(dq < 0.0, slope, 0.0))


def _profile(p: _Problem,
             phi: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Return ``t, sd, sdd`` at the grid points and the step u of TOPP-RA for ``phi``."""
    al, be, ga, x_cap = _constraints(p, phi)
    delta = np.diff(p.s)
    K = controllable_sets(al, be, ga, delta, x_cap)
    if K[0, 0] < 0.0:
        raise _Infeasible(int(-K[0, 0] - 1.0))
    x, _ = forward_profile(al, be, ga, delta, K)
    x = _smooth(x, SMOOTHING)
    u = np.diff(x) / (2.0 * delta)
    sd = np.sqrt(x)
    h = 2.0 * delta / (sd[:-1] + sd[1:])
    t = np.concatenate([[0.0], np.cumsum(h)])
    sdd = np.empty(len(x))
    # at rest before the start and after the end: zero acceleration there too, so that
    # qdd is continuous across t = 0 and t = duration (the first and last pieces ramp it)
    sdd[0] = sdd[-1] = 0.0
    sdd[1:-1] = 0.5 * (u[:-1] + u[1:])
    return t, sd, sdd, u


def _smooth(x: FloatArray, k: int) -> FloatArray:
    """
    Return ``x`` averaged over ``2 k + 1`` grid points (fewer near the ends, which stay 0).

    TOPP-RA's profile is bang-bang: the path acceleration ``u`` jumps where the active
    limit changes. Averaging ``x = sd^2`` over a window averages ``u`` too (the slope of a
    moving average is the mean slope), so the jumps become ramps and the quintic through
    the grid points follows them without overshoot; each averaged ``(u, x)`` is a mean of
    admissible ones of nearby points, admissible itself up to the change of the limits
    across the window (the check below catches the rest).
    """
    n = len(x) - 1
    i = np.arange(n + 1)
    # the refined end cells (unequal lengths: a mean over points would bend the slope)
    # are left as they are; TOPP-RA's profile is a constant u there, from or to rest
    guard = len(END_REFINEMENT) + 1
    r = np.clip(np.minimum(i - guard, n - guard - i), 0, k)
    # each window summed on its own (not as a difference of running sums), so a point
    # whose window a repair left alone keeps its value to the last bit, and its pieces
    # their check
    window = np.lib.stride_tricks.sliding_window_view(
        np.concatenate([np.zeros(k), x, np.zeros(k)]), 2 * k + 1)
    inside = np.abs(np.arange(-k, k + 1))[None, :] <= r[:, None]
    out = np.where(inside, window, 0.0).sum(axis=1) / (2 * r + 1)
    out[0] = out[-1] = 0.0
    return np.maximum(out, 0.0)


class _Infeasible(Exception):
    """The controllable set is empty from this grid index back."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


@dataclass
class _Table:
    """
    What the check evaluates the path with.

    The spline (``knots`` (K,), ``poly`` (K - 1, 4, n) coefficients, highest power first)
    for q' and q''; the path terms ``terms`` (M, 3, n) A, B, C at the grid points ``s``
    (M,) and ``err`` (M - 1, 3, n), the bound of their linear interpolation per interval
    (:func:`_interpolation_bound`); the joint friction.
    """

    knots: FloatArray
    poly: FloatArray
    s: FloatArray
    terms: FloatArray
    err: FloatArray
    damping: FloatArray
    coulomb: FloatArray
    friction_velocity: float


def _interpolation_bound(s: FloatArray, terms: FloatArray,
                         knot_rows: NDArray[np.int64]) -> FloatArray:
    """
    Return a bound on the error of interpolating ``terms`` linearly, (M - 1, 3, n).

    On an interval of length ``h`` the linear interpolant of a C2 function is off by at
    most ``h^2 / 8`` times its largest |second derivative| there; that is estimated by the
    divided second differences of the rows at the interval's two ends, times
    :data:`~.reachability.CURVE_SAFETY` (the coarse check's rule). A difference centred on
    a waypoint's row is not used: the spline's third derivative jumps there, so B's slope
    does; no interval crosses a waypoint (each spline piece is smooth), and the other end's
    difference serves.

    :param s: Grid points (M,); ``terms`` (M, 3, n) there; ``knot_rows`` the rows of the
        waypoints, including the first and the last.
    """
    h = np.diff(s)
    slope = np.diff(terms, axis=0) / h[:, None, None]
    second = np.abs(2.0 * np.diff(slope, axis=0) / (h[:-1] + h[1:])[:, None, None])
    inner = np.ones(len(s), dtype=np.bool_)
    inner[knot_rows] = False
    second[~inner[1:-1]] = 0.0
    pad = np.zeros((1,) + terms.shape[1:])
    worst = np.maximum(np.concatenate([pad, second]), np.concatenate([second, pad]))
    return (0.125 * CURVE_SAFETY) * (h * h)[:, None, None] * worst


def _usage(table: _Table, traj: RetimedTrajectory, p: _Problem, counts: NDArray[np.int64],
           todo: NDArray[np.bool_], accept: float, out: FloatArray) -> FloatArray:
    """
    Fill and return ``out`` (3, N), each piece's largest use of the limits (``todo`` ones).

    Row 0 velocity, 1 acceleration, 2 effort: the largest ratio to the limit over the
    piece's check samples (:func:`_check_counts`), or, for a piece that a coarse check with
    a curvature bound proves within ``accept``, that bound (reachability.limit_usage);
    pieces not marked ``todo`` keep theirs.

    The velocity and acceleration come from the spline itself; the effort
    ``tau = A sdd + B sd^2 + C`` (Craig eq. 6.59 along the path) plus the joint friction at
    the sample's velocity, with A, B, C linearly interpolated in s between the grid points
    and the interpolation's bound added to the effort's ratio (:func:`_interpolation_bound`);
    one compiled pass (reachability.limit_usage).
    """
    limit_usage(traj._t, traj._coef, counts, todo, traj._knots[0], traj._knots[-1],
                table.knots, table.poly, table.terms, table.err, table.s, p.inv_v, p.inv_a,
                p.inv_tau, table.damping, table.coulomb, table.friction_velocity,
                COARSE_CHECK_POINTS, accept, out)
    return out


def _check_counts(t: FloatArray, rate: float, per_interval: int = 4) -> NDArray[np.int64]:
    """
    Return how many check samples each piece gets inside: ``rate`` Hz, at least 4.

    The refined end pieces, where the acceleration ramps from 0 within a few ms, get at
    least :data:`END_CHECK_POINTS`. Each piece is sampled on its own time (equal spacing
    from its start), so a piece the repair left unchanged needs no new check.
    """
    counts = np.maximum(np.ceil(np.diff(t) * rate).astype(np.int64), per_interval)
    ends = len(END_REFINEMENT) + 1
    counts[:ends] = np.maximum(counts[:ends], END_CHECK_POINTS)
    counts[-ends:] = np.maximum(counts[-ends:], END_CHECK_POINTS)
    return counts


def retime(model, waypoints: ArrayLike, *, velocity_limits: LimitSpec = None,
           acceleration_limits: LimitSpec = None, effort_limits: LimitSpec = None,
           velocity_scale: float = 1.0, acceleration_scale: float = 1.0,
           effort_scale: float = 1.0, joint_limits: str | None = None,
           include_friction: bool = True, include_armature: bool = True,
           grid_points: int | None = None, check_rate: float = 4000.0,
           margin: float = DEFAULT_MARGIN, max_repairs: int = 40) -> RetimedTrajectory:
    """
    Return the near time-optimal trajectory through ``waypoints`` within every limit.

    Starts and ends at rest; passes through every waypoint in order. The torque limit uses
    the model as loaded: attached payloads, rotor inertia (``include_armature``) and joint
    friction (``include_friction``) count. See the module docstring for the path shape, the
    parameterization (TOPP-RA, Pham and Pham 2018) and the check that makes the limits hold
    at every instant, not only on the grid.

    :param model: A :class:`manip_dynamics.RobotModel`.
    :param waypoints: Joint positions [rad or m], shape (K >= 2, n), model joint order;
        consecutive waypoints differ; each within the URDF position limits.
    :param velocity_limits: [rad/s or m/s] default the URDF's (or ``joint_limits``'s).
    :param acceleration_limits: [rad/s^2 or m/s^2]: a number, one per joint, or a mapping
        joint -> value; a URDF has none, so this or ``joint_limits`` is required.
    :param effort_limits: [N m or N] default the URDF's.
    :param velocity_scale: Fraction (0, 1] of the velocity limits used; likewise
        ``acceleration_scale`` and ``effort_scale`` (MoveIt's scaling factors).
    :param joint_limits: Path (or text) of a MoveIt ``joint_limits.yaml``: its enabled
        velocity and acceleration limits replace the defaults (explicit arguments win).
    :param grid_points: TOPP-RA grid size; default 35 per waypoint segment, 150 to 1500.
    :param check_rate: Rate [Hz] at which the result is checked, at least (each grid
        interval at this rate or closer, at least 4 points inside).
    :param margin: Share of each limit kept free at the checked samples.
    :param max_repairs: Local tightening rounds before a uniform slow-down.
    :return: The :class:`RetimedTrajectory`; its ``report`` gives the peak use of each limit.
    :raises ValueError: Bad waypoints or limits (named), or a path the arm cannot follow
        within the effort limits even at rest (the joint and the waypoint segment named).
    """
    from scipy.interpolate import CubicSpline

    names = list(model.joint_names)
    w = _waypoints(model, waypoints)
    for value, what in ((velocity_scale, 'velocity_scale'),
                        (acceleration_scale, 'acceleration_scale'),
                        (effort_scale, 'effort_scale')):
        if not (isinstance(value, (int, float)) and 0.0 < value <= 1.0):
            raise ValueError('%s must be in (0, 1], got %r' % (what, value))
    if not (math.isfinite(check_rate) and check_rate >= 100.0):
        raise ValueError('check_rate must be >= 100 Hz, got %r' % check_rate)
    if not (0.0 <= margin < 0.5):
        raise ValueError('margin must be in [0, 0.5), got %r' % margin)
    from_file = (read_joint_limits_yaml(joint_limits, names) if joint_limits is not None
                 else {'velocity': {}, 'acceleration': {}})
    v_default = limit_vector(from_file['velocity'] or None, names, model.velocity_limits,
                             'velocity limits (URDF)')
    v = limit_vector(velocity_limits, names, v_default, 'velocity_limits') * velocity_scale
    if acceleration_limits is None and not from_file['acceleration']:
        raise ValueError('acceleration limits: a URDF has none; pass acceleration_limits= '
                         '(a number, one per joint, or joint -> value) or joint_limits= a '
                         'MoveIt joint_limits.yaml with has_acceleration_limits')
    a_default = (limit_vector(from_file['acceleration'], names, None, 'joint_limits '
                              'acceleration') if from_file['acceleration'] and
                 len(from_file['acceleration']) == len(names) else None)
    if a_default is None and acceleration_limits is None:
        missing = [n for n in names if n not in from_file['acceleration']]
        raise ValueError('joint_limits has no acceleration limit for %s' % ', '.join(missing))
    a = limit_vector(acceleration_limits, names, a_default, 'acceleration_limits')
    a = a * acceleration_scale
    tau = limit_vector(effort_limits, names, model.effort_limits, 'effort_limits')
    tau = tau * effort_scale

    step = np.linalg.norm(np.diff(w, axis=0), axis=1)
    knots = np.concatenate([[0.0], np.cumsum(step)])
    path = CubicSpline(knots, w, bc_type='natural', axis=0)
    derivatives = (path.derivative(1), path.derivative(2))
    s, index = _grid(knots, grid_points)
    low, high = _spline_range(path)
    lower, upper = model.position_lower, model.position_upper
    out = (low < lower - 1e-9) | (high > upper + 1e-9)
    if np.any(out):
        seg, j = np.argwhere(out)[0]
        value = low[seg, j] if low[seg, j] < lower[j] - 1e-9 else high[seg, j]
        raise ValueError('the spline through the waypoints leaves the limits of joint %r '
                         'between waypoints %d and %d (%.4g not in [%.4g, %.4g]): add a '
                         'waypoint there' % (names[j], seg, seg + 1, value, lower[j],
                                             upper[j]))

    # the path terms at the grid points: the constraints' rows, and the check's table
    dq, ddq = derivatives[0](s), derivatives[1](s)
    A, B, C = model.path_terms(path(s), dq, ddq, include_armature=include_armature)
    terms = np.ascontiguousarray(np.stack([A, B, C], axis=1))
    table = _Table(knots, np.ascontiguousarray(np.moveaxis(path.c, 0, 1)), s, terms,
                   _interpolation_bound(s, terms, index),
                   model.damping if include_friction else np.zeros(model.dof),
                   model.coulomb_friction if include_friction else np.zeros(model.dof),
                   model.friction_velocity)
    friction = (model.damping, model.coulomb_friction) if include_friction else None
    tangent = TANGENT_SPEED
    rows = _friction_rows(dq, v, friction, tangent, C, tau)
    problem = _Problem(s, dq, ddq, A, B, C, *rows, v, a, tau)

    phi = np.full((3, len(s)), (1.0 - margin) * START_FACTOR)
    phi[1, :len(END_START)] *= END_START
    phi[1, -len(END_STOP):] *= END_STOP
    limit = 1.0 - margin
    repairs = 0
    scale = 1.0
    last = None
    checked = None
    use = np.zeros((3, len(s) - 1))
    while True:
        try:
            t, sd, sdd, _ = _profile(problem, phi)
        except _Infeasible as error:
            if repairs and last is not None:  # tightened too far: slow the last one down
                t, sd, sdd = last
                repairs = max_repairs
                traj = RetimedTrajectory(names, path, knots, t, s, sd, sdd, index,
                                         RetimingReport(0, 0, 0, repairs, 1.0, len(s)),
                                         derivatives)
                scale, (rv, ra, rt) = _uniform_slow_down(table, traj, problem, limit,
                                                         check_rate)
                break
            if friction is not None and tangent > TANGENT_SPEED / 64:
                # the viscous friction's line may be what leaves no room: touch it at a
                # lower speed (a larger share of it then grows with x, less is constant)
                tangent /= 4.0
                rows = _friction_rows(dq, v, friction, tangent, C, tau)
                problem = _Problem(s, dq, ddq, A, B, C, *rows, v, a, tau)
                continue
            seg = int(np.searchsorted(index, error.index, side='right')) - 1
            k = error.index
            # what the arm needs at that point even creeping: gravity, and the Coulomb
            # friction of the joints that move
            hold = np.abs(C[k]) / tau
            creep = (np.abs(C[k]) + np.where(np.abs(dq[k]) > 1e-12, friction[1], 0.0)
                     if friction is not None else np.abs(C[k])) / tau
            if np.max(hold) > 1.0:
                why = (': joint %r needs more than its effort limit to hold the arm there'
                       % names[int(np.argmax(hold))])
            elif np.max(creep) > 1.0:
                why = (': joint %r needs more than its effort limit to hold the arm there and '
                       'overcome its friction' % names[int(np.argmax(creep))])
            else:
                why = ' (effort limits too low for the acceleration the path needs)'
            raise ValueError(
                'the path cannot be followed within the limits near waypoint segment %d-%d'
                '%s' % (max(seg, 0), min(seg + 1, len(w) - 1), why)) from None
        traj = RetimedTrajectory(names, path, knots, t, s, sd, sdd, index,
                                 RetimingReport(0, 0, 0, repairs, 1.0, len(s)),
                                 derivatives)
        # the check at check_rate (and 4 points inside every piece); a piece whose ends
        # (duration, sd, sdd) the last repair left as they were keeps its last check
        h = np.diff(t)
        if checked is None:
            todo = np.ones(len(h), dtype=np.bool_)
        else:
            h0, sd0, sdd0 = checked
            todo = ~((h == h0) & (sd[:-1] == sd0[:-1]) & (sd[1:] == sd0[1:])
                     & (sdd[:-1] == sdd0[:-1]) & (sdd[1:] == sdd0[1:]))
        _usage(table, traj, problem, _check_counts(t, check_rate), todo, limit, use)
        checked = (h, sd, sdd)
        rv, ra, rt = use
        worst = np.max(use, axis=0)
        bad = worst > limit
        if not np.any(bad):
            break
        if repairs >= max_repairs:
            scale, (rv, ra, rt) = _uniform_slow_down(table, traj, problem, limit, check_rate)
            break
        repairs += 1
        last = (t, sd, sdd)
        seg = np.flatnonzero(bad)
        for kind, r in enumerate((rv[bad], ra[bad], rt[bad])):
            over = r > limit
            if not np.any(over):
                continue
            if kind == 2:
                # the factor scales the motion's share of the effort limit: the excess
                # relative to that share, not to the whole limit (gravity may use most)
                k = seg[over]
                share = np.min(np.where(np.isfinite(tau), 1.0 - np.maximum(
                    np.abs(problem.C[k] + problem.f_hi[k]),
                    np.abs(problem.C[k] + problem.f_lo[k])) / tau, 1.0), axis=1)
                r = 1.0 + (r[over] - limit) / np.maximum(share, 1e-3)
                _tighten(phi[kind], k, r, 1.0)
            else:
                _tighten(phi[kind], seg[over], r[over], limit)
    traj.report = RetimingReport(float(np.max(rv)), float(np.max(ra)), float(np.max(rt)),
                                 repairs, scale, len(s))
    return traj


def _tighten(phi: FloatArray, seg: NDArray[np.int64], ratio: FloatArray,
             limit: float) -> None:
    """Scale ``phi`` down around the grid intervals ``seg`` that used ``ratio`` of a limit."""
    n = len(phi)
    worst_at = np.zeros(n)
    np.maximum.at(worst_at, seg, ratio)
    # where the profile is averaged, over the averaging window; in the refined end cells
    # (not averaged) over the interval's two ends
    guard = len(END_REFINEMENT) + 1
    inner = worst_at.copy()
    inner[:guard] = 0.0
    inner[n - guard - 1:] = 0.0
    spread = np.maximum(worst_at, np.concatenate([[0.0], worst_at[:-1]]))
    reach = SMOOTHING + 1
    padded = np.concatenate([np.zeros(reach), inner, np.zeros(reach)])
    window = np.lib.stride_tricks.sliding_window_view(padded, 2 * reach + 1)
    spread = np.maximum(spread, window.max(axis=1))
    hit = spread > 0.0
    # twice the overshoot: a tightened point pulls its neighbours down less than itself
    phi[hit] = phi[hit] * np.minimum(0.98, (limit / spread[hit]) ** 2)


def _uniform_slow_down(table: _Table, traj: RetimedTrajectory, p: _Problem, limit: float,
                       check_rate: float) -> tuple[float, tuple[FloatArray, ...]]:
    """
    Slow ``traj`` down uniformly until every check sample is within ``limit``.

    Scaling time by ``k`` divides the path velocity by ``k`` and the path acceleration by
    ``k^2``; the smallest such ``k >= 1`` is found by doubling, then bisection. ``traj`` is
    left with the slowed timing.

    :return: ``k`` and each piece's usage ratios (velocity, acceleration, effort), (3, N),
        at that timing.
    :raises ValueError: Even 64 times slower it does not fit (gravity alone?).
    """
    t, s, sd, sdd = traj._t, traj._s, traj._sd, traj._sdd

    every = np.ones(len(t) - 1, dtype=np.bool_)
    out = np.zeros((3, len(t) - 1))

    def usage(k: float) -> FloatArray:
        traj._set_timing(t * k, s, sd / k, sdd / k ** 2)
        return _usage(table, traj, p, _check_counts(t * k, check_rate), every, limit, out)

    def fits(k: float) -> bool:
        return float(np.max(usage(k))) <= limit
    lo, hi = 1.0, 2.0
    while not fits(hi):
        if hi > 64.0:
            raise ValueError('no uniform slow-down brings the trajectory within the limits '
                             '(gravity alone exceeds an effort limit?)')
        lo, hi = hi, 2.0 * hi
    for _ in range(30):
        mid = 0.5 * (lo + hi)
        if fits(mid):
            hi = mid
        else:
            lo = mid
    return hi, usage(hi)


def _warm_retiming(model) -> None:
    """Precompile step: retime a short move of the warm-up model."""
    lower = np.where(np.isfinite(model.position_lower), model.position_lower, -1.0)
    upper = np.where(np.isfinite(model.position_upper), model.position_upper, 1.0)
    mid = 0.5 * (lower + upper)
    w = np.array([mid, mid + 0.05 * (upper - lower)])
    try:
        retime(model, w, velocity_limits=1.0, acceleration_limits=5.0, effort_limits=1e6,
               grid_points=20,
               check_rate=200.0)
    except ValueError:
        pass  # a warm-up model without velocity limits: the kernels compiled all the same


#: Collected by :mod:`manip_dynamics.precompile`.
PRECOMPILE_STEPS = [('time-optimal retiming', _warm_retiming)]
