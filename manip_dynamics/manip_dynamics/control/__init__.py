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
Controllers that turn joint states into joint efforts for an arm (no rclpy).

* :class:`GravityCompensator`: g(q) (+ bounded friction) with the plausibility gate, ramp,
  clamping and stale-input stop that a physical arm needs.
* :class:`ComputedTorqueController`, :class:`JointImpedanceController`: trajectory
  tracking with the full dynamics (Craig ch. 10), effort clamping, tracking-error stop,
  collision reaction (hold or float) and resume; :class:`TimedPoints` makes a trajectory
  from arrays of times and points.
* :class:`SafeTracker`: one of those behind the plausibility gate and the stale-input stop,
  every sample answered (what trajectory_controller runs).
"""

from manip_dynamics.control.computed_torque import (
    Command, ComputedTorqueController, JointImpedanceController, REACTIONS, TimedPoints)
from manip_dynamics.control.gravity_compensation import GravityCompensator, Step
from manip_dynamics.control.safe_tracking import SafeTracker, TrackStep

__all__ = ['Command', 'ComputedTorqueController', 'GravityCompensator',
           'JointImpedanceController', 'REACTIONS', 'SafeTracker', 'Step', 'TimedPoints',
           'TrackStep']
