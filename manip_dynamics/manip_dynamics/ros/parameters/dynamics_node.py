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

"""dynamics_node's parameters (docs/ROS_API.md's table is generated from this)."""

import math

from manip_dynamics.ros.parameters.shared import (
    ACCELERATION_LIMITS, GATE, INCLUDE_FRICTION, JOINT_STATES_TOPIC, MODEL)
from manip_dynamics.ros.parameters.spec import Param
from manip_dynamics.safety.ranges import Range

PARAMETERS = MODEL + (
    INCLUDE_FRICTION,
    JOINT_STATES_TOPIC,
    Param('publish_torques', 'bool', True,
          'Publish ~/gravity_torques and ~/coriolis_torques for every joint_states message'),
    Param('publish_markers', 'bool', True, 'Publish ~/torque_markers for RViz'),
    Param('marker_rate', 'double', 10.0, 'Largest ~/torque_markers rate', unit='Hz',
          valid=Range(0.0, 1000.0, low_open=True)),
    Param('marker_scale', 'double', 0.01,
          'Arrow length per unit gravity torque of ~/torque_markers', unit='m / (N m)',
          valid=Range(0.0, math.inf, low_open=True)),
    Param('singular_threshold', 'double', 1e-3,
          'cartesian_dynamics: smallest singular value of J treated as regular',
          valid=Range(0.0, math.inf, low_open=True)),
    Param('singular_damping', 'double', 1e-2,
          'cartesian_dynamics: damping of the inverse near a singularity',
          valid=Range(0.0, math.inf)),
    ACCELERATION_LIMITS,
    Param('joint_limits_file', 'string', '',
          "~/retime: MoveIt's joint_limits.yaml (velocity and acceleration limits), read at "
          'each request; empty = none'),
) + GATE
