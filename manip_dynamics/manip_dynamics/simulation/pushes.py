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
How hard the simulated arm may be pushed: no harder than its motors could hold.

A push enters the dynamics as an external wrench on a link (Craig sec. 6.12 with the
external force term of the Newton-Euler recursion, eq. 6.45-6.53); its joint torques are
``tau_push = J_link(q)^T w``. The simulator accepts a push only while ``|tau_push_i|`` stays
within joint i's URDF effort limit at the pose where it starts: a push the arm's own motors
could resist, as a person's push or a collision of a cobot is meant to be. Harder pushes
spin light links at hundreds of rad/s (a 150 N push on the 4-joint gripper arm: 500 rad/s
at its wrist), motion no real arm makes and no plausibility check can tell from a glitch.
"""

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]


def push_joint_torques(model, q: ArrayLike, link: str, wrench: ArrayLike) -> FloatArray:
    """
    Return the joint torques of a wrench on one link, ``J_link(q)^T w``.

    Computed as ``g(q) - ID(q, 0, 0, {link: w})``: the torques the external wrench supplies.

    :param model: The :class:`~manip_dynamics.RobotModel`.
    :param q: Joint positions [rad or m], model order, shape (n,).
    :param link: The pushed link.
    :param wrench: ``[fx, fy, fz, tx, ty, tz]`` [N, N m] in the link's axes, about its origin.
    :return: Joint torques [N m or N], model order, shape (n,).
    :raises ValueError: An unknown link or a bad state (the library's messages).
    """
    zero = np.zeros(model.dof)
    w = np.asarray(wrench, dtype=np.float64)
    return (model.gravity_torques(q)
            - model.inverse_dynamics(q, zero, zero, external_wrenches={link: w}))


def push_beyond_effort_limits(model, q: ArrayLike, wrenches: Mapping[str, ArrayLike],
                              scale: float = 1.0) -> str:
    """
    Return why a push is harder than the arm's motors could hold, or ``''``.

    :param model: The robot model (effort limits; joints without one are not checked).
    :param q: The pose where the push starts [rad or m], model order, shape (n,).
    :param wrenches: Link -> wrench in the link's axes (as :func:`push_joint_torques`).
    :param scale: Allowed fraction of the effort limits.
    :return: A message naming the joint, its push torque and its limit; ``''`` when within.
    """
    tau = np.zeros(model.dof)
    for link, wrench in wrenches.items():
        tau += push_joint_torques(model, q, link, wrench)
    limits = np.asarray(model.effort_limits, dtype=np.float64) * scale
    known = np.isfinite(limits) & (limits > 0.0)
    ratio = np.where(known, np.abs(tau) / np.where(known, limits, 1.0), 0.0)
    i = int(np.argmax(ratio)) if ratio.size else 0
    if ratio.size and ratio[i] > 1.0:
        return ('it would put %.4g on joint %r, beyond its effort limit %g (the simulator '
                'takes pushes the arm could hold: at most the effort limits at the current '
                'pose)' % (tau[i], model.joint_names[i], limits[i]))
    return ''
