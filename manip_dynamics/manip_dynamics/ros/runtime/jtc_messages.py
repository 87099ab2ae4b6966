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
What feedforward_filter sends to joint_trajectory_controller (JTC) and reads back from it.

* :func:`plan_message`, :func:`hold_message`: trajectory_msgs/JointTrajectory of a plan with
  its feed-forward efforts, and of a hold (one point at rest with its gravity torques).
* :func:`erased_tolerances`: per-joint tolerances of -1 (JTC: "no tolerance"), so a hold goal
  ends at once as a success and JTC keeps its point, effort included.
* :func:`reference_pose`: the pose JTC holds, from its controller_state, in model order.
* :class:`JtcLog`: JTC's recent error lines from ``/rosout``, its only word on why it refused
  a goal.
"""

from collections import deque
import time
from typing import Any

from builtin_interfaces.msg import Duration
import numpy as np
from numpy.typing import NDArray
from rcl_interfaces.msg import Log
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from manip_dynamics.control.plan_feedforward import hold_efforts, PlannedMotion
from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.runtime.conversions import duration_msg

#: JTC's log lines kept to explain a refusal, and how recent one must be [s of wall time].
JTC_LOG_LINES = 8
JTC_LOG_AGE = 2.0


def follow_joint_trajectory() -> Any:
    """Return control_msgs' FollowJointTrajectory action type, None where it is missing."""
    try:
        from control_msgs.action import FollowJointTrajectory
    except ImportError:
        return None
    return FollowJointTrajectory


def plan_message(plan: PlannedMotion, feedforward: bool) -> JointTrajectory:
    """
    Return ``plan`` as JTC's trajectory, in the plan's joint order.

    :param plan: Times [s from start], positions, velocities, accelerations and efforts per
        point (rad, rad/s, rad/s^2, N m; m and N for prismatic joints).
    :param feedforward: Whether the points carry the plan's efforts (else ``effort`` empty).
    """
    msg = JointTrajectory(joint_names=list(plan.joint_names))
    for k, t in enumerate(plan.times):
        msg.points.append(JointTrajectoryPoint(
            positions=plan.positions[k].tolist(), velocities=plan.velocities[k].tolist(),
            accelerations=plan.accelerations[k].tolist(),
            effort=plan.efforts[k].tolist() if feedforward else [],
            time_from_start=duration_msg(float(t))))
    return msg


def hold_message(model: RobotModel, q: NDArray[np.float64], gravity: bool,
                 feedforward: bool) -> JointTrajectory:
    """
    Return JTC's trajectory of one point: ``q`` at rest, at time 0, with its hold torques.

    :param q: The pose, model order, shape (dof,) [rad or m].
    :param gravity: Whether the efforts include gravity
        (:func:`~manip_dynamics.control.plan_feedforward.hold_efforts`).
    :param feedforward: Whether the point carries efforts at all.
    """
    point = JointTrajectoryPoint(
        positions=q.tolist(), velocities=[0.0] * model.dof, accelerations=[0.0] * model.dof,
        effort=hold_efforts(model, q, gravity).tolist() if feedforward else [],
        time_from_start=Duration())
    return JointTrajectory(joint_names=list(model.joint_names), points=[point])


def erased_tolerances(joint_names: list[str]) -> list[Any]:
    """Return control_msgs/JointTolerance of -1 per joint: JTC checks nothing for them."""
    from control_msgs.msg import JointTolerance
    return [JointTolerance(name=name, position=-1.0, velocity=-1.0, acceleration=-1.0)
            for name in joint_names]


def reference_pose(state: Any, joint_names: list[str]) -> NDArray[np.float64] | None:
    """
    Return the pose JTC holds (its controller_state's ``reference``) in ``joint_names`` order.

    :param state: control_msgs/JointTrajectoryControllerState.
    :return: Shape (len(joint_names),), or None when JTC does not name every joint or a
        value is not finite.
    """
    names, positions = list(state.joint_names), list(state.reference.positions)
    if len(names) != len(positions) or not set(joint_names) <= set(names):
        return None
    q = np.array([positions[names.index(name)] for name in joint_names])
    return q if np.all(np.isfinite(q)) else None


class JtcLog:
    """JTC's newest error lines from ``/rosout`` (rcl_interfaces/Log), wall-clock aged."""

    def __init__(self, controller_name: str) -> None:
        """:param controller_name: JTC's node name (the last part of a logger's name)."""
        self.controller_name = controller_name
        self._lines: deque = deque(maxlen=JTC_LOG_LINES)   # (monotonic time, text)

    def note(self, msg: Any) -> None:
        """Keep ``msg`` if it is one of JTC's error lines (level ERROR or worse)."""
        if msg.level >= Log.ERROR and msg.name.split('.')[-1] == self.controller_name:
            self._lines.append((time.monotonic(), msg.msg))

    def refusal(self) -> str:
        """Return ``' (JTC: <its last two lines of the last JTC_LOG_AGE s>)'``, or ''."""
        now = time.monotonic()
        lines = [text for wall, text in self._lines if now - wall <= JTC_LOG_AGE]
        return (' (JTC: %s)' % ' | '.join(lines[-2:])) if lines else ''
