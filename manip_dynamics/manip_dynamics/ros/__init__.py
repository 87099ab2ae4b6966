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
ROS 2 adapters of the manip_dynamics library: the only subpackage that imports rclpy.

* :mod:`manip_dynamics.ros.conversions`: message <-> numpy helpers (name-keyed joint
  arrays, wrenches, trajectories, row-major matrices).
* :mod:`manip_dynamics.ros.robot_description`: the model from the ``robot_description``
  parameter or the ``/robot_description`` topic.
* :mod:`manip_dynamics.ros.dynamics_node`: dynamics services and torque topics.
* :mod:`manip_dynamics.ros.gravity_compensation_node`: gravity-compensation efforts for
  ros2_control effort controllers.

Nodes are thin: every equation lives in :class:`manip_dynamics.RobotModel`. The public ROS
interface is documented in docs/ROS_API.md.
"""
