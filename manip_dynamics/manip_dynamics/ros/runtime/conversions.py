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
Conversions between ROS messages and the numpy arrays of :class:`manip_dynamics.RobotModel`.

ROS messages key joint values by name (``joint_names`` + parallel arrays, in any order); the
library wants arrays in model order (:attr:`RobotModel.joint_names`). Every helper here
validates through :meth:`RobotModel.to_model_order`, so a bad message raises
:class:`manip_dynamics.InputError` (a ValueError) whose message names the joint, link, point
or field. Matrices travel as flat ``float64[]`` in row-major (C) order.

Only message packages are imported here (no rclpy), so the helpers are usable and testable
without a running ROS graph.
"""

import array
from collections import deque
from collections.abc import Sequence
from itertools import repeat
import math
from operator import attrgetter
from typing import Any

from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import Wrench, WrenchStamped
import numpy as np
from numpy.typing import ArrayLike, NDArray
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from manip_dynamics.control.computed_torque import TimedPoints
from manip_dynamics.control.trajectory_goal import (
    read_trajectory_goal, retimed_from_pose, TrajectoryGoal)
from manip_dynamics.errors import InputError
from manip_dynamics.robot_model import RobotModel
from manip_dynamics_interfaces.msg import Contact

FloatArray = NDArray[np.float64]


def time_msg(seconds: float) -> Time:
    """
    Convert a time in seconds to builtin_interfaces/Time (also the fields of a Duration).

    :param seconds: Time [s], >= 0.
    :return: The message.
    """
    sec = int(math.floor(seconds))
    nanosec = int(round((seconds - sec) * 1e9))
    if nanosec >= 1_000_000_000:
        sec += 1
        nanosec -= 1_000_000_000
    return Time(sec=sec, nanosec=nanosec)


def duration_msg(seconds: float) -> Duration:
    """
    Convert a span in seconds to builtin_interfaces/Duration (e.g. a ``time_from_start``).

    :param seconds: Span [s], >= 0.
    :return: The message, rounded to the nanosecond as :func:`time_msg`.
    """
    stamp = time_msg(seconds)
    return Duration(sec=stamp.sec, nanosec=stamp.nanosec)


def stamp_seconds(stamp: Time) -> float:
    """
    Convert a builtin_interfaces/Time (a header stamp) to seconds.

    :param stamp: The stamp (or a Duration's fields).
    :return: Time [s]; 0.0 for an unset stamp.
    """
    return stamp.sec + 1e-9 * stamp.nanosec


def response_joint_names(model: RobotModel, names: Sequence[str]) -> list[str]:
    """
    Return the joint names a response reports: the request's, or the model's when empty.

    :param model: The robot model.
    :param names: Joint names of the request (possibly empty).
    :return: A new list of joint names.
    """
    return list(names) if len(names) else list(model.joint_names)


def to_model_order(model: RobotModel, names: Sequence[str], values: ArrayLike, *,
                   what: str = 'positions', empty_is_zero: bool = False,
                   allow_extra: bool = False) -> FloatArray:
    """
    Reorder name-keyed values into model order, with the empty-array convention of the srvs.

    :param model: The robot model.
    :param names: Joint names of ``values`` (any order); empty = values in model order.
    :param values: One value per name (or n values when ``names`` is empty).
    :param what: Field name used in error messages, e.g. ``'velocities'``.
    :param empty_is_zero: An empty ``values`` means zero for every joint (the names are
        still checked).
    :param allow_extra: Ignore names that are not joints of the model (joint_states).
    :return: Values in model order, shape (n,), all finite.
    :raises InputError: Unknown, duplicate or missing joint, length mismatch, NaN/inf.
    """
    if empty_is_zero and len(values) == 0:
        if len(names):
            model.to_model_order(names, np.zeros(len(names)), what=what,
                                 allow_extra=allow_extra)
        return np.zeros(model.dof)
    if len(values) == 0 and not len(names):
        raise InputError('%s is empty; give one value per joint of %s' % (
            what, list(model.joint_names)))
    return model.to_model_order(names, values, what=what, allow_extra=allow_extra)


def _permutation(model: RobotModel, names: Sequence[str]) -> list[int]:
    """Return the model-order index of every name (names must be valid joints)."""
    return [model.joint_index(name) for name in names]


def from_model_order(model: RobotModel, names: Sequence[str], values: ArrayLike) -> FloatArray:
    """
    Reorder model-order values into the order of ``names`` (the inverse of to_model_order).

    :param model: The robot model.
    :param names: Target joint order; empty = model order.
    :param values: Values in model order, shape (n,) or a batch (N, n).
    :return: Values in ``names`` order, shape (len(names),) or (N, len(names)).
    :raises InputError: A name that is not a joint of the model.
    """
    arr = np.asarray(values, dtype=np.float64)
    if not len(names):
        return arr.copy()
    return arr[..., _permutation(model, names)]


def matrix_from_model_order(model: RobotModel, names: Sequence[str],
                            matrix: ArrayLike) -> FloatArray:
    """
    Permute the rows and columns of a joint-space matrix (M, C) into the order of ``names``.

    :param model: The robot model.
    :param names: Target joint order; empty = model order.
    :param matrix: Matrix in model order, shape (n, n).
    :return: ``matrix[p][:, p]`` with p the model index of each name, shape (n, n).
    """
    arr = np.asarray(matrix, dtype=np.float64)
    if not len(names):
        return arr.copy()
    index = _permutation(model, names)
    return arr[np.ix_(index, index)]


def flatten_row_major(matrix: ArrayLike) -> list[float]:
    """
    Flatten a matrix row by row (C order), as the srv ``float64[]`` matrix fields expect.

    :param matrix: Array of any shape; entry (i, j) of an (r, c) matrix lands at i * c + j.
    :return: A list of Python floats.
    """
    return np.ascontiguousarray(matrix, dtype=np.float64).reshape(-1).tolist()


def unflatten_row_major(values: ArrayLike, rows: int, cols: int) -> FloatArray:
    """
    Rebuild a matrix from its row-major flattening.

    :param values: ``rows * cols`` numbers.
    :param rows: Number of rows.
    :param cols: Number of columns.
    :return: Shape (rows, cols).
    :raises InputError: The number of values is not rows * cols.
    """
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    if arr.size != rows * cols:
        raise InputError('a %d x %d matrix needs %d values, got %d' % (
            rows, cols, rows * cols, arr.size))
    return arr.reshape(rows, cols)


def wrench_to_array(wrench: Wrench) -> FloatArray:
    """
    Return a geometry_msgs/Wrench as ``[fx, fy, fz, tx, ty, tz]`` [N, N m].

    :param wrench: The message.
    :return: Shape (6,), linear part first (the library's wrench layout).
    """
    f, t = wrench.force, wrench.torque
    return np.array([f.x, f.y, f.z, t.x, t.y, t.z], dtype=np.float64)


def array_to_wrench(values: ArrayLike) -> Wrench:
    """
    Return a geometry_msgs/Wrench from ``[fx, fy, fz, tx, ty, tz]`` [N, N m].

    :param values: Six numbers, force first.
    :return: The message.
    :raises InputError: Not six numbers.
    """
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    if arr.size != 6:
        raise InputError('a wrench needs 6 values [fx fy fz tx ty tz], got %d' % arr.size)
    out = Wrench()
    out.force.x, out.force.y, out.force.z = (float(v) for v in arr[:3])
    out.torque.x, out.torque.y, out.torque.z = (float(v) for v in arr[3:])
    return out


def wrenches_to_dict(wrenches: Sequence[WrenchStamped],
                     model: RobotModel | None = None) -> dict[str, FloatArray]:
    """
    Convert WrenchStamped[] to the library's ``external_wrenches`` mapping.

    ``header.frame_id`` names the link; force and torque are in that link's frame, about its
    origin. Several wrenches on the same link add up (several contacts on one body).

    :param wrenches: The messages; ``header.stamp`` is ignored.
    :param model: When given, link names are checked against ``model.link_names``.
    :return: Link name -> ``[fx, fy, fz, tx, ty, tz]`` [N, N m], shape (6,) each.
    :raises InputError: An empty or unknown frame_id, or a NaN/inf component.
    """
    out: dict[str, FloatArray] = {}
    for k, stamped in enumerate(wrenches):
        link = stamped.header.frame_id
        if not link:
            raise InputError('external_wrenches[%d] has an empty header.frame_id; set it to '
                             'the link the wrench acts on' % k)
        if model is not None and link not in model.link_names:
            raise InputError('external_wrenches[%d]: unknown link %r; the model has %s' % (
                k, link, list(model.link_names)))
        w = wrench_to_array(stamped.wrench)
        if not np.all(np.isfinite(w)):
            raise InputError('external_wrenches[%d] on link %r has NaN or inf' % (k, link))
        out[link] = out[link] + w if link in out else w
    return out


def joint_state_arrays(model: RobotModel,
                       msg: JointState) -> tuple[FloatArray, FloatArray | None]:
    """
    Extract model-order positions and velocities from a sensor_msgs/JointState.

    Joints are matched by name; joints the model does not have are ignored.

    :param model: The robot model.
    :param msg: The joint state; ``velocity`` may be empty.
    :return: ``(q, qd)``, each shape (n,); ``qd`` is None when the message has no
        velocities.
    :raises InputError: A model joint is missing, a length mismatch, NaN/inf.
    """
    names = list(msg.name)
    if not names:
        raise InputError('joint_states message has no joint names')
    q = model.to_model_order(names, msg.position, what='joint_states position',
                             allow_extra=True)
    qd = None
    if len(msg.velocity):
        qd = model.to_model_order(names, msg.velocity, what='joint_states velocity',
                                  allow_extra=True)
    return q, qd


def joint_state_message(names: Sequence[str], efforts: ArrayLike, stamp: Time | None = None,
                        frame_id: str = '') -> JointState:
    """
    Build a sensor_msgs/JointState carrying only names and efforts.

    :param names: Joint names, in the order of ``efforts``.
    :param efforts: Efforts [N m | N], shape (len(names),).
    :param stamp: header.stamp (copied from the input message by the nodes).
    :param frame_id: header.frame_id.
    :return: The message; position and velocity are empty.
    """
    msg = JointState()
    if stamp is not None:
        msg.header.stamp = stamp
    msg.header.frame_id = frame_id
    msg.name = list(names)
    msg.effort = np.asarray(efforts, dtype=np.float64).reshape(-1).tolist()
    return msg


def contact_message(names: Sequence[str], state: Any, stamp: Time) -> Contact:
    """
    Return manip_dynamics_interfaces/Contact for one contact decision.

    :param names: The joints in model order.
    :param state: A :class:`~manip_dynamics.observers.ContactState` (flags, ratios,
        strongest joint, overall flag), model order.
    :param stamp: The stamp of the joint state it was computed from.
    """
    msg = Contact()
    msg.header.stamp = stamp
    msg.joint_names = list(names)
    msg.joint_contact = [bool(f) for f in state.flags]
    msg.normalized_residual = state.ratios.tolist()
    msg.strongest_joint = names[state.strongest]
    msg.strongest_normalized_residual = float(state.ratios[state.strongest])
    msg.contact = bool(state.contact)
    return msg


def wrench_stamped(values: ArrayLike, frame: str, stamp: Time) -> WrenchStamped:
    """Return geometry_msgs/WrenchStamped of ``[fx, fy, fz, tx, ty, tz]`` [N, N m]."""
    msg = WrenchStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = frame
    msg.wrench = array_to_wrench(values)
    return msg


def float64_multi_array(values: ArrayLike) -> Float64MultiArray:
    """
    Build the std_msgs/Float64MultiArray a ros2_controllers forward-command controller reads.

    :param values: One number per controller joint, in the controller's joint order.
    :return: The message (no layout, as JointGroupEffortController expects).
    """
    msg = Float64MultiArray()
    msg.data = np.asarray(values, dtype=np.float64).reshape(-1).tolist()
    return msg


def command_to_model_order(model: RobotModel, command_joints: Sequence[str],
                           data: ArrayLike) -> FloatArray:
    """
    Map a Float64MultiArray command (controller joint order) to model order.

    Model joints that ``command_joints`` does not list get zero.

    :param model: The robot model.
    :param command_joints: The controller's joints, in the order of ``data``.
    :param data: One value per controller joint.
    :return: Shape (n,), model order.
    :raises InputError: Length mismatch, unknown or duplicate joint, NaN/inf.
    """
    arr = np.asarray(data, dtype=np.float64).reshape(-1)
    if arr.size != len(command_joints):
        raise InputError('command has %d values for %d command_joints %s' % (
            arr.size, len(command_joints), list(command_joints)))
    out = np.zeros(model.dof)
    seen = set()
    for name, value in zip(command_joints, arr):
        if name in seen:
            raise InputError('joint %r appears twice in command_joints' % name)
        seen.add(name)
        if not math.isfinite(value):
            raise InputError('command for joint %r is %r' % (name, float(value)))
        out[model.joint_index(name)] = value
    return out


#: Largest number of trajectory points ``~/trajectory_efforts`` accepts in one request.
#: rclpy converts every point between its C message and a Python object: 25-45 us per point
#: for the request and the response together on the project machine (2 loaded cores,
#: Jazzy; 100,000 points: 1.7-3.4 s to read, 0.8-1.2 s to write), while the node's own work
#: (this module plus the batched inverse dynamics) is 6-9 us per point. Both hold the node's
#: one thread, so a request of N points delays every other client by N * (31-54) us: 20,000
#: points keep that about a second. Above, the request is rejected with this number in the
#: message (after rclpy has read it: the node cannot refuse a message it has not read). See
#: docs/ROS_API.md.
MAX_TRAJECTORY_POINTS = 20_000


def _stacked(points: Sequence, field: str, width: int) -> FloatArray:
    """
    Return the ``field`` arrays of every point stacked as (N, width), without a Python loop.

    rclpy stores ``float64[]`` fields as ``array.array('d')``: their buffers are joined as
    bytes and read back as one array (one copy). Anything else goes through numpy.
    """
    arrays = list(map(attrgetter(field), points))
    try:
        flat = np.frombuffer(b''.join(arrays), dtype=np.float64)
        if flat.size != len(arrays) * width:
            raise ValueError('not float64 buffers')
    except (TypeError, ValueError):
        flat = np.asarray([v for a in arrays for v in a], dtype=np.float64)
    return flat.reshape(len(arrays), width)


def trajectory_to_arrays(model: RobotModel, trajectory: JointTrajectory) -> tuple[
        list[str], FloatArray, FloatArray, FloatArray]:
    """
    Convert a trajectory_msgs/JointTrajectory to model-order batches.

    Velocities (and, separately, accelerations) must be given at every point or at none;
    when no point gives them they are zero (a quasi-static check of a path). A trajectory
    where only some points give them is rejected, since silently using zero there would
    understate the efforts. The conversion is vectorised (lengths read with ``map``, the
    values joined as one buffer): about 0.1 s for 100,000 points of 7 joints.

    :param model: The robot model.
    :param trajectory: The trajectory; ``joint_names`` empty = model order.
    :return: ``(joint_names, Q, QD, QDD)``: the response's joint names and arrays of shape
        (N, n) in model order, N = number of points.
    :raises InputError: No points, more than :data:`MAX_TRAJECTORY_POINTS`, or a point with a
        bad field (the message names the point, the field and the joint).
    """
    names = list(trajectory.joint_names)
    points = trajectory.points
    n_points = len(points)
    if not n_points:
        raise InputError('trajectory has no points')
    if n_points > MAX_TRAJECTORY_POINTS:
        raise InputError('trajectory has %d points; at most %d are accepted in one request: '
                         'split it' % (n_points, MAX_TRAJECTORY_POINTS))
    width = len(names) if names else model.dof
    if names:
        # names: unknown, duplicate or missing joints (checked once for every point)
        model.to_model_order(names, np.zeros(width), what='trajectory joint_names')
        perm = np.array([names.index(name) for name in model.joint_names], dtype=np.int64)
    else:
        perm = None
    out = {}
    for field in ('positions', 'velocities', 'accelerations'):
        lengths = np.fromiter(map(len, map(attrgetter(field), points)), dtype=np.int64,
                              count=n_points)
        if field != 'positions' and not lengths.any():
            out[field] = np.zeros((n_points, model.dof))
            continue
        empty = np.flatnonzero(lengths == 0)
        if empty.size:
            k = int(empty[0])
            raise InputError('trajectory point %d has no %s; give %s at every point or at '
                             'none (then they are zero)' % (k, field, field)
                             if field != 'positions' else
                             'trajectory point %d has no positions' % k)
        wrong = np.flatnonzero(lengths != width)
        if wrong.size:
            k = int(wrong[0])
            raise InputError('trajectory point %d: %s has %d values for %d joint names' % (
                k, field, lengths[k], width) if names else
                'trajectory point %d: %s has %d values but the model has %d joints %s' % (
                k, field, lengths[k], model.dof, list(model.joint_names)))
        rows = _stacked(points, field, width)
        if perm is not None:
            rows = rows[:, perm]
        finite = np.isfinite(rows)
        if not finite.all():
            k, j = (int(v) for v in np.argwhere(~finite)[0])
            raise InputError('trajectory point %d: %s of joint %r is %r' % (
                k, field, model.joint_names[j], float(rows[k, j])))
        out[field] = rows
    return (response_joint_names(model, names), out['positions'], out['velocities'],
            out['accelerations'])


def read_trajectory_message(model: RobotModel, trajectory: JointTrajectory, *, now: float,
                            q: ArrayLike, start_tolerance: float,
                            qd: ArrayLike | None = None, multi_dof_points: int = 0,
                            honour_stamp: bool = True) -> TrajectoryGoal:
    """
    Read a trajectory_msgs/JointTrajectory goal as joint_trajectory_controller does.

    :func:`~manip_dynamics.control.trajectory_goal.read_trajectory_goal` on the message's
    fields (its docstring has the rules and the parameters).

    :param honour_stamp: Start at the header stamp (JTC); False: start ``now`` whatever it
        says.
    :raises PlanRefused: The reason the goal is refused.
    """
    points = trajectory.points
    return read_trajectory_goal(
        model, list(trajectory.joint_names), [stamp_seconds(p.time_from_start) for p in points],
        [list(p.positions) for p in points], [list(p.velocities) for p in points],
        [list(p.accelerations) for p in points],
        stamp=stamp_seconds(trajectory.header.stamp) if honour_stamp else 0.0, now=now, q=q,
        qd=qd, start_tolerance=start_tolerance, multi_dof_points=multi_dof_points)


def tracked_trajectory(model: RobotModel, trajectory: JointTrajectory, *, q: ArrayLike,
                       now: float, acceleration_limits: ArrayLike | None,
                       start_tolerance: float, effort_scale: float = 1.0) -> tuple:
    """
    Return a trajectory message as a tracking controller follows it: (TimedPoints, how).

    Untimed (every ``time_from_start`` zero, every model joint named): retimed from the
    current pose (:func:`~manip_dynamics.control.trajectory_goal.retimed_from_pose`, which
    takes the last three arguments). Timed: read as joint_trajectory_controller reads it
    (:func:`read_trajectory_message`), starting ``now`` whatever the header stamp says; its
    start pose is left for the controller to check (``start_tolerance`` is not applied).

    :param q: The current pose [rad or m], model order, shape (n,).
    :param now: The newest joint state's stamp [s].
    :return: (:class:`~manip_dynamics.control.TimedPoints`, ``'timed'`` or ``'retimed'...``).
    :raises ValueError: The reason the trajectory is refused.
    """
    points = trajectory.points
    if points and not any(stamp_seconds(p.time_from_start) for p in points):
        names = list(trajectory.joint_names)
        return retimed_from_pose(
            model, [model.to_model_order(names, p.positions, what='point %d positions' % k)
                    for k, p in enumerate(points)], q,
            acceleration_limits=acceleration_limits, start_tolerance=start_tolerance,
            effort_scale=effort_scale)
    goal = read_trajectory_message(model, trajectory, now=now, q=q, honour_stamp=False,
                                   start_tolerance=math.inf)
    return TimedPoints(goal.times, goal.positions, goal.velocities,
                       goal.accelerations), 'timed'


def trajectory_with_efforts(trajectory: JointTrajectory, efforts: ArrayLike) -> JointTrajectory:
    """
    Fill ``effort`` at every point of a trajectory, in place, and return it.

    The service owns its request (rclpy deserialised it for this call), so the response
    reuses its points instead of copying them: a deep copy of 100,000 points took 3.5 s.

    :param trajectory: The trajectory to complete (modified).
    :param efforts: Shape (N, len(joint_names)), in the trajectory's joint order.
    :return: ``trajectory`` itself, its points carrying the efforts.
    :raises InputError: The shape of ``efforts`` does not match the points.
    """
    arr = np.asarray(efforts, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] != len(trajectory.points):
        raise InputError('efforts must have one row per trajectory point (%d), got shape %s'
                         % (len(trajectory.points), arr.shape))
    n_points, width = arr.shape
    flat = array.array('d')
    flat.frombytes(np.ascontiguousarray(arr).tobytes())
    # one array.array per point, sliced out of one buffer (no Python float per value)
    starts = range(0, n_points * width, width)
    ends = range(width, n_points * width + 1, width)
    rows = map(flat.__getitem__, map(slice, starts, ends))
    deque(map(setattr, trajectory.points, repeat('effort'), rows), maxlen=0)
    return trajectory


def acceleration_limits(model: RobotModel, order: Sequence[str], requested: Sequence[float],
                        configured: Sequence[float]) -> float | NDArray[np.float64] | None:
    """
    Return the acceleration limits a request asks for, else the node's parameter.

    :param order: The request's joint order (empty: model order).
    :param requested: The request's per-joint limits in ``order`` [rad/s^2 or m/s^2], or
        empty.
    :param configured: The parameter: empty (none), one value for every joint, or one per
        joint in model order.
    :return: None, a scalar, or shape (dof,) in model order.
    :raises ValueError: Wrong lengths, naming the request field or the parameter.
    """
    if len(requested):
        return to_model_order(model, order, requested, what='acceleration_limits')
    if len(configured) == 1:
        return float(configured[0])
    if not len(configured):
        return None
    if len(configured) != model.dof:
        raise ValueError('parameter acceleration_limits has %d values for %d joints'
                         % (len(configured), model.dof))
    return np.array(configured, dtype=np.float64)
