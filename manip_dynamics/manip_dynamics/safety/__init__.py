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
What stands between a sensor sample and a torque on a physical arm (no rclpy).

* :class:`JointStateGate`: the plausibility gate every node applies to joint states before
  they can move an arm (glitches rejected, the last good state held briefly, then stop).
* :func:`bounded_friction`: friction feed-forward that a velocity glitch cannot inflate.
* :func:`check_range`: the one range check of rate, timeout and limit settings.
"""

from manip_dynamics.safety.plausibility import (
    bounded_friction, GateVerdict, JointStateGate, missing_effort_limits)
from manip_dynamics.safety.ranges import check_range, Range

__all__ = ['bounded_friction', 'check_range', 'GateVerdict', 'JointStateGate',
           'missing_effort_limits', 'Range']
