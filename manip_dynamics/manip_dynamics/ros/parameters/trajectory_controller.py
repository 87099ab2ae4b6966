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

"""trajectory_controller's parameters (docs/ROS_API.md's table is generated from this)."""

import math

from manip_dynamics.control.computed_torque import REACTIONS
from manip_dynamics.ros.parameters.shared import (
    ACCELERATION_LIMITS, COMMAND_JOINTS, CONTROLLER_NAME, EFFORT_SCALE, GATE, MAX_CONTACT_AGE,
    MODEL, OBSERVER_NAMESPACE, STALE_ACTION, START_TOLERANCE, TIMEOUT)
from manip_dynamics.ros.parameters.spec import Param
from manip_dynamics.safety.ranges import Range

#: The control laws.
LAWS = ('computed_torque', 'impedance')
#: Gains: one value for every joint or one per joint, model order.
GAIN_VALUES = Range(0.0, 1e7)

PARAMETERS = MODEL + (
    CONTROLLER_NAME,
    COMMAND_JOINTS,
    Param('law', 'string', 'computed_torque',
          'computed_torque (M(q) v + C qd + g + F) or impedance (g + Kp e + Kd e_dot + '
          'feed-forward)', choices=LAWS),
    Param('kp', 'double_array', [400.0],
          'Position gains: one value for every joint or one per joint, model order; '
          'computed_torque [1/s^2], impedance [N m/rad]; > 0; set on the running node, they '
          'act from the next command', valid=GAIN_VALUES, tunable=True),
    Param('kd', 'double_array', [40.0], 'Velocity gains, as kp (>= 0)', valid=GAIN_VALUES,
          tunable=True),
    Param('ki', 'double_array', [0.0], 'Integral gains, as kp (>= 0; 0 = none)',
          valid=GAIN_VALUES, tunable=True),
    EFFORT_SCALE,
    Param('joint_effort_limits', 'double_array', None,
          'Effort limits per model joint, model order; unset = the URDF limits',
          unit='N m or N', valid=Range(0.0, math.inf, low_open=True)),
    Param('max_tracking_error', 'double', 0.2,
          'Stop and hold when |q_d - q| exceeds this; set on the running node, it acts from '
          'the next command', unit='rad or m', valid=Range(0.0, 10.0, low_open=True),
          tunable=True),
    START_TOLERANCE,
    MAX_CONTACT_AGE,
    TIMEOUT,
    Param('reaction', 'string', 'hold',
          'On contact: hold the pose, or float (gravity compensation only)',
          choices=REACTIONS),
    OBSERVER_NAMESPACE,
    ACCELERATION_LIMITS,
) + GATE + (STALE_ACTION,)
