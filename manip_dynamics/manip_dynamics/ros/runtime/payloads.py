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
Payload handling shared by the nodes.

Start-up parameters, ~/set_payload, re-applying to a new model, and dynamics_node's
~/estimate_payload from its recent joint states.
"""

import time
from typing import Any

import numpy as np
from numpy.typing import NDArray
from rclpy.impl.rcutils_logger import RcutilsLogger

from manip_dynamics.identification.payload_window import (
    estimate_payload_from_window, JointStateWindow)
from manip_dynamics.robot_model import RobotModel
from manip_dynamics.ros.runtime.conversions import stamp_seconds
from manip_dynamics.ros.runtime.parameter_spec import NodeParameters
from manip_dynamics.ros.runtime.startup import StartupError

#: Payloads a node keeps to re-apply to a new model: link -> (mass [kg], centre of mass
#: [m] in the link frame, inertia [kg m^2] about it as ixx, ixy, ixz, iyy, iyz, izz).
Payloads = dict[str, tuple[float, list[float], list[float]]]


def payloads_from(values: NodeParameters) -> Payloads:
    """
    Return the start-up payload a node's declared ``PAYLOAD`` values describe.

    ``payload_link`` (empty = none), ``payload_mass`` [kg] (>= 0), ``payload_com`` [m] (3
    values, in the link frame) and ``payload_inertia`` [kg m^2] (ixx, ixy, ixz, iyy, iyz,
    izz about the centre of mass).

    :return: ``{payload_link: (mass, com, inertia)}`` when a link and a mass > 0 are given,
        else an empty record.
    :raises StartupError: ``payload_mass`` > 0 with an empty ``payload_link``.
    """
    if values.payload_mass > 0.0 and not values.payload_link:
        raise StartupError('parameter payload_mass is %g kg but payload_link is empty'
                           % values.payload_mass)
    payloads: Payloads = {}
    if values.payload_link and values.payload_mass > 0.0:
        payloads[values.payload_link] = (values.payload_mass, values.payload_com,
                                         values.payload_inertia)
    return payloads


def reapply_payloads(model: RobotModel, payloads: Payloads, logger: RcutilsLogger) -> None:
    """
    Attach the payloads recorded so far to a new model; drop those it cannot carry.

    :param model: The new model, changed in place.
    :param payloads: The node's payload record; a payload the model rejects (unknown link,
        bad mass or inertia) is removed from it and logged as a warning.
    :param logger: The node's logger.
    """
    for link, (mass, com, inertia) in list(payloads.items()):
        try:
            model.set_payload(link, mass, com, inertia)
        except ValueError as error:
            logger.warning('dropped the payload on %r: %s' % (link, error))
            payloads.pop(link, None)


def apply_payload_request(model: RobotModel, payloads: Payloads, request: Any) -> str:
    """
    Attach (mass > 0) or remove (mass = 0) a link's payload and record it.

    :param model: The model to change.
    :param payloads: The node's payload record, updated only when the model accepted the
        payload.
    :param request: A ``manip_dynamics_interfaces/SetPayload`` request (link, mass [kg],
        center_of_mass [m] in the link frame, ixx..izz [kg m^2] about the centre of mass).
    :return: The response message.
    :raises ValueError: From :meth:`RobotModel.set_payload` (unknown link, bad mass or
        inertia); nothing is changed then.
    """
    com = [request.center_of_mass.x, request.center_of_mass.y, request.center_of_mass.z]
    inertia = [request.ixx, request.ixy, request.ixz, request.iyy, request.iyz, request.izz]
    had = request.link in model.payloads
    model.set_payload(request.link, request.mass, com, inertia)
    if request.mass == 0.0:
        payloads.pop(request.link, None)
        if not had:
            return 'link %r had no payload: nothing to remove' % request.link
        return 'removed the payload of link %r' % request.link
    payloads[request.link] = (float(request.mass), com, inertia)
    return 'payload of %g kg on link %r' % (request.mass, request.link)


def record_for_estimate(window: JointStateWindow, model: RobotModel, msg: Any,
                        q: NDArray[np.float64], qd: NDArray[np.float64] | None) -> None:
    """
    Keep a joint_states message (already read into ``q``, ``qd``) for ~/estimate_payload.

    Its efforts are put in model order here; a message without an effort for every joint
    is skipped. Time: the header stamp (the receive time when the stamp is zero).

    :param msg: sensor_msgs/JointState.
    :param q: Its positions, model order, shape (dof,) [rad or m].
    :param qd: Its velocities likewise [rad/s or m/s], or None.
    """
    if len(msg.effort) != len(msg.name) or not len(msg.name):
        return
    try:
        effort = model.to_model_order(msg.name, msg.effort, what='effort', allow_extra=True)
    except ValueError:
        return
    t = stamp_seconds(msg.header.stamp)
    window.add(t if t > 0.0 else time.monotonic(), q, qd, effort)


def answer_estimate_payload(model: RobotModel, payloads: Payloads, window: JointStateWindow,
                            request: Any, response: Any) -> None:
    """
    Fill an EstimatePayload response from the recent joint states; apply it if asked.

    The estimate is :func:`~manip_dynamics.identification.payload_window.
    estimate_payload_from_window` (static: mass and centre of mass; with motion: the
    inertia too). With ``request.apply`` the payload is set on ``model`` and kept in
    ``payloads``, so it is re-applied to every new model like one from ~/set_payload.

    :raises ValueError: Not enough or unusable data (the estimator's message).
    """
    est, static = estimate_payload_from_window(model, window, request.link,
                                               request.window_seconds)
    response.mass = float(est.mass)
    response.center_of_mass.x, response.center_of_mass.y, response.center_of_mass.z = (
        float(v) for v in est.com)
    (response.ixx, response.ixy, response.ixz, response.iyy, response.iyz, response.izz) = (
        float(v) for v in est.inertia)
    response.samples = int(est.samples)
    response.inertia_estimated = bool(est.with_inertia)
    response.residual_rms = [float(v) for v in est.residual_rms]
    text = '%.4g kg at (%.4g, %.4g, %.4g) m on %r from %d samples (%s)' % (
        est.mass, *est.com, request.link, est.samples,
        'static: mass and centre of mass' if static else
        'with motion: inertia too' if est.with_inertia else 'with motion; %s' % est.note)
    if request.apply:
        model.set_payload(request.link, est.mass, est.com, est.inertia)
        payloads[request.link] = (float(est.mass), [float(v) for v in est.com],
                                  [float(v) for v in est.inertia])
        text = 'applied ' + text
    response.message = text
