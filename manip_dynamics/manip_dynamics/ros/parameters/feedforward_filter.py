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

"""feedforward_filter's parameters (docs/ROS_API.md's table is generated from this)."""

from manip_dynamics.control.feedforward import GRAVITY_MODES
from manip_dynamics.control.plan_feedforward import ON_INFEASIBLE
from manip_dynamics.ros.parameters.shared import (
    ACCELERATION_LIMITS, MAX_CONTACT_AGE, MODEL, OBSERVER_NAMESPACE, START_TOLERANCE)
from manip_dynamics.ros.parameters.spec import Param

#: Where plans go: JTC's action, its topic, or the action where control_msgs is installed.
DOWNSTREAMS = ('auto', 'action', 'topic')

PARAMETERS = MODEL + (
    Param('jtc_name', 'string', 'joint_trajectory_controller',
          'The joint_trajectory_controller (JTC, effort interface) plans go to: its action '
          '<jtc_name>/follow_joint_trajectory or topic <jtc_name>/joint_trajectory'),
    Param('downstream', 'string', 'auto',
          "action: JTC's FollowJointTrajectory; topic: its joint_trajectory topic; auto: the "
          'action where control_msgs is installed', choices=DOWNSTREAMS),
    Param('on_infeasible', 'string', 'refuse',
          'A plan over a velocity or effort limit: refuse it when it arrives (the planner '
          'replans slower), or retime it (longer than planned)', choices=ON_INFEASIBLE),
    Param('gravity_feedforward', 'string', 'include',
          'include: efforts with g(q); exclude: the driver adds gravity', choices=GRAVITY_MODES),
    Param('feedforward', 'bool', True,
          'Fill the efforts (false: plans and holds without them, JTC as without this node, '
          'to measure what they do)'),
    ACCELERATION_LIMITS,
    START_TOLERANCE,
    MAX_CONTACT_AGE,
    OBSERVER_NAMESPACE,
)
