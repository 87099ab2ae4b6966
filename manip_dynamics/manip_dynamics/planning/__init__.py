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
Motion planning on top of the dynamics (no rclpy).

* :func:`retime`: a near time-optimal trajectory through joint-space waypoints within
  velocity, acceleration and torque limits at every instant (TOPP-RA on a spline path,
  checked and repaired between grid points), as a :class:`RetimedTrajectory`.
* :func:`read_joint_limits_yaml`: MoveIt's acceleration and velocity limits.
"""

from manip_dynamics.planning.limits import read_joint_limits_yaml
from manip_dynamics.planning.retiming import retime, RetimedTrajectory, RetimingReport

__all__ = ['read_joint_limits_yaml', 'retime', 'RetimedTrajectory', 'RetimingReport']
