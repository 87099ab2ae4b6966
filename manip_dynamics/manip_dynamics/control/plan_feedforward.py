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
A planner's timed plan made ready for joint_trajectory_controller: checked, fed forward.

A motion planner (MoveIt with TOTG or Ruckig) times a path kinematically: velocity and
acceleration limits, no torques. Before such a plan reaches joint_trajectory_controller
(JTC) on the effort interface, :func:`plan_with_feedforward` checks it against what the arm
can do (position, velocity and effort limits, torques from the full dynamics of Craig eq.
6.45-6.53 with rotor inertia and friction, checked between the points too), then retimes it
(:func:`manip_dynamics.planning.retiming.retime` through the plan's own points) or refuses it
when it asks for more, and fills each point's ``effort`` with the feed-forward torque
(:func:`manip_dynamics.control.feedforward.feedforward_torques`) that JTC adds to its PID
output (ros2_controllers 4.22 and newer). :func:`hold_efforts` gives the torque of a hold
point, so that JTC holding a pose does not sag by ``g / p``.

The library imports no ROS message type: plans are arrays (times [s], positions [rad or
m] in the order of ``joint_names``); ``manip_dynamics.ros.nodes.feedforward_filter`` is the
node that applies this between a planner and JTC.
"""

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from manip_dynamics.control.computed_torque import TimedPoints
from manip_dynamics.control.feedforward import feedforward_torques, GRAVITY_MODES
from manip_dynamics.errors import InputError
from manip_dynamics.planning.retiming import retime

FloatArray = NDArray[np.float64]

#: What to do with a plan that asks for more than the limits (module docstring).
ON_INFEASIBLE = ('retime', 'refuse')
#: Rate at which a plan is checked between its points [Hz].
CHECK_RATE = 1000.0
#: Points per second of a retimed plan [Hz].
RETIMED_RATE = 100.0


class PlanRefused(ValueError):
    """The plan cannot be executed as asked; the message names the joint, time and limit."""


@dataclass(frozen=True)
class PlannedMotion:
    """
    A plan ready for JTC, joints in model order.

    ``times`` [s] from the start, shape (m,); ``positions``, ``velocities``,
    ``accelerations`` (m, n) [rad, rad/s, rad/s^2 or m...]; ``efforts`` (m, n) the
    feed-forward [N m or N]; ``velocity_usage`` and ``effort_usage`` the peak share of each
    limit of the plan as received (1.0 = at the limit); ``retimed`` whether the timing is the
    suite's instead of the planner's.
    """

    joint_names: tuple[str, ...]
    times: FloatArray
    positions: FloatArray
    velocities: FloatArray
    accelerations: FloatArray
    efforts: FloatArray
    velocity_usage: float
    effort_usage: float
    retimed: bool

    @property
    def duration(self) -> float:
        """Return the time of the last point [s]."""
        return float(self.times[-1])


def hold_efforts(model, q: ArrayLike, gravity: str = 'include') -> FloatArray:
    """
    Return the feed-forward torque that holds the arm still at ``q``: ``g(q)`` or zeros.

    :param model: The :class:`~manip_dynamics.RobotModel`.
    :param q: Joint positions [rad or m], model order, shape (n,).
    :param gravity: ``'include'`` (g(q), Craig eq. 6.59's G) or ``'exclude'`` (zeros: the
        driver adds gravity itself).
    :return: Torques [N m or N], shape (n,).
    """
    return feedforward_torques(model, q, np.zeros(len(model.joint_names)),
                               np.zeros(len(model.joint_names)), gravity=gravity,
                               friction=False, armature=False)


def _model_order(model, joint_names, arrays: dict) -> dict:
    """Return ``arrays`` (each (m, k)) reordered from ``joint_names`` to model order."""
    names = list(model.joint_names)
    given = list(joint_names)
    unknown = [name for name in given if name not in names]
    if unknown:
        raise PlanRefused('the plan names joints the model does not have: %s (model: %s)'
                          % (unknown, names))
    missing = [name for name in names if name not in given]
    if missing or len(set(given)) != len(given):
        raise PlanRefused("the plan must name each of the arm's joints once; missing %s, "
                          'given %s' % (missing, given))
    order = [given.index(name) for name in names]
    out = {}
    for key, value in arrays.items():
        if value is None:
            out[key] = None
            continue
        a = np.asarray(value, dtype=np.float64)
        if a.ndim != 2 or a.shape[1] != len(given):
            raise PlanRefused('%s must be shaped (points, %d joints), got %s'
                              % (key, len(given), a.shape))
        out[key] = a[:, order]
    return out


def _usage(model, q: FloatArray, qd: FloatArray, qdd: FloatArray) -> tuple:
    """Return (velocity usage, effort usage, worst effort (point, joint)) over samples."""
    v_lim = np.asarray(model.velocity_limits, dtype=np.float64)
    e_lim = np.asarray(model.effort_limits, dtype=np.float64)
    tau = feedforward_torques(model, q, qd, qdd)   # the motor's torque, gravity included
    with np.errstate(divide='ignore', invalid='ignore'):
        v_use = np.where(np.isfinite(v_lim), np.abs(qd) / v_lim, 0.0)
        e_use = np.where(np.isfinite(e_lim), np.abs(tau) / e_lim, 0.0)
    worst = np.unravel_index(int(np.argmax(e_use)), e_use.shape)
    return float(v_use.max()), float(e_use.max()), worst, tau


def plan_with_feedforward(model, joint_names, times: ArrayLike, positions: ArrayLike,
                          velocities: ArrayLike | None = None,
                          accelerations: ArrayLike | None = None, *,
                          on_infeasible: str = 'retime', gravity: str = 'include',
                          acceleration_limits: ArrayLike | None = None) -> PlannedMotion:
    """
    Check a timed plan against the arm's limits, retime or refuse it, fill its efforts.

    The plan is interpolated as JTC interpolates it (quintic per segment with positions,
    velocities and accelerations; cubic Hermite with positions and velocities; a clamped
    cubic spline through positions only, whose velocities and accelerations are then filled
    in, so that JTC follows the curve the efforts were computed for) and checked at
    :data:`CHECK_RATE` and at every point: positions within the URDF limits, ``|qd|`` within
    the velocity limits, the full torque (Craig eq. 6.45-6.53 by recursive Newton-Euler,
    rotor inertia, friction at the desired velocity; gravity always counted, since the limit
    is the motor's) within the effort limits.

    Over a velocity or effort limit: ``on_infeasible='refuse'`` raises :class:`PlanRefused`;
    ``'retime'`` retimes through the plan's points (TOPP-RA, each point passed exactly,
    starting and ending at rest) within the URDF's velocity and effort limits and
    ``acceleration_limits`` (default: the plan's own peak ``|qdd|`` per joint, what the
    planner was given, at least 0.1 rad/s^2), sampled at :data:`RETIMED_RATE`.

    :param model: The :class:`~manip_dynamics.RobotModel` (payloads as attached).
    :param joint_names: The plan's joints, each of the model's once, any order.
    :param times: Time of each point from the start [s], shape (m,), m >= 1, from >= 0,
        strictly increasing.
    :param positions: [rad or m], (m, n) in the order of ``joint_names``.
    :param velocities: [rad/s or m/s], (m, n) or None (see above).
    :param accelerations: [rad/s^2 or m/s^2], (m, n) or None; used only with velocities.
    :param on_infeasible: ``'retime'`` or ``'refuse'`` (:data:`ON_INFEASIBLE`).
    :param gravity: ``'include'`` or ``'exclude'``: whether the filled efforts contain
        ``g(q)`` (exclude for drivers that add gravity themselves).
    :param acceleration_limits: Per joint [rad/s^2 or m/s^2] in model order, for retiming.
    :return: The :class:`PlannedMotion` in model joint order.
    :raises PlanRefused: Bad shapes or names, NaN/inf, times not increasing, a position
        outside the limits, or a plan over a limit with ``'refuse'`` (joint, time, value
        and limit named); a retiming that fails (its reason).
    """
    if on_infeasible not in ON_INFEASIBLE:
        raise ValueError('on_infeasible must be one of %s, got %r'
                         % (', '.join(ON_INFEASIBLE), on_infeasible))
    if gravity not in GRAVITY_MODES:
        raise ValueError('gravity must be one of %s, got %r'
                         % (', '.join(GRAVITY_MODES), gravity))
    names = tuple(model.joint_names)
    arrays = _model_order(model, joint_names, {'positions': positions,
                                               'velocities': velocities,
                                               'accelerations': accelerations})
    q = arrays['positions']
    qd = arrays['velocities']
    qdd = arrays['accelerations'] if qd is not None else None
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    try:
        curve = TimedPoints(t, q, qd, qdd)
    except InputError as error:
        raise PlanRefused('bad plan: %s' % error) from None
    if qd is None or qdd is None:
        _, qd_fill, qdd_fill = curve.sample(t)
        qd = qd_fill if qd is None else qd
        qdd = qdd_fill
    lower = np.asarray(model.position_lower, dtype=np.float64)
    upper = np.asarray(model.position_upper, dtype=np.float64)
    dense = np.unique(np.concatenate([t, np.arange(t[0], t[-1], 1.0 / CHECK_RATE)]))
    qs, qds, qdds = curve.sample(dense)
    outside = (qs < lower - 1e-9) | (qs > upper + 1e-9)
    if outside.any():
        k, j = np.argwhere(outside)[0]
        raise PlanRefused('joint %s leaves its position limits [%g, %g] at t = %.3f s '
                          '(%g)' % (names[j], lower[j], upper[j], dense[k], qs[k, j]))
    v_use, e_use, (k, j), tau = _usage(model, qs, qds, qdds)
    if max(v_use, e_use) <= 1.0:
        return PlannedMotion(names, t, q, qd, qdd,
                             feedforward_torques(model, q, qd, qdd, gravity=gravity),
                             v_use, e_use, retimed=False)
    over = ('needs %.1f N m at joint %s at t = %.3f s (limit %g)'
            % (tau[k, j], names[j], dense[k], model.effort_limits[j]) if e_use > 1.0 else
            'moves joint %s at %.2f x its velocity limit' % (
                names[int(np.argmax(np.abs(qds).max(axis=0) / model.velocity_limits))], v_use))
    if on_infeasible == 'refuse':
        raise PlanRefused('the plan %s (peak use: velocity %.2f, effort %.2f); refused '
                          '(on_infeasible: refuse)' % (over, v_use, e_use))
    return _retimed(model, q, qdd, acceleration_limits, gravity, v_use, e_use, over)


def _retimed(model, q: FloatArray, qdd: FloatArray, acceleration_limits, gravity: str,
             v_use: float, e_use: float, over: str) -> PlannedMotion:
    """Retime through the plan's points (:func:`plan_with_feedforward`)."""
    keep = np.concatenate([[True], np.any(np.abs(np.diff(q, axis=0)) > 1e-9, axis=1)])
    waypoints = q[keep]
    if len(waypoints) < 2:
        raise PlanRefused('the plan %s without moving; refused' % over)
    if acceleration_limits is None:
        acceleration_limits = np.maximum(np.abs(qdd).max(axis=0), 0.1)
    try:
        timed = retime(model, waypoints, acceleration_limits=np.asarray(
            acceleration_limits, dtype=np.float64))
    except ValueError as error:
        raise PlanRefused('the plan %s, and retiming it failed: %s' % (over, error)) from None
    doc = timed.to_joint_trajectory(RETIMED_RATE)
    points = doc['points']
    times = np.array([p['time_from_start']['sec'] + 1e-9 * p['time_from_start']['nanosec']
                      for p in points])
    pos, vel, acc = (np.array([p[key] for p in points])
                     for key in ('positions', 'velocities', 'accelerations'))
    return PlannedMotion(tuple(model.joint_names), times, pos, vel, acc,
                         feedforward_torques(model, pos, vel, acc, gravity=gravity),
                         v_use, e_use, retimed=True)
