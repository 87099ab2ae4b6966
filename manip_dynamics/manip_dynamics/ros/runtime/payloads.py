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

"""Payload handling shared by the nodes: start-up parameters, ~/set_payload, re-applying."""

from typing import Any

from rclpy.impl.rcutils_logger import RcutilsLogger

from manip_dynamics.robot_model import RobotModel
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
