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
A trajectory goal read as joint_trajectory_controller reads it, before anything moves.

joint_trajectory_controller (JTC, ros2_controllers) refuses a goal at goal time when its
message is invalid: no joint names, a joint it does not control, no points, times not
strictly increasing, a field that is neither empty nor one value per joint, a last point
with a non-zero velocity, or a header stamp whose trajectory ends before now. It starts a
trajectory at its header stamp (zero: now); a first point after ``t = 0`` is reached from the
state of that moment; with ``allow_partial_joints_goal`` the joints a goal leaves out hold
where they are. :func:`read_trajectory_goal` applies the same rules to a goal given as arrays
and returns it complete (every controller joint, model order, the start segment from the
current pose included), or raises :class:`~manip_dynamics.control.plan_feedforward.PlanRefused`
with the reason, so a node can refuse the goal when it arrives instead of aborting it later.
It refuses a non-empty multi-DOF part too (the suite controls single-DOF joints only) and
non-finite values. :func:`retimed_from_pose` times a path given without timing (every
``time_from_start`` zero) from the current pose within the limits.

Times are seconds on the clock of the joint states (the controller's clock).
"""

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from manip_dynamics.control.computed_torque import TimedPoints
from manip_dynamics.control.plan_feedforward import PlanRefused
from manip_dynamics.planning.retiming import retime

FloatArray = NDArray[np.float64]

#: A last point's velocity counts as non-zero above this (JTC: float epsilon).
ZERO_VELOCITY = float(np.finfo(np.float32).eps)


@dataclass(frozen=True)
class TrajectoryGoal:
    """
    A goal made complete: every model joint, model order, starting at the current pose.

    ``times`` [s] from the start, shape (m,), strictly increasing from 0; ``positions`` and
    (when given) ``velocities``, ``accelerations`` shape (m, n) in the model's joint order;
    ``start`` [s] the time it starts on the joint states' clock (the header stamp, or ``now``
    when the stamp is zero); ``held`` the joints the goal left out (held at the current
    pose); ``prepended`` whether the current pose was put before the first point.
    """

    joint_names: tuple
    times: FloatArray
    positions: FloatArray
    velocities: FloatArray | None
    accelerations: FloatArray | None
    start: float
    held: tuple
    prepended: bool


def _field(name: str, rows: list, width: int) -> FloatArray | None:
    """Return one field of every point, (m, width), or None when it is empty at all."""
    if all(len(row) == 0 for row in rows):
        return None
    if any(len(row) != width for row in rows):
        raise PlanRefused('%s must have one value per joint at every point or be empty at '
                          'all (%d joints)' % (name, width))
    values = np.array(rows, dtype=np.float64)
    if not np.all(np.isfinite(values)):
        k, j = np.argwhere(~np.isfinite(values))[0]
        raise PlanRefused('%s of point %d is not finite at joint %d' % (name, k, j))
    return values


def read_trajectory_goal(model, joint_names: list[str], times: ArrayLike,
                         positions: list, velocities: list, accelerations: list, *,
                         stamp: float, now: float, q: ArrayLike, start_tolerance: float,
                         qd: ArrayLike | None = None,
                         multi_dof_points: int = 0) -> TrajectoryGoal:
    """
    Check a trajectory goal as JTC does at goal time and complete it (module docstring).

    :param model: The :class:`~manip_dynamics.RobotModel`; its joints are the controller's.
    :param joint_names: The goal's joints, any order, a subset allowed.
    :param times: ``time_from_start`` of each point [s], shape (m,).
    :param positions: Per point a sequence of positions [rad or m] in the goal's order.
    :param velocities: Per point a sequence (empty at every point: none given).
    :param accelerations: As ``velocities``.
    :param stamp: The header stamp [s] on the joint states' clock; 0 = start now.
    :param now: The newest joint state's stamp [s].
    :param q: The current pose [rad or m], model order, shape (n,).
    :param start_tolerance: A first point at ``t = 0`` farther than this from ``q`` is
        refused [rad or m] (the arm would jump).
    :param qd: The current velocities [rad/s or m/s], model order, shape (n,): the start of
        a segment put before a first point after ``t = 0`` when the goal has velocities
        (None: at rest).
    :param multi_dof_points: Points of the goal's multi-DOF part; any is refused.
    :return: The complete :class:`TrajectoryGoal`.
    :raises PlanRefused: The reason, naming the joint, point or time.
    """
    model_names = list(model.joint_names)
    names = list(joint_names)
    if multi_dof_points:
        raise PlanRefused('the goal has a multi-DOF part (%d points): this controller moves '
                          'single-DOF joints only' % multi_dof_points)
    if not names:
        raise PlanRefused('the goal names no joints')
    unknown = [name for name in names if name not in model_names]
    if unknown:
        raise PlanRefused('the goal names joints the controller does not have: %s '
                          '(controller joints: %s)' % (unknown, model_names))
    if len(set(names)) != len(names):
        raise PlanRefused('the goal names a joint twice: %s' % names)
    t = np.asarray(times, dtype=np.float64).reshape(-1)
    if t.size == 0:
        raise PlanRefused('the goal has no points')
    if not np.all(np.isfinite(t)) or t[0] < 0.0 or np.any(np.diff(t) <= 0.0):
        raise PlanRefused('time_from_start must be finite, >= 0 and strictly increasing, '
                          'got %s' % np.round(t, 6).tolist())
    width = len(names)
    pos = _field('positions', positions, width)
    if pos is None:
        raise PlanRefused('the goal has no positions')
    vel = _field('velocities', velocities, width)
    acc = _field('accelerations', accelerations, width)
    if vel is not None and np.any(np.abs(vel[-1]) > ZERO_VELOCITY):
        j = int(np.argmax(np.abs(vel[-1])))
        raise PlanRefused('the last point has a non-zero velocity at joint %s (%g): a '
                          'trajectory must end at rest' % (names[j], vel[-1, j]))
    if not (np.isfinite(stamp) and np.isfinite(now)):
        raise PlanRefused('the header stamp or the clock is not finite')
    if stamp != 0.0 and stamp + t[-1] < now:
        raise PlanRefused('the trajectory starts at %.3f s and ends at %.3f s, before now '
                          '(%.3f s)' % (stamp, stamp + t[-1], now))
    q_now = np.asarray(q, dtype=np.float64).reshape(-1)
    n = len(model_names)
    # every controller joint, model order: the ones left out hold the current pose at rest
    order = [names.index(name) if name in names else -1 for name in model_names]

    def complete(values: FloatArray | None, rest: FloatArray) -> FloatArray | None:
        if values is None:
            return None
        out = np.tile(rest, (len(t), 1))
        for i, k in enumerate(order):
            if k >= 0:
                out[:, i] = values[:, k]
        return out
    zeros = np.zeros(n)
    pos_full = complete(pos, q_now)
    vel_full = complete(vel, zeros)
    acc_full = complete(acc, zeros) if vel_full is not None else None
    held = tuple(model_names[i] for i, k in enumerate(order) if k < 0)
    prepended = bool(t[0] > 0.0)
    if prepended:
        # JTC: from the state at the start to the first point, over its time_from_start
        t = np.concatenate([[0.0], t])
        pos_full = np.vstack([q_now, pos_full])
        # a goal with velocities starts from the arm's (a continuation of a motion under
        # way); one with positions only is splined from rest, as it would be anyway
        v_now = zeros if qd is None else np.asarray(qd, dtype=np.float64).reshape(-1)
        vel_full = None if vel_full is None else np.vstack([v_now, vel_full])
        acc_full = None if acc_full is None else np.vstack([zeros, acc_full])
    else:
        gap = np.abs(pos_full[0] - q_now)
        if gap.max() > start_tolerance:
            j = int(np.argmax(gap))
            raise PlanRefused('the goal starts %.3f from the current pose at joint %s '
                              '(start_tolerance %g)' % (gap[j], model_names[j],
                                                        start_tolerance))
    return TrajectoryGoal(tuple(model_names), t, pos_full, vel_full, acc_full,
                          float(stamp) if stamp != 0.0 else float(now), held, prepended)


def retimed_from_pose(model, positions: ArrayLike, q: ArrayLike, *,
                      acceleration_limits: ArrayLike | None, start_tolerance: float,
                      effort_scale: float = 1.0) -> tuple[TimedPoints, str]:
    """
    Time a path given without timing from the current pose, within the arm's limits.

    The path starts at ``q``: its first waypoint is replaced by ``q`` when it lies within
    ``start_tolerance`` of it (a planner's start), else ``q`` is put before it. Timed by
    :func:`~manip_dynamics.planning.retime` within the URDF velocity and effort limits
    (scaled by ``effort_scale``) and ``acceleration_limits``.

    :param model: The :class:`~manip_dynamics.RobotModel`.
    :param positions: The waypoints [rad or m], model order, shape (m, n).
    :param q: The current pose [rad or m], shape (n,).
    :param acceleration_limits: [rad/s^2 or m/s^2], one for every joint or one per joint;
        None or empty: refused (a path cannot be timed without them).
    :param start_tolerance: [rad or m], as above.
    :param effort_scale: The share of the effort limits the timing may use, in (0, 1].
    :return: The timed points and how they were made (``retimed``, or ``retimed (already
        there)`` for one waypoint at the current pose).
    :raises PlanRefused: No acceleration limits.
    """
    if acceleration_limits is None or np.size(acceleration_limits) == 0:
        raise PlanRefused('the trajectory has no timing and the parameter '
                          'acceleration_limits is empty: cannot retime it')
    pos = np.atleast_2d(np.asarray(positions, dtype=np.float64))
    q_now = np.asarray(q, dtype=np.float64).reshape(-1)
    acc = np.asarray(acceleration_limits, dtype=np.float64)
    acc = float(acc.reshape(-1)[0]) if acc.size == 1 else acc
    if np.max(np.abs(pos[0] - q_now)) <= start_tolerance:
        if len(pos) == 1:
            return TimedPoints([0.0], q_now[None, :]), 'retimed (already there)'
        waypoints = np.vstack([q_now, pos[1:]])
    else:
        waypoints = np.vstack([q_now, pos])
    return (retime(model, waypoints, acceleration_limits=acc, effort_scale=effort_scale),
            'retimed')
