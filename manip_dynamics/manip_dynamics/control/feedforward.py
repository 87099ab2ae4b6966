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
Feed-forward torques for a planned trajectory: the model's part of a real-time loop's command.

A torque-controlled arm runs its fast feedback in the real-time loop (the driver, or
joint_trajectory_controller on the effort interface, which adds each point's ``effort`` to
its PID output); the model enters as feed-forward. The torque a trajectory needs
is its inverse dynamics at the desired state (Craig eq. 6.45-6.53, with the rotor inertia
``I_a qdd`` and the friction of sec. 6.11 at the desired velocity), with the model as
loaded (payloads attached with :meth:`~manip_dynamics.RobotModel.set_payload` included).

Some arms add gravity themselves: :data:`GRAVITY_MODES` names the choice.

* ``'include'``: the full torque, for a bare effort interface (ros2_control's effort
  command on a simulated arm, most research arms).
* ``'exclude'``: without ``g(q)``, for drivers that compensate gravity in the robot
  (Franka's effort interface takes torques without gravity; UR's direct torque control
  adds it in the controller box).
"""

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]

#: How gravity enters the feed-forward (module docstring).
GRAVITY_MODES = ('include', 'exclude')


def feedforward_torques(model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, *,
                        gravity: str = 'include', friction: bool = True,
                        armature: bool = True) -> FloatArray:
    """
    Return the torques that make the arm follow ``(q, qd, qdd)``, sampled where the points are.

    ``tau = M(q) qdd + C(q, qd) qd + g(q) + I_a qdd + F(qd)`` (Craig eq. 6.45-6.53 by
    recursive Newton-Euler, rotor inertia, friction of sec. 6.11 at the desired velocity),
    ``g(q)`` left out with ``gravity='exclude'``.

    :param model: The :class:`~manip_dynamics.RobotModel` (payloads as attached).
    :param q: Desired positions [rad or m], model order, shape (n,) or (N, n).
    :param qd: Desired velocities [rad/s or m/s], same shape.
    :param qdd: Desired accelerations [rad/s^2 or m/s^2], same shape.
    :param gravity: ``'include'`` or ``'exclude'`` (:data:`GRAVITY_MODES`).
    :param friction: Add the URDF friction at the desired velocity.
    :param armature: Add the rotor inertia ``armature * qdd``.
    :return: Joint torques [N m or N], shape of ``q``.
    :raises ValueError: An unknown gravity mode, or bad input (shapes, NaN/inf).
    """
    if gravity not in GRAVITY_MODES:
        raise ValueError('gravity must be one of %s, got %r'
                         % (', '.join(GRAVITY_MODES), gravity))
    tau = model.inverse_dynamics(q, qd, qdd, include_friction=friction,
                                 include_armature=armature)
    if gravity == 'exclude':
        tau = tau - model.gravity_torques(q)
    return tau


def joint_trajectory_with_feedforward(trajectory: Any, rate: float, model,
                                      gravity: str = 'include') -> dict:
    """
    Return a retimed trajectory as trajectory_msgs/JointTrajectory fields, efforts filled.

    Each point's ``effort`` holds :func:`feedforward_torques` at its state: what
    joint_trajectory_controller adds to its PID output.

    :param trajectory: A :class:`~manip_dynamics.planning.retiming.RetimedTrajectory`
        (anything with ``joint_names`` and ``to_joint_trajectory(rate, efforts=...)``).
    :param rate: Points per second [Hz], > 0.
    :param model: The :class:`~manip_dynamics.RobotModel` it was retimed with.
    :param gravity: ``'include'`` or ``'exclude'`` (for drivers that add gravity themselves).
    :return: The plain document of ``to_joint_trajectory``.
    :raises ValueError: A model of other joints, a bad rate or gravity mode (the last from
        :func:`feedforward_torques`).
    """
    if tuple(model.joint_names) != tuple(trajectory.joint_names):
        raise ValueError("the model's joints %s are not the trajectory's %s"
                         % (list(model.joint_names), list(trajectory.joint_names)))
    return trajectory.to_joint_trajectory(
        rate, efforts=lambda q, qd, qdd: feedforward_torques(model, q, qd, qdd,
                                                             gravity=gravity))
