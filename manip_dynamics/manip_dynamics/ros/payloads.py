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

"""The ~/set_payload request shared by dynamics_node and gravity_compensation_node."""

from typing import Any

from manip_dynamics.robot_model import RobotModel

#: Payloads a node keeps to re-apply to a new model: link -> (mass [kg], centre of mass
#: [m] in the link frame, inertia [kg m^2] about it as ixx, ixy, ixz, iyy, iyz, izz).
Payloads = dict[str, tuple[float, list[float], list[float]]]


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
    model.set_payload(request.link, request.mass, com, inertia)
    if request.mass == 0.0:
        payloads.pop(request.link, None)
        return 'removed the payload of link %r' % request.link
    payloads[request.link] = (float(request.mass), com, inertia)
    return 'payload of %g kg on link %r' % (request.mass, request.link)
