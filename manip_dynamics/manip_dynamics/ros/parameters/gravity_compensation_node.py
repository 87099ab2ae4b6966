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

"""gravity_compensation_node's parameters (docs/ROS_API.md's table is generated from this)."""

import math

from manip_dynamics.control.gravity_compensation import (
    RAMP_TIME_RANGE, TIMEOUT_RANGE, watchdog_rate_range)
from manip_dynamics.ros.parameters.shared import (
    COMMAND_JOINTS, CONTROLLER_NAME, EFFORT_SCALE, GATE, INCLUDE_FRICTION, JOINT_STATES_TOPIC,
    MODEL, PAYLOAD, STALE_ACTION, TIMEOUT)
from manip_dynamics.ros.parameters.spec import Param
from manip_dynamics.safety.ranges import Range

PARAMETERS = MODEL + (
    CONTROLLER_NAME,
    COMMAND_JOINTS,
    EFFORT_SCALE,
    Param('effort_limits', 'double_array', None,
          'Effort limits per command joint, command order; unset = the URDF limits '
          '(required when the URDF has none for a command joint)', unit='N m or N',
          valid=Range(0.0, math.inf, low_open=True)),
    Param('ramp_time', 'double', 2.0,
          'Ramp the efforts in from zero over this time from the first good joint_states '
          '(0 = no ramp)', unit='s', valid=RAMP_TIME_RANGE),
    TIMEOUT,
    Param('watchdog_rate', 'double', 50.0,
          'Rate of the joint_states age check; at least 2 / timeout, so the stale command '
          'comes at most half a timeout late', unit='Hz',
          valid=Range(watchdog_rate_range(TIMEOUT_RANGE.high).low,
                      watchdog_rate_range(TIMEOUT_RANGE.low).high)),
) + GATE + (
    STALE_ACTION,
    INCLUDE_FRICTION,
    JOINT_STATES_TOPIC,
) + PAYLOAD
