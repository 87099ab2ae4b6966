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
The ``joint_dynamics.*`` parameters: friction and rotor-inertia overrides from a YAML file.

``manip-dynamics identify fit`` writes them as a ROS parameter file (``/**:
ros__parameters: joint_dynamics: {joint_names, damping, friction, armature}``); every node
that builds its model with :func:`declare_model_parameters
<manip_dynamics.ros.runtime.robot_description.declare_model_parameters>` reads them
(``--ros-args --params-file cobot7_joint_dynamics.yaml``) and applies them to each model it
builds with :meth:`RobotModel.with_joint_dynamics`.
"""

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.exceptions import ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter

from manip_dynamics.robot_model import RobotModel

_KEYS = ('damping', 'friction', 'armature')


def declare_joint_dynamics(node: Node) -> dict[str, dict[str, float]]:
    """
    Declare ``joint_dynamics.joint_names`` and the three value lists; return the overrides.

    :return: ``{'damping': {joint: value}, ...}`` for the lists that are set.
    :raises ValueError: A list whose length differs from ``joint_names``.
    """
    def get(name: str, kind: Parameter.Type) -> list:
        node.declare_parameter(name, kind, ParameterDescriptor(
            description='identified joint dynamics (manip-dynamics identify fit)',
            read_only=True))
        try:
            return list(node.get_parameter(name).value)
        except ParameterUninitializedException:
            return []

    names = get('joint_dynamics.joint_names', Parameter.Type.STRING_ARRAY)
    out = {}
    for key in _KEYS:
        values = get('joint_dynamics.' + key, Parameter.Type.DOUBLE_ARRAY)
        if not values:
            continue
        if len(values) != len(names):
            raise ValueError('parameter joint_dynamics.%s has %d values for %d '
                             'joint_dynamics.joint_names' % (key, len(values), len(names)))
        out[key] = {n: float(v) for n, v in zip(names, values)}
    return out


def apply_joint_dynamics(model: RobotModel, overrides: dict[str, dict[str, float]]
                         ) -> RobotModel:
    """Return ``model`` with the overrides (the same model when there are none)."""
    if not overrides:
        return model
    return model.with_joint_dynamics(**overrides)
