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
with a robot model declares them (:data:`manip_dynamics.ros.parameters.shared.MODEL`),
reads them (``--ros-args --params-file cobot7_joint_dynamics.yaml``) and applies them to
each model it builds with :meth:`RobotModel.with_joint_dynamics`.
"""

from typing import Any

from manip_dynamics.robot_model import RobotModel

_KEYS = ('damping', 'friction', 'armature')


def joint_dynamics_overrides(values: Any) -> dict[str, dict[str, float]]:
    """
    Return the overrides the declared ``joint_dynamics.*`` parameters give.

    :param values: The node's parameter values (attribute names as declared, dots kept:
        read with ``getattr``); an unset list is None.
    :return: ``{'damping': {joint: value}, ...}`` for the lists that are set.
    :raises ValueError: A list whose length differs from ``joint_names``.
    """
    names = getattr(values, 'joint_dynamics.joint_names') or []
    out = {}
    for key in _KEYS:
        given = getattr(values, 'joint_dynamics.' + key) or []
        if not given:
            continue
        if len(given) != len(names):
            raise ValueError('parameter joint_dynamics.%s has %d values for %d '
                             'joint_dynamics.joint_names' % (key, len(given), len(names)))
        out[key] = {n: float(v) for n, v in zip(names, given)}
    return out


def apply_joint_dynamics(model: RobotModel, overrides: dict[str, dict[str, float]]
                         ) -> RobotModel:
    """Return ``model`` with the overrides (the same model when there are none)."""
    if not overrides:
        return model
    return model.with_joint_dynamics(**overrides)
